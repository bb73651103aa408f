;;; shell_environment.clp — variables set for a command that change what code it runs.
;;;
;;; `LD_PRELOAD=/tmp/x.so ls` loads a library into `ls`; `GIT_CONFIG_COUNT=1
;;; GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='curl …|sh' git status` makes git
;;; run a downloaded script; `BASH_ENV=/tmp/x bash -c …` sources a file first. The parser
;;; reports every assignment (before the command, after `env`/`sudo`, alone, or in
;;; `export`/`declare`) as a `shell-assignment` fact, whatever the program.

;; TRUE for a variable that injects code: those that make a program load or run code of the
;; caller's choosing (`BASH_ENV`, `NODE_OPTIONS`, `GIT_SSH_COMMAND`, `PAGER` …), the dynamic
;; loader's LD_* and DYLD_*, git's GIT_CONFIG* (config from the environment: core.fsmonitor,
;; core.pager …), exported bash functions (BASH_FUNC_*) and any *_OPTIONS (JAVA_TOOL_OPTIONS,
;; NODE_OPTIONS …). Others that are merely unusual (IFS, GIT_DIR, CC …) are not everyday work
;; either: shell-env-variable asks a human for every variable but a short harmless list.
;; (`neq` is TRUE when its first argument differs from every other one.)
(deffunction shell-env-code-var-p (?name)
  (or (not (neq ?name "BASH_ENV" "ENV" "PROMPT_COMMAND" "PS4" "SHELLOPTS" "BASHOPTS"
                "NODE_OPTIONS" "NODE_PATH" "PYTHONSTARTUP" "PYTHONPATH" "PYTHONHOME"
                "PERL5OPT" "PERL5LIB" "PERLLIB" "RUBYOPT" "RUBYLIB" "GCONV_PATH"
                "GIT_SSH" "GIT_SSH_COMMAND" "GIT_PROXY_COMMAND" "GIT_EXTERNAL_DIFF" "GIT_ASKPASS"
                "SSH_ASKPASS" "GIT_EXEC_PATH" "GIT_PAGER" "GIT_EDITOR" "GIT_SEQUENCE_EDITOR"
                "GIT_TEMPLATE_DIR" "PAGER" "MANPAGER" "EDITOR" "VISUAL" "LESSOPEN" "LESSCLOSE"
                "RUSTC_WRAPPER"))
      (regex-match "^(LD_|DYLD_|GIT_CONFIG|BASH_FUNC_)|_OPTIONS$" ?name)))

;; TRUE unless a PATH value is only system directories and the inherited $PATH, in any
;; order (`/usr/bin:$PATH`). An empty entry means the current directory.
(deffunction shell-env-path-unsafe-p (?value)
  (not (regex-match
         "^(/usr/local/sbin|/usr/local/bin|/usr/sbin|/usr/bin|/sbin|/bin|\\$PATH|\\$\\{PATH\\})(:(/usr/local/sbin|/usr/local/bin|/usr/sbin|/usr/bin|/sbin|/bin|\\$PATH|\\$\\{PATH\\}))*$"
         ?value)))

;; Stops commands run with a variable that loads or runs other code (`LD_PRELOAD=/tmp/x.so
;; ls`, `GIT_CONFIG_VALUE_0='curl …|sh' git status`, `env BASH_ENV=/tmp/x bash -c …`,
;; `export NODE_OPTIONS=--require=/tmp/x`): the program named is not what would run.
(defrule shell-env-code-injection
  (shell-assignment (proposal ?id) (index ?i) (name ?n&:(shell-env-code-var-p ?n)) (value ?v))
  (not (and (shell-command (proposal ?id) (index ?i) (cwd ?c))
            (test (everyday-path-assignment-p ?n ?v ?c))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-env-code-injection)
                    (reason (str-cat "environment variable " ?n " makes the command load or run other code")))))

;; Asks a human when PATH is set to anything beyond the system directories
;; (`PATH=/tmp/evil:$PATH ls`, `PATH=. make`, `PATH=$(…)`): every later program name may
;; then resolve to a file the agent wrote.
(defrule shell-env-path-outside-system
  (shell-assignment (proposal ?id) (name "PATH") (value ?v&:(shell-env-path-unsafe-p ?v)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-env-path-outside-system)
                    (reason (str-cat "PATH set beyond the system directories: " ?v)))))

;; Asks a human for `unset HISTFILE`, `unset PROMPT_COMMAND` and any other `unset`: it
;; switches off shell history or changes what later commands of the line do.
(defrule shell-env-unset
  (shell-command (proposal ?id) (program "unset"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-env-unset)
                    (reason "unsets shell variables (history, prompt hooks …)"))))

;; Asks a human for a command run with any variable but the harmless ones (locale, time
;; zone, colours, terminal size, CI): `GIT_DIR=/tmp/x git status`, `CC=… make`,
;; `IFS=, cmd`, `X=rm; $X -rf /`. Which variables a program reads is not in the effects
;; table, so they are not everyday work. The same list as everyday-shell.
(defrule shell-env-variable
  (shell-assignment (proposal ?id) (index ?i) (name ?n) (value ?v&:(not (everyday-plain-assignment-p ?n ?v))))
  (not (and (shell-command (proposal ?id) (index ?i) (cwd ?c))
            (test (or (everyday-path-assignment-p ?n ?v ?c) (everyday-workspace-words-p ?n ?v ?c)))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-env-variable)
                    (reason (str-cat "command runs with variable " ?n " set")))))
