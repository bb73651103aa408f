;;; readonly_filesystem.clp — an example policy for @modelcontextprotocol/server-filesystem
;;; behind `warden mcp-gateway --server-name filesystem`: the agent may read, never change.
;;; Load it next to the shipped pack (examples/mcp/README.md).

;; Hides the tools that change files from tools/list, so the model never plans with them.
(defrule mcp-filesystem-hide-writers
  (param (proposal ?id) (key "payload.server") (value "filesystem"))
  (param (proposal ?id) (key "payload.tool")
         (value ?t&"write_file"|"edit_file"|"move_file"|"create_directory"))
  (proposal (id ?id) (target tool) (action list))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule mcp-filesystem-hide-writers)
                    (reason (str-cat "tool " ?t " changes files; this server is read-only")))))

;; Refuses a call to them anyway (a client may call a tool it was never shown).
(defrule mcp-filesystem-no-writes
  (param (proposal ?id) (key "payload.server") (value "filesystem"))
  (param (proposal ?id) (key "payload.tool")
         (value ?t&"write_file"|"edit_file"|"move_file"|"create_directory"))
  (proposal (id ?id) (target tool) (action call))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule mcp-filesystem-no-writes)
                    (reason (str-cat "tool " ?t " changes files; this server is read-only")))))
