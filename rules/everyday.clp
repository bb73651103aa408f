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
;;; and nothing else: no code from options (exec-program, exec-code), no privilege change,
;;; no environment dump, no unknown program. Variables set for a command must be harmless
;;; (locale, time zone, colours, terminal size).
;;;
;;; Everything this rule does not approve is caught by a named rule in another file
;;; (execution.clp, credentials.clp, persistence.clp, files.clp, egress.clp), and their
;;; reject or approval-required always wins over this approval: a line approved here whose
;;; build files this session wrote still needs a human (execution.clp).
;;;
;;; The allowlisted hosts are egress-allowlisted-p of egress.clp (loaded before this file).

;; Approves a shell line whose every effect is harmless (see the head of this file):
;; `ls -la`, `git commit -am x`, `make test`, `sed -i s/a/b/ src/x.py`, `rm -rf ./build`,
;; `cp .env.example .env`, `curl -sSL https://api.github.com/…`, `cat /etc/os-release`.
;; Every pattern below is a constant test on the engine's facts; the two function tests run
;; only for effects that reach them (deletes, reads outside the workspace).
(defrule everyday-shell
  (proposal (id ?id) (target shell))
  (exists (shell-command (proposal ?id)))
  (not (shell-error (proposal ?id)))
  (not (shell-assignment (proposal ?id)
                         (name ~"LANG"&~"LANGUAGE"&~"LC_ALL"&~"LC_CTYPE"&~"LC_MESSAGES"&~"LC_COLLATE"
                               &~"LC_NUMERIC"&~"LC_TIME"&~"TZ"&~"NO_COLOR"&~"CLICOLOR"&~"FORCE_COLOR"
                               &~"TERM"&~"COLUMNS"&~"LINES"&~"CI")))
  (not (effect (proposal ?id) (kind env-dump|privilege)))
  (not (and (effect (proposal ?id) (index ?ui) (kind unknown) (target ~"["))
            (shell-command (proposal ?id) (index ?ui) (argv ?uw $?) (cwd ?uc))
            (test (not (execution-workspace-script-p ?uw ?uc)))))
  (not (and (effect (proposal ?id) (index ?gi) (kind delete) (program "git") (subcommand "clean"))
            (shell-command (proposal ?id) (index ?gi) (argv $?gv))
            (test (not (or (member$ "-n" ?gv) (member$ "--dry-run" ?gv))))))
  (not (effect (proposal ?id) (kind delete) (target ?gt&:(str-suffix "/.git" ?gt))))
  (not (effect (proposal ?id) (kind read) (class system) (target ?st&:(not (files-system-read-ok ?st)))))
  (not (effect (proposal ?id) (kind network)
               (subcommand "publish"|"unpublish"|"yank"|"deprecate"|"push"|"upload"|"release"|"login"|"adduser"|"owner"|"dist-tag")))
  (not (shell-command (proposal ?id) (program "kill"|"pkill"|"killall"|"killall5"|"unset")))
  (not (effect (proposal ?id) (kind exec) (object ?o&~path) (target ?x)
               (via ?v&:(or (neq ?o program) (neq ?v "operand") (not (execution-everyday-tool-p ?x))))))
  (not (effect (proposal ?id) (kind exec) (object path) (in-workspace FALSE)))
  (not (effect (proposal ?id) (kind exec) (class persistence|credential)))
  (not (effect (proposal ?id) (kind write|delete) (in-workspace FALSE)
               (target ~"/dev/null"&~"/dev/stdout"&~"/dev/stderr"&~"/dev/tty")))
  (not (effect (proposal ?id) (kind write|delete) (class persistence)))
  (not (effect (proposal ?id) (kind delete) (program ~"find") (subcommand ~"clean") (target ?t&:(eq ?t (workspace-root)))))
  (not (shell-command (proposal ?id) (program "sh"|"bash"|"zsh"|"dash"|"ksh"|"mksh"|"fish"|"ash"|"csh"|"tcsh"
                                              |"set"|"declare"|"typeset"|"export"|"env"|"printenv"|"compgen")
                      (args)))
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
  (not (effect (proposal ?id) (kind read) (in-workspace FALSE) (dynamic TRUE)))
  (not (effect (proposal ?id) (kind read) (in-workspace FALSE) (class none) (program ~"ln")
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
