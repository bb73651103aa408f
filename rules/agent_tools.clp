;;; agent_tools.clp — what coding agents (Claude Code, Codex) send through `warden hook`
;;; that the other files do not already judge: the agent's own bookkeeping tools, its web
;;; search, and its content search (Grep).
;;;
;;; The hook maps Bash to `shell`, Write/Edit/MultiEdit/NotebookEdit to a `file` write,
;;; Read/Grep/Glob/LS to a `file` read, WebFetch to an `http` GET (judged by files.clp,
;;; credentials.clp, persistence.clp, egress.clp …), `mcp__SERVER__TOOL` to a `tool` call with
;;; `payload.server` (tools.clp), and any other tool to a `tool` call with no server
;;; (`{"tool": NAME, "args": INPUT}`). `context.tool` is the agent's tool name.

;; Approves the agent's own bookkeeping tools, which touch nothing outside the agent: its
;; to-do and task lists (TodoWrite, TaskCreate/Get/Update/List), entering plan mode, the
;; output of a background command it started and stopping it (TaskOutput/TaskStop,
;; formerly BashOutput/KillShell/KillBash), and its tool search. Not ExitPlanMode nor
;; AskUserQuestion: their point is a human's answer (approving the plan, answering the
;; question), which a hook's allow would skip; they keep the default (Claude's own prompt).
;; Only without `payload.server`: an MCP server may register a tool of the same name. Only
;; when every argument is one the effects table lists for the tool (rules/effects.toml: the
;; agent's own data, no effect): any other argument is an `unknown` effect and the configured
;; default decides.
(defrule agent-internal-tool
  (param (proposal ?id) (key "payload.tool")
         (value ?t&"TodoWrite"|"TodoRead"|"TaskCreate"|"TaskGet"|"TaskUpdate"|"TaskList"|"TaskOutput"
                  |"TaskStop"|"BashOutput"|"KillShell"|"KillBash"|"EnterPlanMode"|"ToolSearch"))
  (proposal (id ?id) (target tool) (action call|nil))
  (not (param (proposal ?id) (key "payload.server")))
  (not (effect (proposal ?id)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule agent-internal-tool)
                    (reason (str-cat "the agent's own tool " ?t " touches nothing outside the agent")))))

;; Approves starting a sub-agent (Task, Agent) that runs here: each of its tool calls comes
;; through the hook again. Only here (`isolation` absent or "worktree": not "remote", whose
;; calls Warden does not see, nor any value this rule does not know) and only in a permission
;; `mode` whose prompts a human answers (absent, default, plan, acceptEdits: not
;; bypassPermissions, dontAsk or auto, which settle them without one); not with
;; `payload.server`; not with an argument the effects table does not list for it (an
;; `unknown` effect).
(defrule agent-subagent
  (param (proposal ?id) (key "payload.tool") (value ?t&"Task"|"Agent"))
  (proposal (id ?id) (target tool) (action call|nil))
  (not (param (proposal ?id) (key "payload.server")))
  (not (effect (proposal ?id)))
  (not (param (proposal ?id) (key "payload.args.isolation") (value ~"worktree")))
  (not (param (proposal ?id) (key "payload.args.mode") (value ~"default"&~"plan"&~"acceptEdits")))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule agent-subagent)
                    (reason (str-cat "sub-agent (" ?t "): its tool calls are decided one by one")))))

;; Approves the agent's web search (WebSearch: an `http` proposal with `payload.query` and no
;; URL). The query is text the model chose, sent to the search provider of the model's vendor,
;; which already holds the whole conversation; what a search can leak is a secret in the
;; query (agent-web-search-secret, rejected). (A WebFetch has a URL and is
;; judged by egress.clp like any GET: allowlisted hosts approved, others asked.)
(defrule agent-web-search
  (param (proposal ?id) (key "context.tool") (value "WebSearch"))
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key "payload.query") (value ?q&:(stringp ?q)))
  (not (param (proposal ?id) (key "payload.url")))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule agent-web-search)
                    (reason "web search through the agent's model vendor"))))

;; Stops a web search whose query holds a secret (a token, a key): it would leave in a URL.
(defrule agent-web-search-secret
  (param (proposal ?id) (key "context.tool") (value "WebSearch"))
  (proposal (id ?id) (target http))
  (param (proposal ?id) (key "payload.query") (value ?q&:(stringp ?q)&:(looks-like-secret ?q)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule agent-web-search-secret)
                    (reason "secret in the web search query"))))

;; Asks a human when the agent's Grep searches file contents for secrets by name
;; (`password`, `API_KEY`, `token` …): it prints whatever matches, from any file under the
;; directory, dotenv files included (as credentials-secret-search for rg and grep).
(defrule agent-grep-secret-search
  (pattern-hit (proposal ?id) (key "payload.pattern") (kind regex)
               (pattern "(?i)(secret|token|passw|api_?key|private.?key|access.?key|credential)"))
  (param (proposal ?id) (key "context.tool") (value "Grep"))
  (proposal (id ?id) (target file))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule agent-grep-secret-search)
                    (reason "searches files for secrets by name"))))

;; Asks a human for a Bash command the model wants run outside Claude Code's sandbox
;; (`dangerouslyDisableSandbox`, any value but false): Claude asks its user before such a
;; run, and an allow from Warden would skip that prompt, so the command's own judgement
;; (made as if it ran like any other) is not enough to let it out.
(defrule agent-bash-unsandboxed
  (param (proposal ?id) (key "payload.dangerouslyDisableSandbox") (value ~FALSE))
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "context.tool") (value "Bash"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule agent-bash-unsandboxed)
                    (reason "the command asks to run outside Claude Code's sandbox"))))
