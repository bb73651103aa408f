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

;; Asks a human when an option or operand makes a program run another program or code text
;; (`make CC=…`, `cmake -E env sh -c …`, `go test -exec X`, `sort --compress-program=sh`,
;; `rg --pre=sh`, `git -c core.pager=…`, `git log --ext-diff`, `find -exec`, `python -c`,
;; `node -e`, `awk 'BEGIN{system(…)}'`): what runs is not the program named.
(defrule execution-code-from-arguments
  (effect (proposal ?id) (kind exec) (object program|code) (program ?p) (via ?v) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-code-from-arguments)
                    (reason (str-cat ?p " runs code given through " (if (eq ?v "") then "its arguments" else ?v)
                                     ": " (sub-string 1 80 ?t))))))

;; Asks a human for a program the effects table does not know, a subcommand it does not
;; know, or a program name known only at run time (`$X -rf /`, `./tool`): what it does
;; cannot be judged.
(defrule execution-unknown-program
  (effect (proposal ?id) (kind unknown) (target ?t) (subcommand ?s))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-unknown-program)
                    (reason (str-cat "unknown program or subcommand: " ?t (if (eq ?s "") then "" else (str-cat " " ?s)))))))

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

;; Asks a human before running a build or test in a directory where this session wrote a
;; build file (`pytest` after writing conftest.py, `cargo build` after writing build.rs or
;; .cargo/config.toml, `cmake -S .` after writing CMakeLists.txt, `pip install -e .` after
;; writing setup.py): the build runs them.
(defrule execution-session-written-build-file
  (effect (proposal ?id) (kind exec) (object path) (target ?d))
  (history (proposal ?id) (kind write) (class build-config) (target ?t&:(str-prefix (str-cat ?d "/") ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-session-written-build-file)
                    (reason (str-cat "runs a build in " ?d " whose build file " ?t " this session wrote")))))

;; Asks a human for any privilege change: `sudo`, `doas`, `su`, `pkexec`, `runuser`,
;; `chmod +s`, `setcap`, `docker run --privileged`, `--cap-add`, `--pid=host`, `usermod`,
;; `passwd`, `mount`, `nsenter`.
(defrule execution-privilege
  (effect (proposal ?id) (kind privilege) (program ?p) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule execution-privilege)
                    (reason (str-cat "changes privileges: " (if (eq ?t "") then ?p else ?t))))))
