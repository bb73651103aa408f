;;; Rules for the MCP gateway tests: the fake server "fake" and its tools.

;; Approves every call and listing of the fake server's tools (stricter rules below win).
(defrule fake-approve
  (param (proposal ?id) (key "payload.server") (value "fake"))
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule fake-approve) (reason "fake server"))))

(defrule fake-secret
  (param (proposal ?id) (key "payload.tool") (value "secret_tool"))
  (proposal (id ?id) (target tool) (action call))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fake-secret)
                    (reason "secret_tool reads credentials"))))

(defrule fake-ask
  (param (proposal ?id) (key "payload.tool") (value "ask_tool"))
  (proposal (id ?id) (target tool) (action call))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule fake-ask)
                    (reason "ask_tool sends mail"))))

(defrule fake-hide
  (param (proposal ?id) (key "payload.tool") (value "hidden_tool"))
  (proposal (id ?id) (target tool) (action list))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fake-hide)
                    (reason "hidden_tool is not for agents"))))

(defrule fake-rewrite
  (param (proposal ?id) (key "payload.tool") (value "rewrite_me"))
  (param (proposal ?id) (key "payload.args.text") (value ?t&~"safe"))
  (proposal (id ?id) (target tool) (action call))
  =>
  (assert (rewrite (proposal ?id) (key "payload.args.text") (value "safe")
                   (rule fake-rewrite) (reason "text made safe"))))

;; Approves one prompt of the fake server (the gateway decides prompts/get as target mcp).
(defrule fake-prompt
  (proposal (id ?id) (target mcp) (action prompts.get))
  (param (proposal ?id) (key "payload.server") (value "fake"))
  (param (proposal ?id) (key "payload.params.name") (value "greet"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule fake-prompt) (reason "greet is harmless"))))
