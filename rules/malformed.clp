;;; malformed.clp — proposals that are missing what their target needs, or that the
;;; engine could not understand. They fail closed: nothing can be judged about an action
;;; whose command, path or URL is missing or unparsable.
;;;
;;; Unknown targets are not malformed: they get the configured default (and fail at
;;; dispatch if no actuator exists).

;; TRUE for a usable string field: a non-blank string.
(deffunction malformed-text-p (?v)
  (and (stringp ?v) (not (regex-match "^\\s*$" ?v))))

;; Stops shell proposals without a `payload.command` (absent, or an object/array).
(defrule malformed-shell-no-command
  (proposal (id ?id) (target shell))
  (not (param (proposal ?id) (key "payload.command")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-shell-no-command)
                    (reason "shell proposal without payload.command"))))

;; Stops shell proposals whose command is not a non-blank string (number, boolean, null,
;; "" or whitespace). The blank test is an indexed pattern: it runs with the other command
;; patterns, not as a regex call per command.
(defrule malformed-shell-bad-command
  (or (param (proposal ?id) (key "payload.command") (value ?c&:(not (stringp ?c))))
      (pattern-hit (proposal ?id) (key "payload.command") (kind regex) (pattern "^\\s*$")))
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-shell-bad-command)
                    (reason "payload.command must be a non-empty string"))))

;; Stops commands the shell parser could not parse (unterminated quote, nesting too deep,
;; too many commands): what would run cannot be known, so it does not run.
(defrule malformed-shell-parse-error
  (shell-error (proposal ?id) (message ?m))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-shell-parse-error)
                    (reason (str-cat "command could not be parsed: " ?m)))))

;; Stops file proposals without a usable `payload.path`.
(defrule malformed-file-no-path
  (proposal (id ?id) (target file))
  (not (param (proposal ?id) (key "payload.path") (value ?p&:(malformed-text-p ?p))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-file-no-path)
                    (reason "file proposal without payload.path"))))

;; Stops file proposals whose verb is not read, write, append or delete (the `action`,
;; or a `payload.action` that is present but not one of them).
(defrule malformed-file-action
  (or (and (proposal (id ?id) (target file) (action ~read&~write&~append&~delete))
           (not (param (proposal ?id) (key "payload.action") (value "read"|"write"|"append"|"delete"))))
      (and (param (proposal ?id) (key "payload.action") (value ~"read"&~"write"&~"append"&~"delete"))
           (proposal (id ?id) (target file))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-file-action)
                    (reason "file action must be read, write, append or delete"))))

;; Stops HTTP proposals without a string `payload.url`. (An agent's web search, relayed by
;; its hook with a `payload.query` and no URL, is judged by agent_tools.clp.)
(defrule malformed-http-no-url
  (proposal (id ?id) (target http))
  (not (param (proposal ?id) (key "payload.url") (value ?u&:(malformed-text-p ?u))))
  (not (and (param (proposal ?id) (key "context.tool") (value "WebSearch"))
            (not (param (proposal ?id) (key "payload.url")))
            (param (proposal ?id) (key "payload.query") (value ?q&:(malformed-text-p ?q)))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-http-no-url)
                    (reason "http proposal without payload.url"))))

;; Stops message proposals without a text or without a channel: where it goes or what it
;; says would be guessed by the actuator.
(defrule malformed-message-fields
  (proposal (id ?id) (target message))
  (or (not (param (proposal ?id) (key "payload.text") (value ?t&:(stringp ?t))))
      (not (param (proposal ?id) (key "payload.channel") (value ?c&:(malformed-text-p ?c)))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-message-fields)
                    (reason "message proposal needs payload.text and payload.channel"))))

;; Stops tool proposals without a `payload.tool` name.
(defrule malformed-tool-no-tool
  (proposal (id ?id) (target tool))
  (not (param (proposal ?id) (key "payload.tool") (value ?t&:(malformed-text-p ?t))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-tool-no-tool)
                    (reason "tool proposal without payload.tool"))))

;; Stops proposals produced more than 10 feedback steps deep: the pipeline caps depth at
;; 10, anything deeper is a loop (or a forged depth).
(defrule malformed-depth
  (proposal (id ?id) (depth ?d&:(> ?d 10)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule malformed-depth)
                    (reason (str-cat "proposal depth " ?d " exceeds the limit of 10")))))
