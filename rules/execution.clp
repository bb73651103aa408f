;;; execution.clp — what code a command runs, judged on its effects (rules/effects.toml).
;;;
;;; Everyday programs run arbitrary code through their own options and operands:
;;; `make CC='curl …|sh;cc'`, `make --eval`, `cmake -E env sh -c …`, `go test -exec`,
;;; `sort --compress-program=sh`, `rg --pre=sh`, `git -c core.pager=…`, `tar --to-command`,
;;; `find -exec`, `python -c`. The effects table marks each such word as an `exec` effect
;;; whose object is a program or code text, so one rule covers them all. A program the table
;;; does not know has an `unknown` effect: nobody can say what it does, so a human decides.
;;;
;;; With the session's history (earlier approved proposals of the same session), a build or
;;; script the agent wrote in this session needs a human before it runs: writing a Makefile
;;; and then running `make` is running code the agent wrote, one harmless-looking step at a time.

;; TRUE for a development tool a package runner may start without a human (`npx prettier`,
;; `uv run pytest`, `pnpm exec eslint`, `yarn tsc`): formatters, linters, type checkers, test
;; runners and bundlers that work on the workspace. Only as the runner's operand, never
;; through an option (`go test -exec X`, `sort --compress-program=X` always ask). (`neq` is
;; TRUE when its first argument differs from every other one.)
(deffunction execution-everyday-tool-p (?t)
  (not (neq ?t "prettier" "eslint" "tsc" "jest" "vitest" "mocha" "playwright" "webpack" "vite" "rollup"
            "esbuild" "stylelint" "tailwindcss" "pytest" "py.test" "mypy" "ruff" "black" "isort"
            "flake8" "pylint" "pyright" "coverage" "tox" "nox" "rspec" "rubocop" "rake")))

;; TRUE for code text that only prints constants or attributes of harmless modules
;; (`python3 -c 'print(1+1)'`, `python3 -c 'import sys; print(sys.version)'`): no call but
;; print itself (no parenthesis, brace or dunder in its argument, so nothing else runs), no
;; environment, imports of a few standard modules only. Never code known only at run time
;; (?d TRUE: `xargs -I{} python3 -c 'print("{}")'` runs whatever an input line makes of it).
(deffunction execution-trivial-code-p (?p ?v ?x ?d)
  (and (eq ?d FALSE) (eq ?v "-c")
       (not (neq ?p "python" "python3" "python3.8" "python3.9" "python3.10" "python3.11" "python3.12"
                 "python3.13" "python3.14" "py"))
       (not (str-index "__" ?x))
       (not (regex-match "environ|getenv" ?x))
       (regex-match "^\\s*(?:import\\s+(?:sys|platform|math|sysconfig|struct|string|keyword|decimal|json|locale)\\s*;\\s*)*print\\([^(){}\\\\;@`$]*\\)\\s*;?\\s*$" ?x)))

;; Asks a human when an option or operand makes a program run another program or code text
;; (`make CC=…`, `cmake -E env sh -c …`, `go test -exec X`, `sort --compress-program=sh`,
;; `rg --pre=sh`, `git -c core.pager=…`, `git log --ext-diff`, `find -exec`, `python -c`,
;; `node -e`, `awk 'BEGIN{system(…)}'`): what runs is not the program named.
(defrule execution-code-from-arguments
  (effect (proposal ?id) (kind exec) (object ?o&~path) (program ?p) (via ?v) (target ?t) (dynamic ?d))
  (test (and (or (neq ?o program) (neq ?v "operand") (not (execution-everyday-tool-p ?t)))
             (or (neq ?o code) (not (execution-trivial-code-p ?p ?v ?t ?d)))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-code-from-arguments)
                    (reason (str-cat ?p " runs code given through " (if (eq ?v "") then "its arguments" else (if (eq ?v "input") then "its input" else ?v))
                                     ": " (sub-string 1 80 ?t))))))

;; TRUE for an exec effect other than git's run of the repository it works in (the
;; `exec:.git` every git subcommand has: the repository's hooks and the programs its config
;; names). A build, a test run or a script reads the workspace's files; git runs only what is
;; written into the repository itself, so build files, tool settings and code fetched or
;; copied into named places do not change it (files of unknown names put into the workspace
;; root, or written into .git, do: hardening.clp).
(deffunction execution-workspace-run-p (?via ?class)
  (or (neq ?via "program") (neq ?class repository-config)))

;; TRUE for a program word that names a file inside the workspace (`./scripts/test.sh`,
;; `bin/run`, `.venv/bin/tool`): running the workspace's own scripts is everyday work, unless
;; this session wrote them (execution-session-written-script).
(deffunction execution-workspace-script-p (?w ?cwd)
  (and (str-index "/" ?w) (not (str-index "$" ?w)) (not (str-index "`" ?w))
       (in-workspace (path-normalize ?w ?cwd))))

;; Asks a human before running a workspace script by its path when this session wrote it
;; (`./clean.sh` after `echo 'rm -rf ~' > clean.sh`).
(defrule execution-session-written-script
  (effect (proposal ?id) (index ?i) (kind unknown))
  (shell-command (proposal ?id) (index ?i) (runs ?t&~""))
  (history (proposal ?id) (kind write) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-session-written-script)
                    (reason (str-cat "runs " ?t ", which this session wrote")))))

;; Asks a human for a program the effects table does not know, a subcommand it does not
;; know, or a program name known only at run time (`$X -rf /`, `./tool`): what it does
;; cannot be judged.
(defrule execution-unknown-program
  (effect (proposal ?id) (index ?i) (kind unknown) (object program) (target ?t&~"[") (subcommand ?s))
  (shell-command (proposal ?id) (index ?i) (argv ?w $?) (cwd ?cwd))
  (test (not (execution-workspace-script-p ?w ?cwd)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-unknown-program)
                    (reason (str-cat "unknown program or subcommand: " ?t (if (eq ?s "") then "" else (str-cat " " ?s)))))))

;; Asks a human for a word of a known program that the effects table does not account for:
;; an option it does not list (`curl -K FILE`, `tmux -f FILE`, `gdb -x FILE`; the table is
;; closed-world: an unlisted option is unknown, not harmless), or words a wrapper appends
;; from its input at run time (`… | xargs cat`, `… | xargs sh`).
(defrule execution-unaccounted-word
  (effect (proposal ?id) (index ?xi) (kind unknown) (object none) (program ?p) (via ?v) (target ?t))
  ;; names a workspace lister prints, piped into xargs, are accounted for (everyday-lister-p)
  (not (and (test (eq ?v "wrapper"))
            (shell-command (proposal ?id) (index ?pi&:(= ?pi (- ?xi 1))) (program ?pp) (argv $?pa)
                           (flags $?pf) (cwd ?pc&:(in-workspace ?pc)))
            (test (everyday-lister-p ?pp ?pa ?pf))
            (not (effect (proposal ?id) (index ?pi) (kind ~read) (via ?lv)
                         (class ?lc&:(execution-workspace-run-p ?lv ?lc))))
            (not (effect (proposal ?id) (index ?pi) (kind read) (in-workspace FALSE)))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-unaccounted-word)
                    (reason (if (eq ?v "option")
                                then (str-cat ?p ": option the effects table does not list: " (sub-string 1 80 ?t))
                                else (str-cat ?p " gets words from its input at run time through " ?t))))))

;; Asks a human before running a file outside the workspace (`/tmp/b`, `sh /tmp/i.sh`,
;; `make -C /tmp/evil`, `ninja -C /elsewhere`): the agent does not own what it would run.
(defrule execution-outside-workspace
  (effect (proposal ?id) (kind exec) (object path) (in-workspace FALSE) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-outside-workspace)
                    (reason (str-cat "runs a file outside the workspace: " ?t)))))

;; Asks a human before running a file this session wrote (`bash build.sh` after writing
;; build.sh, `make` after writing the Makefile, `python3 tools/gen.py` after writing it,
;; `bash x.sh` after `curl -o x.sh …`): the code is the agent's own, unreviewed.
(defrule execution-session-written-file
  (effect (proposal ?id) (kind exec) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-session-written-file)
                    (reason (str-cat "runs " ?t ", which this session wrote")))))

;; Asks a human before running anything in the workspace (a build, the tests, a script) after
;; this session wrote a build file there (`pytest` after writing conftest.py, `cargo build`
;; after writing build.rs or .cargo/config.toml, `cmake -S .` after writing CMakeLists.txt,
;; `npm test` after writing package.json, `pip install -e .` after writing setup.py): build
;; files say what runs, and which build reads which file is not known here.
(defrule execution-session-written-build-file
  (effect (proposal ?id) (kind exec) (object path) (in-workspace TRUE) (target ?d)
          (via ?xv) (class ?xc&:(execution-workspace-run-p ?xv ?xc)))
  (history (proposal ?id) (kind write) (class build-config) (in-workspace TRUE) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-session-written-build-file)
                    (reason (str-cat "runs " ?d " after this session wrote the build file " ?t)))))

;; Asks a human for a shell or interpreter that reads its program from its input
;; (`… | sh`, `base64 -d | bash`, `rev <<< … | sh`, `nsenter -t 1 -m sh`, `bash -s`): the code
;; is whatever the pipe or here-string holds, decoded or built at run time.
(defrule execution-shell-from-input
  (or (shell-command (proposal ?id) (program ?p&"sh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"bash") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"zsh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"dash") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"ksh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"mksh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"fish") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"ash") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"csh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f)))))
      (shell-command (proposal ?id) (program ?p&"tcsh") (args) (flags $?f&:(not (or (member$ "--version" ?f) (member$ "--help" ?f))))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-shell-from-input)
                    (reason (str-cat ?p " runs commands read from its input")))))

;; Asks a human for install, deploy and release targets (`make install`, `ninja install`,
;; `make deploy`): they write outside the workspace or publish, whatever the build file says.
(defrule execution-install-target
  (or (shell-command (proposal ?id) (program ?p&"make") (args $? ?t&"install"|"uninstall"|"deploy"|"publish"|"release"|"upload"|"push" $?))
      (shell-command (proposal ?id) (program ?p&"gmake") (args $? ?t&"install"|"uninstall"|"deploy"|"publish"|"release"|"upload"|"push" $?))
      (shell-command (proposal ?id) (program ?p&"ninja") (args $? ?t&"install"|"uninstall"|"deploy"|"publish"|"release"|"upload"|"push" $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-install-target)
                    (reason (str-cat ?p " " ?t " installs or publishes")))))

;; Asks a human for `go generate`: it runs the commands named in `//go:generate` comments of
;; the package's source files.
(defrule execution-go-generate
  (effect (proposal ?id) (program "go") (subcommand "generate"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-go-generate)
                    (reason "go generate runs the commands written in source comments"))))

;; Asks a human for any privilege change: `sudo`, `doas`, `su`, `pkexec`, `runuser`,
;; `chmod +s`, `setcap`, `docker run --privileged`, `--cap-add`, `--pid=host`, `usermod`,
;; `passwd`, `mount`, `nsenter`.
(defrule execution-privilege
  (effect (proposal ?id) (kind privilege) (program ?p) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-privilege)
                    (reason (str-cat "changes privileges: " (if (eq ?t "") then ?p else ?t))))))

;; Asks a human for commands run inside other namespaces or roots (`nsenter -t 1 -m sh`,
;; `chroot /host sh`, `unshare -r …`): they reach the host or another container as root.
(defrule execution-namespace-wrapper
  (shell-command (proposal ?id) (wrappers $? ?w&"nsenter"|"chroot"|"unshare"|"systemd-run"|"machinectl" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-namespace-wrapper)
                    (reason (str-cat "runs a command through " ?w)))))
