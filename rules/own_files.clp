;;; own_files.clp — Warden's own files: its config file, token file, rules, state directory
;;; (approvals database, audit log, signing and mask keys), TLS key and certificate, Unix
;;; socket and binary. The daemon gives the engine their paths from its own configuration
;;; (never from a proposal), wherever they are (`/var/lib/warden`, `/etc/warden`, outside
;;; the agent's home as well as in it). A path effect on one of them, inside one, or by a
;;; glob that may name one has the path class `warden-own`; a directory that holds one has
;;; `warden-own-dir`. `warden dry-run --config warden.toml` and `--own-path` decide with them.
;;;
;;; No agent needs them: with the signing key a forged log verifies, with the approvals
;;; database an agent approves its own actions, with a token it is an approver, with the
;;; config or rules it decides what is allowed.

;; Stops every effect on Warden's own files, by any program, tool or the file actuator:
;; `cat /var/lib/warden/audit-signing.pem`, `sqlite3 /var/lib/warden/state.db`,
;; `cp /etc/warden/tokens x`, `ln -s /var/lib/warden/state.db x`, `rm -rf /var/lib/warden`,
;; `cat /var/lib/w*/audit*`, a Read of the token file.
(defrule own-files-touched
  (effect (proposal ?id) (class warden-own) (kind ?k) (target ?p))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule own-files-touched)
                    (reason (str-cat "touches Warden's own files (" ?k "): " ?p)))))

;; Stops reading, copying, searching, writing or deleting a directory that holds Warden's
;; own files: the command takes them with it (`tar czf x.tgz /var/lib`,
;; `tar czf x.tgz /var/lib/warden/..`, `grep -r token /etc`, `cp -r /var/lib x`,
;; `rm -rf /var/lib`, `find /var/lib -delete`), and so does a tool searching it (Grep or Glob
;; over `/var/lib`). Listing and inspecting such a directory (`ls /var/lib`,
;; `find / -name libssl.so`, `locate libssl.so`, `du -sh /var`, `stat /etc`, `cd /`) reads names and sizes, none
;; of the files' contents: the other rules decide it.
(defrule own-files-directory
  (effect (proposal ?id) (class warden-own-dir) (kind ?k) (target ?p) (program ?prog))
  (test (or (neq ?k read)
            (not (member$ ?prog (create$ "ls" "stat" "du" "tree" "find" "fd" "fdfind" "test" "["
                                         "realpath" "readlink" "dirname" "basename" "cd" "pwd"
                                         "locate" "mlocate" "plocate")))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule own-files-directory)
                    (reason (str-cat "takes Warden's own files with a directory holding them (" ?k "): " ?p)))))

;; Stops a command that find runs on what it selects in a directory holding Warden's own files
;; (`find /var/lib -name '*.pem' -exec cat {} +`, `fd . /etc -x cat`): it reads them.
(defrule own-files-directory-find-exec
  (effect (proposal ?id) (class warden-own-dir) (program ?f&"find"|"fd"|"fdfind") (target ?p))
  (shell-command (proposal ?id) (wrappers $? ?f $?) (program ?prog))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule own-files-directory-find-exec)
                    (reason (str-cat ?prog " runs on files " ?f " selects in a directory holding Warden's own files: " ?p)))))
