;;; persistence.clp — writes that make code run again later, outside any proposal: shell
;;; start-up files, cron, systemd units, launch agents, SSH keys and config, git hooks and
;;; config at any depth, direnv's .envrc, editor task files, Python .pth files, directories
;;; on PATH, the loader and sudo configuration.
;;;
;;; Which paths those are is data: the `persistence` class of rules/paths.toml. Which words
;;; of a command a program writes is data too (rules/effects.toml): redirects, `tee`,
;;; `sed -i`, `cp`/`mv`/`ln`/`install` destinations, `sort -o`, `uniq IN OUT`,
;;; `cmake -E copy`, `git config` (writes .git/config), editors, and the file actuator.
;;;
;;; An agent that plants code in a start-up file escapes every later decision: the code runs
;;; at the next login, boot, commit or cron tick without a proposal.

;; Stops writing (or deleting, or replacing) a persistence file outside the workspace:
;; `echo … >> ~/.bashrc`, `tee -a ~/.profile`, `cp x ~/.config/autostart/`,
;; `cat k.pub >> ~/.ssh/authorized_keys`, `> /etc/cron.d/x`, `sort -o ~/.bashrc`,
;; `git config --global core.pager …`, the file actuator writing ~/.config/systemd/user/x.
;; (crontab is judged by persistence-crontab: `crontab -l` only lists.)
(defrule persistence-write
  (effect (proposal ?id) (kind write|delete) (class persistence) (in-workspace FALSE) (target ?p) (program ?prog&~"crontab")
          (via ~"program"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-write)
                    (reason (str-cat "write to a persistence location: " ?p
                                     (if (eq ?prog "") then "" else (str-cat " (" ?prog ")")))))))

;; Asks a human when running a program installs something that runs later by itself
;; (`systemctl enable`, `launchctl load`, `at`, `go install` into ~/go/bin): the table says
;; the program writes a persistence location when it runs, not which file.
(defrule persistence-program-install
  (effect (proposal ?id) (kind write|delete) (class persistence) (in-workspace FALSE) (via "program")
          (target ?p) (program ?prog&~"crontab"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-program-install)
                    (reason (str-cat ?prog " installs into a persistence location: " ?p)))))

;; Asks a human before writing a persistence file inside the workspace: git hooks and config
;; at any depth (`.git/hooks/pre-commit`, `vendor/x/.git/hooks/…`, `.git/modules/m/hooks/…`,
;; `git config core.hooksPath …`), `.husky/`, `.envrc`, `.vscode/tasks.json`, a venv's
;; `*.pth`: they run code on the next commit, checkout, `cd` or editor start.
(defrule persistence-workspace-write
  (effect (proposal ?id) (kind write|delete) (class persistence) (in-workspace TRUE) (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-workspace-write)
                    (reason (str-cat "write to a file that runs code later: " ?p)))))

;; Asks a human before writing a file git may read as a repository's configuration, at any
;; depth (`sub/config` next to `sub/HEAD` and `sub/objects/` is a bare repository; a `.git`
;; file or `commondir` points git at another one): a later `git status` there runs its
;; core.fsmonitor. Reading them is not judged here.
(defrule persistence-repository-config-write
  (effect (proposal ?id) (kind write|delete) (class repository-config) (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-repository-config-write)
                    (reason (str-cat "write to a file git may run as a repository configuration: " ?p)))))

;; Stops `crontab -e`, `crontab file`, `echo … | crontab -`, `crontab -r`: anything but
;; listing (`crontab -l`) installs or replaces scheduled jobs.
(defrule persistence-crontab
  (shell-command (proposal ?id) (program "crontab") (flags $?f&:(not (member$ "-l" ?f))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-crontab)
                    (reason "crontab installs scheduled jobs"))))

;; Asks a human for `systemctl enable x` / `systemctl --user enable --now x` / `link`:
;; makes a unit start at every boot or login.
(defrule persistence-systemctl-enable
  (shell-command (proposal ?id) (program "systemctl") (args $? "enable"|"link"|"reenable"|"preset"|"set-default" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-systemctl-enable)
                    (reason "systemctl makes a unit start automatically"))))

;; Asks a human for `at`/`batch` jobs and `launchctl load|bootstrap|submit`: deferred
;; execution outside any later proposal.
(defrule persistence-scheduled-job
  (or (shell-command (proposal ?id) (program "at"|"batch"))
      (shell-command (proposal ?id) (program "launchctl") (args "load"|"bootstrap"|"submit"|"enable" $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-scheduled-job)
                    (reason "schedules code to run later"))))
