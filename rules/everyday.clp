;;; everyday.clp — approve the boring work an agent does all day, so that humans are only
;;; asked about what matters.
;;;
;;; The shell rule judges what a line DOES, not which programs it names: the engine turns
;;; every simple command into `effect` facts from the effects table (rules/effects.toml) and
;;; classifies every path (rules/paths.toml). A line is everyday work when every effect of
;;; every command in it is harmless:
;;;   - reads of files that are not credentials or secret-bearing settings, inside the
;;;     workspace or in system locations (not elsewhere in the home directory);
;;;   - writes and deletes inside the workspace, except persistence paths (git hooks, .envrc,
;;;     editor tasks, .pth files …) and the workspace root itself;
;;;   - runs of files inside the workspace (its build files, its scripts);
;;;   - network to an allowlisted host, or git's configured remote for fetch/pull/clone, or
;;;     the Docker registry for `docker build` / `docker compose build`;
;;;   - package runners starting an everyday development tool (`npx prettier`,
;;;     `uv run pytest`: execution-everyday-tool-p of execution.clp);
;;; and nothing else: no code from options (exec-program, exec-code) or from standard input,
;;; no privilege change, no environment dump. Variables set for a command must be harmless
;;; (everyday-plain-assignment-p, everyday-path-assignment-p).
;;;
;;; The approval is closed-world: it fires only when every word of the line is accounted
;;; for. A program the table does not know, a subcommand or an OPTION it does not list,
;;; words a wrapper appends from its input (`xargs`) and what a list option names
;;; (`curl -K`, `tar -T`) are `unknown` effects, and any unknown effect keeps the line from
;;; being everyday work: a harmful effect the table fails to derive cannot hide behind a
;;; word nobody described (docs/RULES.md, "Everyday approval is closed-world").
;;;
;;; Everything this rule does not approve is caught by a named rule in another file
;;; (execution.clp, credentials.clp, persistence.clp, files.clp, egress.clp), and their
;;; reject or approval-required always wins over this approval: a line approved here whose
;;; build files this session wrote still needs a human (execution.clp).
;;;
;;; The allowlisted hosts are egress-allowlisted-p of egress.clp (loaded before this file).

;; TRUE for a variable set for a command that changes nothing it runs or reads: locale, time
;; zone, colours, terminal size, CI, log levels and build modes (`RUST_LOG=debug`,
;; `NODE_ENV=test`, `CGO_ENABLED=0`, `GOOS=linux`), and a C compiler chosen by its plain name
;; (`CC=clang`, `CXX=g++-12`). Not PATH, LD_*, GIT_*, *_OPTIONS, PYTHONSTARTUP …: those change
;; what runs (shell_environment.clp).
(deffunction everyday-plain-assignment-p (?n ?v)
  (or (not (neq ?n "LANG" "LANGUAGE" "LC_ALL" "LC_CTYPE" "LC_MESSAGES" "LC_COLLATE" "LC_NUMERIC" "LC_TIME"
                "TZ" "NO_COLOR" "CLICOLOR" "FORCE_COLOR" "TERM" "COLUMNS" "LINES" "CI"
                "RUST_LOG" "RUST_BACKTRACE" "RUST_LIB_BACKTRACE" "RUST_TEST_THREADS" "CARGO_TERM_COLOR"
                "CARGO_INCREMENTAL" "NODE_ENV" "NODE_NO_WARNINGS" "CGO_ENABLED" "GOOS" "GOARCH" "GOARM"
                "GOAMD64" "GOMAXPROCS" "GOGC" "GOTRACEBACK" "PYTHONUNBUFFERED" "PYTHONDONTWRITEBYTECODE"
                "PYTHONHASHSEED" "PYTHONIOENCODING" "PYTHONUTF8" "DEBUG" "VERBOSE" "LOG_LEVEL" "LOGLEVEL"
                "PORT" "RAILS_ENV" "RACK_ENV" "APP_ENV" "FLASK_DEBUG" "OMP_NUM_THREADS" "MKL_NUM_THREADS"
                "CUDA_VISIBLE_DEVICES" "TF_CPP_MIN_LOG_LEVEL" "DOCKER_BUILDKIT" "NEXT_TELEMETRY_DISABLED"
                "DO_NOT_TRACK" "JOBS"))
      (and (not (neq ?n "CC" "CXX" "HOSTCC"))
           (regex-match "^(?:gcc|g\\+\\+|clang|clang\\+\\+|cc|c\\+\\+)(?:-[0-9][0-9.]*)?$" ?v))))

;; TRUE for a module search path made only of workspace directories (`PYTHONPATH=src
;; pytest`, `NODE_PATH=lib node x.js`, relative to the command's directory `?cwd`): it loads
;; the workspace's own code, as running it does. Any other directory, an expansion or an
;; empty entry (the current directory) is not everyday work.
(deffunction everyday-path-assignment-p (?n ?v ?cwd)
  (if (or (neq ?n "PYTHONPATH" "NODE_PATH") (eq ?v "") (str-index "$" ?v) (str-index "`" ?v)
          (str-index "~" ?v))
   then (return FALSE))
  (bind ?rest ?v)
  (while TRUE
    (bind ?k (str-index ":" ?rest))
    (bind ?part (if ?k then (sub-string 1 (- ?k 1) ?rest) else ?rest))
    (if (or (eq ?part "") (not (in-workspace (path-normalize ?part ?cwd)))) then (return FALSE))
    (if (not ?k) then (return TRUE))
    (bind ?rest (sub-string (+ ?k 1) (str-length ?rest) ?rest)))
  FALSE)

;; TRUE for a command (program ?p, words ?a, flags ?f) that prints only names of files below
;; the directories it reads: `find` without -printf/-exec/-fprint, `fd` without -x/--format,
;; `ls`, `git ls-files`, `git diff --name-only|--name-status`, `grep -l`, `rg -l|--files`.
;; Piped into `xargs`, the names it feeds are those the lister read (`git ls-files | xargs wc
;; -l`), not text of the files (`cat list.txt | xargs cat` may name any file).
(deffunction everyday-lister-p (?p ?a ?f)
  (or (and (eq ?p "find")
           (not (member$ "-printf" ?a)) (not (member$ "-fprintf" ?a)) (not (member$ "-exec" ?a))
           (not (member$ "-execdir" ?a)) (not (member$ "-ok" ?a)) (not (member$ "-okdir" ?a))
           (not (member$ "-fprint" ?a)) (not (member$ "-fprint0" ?a)) (not (member$ "-fls" ?a)))
      (and (eq ?p "fd") (not (member$ "-x" ?f)) (not (member$ "--exec" ?f)) (not (member$ "-X" ?f))
           (not (member$ "--exec-batch" ?f)) (not (member$ "--format" ?f)))
      (eq ?p "ls")
      (and (eq ?p "git") (>= (length$ ?a) 2)
           (or (eq (nth$ 2 ?a) "ls-files")
               (and (eq (nth$ 2 ?a) "diff") (or (member$ "--name-only" ?a) (member$ "--name-status" ?a)))))
      (and (or (eq ?p "rg") (eq ?p "grep"))
           (or (member$ "-l" ?f) (member$ "--files-with-matches" ?f) (member$ "--files" ?f) (member$ "-L" ?f)
               (member$ "--files-without-match" ?f)))))

;; TRUE for a loop or helper variable (a lower-case name: programs read upper-case ones)
;; whose value is only workspace paths or globs, relative to `?cwd` (`for f in src/*.py`,
;; `for d in pkg/a pkg/b`): using it names those files.
(deffunction everyday-workspace-words-p (?n ?v ?cwd)
  (if (or (eq ?v "") (neq ?n (lowcase ?n)) (str-index "$" ?v) (str-index "`" ?v) (str-index "~" ?v)
          (str-index ":" ?v))
   then (return FALSE))
  ;; lower-case names some programs do read: npm's settings (npm_config_registry,
  ;; npm_config_script_shell), the proxies of curl, wget, git and pip (http_proxy …)
  (if (or (regex-match "^(?:npm|yarn|pnpm|bun)_" ?n) (regex-match "_proxy$" ?n))
   then (return FALSE))
  (bind ?rest ?v)
  (while TRUE
    (bind ?k (str-index " " ?rest))
    (bind ?part (if ?k then (sub-string 1 (- ?k 1) ?rest) else ?rest))
    (if (and (neq ?part "") (not (in-workspace (path-normalize ?part ?cwd)))) then (return FALSE))
    (if (not ?k) then (return TRUE))
    (bind ?rest (sub-string (+ ?k 1) (str-length ?rest) ?rest)))
  FALSE)

;; Approves a shell line whose every effect is harmless (see the head of this file):
;; `ls -la`, `git commit -am x`, `make test`, `sed -i s/a/b/ src/x.py`, `rm -rf ./build`,
;; `cp .env.example .env`, `curl -sSL https://api.github.com/…`, `cat /etc/os-release`.
;; Every pattern below is a constant test on the engine's facts; the two function tests run
;; only for effects that reach them (deletes, reads outside the workspace).
(defrule everyday-shell
  (proposal (id ?id) (target shell))
  (exists (shell-command (proposal ?id)))
  (not (shell-error (proposal ?id)))
  (not (and (shell-assignment (proposal ?id) (index ?ai) (name ?an) (value ?av))
            (test (not (everyday-plain-assignment-p ?an ?av)))
            (not (and (shell-command (proposal ?id) (index ?ai) (cwd ?ac))
                      (test (or (everyday-path-assignment-p ?an ?av ?ac) (everyday-workspace-words-p ?an ?av ?ac)))))))
  (not (effect (proposal ?id) (kind env-dump|privilege)))
  (not (and (effect (proposal ?id) (index ?xi) (kind unknown) (object ~program) (via ?xv))
            (not (and (test (eq ?xv "wrapper"))
                      (shell-command (proposal ?id) (index ?pi&:(= ?pi (- ?xi 1))) (program ?pp) (argv $?pa)
                                     (flags $?pf) (cwd ?pc&:(in-workspace ?pc)))
                      (test (everyday-lister-p ?pp ?pa ?pf))
                      (not (effect (proposal ?id) (index ?pi) (kind ~read) (via ?lv)
                                   (class ?lc&:(execution-workspace-run-p ?lv ?lc))))
                      (not (effect (proposal ?id) (index ?pi) (kind read) (in-workspace FALSE)))))))
  (not (and (effect (proposal ?id) (index ?ui) (kind unknown) (object program) (target ~"["))
            (shell-command (proposal ?id) (index ?ui) (argv ?uw $?) (cwd ?uc))
            (test (not (execution-workspace-script-p ?uw ?uc)))))
  (not (and (effect (proposal ?id) (index ?gi) (kind delete) (program "git") (subcommand "clean"))
            (shell-command (proposal ?id) (index ?gi) (argv $?gv))
            (test (not (or (member$ "-n" ?gv) (member$ "--dry-run" ?gv))))))
  (not (effect (proposal ?id) (kind delete) (target ?gt&:(files-git-dir-target-p ?gt))))
  (not (effect (proposal ?id) (kind read) (class system) (target ?st&:(not (files-system-read-ok ?st)))))
  (not (effect (proposal ?id) (kind network)
               (subcommand "publish"|"unpublish"|"yank"|"deprecate"|"push"|"upload"|"release"|"login"|"adduser"|"owner"|"dist-tag")))
  (not (shell-command (proposal ?id) (program "kill"|"pkill"|"killall"|"killall5"|"unset")))
  (not (effect (proposal ?id) (kind exec) (object ?o&~path) (target ?x) (program ?xp) (via ?v)
               (dynamic ?xd&:(and (or (neq ?o program) (neq ?v "operand") (not (execution-everyday-tool-p ?x)))
                                  (or (neq ?o code) (not (execution-trivial-code-p ?xp ?v ?x ?xd)))))))
  (not (effect (proposal ?id) (kind exec) (object path) (in-workspace FALSE)))
  (not (effect (proposal ?id) (kind exec) (class persistence|credential)))
  (not (effect (proposal ?id) (kind write|delete) (in-workspace FALSE)
               (target ~"/dev/null"&~"/dev/stdout"&~"/dev/stderr"&~"/dev/tty")))
  (not (effect (proposal ?id) (kind write|delete) (class persistence|repository-config)))
  (not (effect (proposal ?id) (kind delete) (program ~"find") (subcommand ~"clean") (target ?t&:(eq ?t (workspace-root)))))
  (not (shell-command (proposal ?id) (program "sh"|"bash"|"zsh"|"dash"|"ksh"|"mksh"|"fish"|"ash"|"csh"|"tcsh"
                                              |"set"|"declare"|"typeset"|"export"|"env"|"printenv"|"compgen")
                      (args) (flags $?bf&:(not (or (member$ "--version" ?bf) (member$ "--help" ?bf))))))
  (not (shell-command (proposal ?id) (wrappers $? "nsenter"|"chroot"|"unshare"|"systemd-run"|"machinectl" $?)))
  (not (shell-command (proposal ?id) (wrappers $? "xargs"|"parallel" $?)
                      (program "rm"|"mv"|"cp"|"chmod"|"chown"|"chgrp"|"shred"|"truncate"|"tee"|"dd"|"ln"
                               |"install"|"rsync"|"unlink"|"rmdir"|"sed"|"perl"|"touch"|"mkdir")))
  (not (shell-command (proposal ?id) (program "make"|"gmake"|"ninja")
                      (args $? "install"|"uninstall"|"deploy"|"publish"|"release"|"upload"|"push" $?)))
  (not (shell-command (proposal ?id) (program "find") (argv $?fv&:(files-find-unfiltered-delete-p ?fv))))
  (not (effect (proposal ?id) (kind write|delete) (object none)))
  (not (effect (proposal ?id) (program "go") (subcommand "generate")))
  (not (effect (proposal ?id) (kind read) (class credential|secrets-config|persistence)))
  (not (and (effect (proposal ?id) (index ?ri) (kind read) (in-workspace FALSE) (dynamic TRUE) (target ?dt))
            (not (and (shell-command (proposal ?id) (index ?ri) (cwd ?rc))
                      (shell-assignment (proposal ?id) (index ?di) (name ?dn&:(or (eq ?dt (str-cat "$" ?dn))
                                                                                    (eq ?dt (str-cat "${" ?dn "}"))))
                                        (value ?dv))
                      (shell-command (proposal ?id) (index ?di) (cwd ?rc))
                      (test (everyday-workspace-words-p ?dn ?dv ?rc))))))
  (not (effect (proposal ?id) (kind read) (in-workspace FALSE) (class ~credential&~secrets-config&~persistence&~system&~warden-own) (program ~"ln")
               (target ?r&:(not (files-outside-read-ok ?r)))))
  (not (shell-command (proposal ?id) (program "ln"|"cp") (flags $? "-s"|"--symbolic" $?) (cwd ?cwd)
                      (args $? ?lt ?ll&:(files-symlink-outside-p ?lt ?ll ?cwd))))
  (not (effect (proposal ?id) (kind network) (target ?h&~""&:(not (egress-allowlisted-p ?h)))
               (subcommand ~"build"&~"compose build"&~"buildx build")))
  (not (effect (proposal ?id) (kind network) (subcommand "build"|"compose build"|"buildx build")
               (target ?h&~""&~"registry-1.docker.io"&:(not (egress-allowlisted-p ?h)))))
  (not (effect (proposal ?id) (kind network) (target "")
               (subcommand ~"fetch"&~"pull"&~"clone"&~"ls-remote"&~"submodule update"&~"remote-update"
                           &~"compose build")
               (program ~"mvn"&~"mvnw"&~"gradle"&~"gradlew")))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule everyday-shell)
                    (reason "every effect is everyday work (workspace files, allowlisted hosts)"))))

;; Approves a reply to the user: it only talks to the person who asked (secrets in it are
;; handled by secrets_outbound.clp, which wins).
(defrule everyday-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule everyday-reply)
                    (reason "reply to the user"))))
