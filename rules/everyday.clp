;;; everyday.clp — approve the boring, read-only and build work an agent does all day, so
;;; that humans are only asked about what matters.
;;;
;;; The shell rule approves a line only if EVERY simple command in it is on the allowlist
;;; and nothing is off: no wrapper (sudo, env, xargs, bash -c), no nesting ($(…), <(…)),
;;; no expansion the parser cannot resolve ($VAR, globs), every operand and the working
;;; directory inside the workspace, no option smuggling a path (`--file=/etc/x`), and no
;;; redirection outside the workspace. Anything else falls to other rules or the default.
;;; Rejections and approval-required from other rules win over this approval anyway.

;; Programs that only read, or build/test inside the workspace.
(defglobal ?*everyday-programs* =
  (create$ "ls" "cat" "head" "tail" "wc" "grep" "egrep" "fgrep" "rg" "find" "pwd" "echo"
           "printf" "true" "cd" "diff" "sort" "uniq" "cut" "tree" "stat" "file" "du" "which"
           "basename" "dirname" "realpath" "jq"
           "git" "make" "cmake" "ninja" "cargo" "npm" "pytest" "go" "python" "python3"))

;; Read-only git subcommands.
(defglobal ?*everyday-git* =
  (create$ "status" "diff" "log" "show" "branch" "rev-parse" "ls-files" "blame" "describe"
           "shortlog"))

;; find actions that delete, execute or write files.
;; Subcommand lists of the multi-purpose build tools.
(defglobal ?*everyday-git-branch-writes* =
  (create$ "-d" "-D" "-m" "-M" "-c" "-C" "-f" "--delete" "--move" "--copy" "--force"
           "--set-upstream-to" "-u" "--unset-upstream" "--edit-description"))
(defglobal ?*everyday-make-targets-banned* =
  (create$ "install" "uninstall" "deploy" "publish" "release" "upload" "push"))
(defglobal ?*everyday-cmake-banned* = (create$ "--install" "-P"))
(defglobal ?*everyday-cargo* = (create$ "build" "test" "check" "clippy" "doc" "bench"))
(defglobal ?*everyday-npm* = (create$ "test" "t" "run" "run-script"))
(defglobal ?*everyday-go* = (create$ "build" "test" "vet"))
(defglobal ?*everyday-python-modules* = (create$ "pytest" "unittest"))

(defglobal ?*everyday-find-actions* =
  (create$ "-delete" "-exec" "-execdir" "-ok" "-okdir" "-fprint" "-fprint0" "-fprintf" "-fls"))

;; TRUE if every word of ?words is absent from ?banned.
(deffunction everyday-none-of (?words ?banned)
  (foreach ?w ?words
    (if (member$ ?w ?banned) then (return FALSE)))
  TRUE)

;; TRUE if the subcommand rules of multi-purpose programs allow this invocation.
(deffunction everyday-subcommand-ok (?prog ?argv ?flags ?args)
  (bind ?sub (if (> (length$ ?args) 0) then (nth$ 1 ?args) else ""))
  (switch ?prog
    (case "git" then
      (and (member$ ?sub ?*everyday-git*)
           ;; `git branch NAME` creates, -d/-D/-m/-M/-c/-C/-f delete, rename, copy, force
           (or (neq ?sub "branch")
               (and (= (length$ ?args) 1)
                    (everyday-none-of ?flags ?*everyday-git-branch-writes*)))))
    (case "find" then (everyday-none-of ?argv ?*everyday-find-actions*))
    (case "make" then (everyday-none-of ?args ?*everyday-make-targets-banned*))
    (case "cmake" then (everyday-none-of ?flags ?*everyday-cmake-banned*))
    (case "cargo" then (member$ ?sub ?*everyday-cargo*))
    (case "npm" then (member$ ?sub ?*everyday-npm*))
    (case "go" then (member$ ?sub ?*everyday-go*))
    (case "python" then (and (member$ "-m" ?flags) (not (member$ "-c" ?flags))
                             (member$ ?sub ?*everyday-python-modules*)))
    (case "python3" then (and (member$ "-m" ?flags) (not (member$ "-c" ?flags))
                              (member$ ?sub ?*everyday-python-modules*)))
    (default TRUE)))

;; TRUE if one simple command is everyday work: allowlisted program, nothing wrapped or
;; nested or dynamic, cwd and every operand inside the workspace, no option carrying a path
;; or an output file (`--file=/etc/x`, `-f/etc/x`, `--output=…`, which the operand checks
;; would not see; the parser keeps such option words whole in `flags`).
(deffunction everyday-command-ok (?prog ?argv ?flags ?args ?paths ?wrappers ?depth ?cwd ?dyn)
  (if (or (eq ?dyn TRUE) (> ?depth 0) (> (length$ ?wrappers) 0)
          (not (member$ ?prog ?*everyday-programs*))
          (not (in-workspace ?cwd))) then (return FALSE))
  (foreach ?p ?paths
    (if (not (in-workspace ?p)) then (return FALSE)))
  (foreach ?f ?flags
    (if (regex-match "[/~]|^--out" ?f) then (return FALSE)))
  (everyday-subcommand-ok ?prog ?argv ?flags ?args))

;; TRUE if a redirection is harmless for everyday work: fd duplication (`2>&1`), here-docs
;; and here-strings, the null/std devices, or a file inside the workspace.
(deffunction everyday-redirect-ok (?op ?target ?path)
  (or (and (or (eq ?op ">&") (eq ?op "<&")) (regex-match "^[0-9]*-?$" ?target))
      (eq ?op "<<") (eq ?op "<<-") (eq ?op "<<<")
      (eq ?path "/dev/null") (eq ?path "/dev/stdout") (eq ?path "/dev/stderr")
      (and (neq ?path "") (in-workspace ?path))))

;; Approves a shell line made only of everyday commands (`ls -la`, `git status`,
;; `grep -r foo src`, `make test`, `cat README.md`, `python -m pytest`), all in the workspace.
(defrule everyday-shell
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(stringp ?c)))
  (exists (shell-command (proposal ?id)))
  (not (shell-error (proposal ?id)))
  (not (shell-command (proposal ?id) (program ?p) (argv $?v) (flags $?f) (args $?a) (paths $?ps)
                      (wrappers $?w) (depth ?d) (cwd ?cwd)
                      (dynamic ?y&:(not (everyday-command-ok ?p ?v ?f ?a ?ps ?w ?d ?cwd ?y)))))
  (not (shell-redirect (proposal ?id) (op ?o) (target ?t)
                       (path ?x&:(not (everyday-redirect-ok ?o ?t ?x)))))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule everyday-shell)
                    (reason "read-only or build commands inside the workspace"))))

;; Approves a reply to the user: it only talks to the person who asked (secrets in it are
;; handled by secrets_outbound.clp, which wins).
(defrule everyday-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule everyday-reply)
                    (reason "reply to the user"))))
