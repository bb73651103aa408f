;;; tools.clp — the `tool` target (`payload.tool`): MCP tools (through `warden mcp-gateway`
;;; or an agent's `mcp__SERVER__TOOL`) and an agent's own tools.
;;;
;;; By name: allow: read-only helpers, approved; ask: tools with side effects a human should
;;; see, approval-required; deny: irreversible or financial, rejected (also hidden from
;;; `tools/list`: the gateway hides a tool whose `list` proposal is rejected). Names are
;;; compared exactly (case-sensitive, as registered).
;;;
;;; By effect: the effects table (rules/effects.toml, [tool.*]) says which arguments of a
;;; known tool are paths read, written or deleted, URLs fetched …; those `effect` facts are
;;; judged like the file actuator's (files.clp, credentials.clp and persistence.clp match
;;; `file|tool`): a credential read or a write outside the workspace is rejected, and a call
;;; whose every effect is everyday file work is approved (tools-effects-everyday). A tool the
;;; table does not know, and an argument its entry does not list, has an `unknown` effect:
;;; the ask and deny tiers still apply, the allow tier does not (it approves only calls whose
;;; every argument the table accounts for), else the configured default.

;; TRUE for an argument value that names a place rather than being a query or a text: a URL
;; (`scheme://…`, `file:…`), an absolute, home or parent path (`/etc/x`, `~/.ssh/id_rsa`,
;; `../x`, `C:\x`, `\\host\x`), or a host written without a scheme, as curl and most
;; fetchers take it: an IP address (`10.0.0.5`, `169.254.169.254/latest/meta-data`),
;; `localhost:8080`, `[::1]/x`, or a name with a port or a path (`evil.example/x`,
;; `intranet.corp:8443`). A tool approved by name gets such a value in none of its arguments.
(deffunction tools-arg-names-place-p (?v)
  (and (stringp ?v)
       (or (regex-match "(?i)^\\s*([~/\\\\]|[a-z]:[/\\\\]|\\.\\.?[/\\\\]|file:)|[A-Za-z][A-Za-z0-9+.-]*://|(^|[/\\\\\\s])\\.\\.([/\\\\]|$)" ?v)
           (regex-match "(?i)(^|\\s)((localhost|\\[[0-9a-f:.]*\\])(:[0-9]+|/)|[0-9]{1,3}(\\.[0-9]{1,3}){3}([:/?#\\s]|$)|[a-z0-9-]+(\\.[a-z0-9-]+)*\\.[a-z][a-z0-9-]*(:[0-9]+([/?#\\s]|$)|/))" ?v))))

;; Approves read-only tools (search, calculator, read_docs, the daemon's built-in now and
;; sha256, which only compute, and the filesystem server's list_allowed_directories) when
;; their arguments are what the effects table says they take (queries and texts: no effect)
;; or reads of everyday workspace files. The name approves nothing by itself: an argument the
;; table does not list (a `url`, a `path`) is an `unknown` effect, and an unknown effect, a
;; write, a network fetch, a read outside the workspace or of a credential, start-up or
;; secrets-holding file keeps this rule from firing; so does an argument value that names a
;; place (a URL, an absolute or home path), even in a query.
(defrule tools-allow
  (param (proposal ?id) (key "payload.tool") (value ?t&"search"|"calculator"|"read_docs"|"now"|"sha256"|"list_allowed_directories"))
  (proposal (id ?id) (target tool))
  (not (effect (proposal ?id) (kind ~read)))
  (not (effect (proposal ?id) (in-workspace FALSE)))
  (not (effect (proposal ?id) (class persistence|credential|secrets-config)))
  (not (and (param (proposal ?id) (key ?k) (value ?v))
            (test (and (str-prefix "payload.args" ?k) (tools-arg-names-place-p ?v)))))
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

;; (Not when the effects table says what the argument does: Codex's apply_patch gets its
;; patch in `command`, and its files are judged by their effects.)
(defrule tools-runs-commands-by-argument
  (proposal (id ?id) (target tool))
  (param (proposal ?id) (key ?k))
  ;; The argument names in a test after the target (in the param pattern every string of
  ;; every proposal would be compared with each of them).
  (test (not (neq ?k "payload.args.command" "payload.args.cmd" "payload.args.script" "payload.args.code"
                  "payload.args.shell_command")))
  (not (effect (proposal ?id) (index -1) (via ?k) (kind ~unknown)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tools-runs-commands-by-argument)
                    (reason (str-cat "tool argument " ?k " holds a command or code")))))

;; TRUE for an effect of a tool call that is everyday file work, as files.clp approves it for
;; the file actuator: a read in the workspace of anything but a start-up file, a credential or
;; a secrets-holding config; a read outside it of a system file or of an unclassified file
;; away from the home directory; a write or delete in the workspace of anything but a
;; start-up file, a credential, a repository's store or the workspace itself.
(deffunction tools-effect-everyday-p (?k ?o ?c ?w ?p)
  (and (eq ?o path)
       (or (and (eq ?k read) (eq ?w TRUE) (neq ?c persistence credential secrets-config))
           (and (eq ?k read) (eq ?w FALSE)
                (or (and (eq ?c system) (files-system-read-ok ?p))
                    (and (eq ?c none) (files-outside-read-ok ?p))))
           (and (or (eq ?k write) (eq ?k delete)) (eq ?w TRUE)
                (neq ?c persistence credential repository)
                (neq ?p (workspace-root))))))

;; Approves a call of a tool the effects table knows when it has file effects and every one
;; is everyday file work (an MCP filesystem server's read_text_file of `README.md`,
;; write_file of `src/x.py`, move_file within the workspace). One effect that is not (a
;; network fetch, a read in the home directory, an `unknown` effect of a tool the table does
;; not know or of an argument that is missing) and this rule does not fire: the other rules,
;; or the default, decide. A call with no effect at all is not file work and is not approved
;; here: the table's `none` arguments (a sub-agent's prompt, a query) only say what the
;; arguments are, and the rule that knows the tool (tools-allow, agent-internal-tool,
;; agent-subagent) judges it. (The test is a join after the tool proposal, so the effects of
;; shell lines never reach it.)
(defrule tools-effects-everyday
  (proposal (id ?id) (target tool) (action call|nil))
  (param (proposal ?id) (key "payload.tool") (value ?t&:(stringp ?t)))
  (exists (effect (proposal ?id) (object path)))
  (not (and (effect (proposal ?id) (kind ?k) (object ?o) (class ?c) (in-workspace ?w) (target ?p))
            (test (not (tools-effect-everyday-p ?k ?o ?c ?w ?p)))))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule tools-effects-everyday)
                    (reason (str-cat "every effect of tool " ?t " is everyday file work")))))

;; Approves listing a tool (`tools/list` through the gateway: one `list` proposal per tool):
;; only a reject hides a tool (tools-deny's names), so listing is not the place to ask.
(defrule tools-list
  (proposal (id ?id) (target tool) (action list))
  (param (proposal ?id) (key "payload.tool") (value ?t&:(stringp ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule tools-list)
                    (reason (str-cat "tool " ?t " may be listed")))))

;; Stops a tool reaching a cloud metadata endpoint or an internal address through a URL
;; argument (`fetch` of `http://169.254.169.254/latest/meta-data/`, `http://10.0.0.5/admin`):
;; server-side request forgery through the tool, as egress.clp stops it for commands.
(defrule tools-network-internal
  (effect (proposal ?id) (index -1) (kind network) (target ?h&~"") (program ?t))
  (proposal (id ?id) (target tool))
  (test (or (egress-metadata-host-p ?h) (eq (egress-host-class ?h) "metadata") (egress-internal-host-p ?h)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule tools-network-internal)
                    (reason (str-cat "tool " ?t " reaches an internal address: " ?h)))))

;; Asks a human for a tool's path argument spelled for another system (`C:\Users\me\x`,
;; `..\..\.bashrc`, `%APPDATA%\x`): here it is an odd name inside the workspace, but a server
;; on Windows reads it as the user's files (as files-path-foreign-spelling for the file
;; actuator).
(defrule tools-path-foreign-spelling
  (effect (proposal ?id) (index -1) (object path) (target ?p) (program ?t))
  (proposal (id ?id) (target tool))
  (test (regex-match "\\\\|(^|/)[A-Za-z]:|%[^%/]+%" ?p))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tools-path-foreign-spelling)
                    (reason (str-cat "tool " ?t " gets a path spelled for another system: " ?p)))))
