;;; explanation.clp — every action that touches the world must say why.
;;;
;;; The explanation is what the human approver and the auditor read; an agent that cannot
;;; say why it wants to run something should not run it. Replies and system notices are
;;; exempt (they only talk).

;; Stops shell, file, http, message and tool proposals whose explanation is missing, empty
;; or only whitespace. Not for tool calls relayed from an agent's hook or the MCP gateway
;; (`context.source` `hook` or `mcp-gateway`): Claude Code, Codex and MCP clients give no
;; reason per tool call (only Bash's optional `description`), so the rule would stop every
;; agent; their transcript is the record of why.
(defrule explanation-required
  (proposal (id ?id) (target shell|file|http|message|tool) (source ~hook&~mcp-gateway)
            (explanation ?e&:(regex-match "^\\s*$" ?e)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule explanation-required)
                    (reason "explanation required"))))
