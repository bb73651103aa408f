;;; files.clp — where the agent may read and write files.
;;;
;;; The workspace is the agent's: reads and writes inside it are approved (other rules,
;;; e.g. credentials or persistence, still reject or escalate and win). Outside it, writes
;;; are rejected and reads need a human. Applies to the `file` target (normalized
;;; `payload.path`, so `../../etc/passwd` is outside) and to shell output redirections.
;;;
;;; A path is in the workspace only if it is there both as written (normalized) and after
;;; symlinks (resolved): `ws/etc_link/passwd` with `etc_link -> /etc` is outside.
;;;
;;; The file verb is the proposal's `action` (`{"target":"file","action":"write",…}`); a
;;; `payload.action` field is honoured too, and either being a write makes it a write.

;; TRUE for a redirect target that is an fd duplication (`2>&1`, `>&-`), not a file.
(deffunction files-fd-dup-p (?op ?t)
  (and (or (eq ?op ">&") (eq ?op "<&")) (regex-match "^[0-9]*-?$" ?t)))

;; TRUE for the pseudo-files output may always go to.
(deffunction files-harmless-sink-p (?p)
  (or (eq ?p "/dev/null") (eq ?p "/dev/stdout") (eq ?p "/dev/stderr") (eq ?p "/dev/tty")
      (str-prefix "/dev/fd/" ?p)))

;; TRUE for a path that still holds an unresolved expansion ($OUT, `…`).
(deffunction files-unresolved-p (?p)
  (or (eq ?p "") (not (str-prefix "/" ?p)) (str-contains ?p "$") (str-contains ?p "`")))

;; A path for a reason: normalized, plus where it resolves to when a symlink leads elsewhere.
(deffunction files-where (?p ?r)
  (if (or (eq ?r "") (eq ?r ?p)) then ?p else (str-cat ?p " (resolves to " ?r ")")))

;; Stops the file actuator writing, appending or deleting outside the workspace
;; (`/etc/hosts`, `~/.ssh/config`, `../../x`): the agent owns only the workspace.
(defrule files-write-outside-workspace
  (or (proposal (id ?id) (target file) (action write|append|delete))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "write"|"append"|"delete"))))
  (path (proposal ?id) (key "payload.path") (in-workspace FALSE) (normalized ?p) (resolved ?r))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-write-outside-workspace)
                    (reason (str-cat "write outside the workspace: " (files-where ?p ?r))))))

;; Asks a human before the file actuator reads outside the workspace (`/etc/hosts`,
;; `~/notes.txt`): not destructive, but it widens what the agent sees.
(defrule files-read-outside-workspace
  (or (proposal (id ?id) (target file) (action read))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "read"))))
  (path (proposal ?id) (key "payload.path") (in-workspace FALSE) (normalized ?p) (resolved ?r))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-read-outside-workspace)
                    (reason (str-cat "read outside the workspace: " (files-where ?p ?r))))))

;; Approves reading a file inside the workspace (everyday work).
(defrule files-read-workspace
  (or (proposal (id ?id) (target file) (action read))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "read"))))
  (path (proposal ?id) (key "payload.path") (in-workspace TRUE))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule files-read-workspace)
                    (reason "read inside the workspace"))))

;; Approves writing or appending a file inside the workspace (everyday work). Deletes are
;; left to the default (a human), so a mistaken delete is never silent.
(defrule files-write-workspace
  (or (proposal (id ?id) (target file) (action write|append))
      (and (proposal (id ?id) (target file))
           (param (proposal ?id) (key "payload.action") (value "write"|"append"))))
  (path (proposal ?id) (key "payload.path") (in-workspace TRUE))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule files-write-workspace)
                    (reason "write inside the workspace"))))

;; The file a redirection writes: its normalized path, or for `>& FILE` (which the fact
;; builder treats as an fd duplication and leaves without a path) the normalized target.
;; "" for a real fd duplication (`2>&1`, `>&-`).
(deffunction files-redirect-path (?op ?t ?p)
  (if (neq ?p "") then (return ?p))
  (if (files-fd-dup-p ?op ?t) then (return ""))
  (path-normalize ?t))

;; TRUE for a redirection writing a resolved file outside the workspace (not a harmless sink).
(deffunction files-redirect-outside-p (?op ?t ?p)
  (bind ?f (files-redirect-path ?op ?t ?p))
  (and (neq ?f "") (not (files-harmless-sink-p ?f)) (not (files-unresolved-p ?f))
       (not (in-workspace ?f))))

;; TRUE for a redirection writing a file known only at run time ($OUT, `…`).
(deffunction files-redirect-dynamic-p (?op ?t ?p)
  (and (not (files-fd-dup-p ?op ?t))
       (or (str-contains ?t "$") (str-contains ?t "`") (files-unresolved-p (files-redirect-path ?op ?t ?p)))))

;; Stops shell output redirections to files outside the workspace (`echo x > /etc/hosts`,
;; `cmd >> ~/log`, `cmd &> /tmp/out`, `cmd >& /tmp/out`); /dev/null, /dev/stdout,
;; /dev/stderr, /dev/tty, /dev/fd/N and fd duplications (`2>&1`) are fine.
(defrule files-shell-redirect-outside-workspace
  (shell-redirect (proposal ?id) (op ?op&">"|">>"|">|"|"&>"|"&>>"|"<>"|">&") (target ?t)
                  (path ?p&:(files-redirect-outside-p ?op ?t ?p)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule files-shell-redirect-outside-workspace)
                    (reason (str-cat "output redirected outside the workspace: " (files-redirect-path ?op ?t ?p))))))

;; Asks a human for output redirections whose target is only known at run time
;; (`cmd > $OUT`, `cmd > "$(mktemp)"`): it may be anywhere.
(defrule files-shell-redirect-dynamic
  (shell-redirect (proposal ?id) (op ?op&">"|">>"|">|"|"&>"|"&>>"|"<>"|">&") (target ?t)
                  (path ?p&:(files-redirect-dynamic-p ?op ?t ?p)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule files-shell-redirect-dynamic)
                    (reason (str-cat "output redirected to a target known only at run time: " ?t)))))
