;;; everyday.clp — approve the boring, read-only and build work an agent does all day, so
;;; that humans are only asked about what matters.
;;;
;;; The shell rule approves a line only if EVERY simple command in it is on the allowlist
;;; and nothing is off: no wrapper (sudo, env, xargs, bash -c), no nesting ($(…), <(…)),
;;; no expansion the parser cannot resolve ($VAR, globs), no environment assignment except
;;; a few harmless ones (`LANG=C ls`; never `LD_PRELOAD=… ls` or `GIT_CONFIG_…=… git status`),
;;; every operand and the working directory inside the workspace, no option smuggling a path
;;; (`--file=/etc/x`), and no redirection outside the workspace. Anything else falls to other rules or the default.
;;; Rejections and approval-required from other rules win over this approval anyway.

;; The allowlists are written out where they are tested: the programs in the condition of
;; everyday-shell (cheap checks first, so the functions below run only for allowlisted,
;; unwrapped commands), the subcommands in everyday-subcommand-ok. To change what counts as
;; everyday work, edit them there; nothing else refers to them.

;; TRUE if the subcommand rules of multi-purpose programs allow this invocation.
;;   git:    read-only subcommands (status diff log show branch rev-parse ls-files blame
;;           describe shortlog), none of -c -C --git-dir --work-tree --exec-path
;;           --config-env --namespace --super-prefix --ext-diff --textconv; `git branch NAME` creates and -d/-D/-m/-M/-c/-C/-f
;;           delete, rename, copy, force, so branch only bare and without those flags;
;;   find:   no action that deletes, executes or writes files (-delete -exec -execdir -ok
;;           -okdir -fprint -fprint0 -fprintf -fls);
;;   make:   no install/uninstall/deploy/publish/release/upload/push target;
;;   cmake:  no --install, no -P script;
;;   cargo:  build test check clippy doc bench;   npm: test t run run-script;
;;   go:     build test vet;   python/python3: `-m pytest` or `-m unittest`, no -c.
(deffunction everyday-subcommand-ok (?prog ?argv ?flags ?args)
  (bind ?sub (if (> (length$ ?args) 0) then (nth$ 1 ?args) else ""))
  (switch ?prog
    (case "git" then
      ;; Options that point git at another repository, config or program are the option
      ;; form of GIT_DIR/GIT_CONFIG_* (`--git-dir=evil status` runs evil/config's fsmonitor).
      (foreach ?f ?flags
        (if (regex-match "^(-c|-C|--git-dir|--work-tree|--exec-path|--config-env|--namespace|--super-prefix|--ext-diff|--textconv)" ?f)
            then (return FALSE)))
      (if (eq ?sub "branch")
          then (and (= (length$ ?args) 1)
                    (not (member$ "-d" ?flags)) (not (member$ "-D" ?flags))
                    (not (member$ "-m" ?flags)) (not (member$ "-M" ?flags))
                    (not (member$ "-c" ?flags)) (not (member$ "-C" ?flags))
                    (not (member$ "-f" ?flags)) (not (member$ "--delete" ?flags))
                    (not (member$ "--move" ?flags)) (not (member$ "--copy" ?flags))
                    (not (member$ "--force" ?flags)) (not (member$ "--set-upstream-to" ?flags))
                    (not (member$ "-u" ?flags)) (not (member$ "--unset-upstream" ?flags))
                    (not (member$ "--edit-description" ?flags)))
          else (not (neq ?sub "status" "diff" "log" "show" "rev-parse" "ls-files" "blame"
                         "describe" "shortlog"))))
    (case "find" then
      (foreach ?w ?argv
        (if (not (neq ?w "-delete" "-exec" "-execdir" "-ok" "-okdir" "-fprint" "-fprint0"
                      "-fprintf" "-fls")) then (return FALSE)))
      TRUE)
    (case "make" then
      (foreach ?w ?args
        (if (not (neq ?w "install" "uninstall" "deploy" "publish" "release" "upload" "push"))
            then (return FALSE)))
      TRUE)
    (case "cmake" then (and (not (member$ "--install" ?flags)) (not (member$ "-P" ?flags))))
    (case "cargo" then (not (neq ?sub "build" "test" "check" "clippy" "doc" "bench")))
    (case "npm" then (not (neq ?sub "test" "t" "run" "run-script")))
    (case "go" then (not (neq ?sub "build" "test" "vet")))
    (case "python" then (and (member$ "-m" ?flags) (not (member$ "-c" ?flags))
                             (not (neq ?sub "pytest" "unittest"))))
    (case "python3" then (and (member$ "-m" ?flags) (not (member$ "-c" ?flags))
                              (not (neq ?sub "pytest" "unittest"))))
    (default TRUE)))

;; TRUE if every variable assigned for the command (`NAME=value cmd`) only changes
;; language, time zone, colours or terminal size, never what code runs: LANG LANGUAGE
;; LC_ALL LC_CTYPE LC_MESSAGES LC_COLLATE LC_NUMERIC LC_TIME TZ NO_COLOR CLICOLOR
;; FORCE_COLOR TERM COLUMNS LINES CI. Everything else (PATH, LD_*, GIT_*, PYTHON*,
;; NODE_OPTIONS, BASH_ENV, ENV, PAGER, EDITOR, IFS, PS4 …) is not everyday work.
(deffunction everyday-assignments-ok (?names)
  (foreach ?n ?names
    (if (neq ?n "LANG" "LANGUAGE" "LC_ALL" "LC_CTYPE" "LC_MESSAGES" "LC_COLLATE" "LC_NUMERIC"
             "LC_TIME" "TZ" "NO_COLOR" "CLICOLOR" "FORCE_COLOR" "TERM" "COLUMNS" "LINES" "CI")
        then (return FALSE)))
  TRUE)

;; TRUE if the rest of one simple command is everyday work, once the cheap checks in the rule
;; passed (allowlisted program, nothing wrapped, nested or dynamic, cwd in the workspace):
;; every operand inside the workspace, no option carrying a path or an output file
;; (`--file=/etc/x`, `-f/etc/x`, `--output=…`, which the operand checks would not see; the
;; parser keeps such option words whole in `flags`), and an allowed subcommand.
(deffunction everyday-command-rest-ok (?prog ?argv ?flags ?args ?paths)
  (foreach ?p ?paths
    (if (not (in-workspace ?p)) then (return FALSE)))
  (foreach ?f ?flags
    (if (regex-match "[/~]|^--out" ?f) then (return FALSE)))
  (everyday-subcommand-ok ?prog ?argv ?flags ?args))

;; Approves a shell line made only of everyday commands (`ls -la`, `git status`,
;; `grep -r foo src`, `make test`, `cat README.md`, `python -m pytest`), all in the workspace.
;; A simple command is everyday work when: its program is a read-only or build tool (ls cat
;; head tail wc grep egrep fgrep rg find pwd echo printf true cd diff sort uniq cut tree stat
;; file du which basename dirname realpath jq git make cmake ninja cargo npm pytest go python
;; python3), it has no wrapper (sudo, env, xargs, bash -c), no nesting and nothing dynamic,
;; only harmless variable assignments (everyday-assignments-ok), its cwd is in the
;; workspace, and everyday-command-rest-ok holds. A redirection is harmless
;; when it is an fd duplication (`2>&1`), a here-doc or here-string, the null/std devices, or
;; a file inside the workspace. The cheap checks come first so the functions rarely run.
(defrule everyday-shell
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(stringp ?c)))
  (exists (shell-command (proposal ?id)))
  (not (shell-error (proposal ?id)))
  (not (shell-command (proposal ?id) (program ?p) (argv $?v) (flags $?f) (args $?a) (paths $?ps)
                      (wrappers $?w) (assignments $?as) (depth ?d) (cwd ?cwd)
                      (dynamic ?y&:(or (eq ?y TRUE) (neq ?d 0) (> (length$ ?w) 0)
                                       (and (> (length$ ?as) 0) (not (everyday-assignments-ok ?as)))
                                       (neq ?p "ls" "cat" "head" "tail" "wc" "grep" "egrep" "fgrep"
                                            "rg" "find" "pwd" "echo" "printf" "true" "cd" "diff"
                                            "sort" "uniq" "cut" "tree" "stat" "file" "du" "which"
                                            "basename" "dirname" "realpath" "jq" "git" "make"
                                            "cmake" "ninja" "cargo" "npm" "pytest" "go" "python"
                                            "python3")
                                       (and (neq ?cwd (workspace-root)) (not (in-workspace ?cwd)))
                                       (not (everyday-command-rest-ok ?p ?v ?f ?a ?ps))))))
  (not (shell-redirect (proposal ?id) (op ?o&~"<<"&~"<<-"&~"<<<") (target ?t)
                       (path ?x&~"/dev/null"&~"/dev/stdout"&~"/dev/stderr"
                             &:(not (or (and (or (eq ?o ">&") (eq ?o "<&")) (regex-match "^[0-9]*-?$" ?t))
                                        (and (neq ?x "") (in-workspace ?x)))))))
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
