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
;; `rm -rf /var/lib`), and so does a tool searching it (Grep or Glob over `/var/lib`).
;; Listing and inspecting such a directory (`ls /var/lib`, `find / -name libssl.so`,
;; `du -sh /var`, `stat /etc`, `cd /`) shows names and sizes, none of the files' contents:
;; the other rules decide it (a program that `find -exec` runs is an effect of its own).
(defrule own-files-directory
  (effect (proposal ?id) (class warden-own-dir) (kind ?k) (target ?p)
          (program ?prog&~"ls"&~"stat"&~"du"&~"tree"&~"find"&~"fd"&~"fdfind"&~"test"&~"["&~"realpath"&~"readlink"&~"dirname"&~"basename"&~"cd"&~"pwd"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule own-files-directory)
                    (reason (str-cat "takes Warden's own files with a directory holding them (" ?k "): " ?p)))))
