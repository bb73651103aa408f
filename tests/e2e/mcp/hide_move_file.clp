;;; A test rule for tests/e2e/mcp_gateway_e2e.sh: hides the filesystem server's move_file
;;; from tools/list (the pack itself lists every tool).
(defrule e2e-hide-move-file
  (param (proposal ?id) (key "payload.tool") (value "move_file"))
  (param (proposal ?id) (key "payload.server") (value "filesystem"))
  (proposal (id ?id) (target tool) (action list))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule e2e-hide-move-file)
                    (reason "moving files is not offered to agents here"))))
