;;; tools.clp — per-tool tiers for the `tool` target (`payload.tool`).
;;;
;;; allow: read-only helpers, approved; ask: tools with side effects a human should see,
;;; approval-required; deny: irreversible or financial, rejected. Tools on no list get the
;;; configured default. Names are compared exactly (case-sensitive, as registered).

;; Approves read-only tools (search, calculator, read_docs).
(defrule tools-allow
  (param (proposal ?id) (key "payload.tool") (value ?t&"search"|"calculator"|"read_docs"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule tools-allow)
                    (reason (str-cat "tool " ?t " is on the allow list")))))

;; Asks a human for tools with outside effects (send_email, create_issue, deploy).
(defrule tools-ask
  (param (proposal ?id) (key "payload.tool") (value ?t&"send_email"|"create_issue"|"deploy"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tools-ask)
                    (reason (str-cat "tool " ?t " needs approval")))))

;; Stops irreversible or financial tools (delete_repo, drop_database, transfer_funds).
(defrule tools-deny
  (param (proposal ?id) (key "payload.tool") (value ?t&"delete_repo"|"drop_database"|"transfer_funds"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule tools-deny)
                    (reason (str-cat "tool " ?t " is denied")))))
