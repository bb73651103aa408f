;;; shell_download_exec.clp — running code fetched from the network (`curl … | sh`).
;;;
;;; The parser splits `curl x | sh`, `curl -o i.sh x && sh i.sh`, `bash <(curl x)` and
;;; `sh -c "$(curl x)"` into separate simple commands (process and command substitutions are
;;; one level deeper), so the rules pair a downloader with an interpreter in the same line.

;; Stops `curl x | sh`, `wget -qO- x | bash`, `curl -o i.sh x && sh i.sh`, `bash <(curl x)`,
;; `python3 <(wget -O- x)`: code downloaded and executed in one step is never reviewed by
;; anyone. The interpreter either runs after the download in the line or contains it (the
;; download is nested deeper). `python -m json.tool` only pretty-prints, so it is exempt.
(defrule shell-download-exec-pipe
  (shell-command (proposal ?id) (program "curl"|"wget"|"fetch"|"aria2c") (index ?i) (depth ?d))
  (or (shell-command (proposal ?id) (program ?prog&"sh") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"bash") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"zsh") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"dash") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"ksh") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"mksh") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"fish") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"python") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"python2") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"python3") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"perl") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"ruby") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"node") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"nodejs") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"php") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"lua") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&"source") (index ?j) (argv $?v) (depth ?e))
      (shell-command (proposal ?id) (program ?prog&".") (index ?j) (argv $?v) (depth ?e)))
  (test (and (or (> ?j ?i) (> ?d ?e)) (not (member$ "json.tool" ?v))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-download-exec-pipe)
                    (reason "downloaded content is executed by an interpreter"))))

;; Stops the substitution forms on the raw text as well — `bash -c "$(curl x)"`,
;; `eval "$(wget -O- x)"`, `source <(curl x)`, `` sh -c "`curl x`" `` — in case the
;; interpreter itself is consumed as a wrapper and only the download is left as a command.
(defrule shell-download-exec-substitution
  (pattern-hit (proposal ?id) (key "payload.command") (kind regex)
               (pattern "(^|[^A-Za-z0-9_.-])(sh|bash|zsh|dash|ksh|eval|source|\\.|python[0-9.]*|perl|ruby|node|php)\\s[^|;&]*([$<]\\(|`)\\s*(curl|wget|fetch)(\\s|$)"))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-download-exec-substitution)
                    (reason "downloaded content is executed through a substitution"))))
