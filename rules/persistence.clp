;;; persistence.clp — writes that make code run again later (shell start-up files, cron,
;;; systemd units, SSH keys, launch agents, rc.local).
;;;
;;; An agent that plants code in a start-up file escapes every later decision: the code runs
;;; at the next login, boot or cron tick without a proposal. Covered for the `file` target
;;; (normalized `payload.path`) and for the shell (redirections, tee/editors, cp/mv/ln/install
;;; targets, crontab, systemctl enable).

;; Files under a home directory that run code or grant access (relative to the home).
(defglobal ?*persist-home-re* =
  "^/(\\.bashrc|\\.bash_profile|\\.bash_login|\\.bash_logout|\\.profile|\\.zshrc|\\.zprofile|\\.zshenv|\\.zlogin|\\.zlogout|\\.kshrc|\\.cshrc|\\.tcshrc|\\.xinitrc|\\.xprofile|\\.xsessionrc|\\.config/fish/config\\.fish|\\.config/fish/conf\\.d(/.*)?|\\.config/systemd(/.*)?|\\.local/share/systemd(/.*)?|\\.config/autostart(/.*)?|\\.ssh/authorized_keys2?|\\.ssh/rc|Library/LaunchAgents(/.*)?)$")

;; TRUE for a normalized path whose modification persists code or access: system
;; start-up/cron/systemd/sudoers locations, and start-up files under any home directory
;; (/root, /home/*, /Users/*), or under the configured home when it lives elsewhere.
(deffunction persist-path-p (?p)
  (if (regex-match "^/etc/(profile|profile\\.d(/.*)?|bash\\.bashrc|bashrc|zsh(/.*)?|zshrc|zprofile|environment|cron.*|anacrontab|systemd(/.*)?|rc\\.local|rc[0-6S]?\\.d(/.*)?|init\\.d(/.*)?|init(/.*)?|xdg/autostart(/.*)?|ld\\.so\\.preload|sudoers|sudoers\\.d(/.*)?|update-motd\\.d(/.*)?)$|^/var/spool/cron(/|$)|^/(usr/)?lib/systemd/|^/Library/Launch(Agents|Daemons)(/|$)|/\\.ssh/authorized_keys2?$|^(/root|/home/[^/]+|/Users/[^/]+)/(\\.bashrc|\\.bash_profile|\\.bash_login|\\.bash_logout|\\.profile|\\.zshrc|\\.zprofile|\\.zshenv|\\.zlogin|\\.zlogout|\\.kshrc|\\.cshrc|\\.tcshrc|\\.xinitrc|\\.xprofile|\\.xsessionrc|\\.config/fish/config\\.fish|\\.config/fish/conf\\.d(/.*)?|\\.config/systemd(/.*)?|\\.local/share/systemd(/.*)?|\\.config/autostart(/.*)?|\\.ssh/rc|Library/LaunchAgents(/.*)?)$" ?p)
   then (return TRUE))
  (bind ?h (home-dir))
  (and (not (regex-match "^(/root|/home/[^/]+|/Users/[^/]+)$" ?h))
       (str-prefix (str-cat ?h "/") ?p)
       (regex-match ?*persist-home-re* (sub-string (+ (str-length ?h) 1) (str-length ?p) ?p))))

;; TRUE for a repository file that makes git run code (hooks, or config that can point
;; core.hooksPath / core.fsmonitor anywhere).
(deffunction persist-git-hook-path-p (?p)
  (regex-match "/\\.git/(hooks(/.*)?|config)$" ?p))

;; The file a redirection writes: its normalized path, or for `>& FILE` (left without a
;; path by the fact builder) the normalized target; "" for an fd duplication (`2>&1`).
(deffunction persist-redirect-path (?op ?t ?p)
  (if (neq ?p "") then (return ?p))
  (if (regex-match "^[0-9]*-?$" ?t) then (return ""))
  (path-normalize ?t))

;; Stops writing a start-up file, cron table, systemd unit, authorized_keys, rc.local or
;; launch agent through the file actuator (write or append; normalized path, so
;; `../../.bashrc` counts).
(defrule persistence-file-write
  (or (proposal (id ?id) (target file) (action write|append))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "write"|"append"))))
  (path (proposal ?id) (key "payload.path") (normalized ?p&:(persist-path-p ?p)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-file-write)
                    (reason (str-cat "write to a persistence location: " ?p)))))

;; Asks a human before the file actuator writes git hooks or .git/config: they run code
;; on the next commit/checkout, outside any proposal.
(defrule persistence-git-hooks
  (or (proposal (id ?id) (target file) (action write|append))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "write"|"append"))))
  (path (proposal ?id) (key "payload.path") (normalized ?p&:(persist-git-hook-path-p ?p)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-git-hooks)
                    (reason (str-cat "write to a git hook or git config: " ?p)))))

;; Stops `echo 'curl x|sh' >> ~/.bashrc`, `cat key >> ~/.ssh/authorized_keys`,
;; `echo '* * * * * …' > /etc/cron.d/x`: a shell redirect into a persistence location.
(defrule persistence-shell-redirect
  (shell-redirect (proposal ?id) (op ?op&">"|">>"|">|"|"&>"|"&>>"|"<>"|">&") (target ?t)
                  (path ?p&:(persist-path-p (persist-redirect-path ?op ?t ?p))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-shell-redirect)
                    (reason (str-cat "redirect into a persistence location: " (persist-redirect-path ?op ?t ?p))))))

;; Asks a human before a shell redirect writes git hooks or .git/config.
(defrule persistence-shell-git-hooks
  (shell-redirect (proposal ?id) (op ?op&">"|">>"|">|"|"&>"|"&>>"|"<>"|">&") (target ?t)
                  (path ?p&:(persist-git-hook-path-p (persist-redirect-path ?op ?t ?p))))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule persistence-shell-git-hooks)
                    (reason (str-cat "redirect into a git hook or git config: " ?t)))))

;; Stops `echo x | tee -a ~/.bashrc`, `sudo tee /etc/profile.d/x.sh`, `vim ~/.zshrc`,
;; `truncate`: programs that write every file operand.
(defrule persistence-shell-tee
  (shell-command (proposal ?id)
                 (program "tee"|"truncate"|"ed"|"ex"|"vi"|"vim"|"nvim"|"nano"|"emacs"|"pico"|"joe")
                 (paths $? ?p&:(persist-path-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-shell-tee)
                    (reason (str-cat ?p " is modified by a writing program")))))

;; Stops `sed -i 's/…/…/' ~/.bashrc` and `perl -pi -e … /etc/profile`: in-place edits.
(defrule persistence-shell-sed-inplace
  (shell-command (proposal ?id) (program "sed"|"perl"|"gsed")
                 (argv $? ?f&:(regex-match "^-[A-Za-z]*i|^--in-place" ?f) $?)
                 (paths $? ?p&:(persist-path-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-shell-sed-inplace)
                    (reason (str-cat "in-place edit of a persistence location: " ?p)))))

;; Stops `cp evil.sh ~/.bashrc`, `mv unit /etc/systemd/system/x.service`,
;; `ln -sf x ~/.profile`, `install -m644 x /etc/cron.d/y`: the destination (last operand)
;; is a persistence location. (Copying *from* ~/.bashrc is not persistence.)
(defrule persistence-shell-copy
  (shell-command (proposal ?id) (program "cp"|"mv"|"ln"|"install"|"rsync"|"scp"|"dd")
                 (paths $? ?p&:(persist-path-p ?p)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule persistence-shell-copy)
                    (reason (str-cat "copy into a persistence location: " ?p)))))

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
