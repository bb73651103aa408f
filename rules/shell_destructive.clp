;;; shell_destructive.clp — shell commands that destroy data or take the machine down.
;;;
;;; Every rule here matches `shell-command` / `shell-redirect` facts, so it sees the command
;;; however it was written: wrappers (sudo, env, timeout, nice, xargs, bash -c) are unwrapped,
;;; compound lines are split, quotes are removed, paths are normalized against the cwd the
;;; line has reached (`cd / && rm -rf *` deletes "/*").

;; TRUE for a top-level directory whose loss breaks the machine, or anything in it.
(deffunction destructive-system-dir-p (?p)
  (regex-match "^/(etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|var|opt|root|dev|proc|sys|srv|home|run|snap|mnt|media)(/|$)" ?p))

;; TRUE for a path in a system directory whose single files must not be deleted either (home
;; directories and mounts are excluded: deleting ~/notes.txt is not a system change).
(deffunction destructive-system-file-p (?p)
  (regex-match "^/(etc|usr|bin|sbin|lib|lib32|lib64|libx32|boot|dev|proc|sys)(/|$)" ?p))

;; TRUE for a path that still holds an expansion the parser could not resolve ($X, `…`):
;; such a path is never "within" anything, so it must not count as outside either.
(deffunction destructive-unresolved-p (?p)
  (or (not (str-prefix "/" ?p)) (str-contains ?p "$") (str-contains ?p "`")))

;; TRUE for a resolved path that lies outside the workspace.
(deffunction destructive-outside-p (?p)
  (and (not (destructive-unresolved-p ?p)) (not (in-workspace ?p))))

;; TRUE for a path whose recursive removal/chmod is catastrophic: "/", a glob right under
;; "/" ("/*"), the home directory or one of its ancestors, the workspace root or one of its
;; ancestors, or anything in a system directory. Paths strictly inside the workspace never are.
(deffunction destructive-critical-path-p (?p)
  (if (destructive-unresolved-p ?p) then (return FALSE))
  (if (and (in-workspace ?p) (neq ?p (workspace-root))) then (return FALSE))
  (or (eq ?p "/")
      (regex-match "^/[^/]*[*?\\[]" ?p)
      (path-within (home-dir) ?p)
      (path-within (workspace-root) ?p)
      (destructive-system-dir-p ?p)))

;; TRUE for a recursive flag of rm (GNU rm accepts unambiguous long-option prefixes, so
;; "--rec" is "--recursive").
(deffunction destructive-recursive-flag-p (?f)
  (or (eq ?f "-r") (eq ?f "-R") (str-prefix "--r" ?f)))

;; TRUE for a device node a write to would destroy data (disks, partitions, memory); the
;; harmless pseudo-devices are excluded. /dev/tcp and /dev/udp are reverse shells (see
;; shell_reverse_shell.clp), not disks.
(deffunction destructive-device-p (?p)
  (and (str-prefix "/dev/" ?p)
       (not (regex-match "^/dev/(null|zero|full|random|urandom|stdin|stdout|stderr|tty|ptmx|console|fd/.*|pts/.*|shm/.*|tcp/.*|udp/.*)$" ?p))))

;; TRUE for a dd operand "of=/dev/sdX" (normalized, so "of=/dev/../dev/sda" counts too).
(deffunction destructive-dd-device-operand-p (?a)
  (and (str-prefix "of=" ?a)
       (destructive-device-p (path-normalize (sub-string 4 (str-length ?a) ?a)))))

;; Stops `rm -rf /`, `rm -r ~`, `rm -Rf /etc`, `rm --recursive --force /usr`, `cd / && rm -rf *`,
;; `rm -rf ../../etc` and every wrapper form (sudo, env, timeout, nice, bash -c, $(…)):
;; a recursive delete of the root, the home directory, the workspace itself or a system
;; directory is never a legitimate agent action.
(defrule shell-destructive-rm
  (shell-command (proposal ?id) (program "rm")
                 (flags $? ?f&:(destructive-recursive-flag-p ?f) $?)
                 (paths $? ?p&:(destructive-critical-path-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-rm)
                    (reason (str-cat "recursive delete of a critical path: " ?p)))))

;; Stops recursive deletes of anything outside the workspace (`rm -rf /tmp/x`, `rm -r ~/docs`):
;; the agent owns the workspace, not the rest of the disk.
(defrule shell-destructive-rm-outside-workspace
  (shell-command (proposal ?id) (program "rm")
                 (flags $? ?f&:(destructive-recursive-flag-p ?f) $?)
                 (paths $? ?p&:(destructive-outside-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-rm-outside-workspace)
                    (reason (str-cat "recursive delete outside the workspace: " ?p)))))

;; Stops deleting single files in system directories (`rm /etc/passwd`, `rm -f /usr/bin/sudo`):
;; even without -r that breaks the machine.
(defrule shell-destructive-rm-system-file
  (shell-command (proposal ?id) (program "rm")
                 (paths $? ?p&:(destructive-system-file-p ?p)&:(destructive-outside-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-rm-system-file)
                    (reason (str-cat "delete of a system file: " ?p)))))

;; Asks a human for recursive deletes whose target the parser cannot know (`rm -rf $X`,
;; `rm -rf "$DIR"/*`, `rm -rf *`): if $X is empty or wrong, this is `rm -rf /`.
(defrule shell-destructive-rm-dynamic
  (shell-command (proposal ?id) (program "rm") (index ?i)
                 (flags $? ?f&:(destructive-recursive-flag-p ?f) $?)
                 (dynamic TRUE))
  (effect (proposal ?id) (index ?i) (kind delete) (dynamic TRUE) (in-workspace ?w) (target ?t))
  (test (or (eq ?w FALSE) (str-suffix "/*" ?t) (str-suffix "/.*" ?t) (eq ?t "*")))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-destructive-rm-dynamic)
                    (reason "recursive delete of a target only known at run time"))))

;; Asks a human for `… | xargs rm -rf`: the targets come from another command's output and
;; cannot be checked here.
(defrule shell-destructive-rm-xargs
  (shell-command (proposal ?id) (program "rm")
                 (flags $? ?f&:(destructive-recursive-flag-p ?f) $?)
                 (wrappers $? "xargs" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-destructive-rm-xargs)
                    (reason "recursive delete of targets read from another command"))))

;; Stops `--no-preserve-root` on any program (rm, chmod, chown, chgrp): it exists only to
;; defeat the safety net for "/". coreutils refuses abbreviations of it, so the exact word
;; suffices; matched on the raw text through the pattern index.
(defrule shell-destructive-no-preserve-root
  (pattern-hit (proposal ?id) (key "payload.command") (kind substring) (pattern "--no-preserve-root"))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-no-preserve-root)
                    (reason "--no-preserve-root disables the protection of /"))))

;; Stops `find / -delete` and `find ~ -name x -delete` outside the workspace: a recursive
;; delete written as find.
(defrule shell-destructive-find-delete
  (shell-command (proposal ?id) (program "find")
                 (argv $? "-delete" $?)
                 (paths $? ?p&:(destructive-outside-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-find-delete)
                    (reason (str-cat "find -delete outside the workspace: " ?p)))))

;; Stops `dd of=/dev/sda`: overwriting a disk or memory device destroys everything on it.
(defrule shell-destructive-dd-device
  (shell-command (proposal ?id) (program "dd")
                 (argv $? ?a&:(destructive-dd-device-operand-p ?a) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-dd-device)
                    (reason (str-cat "dd writes to a device: " ?a)))))

;; Stops making or wiping file systems (mkfs, mkfs.ext4, mke2fs, mkswap, wipefs, blkdiscard):
;; each erases a whole device.
(defrule shell-destructive-mkfs
  (or (shell-command (proposal ?id) (program ?p&"mkfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.ext2"))
      (shell-command (proposal ?id) (program ?p&"mkfs.ext3"))
      (shell-command (proposal ?id) (program ?p&"mkfs.ext4"))
      (shell-command (proposal ?id) (program ?p&"mkfs.xfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.btrfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.vfat"))
      (shell-command (proposal ?id) (program ?p&"mkfs.fat"))
      (shell-command (proposal ?id) (program ?p&"mkfs.msdos"))
      (shell-command (proposal ?id) (program ?p&"mkfs.ntfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.exfat"))
      (shell-command (proposal ?id) (program ?p&"mkfs.f2fs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.minix"))
      (shell-command (proposal ?id) (program ?p&"mkfs.jfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.reiserfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.cramfs"))
      (shell-command (proposal ?id) (program ?p&"mkfs.bfs"))
      (shell-command (proposal ?id) (program ?p&"mkntfs"))
      (shell-command (proposal ?id) (program ?p&"mkdosfs"))
      (shell-command (proposal ?id) (program ?p&"mke2fs"))
      (shell-command (proposal ?id) (program ?p&"mkswap"))
      (shell-command (proposal ?id) (program ?p&"wipefs"))
      (shell-command (proposal ?id) (program ?p&"blkdiscard")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-mkfs)
                    (reason (str-cat ?p " erases a device")))))

;; Stops shred, cp, tee, cat … on raw devices (`shred /dev/sda`, `cp /dev/zero /dev/nvme0n1`,
;; `cat /dev/mem`): reading or writing a disk or memory device bypasses every file permission.
(defrule shell-destructive-raw-device
  (or (shell-command (proposal ?id) (program ?prog&"shred") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"cp") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"mv") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"tee") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"cat") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"pv") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"ln") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"install") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"truncate") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"badblocks") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"fdisk") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"sfdisk") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"gdisk") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"sgdisk") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"parted") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"hdparm") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?))
      (shell-command (proposal ?id) (program ?prog&"rsync") (paths $? ?p&:(str-prefix "/dev/" ?p)&:(destructive-device-p ?p) $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-raw-device)
                    (reason (str-cat "raw device access: " ?p)))))

;; Stops `> /dev/sda` and `echo x >> /dev/nvme0n1`: a redirect onto a disk device.
(defrule shell-destructive-device-redirect
  (shell-redirect (proposal ?id) (op ">"|">>"|">|"|"&>"|"&>>"|"<>"|">&") (target ?t)
                  (path ?p&:(or (str-prefix "/dev/" ?p) (str-prefix "/dev/" ?t))
                           &:(or (destructive-device-p ?p) (destructive-device-p ?t))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-device-redirect)
                    (reason (str-cat "redirect onto a device: " ?t)))))

;; Stops the classic fork bomb `:(){ :|:& };:` and named variants (`b(){ b|b& };b`,
;; `function b { b|b & }`): a function that pipes into itself in the background exhausts
;; the process table. Matched on the raw text through the pattern index.
(defrule shell-destructive-fork-bomb
  (pattern-hit (proposal ?id) (key "payload.command") (kind regex)
               (pattern ":\\s*\\(\\s*\\)\\s*\\{|[A-Za-z0-9_.:-]+\\s*\\(\\s*\\)\\s*\\{[^}]*\\|[^}]*&|function\\s+[^\\s(]+\\s*(\\(\\s*\\))?\\s*\\{[^}]*\\|[^}]*&"))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-fork-bomb)
                    (reason "fork bomb"))))

;; Stops the fork bomb as the parser sees it when the function body is split into commands:
;; three or more `:` commands in one line (`:|:&` plus the call) are never real work.
(defrule shell-destructive-fork-bomb-colon
  (shell-command (proposal ?id) (program ":") (index ?i))
  (shell-command (proposal ?id) (program ":") (index ?j&:(> ?j ?i)))
  (shell-command (proposal ?id) (program ":") (index ?k&:(> ?k ?j)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-fork-bomb-colon)
                    (reason "fork bomb (repeated ':' commands)"))))

;; Stops `chmod -R`, `chown -R`, `chgrp -R` on "/", home, the workspace root or a system
;; directory: it breaks sudo, ssh and every service at once. (For chmod, `-r` is a mode,
;; not recursion, so only -R/--recursive count.)
(defrule shell-destructive-chmod-recursive
  (or (shell-command (proposal ?id) (program "chmod") (flags $? "-R"|"--recursive" $?) (paths $? ?p&:(destructive-critical-path-p ?p) $?))
      (shell-command (proposal ?id) (program "chown") (flags $? "-R"|"--recursive" $?) (paths $? ?p&:(destructive-critical-path-p ?p) $?))
      (shell-command (proposal ?id) (program "chgrp") (flags $? "-R"|"--recursive" $?) (paths $? ?p&:(destructive-critical-path-p ?p) $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-chmod-recursive)
                    (reason (str-cat "recursive permission change on a critical path: " ?p)))))

;; Stops `chmod 777 /`, `chmod o+w /etc/passwd`, `chmod a+rwx /usr/bin`: making system paths
;; world-writable hands the machine to every local user.
(defrule shell-destructive-chmod-world-writable
  (shell-command (proposal ?id) (program "chmod")
                 (args $? ?m&:(regex-match "^0*[0-7]?[0-7]?[0-7]?[2367]$|(^|,)[ugo]*[oa][ugoa]*[+=][rwxXst]*w|(^|,)[+=][rwxXst]*w" ?m) $?)
                 (paths $? ?p&:(destructive-critical-path-p ?p) $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-chmod-world-writable)
                    (reason (str-cat "world-writable mode on a critical path: " ?p)))))

;; Stops `kill -9 -1`, `kill -KILL -1`, `kill -- -1` (every process the user may signal)
;; and `kill -9 1` (init): both take the whole system down.
(defrule shell-destructive-kill-all
  (or (shell-command (proposal ?id) (program "kill") (argv $? "-1"|"1"))
      (shell-command (proposal ?id) (program "killall5") (argv $? "-1"|"1")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-kill-all)
                    (reason "kills every process or init"))))

;; Asks a human for stopping processes (`kill -9 PID`, `pkill -f server`, `killall node`,
;; `kill $(pgrep sshd)`): the agent may not own them, and stopping the wrong one (sshd, a
;; database, another user's job) is an outage.
(defrule shell-destructive-kill
  (or (shell-command (proposal ?id) (program ?p&"kill"))
      (shell-command (proposal ?id) (program ?p&"pkill"))
      (shell-command (proposal ?id) (program ?p&"killall"))
      (shell-command (proposal ?id) (program ?p&"killall5")))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-destructive-kill)
                    (reason (str-cat ?p " stops processes")))))

;; Asks a human for `pkill -u USER` / `killall -u USER`: kills every process of a user.
(defrule shell-destructive-kill-user
  (or (shell-command (proposal ?id) (program "pkill") (flags $? "-u"|"--user" $?))
      (shell-command (proposal ?id) (program "killall") (flags $? "-u"|"--user" $?)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule shell-destructive-kill-user)
                    (reason "kills every process of a user"))))

;; Stops shutdown, reboot, halt and poweroff: an agent never takes the host down.
(defrule shell-destructive-shutdown
  (or (shell-command (proposal ?id) (program "shutdown"))
      (shell-command (proposal ?id) (program "reboot"))
      (shell-command (proposal ?id) (program "halt"))
      (shell-command (proposal ?id) (program "poweroff")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-shutdown)
                    (reason "shuts the machine down"))))

;; Stops `init 0`, `init 6`, `telinit 1`: runlevel changes halt, reboot or drop to single user.
(defrule shell-destructive-init-runlevel
  (or (shell-command (proposal ?id) (program "init") (args $? "0"|"1"|"6"|"s"|"S" $?))
      (shell-command (proposal ?id) (program "telinit") (args $? "0"|"1"|"6"|"s"|"S" $?)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-init-runlevel)
                    (reason "runlevel change halts or reboots the machine"))))

;; Stops `systemctl poweroff|reboot|halt|kexec|rescue|emergency`: the same as shutdown.
(defrule shell-destructive-systemctl-power
  (shell-command (proposal ?id) (program "systemctl")
                 (args $? "poweroff"|"reboot"|"halt"|"kexec"|"soft-reboot"|"rescue"|"emergency"|"suspend"|"hibernate" $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule shell-destructive-systemctl-power)
                    (reason "systemctl power action"))))
