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

;; Asks a human for a tool that runs command lines or code (a `shell`, `run_command` or
;; `execute` tool, or any tool given a `command`, `cmd`, `script` or `code` argument): the
;; pack cannot see what the command does, so it is not left to the configured default.
(defrule tools-runs-commands-by-name
  (param (proposal ?id) (key "payload.tool")
         (value ?t&"shell"|"bash"|"sh"|"terminal"|"run_command"|"run_shell"|"execute"|"execute_command"|"exec"|"run_code"|"python"|"run_script"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tools-runs-commands-by-name)
                    (reason (str-cat "tool " ?t " runs commands or code")))))

(defrule tools-runs-commands-by-argument
  (param (proposal ?id)
         (key ?k&"payload.args.command"|"payload.args.cmd"|"payload.args.script"|"payload.args.code"|"payload.args.shell_command"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tools-runs-commands-by-argument)
                    (reason (str-cat "tool argument " ?k " holds a command or code")))))
