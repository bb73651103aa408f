// Diagnostic: one problem found while loading rules or reading input, with a stable code.
// Produced by the rule loader and the proposal reader; printed by the CLI and the daemon.
// Plain values, no shared state: safe to copy between threads.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace warden {

// Stable error codes: the one table of every code Warden reports, in diagnostics, in
// fail-closed decisions (`error_code`) and in daemon error replies (docs/PROTOCOL.md). Tests
// and users match on these, never on the wording. Add a code here, in kTable, and in the doc.
namespace code {
// Loading rules (diagnostics of `warden check`, `serve`, `reload`).
inline constexpr const char* kParse = "E_PARSE";            // CLIPS syntax error
inline constexpr const char* kUnbalanced = "E_UNBALANCED";  // parentheses or string not closed
inline constexpr const char* kUnknownFunction =
    "E_UNKNOWN_FUNCTION";                                        // call to an undefined function
inline constexpr const char* kMissingArrow = "E_MISSING_ARROW";  // defrule without `=>`
inline constexpr const char* kUnknownTemplate =
    "E_UNKNOWN_TEMPLATE";  // pattern on a template the engine does not define
inline constexpr const char* kUnknownSlot = "E_UNKNOWN_SLOT";  // slot its template does not have
inline constexpr const char* kSlotValue =
    "E_SLOT_VALUE";  // constant a slot cannot hold (type, allowed values, one value)
inline constexpr const char* kUnknownOutcome =
    "E_UNKNOWN_OUTCOME";  // outcome other than approve, reject, approval-required
inline constexpr const char* kUnboundVariable =
    "E_UNBOUND_VARIABLE";  // variable in the actions the conditions never bind
inline constexpr const char* kDeadPattern =
    "E_DEAD_PATTERN";  // warning: a pattern constant no proposal can have
inline constexpr const char* kForbiddenFunction =
    "E_FORBIDDEN_FUNCTION";  // a CLIPS function not on the allowlist
inline constexpr const char* kForbiddenAssert =
    "E_FORBIDDEN_ASSERT";  // assert of a fact other than decision/rewrite/allow/hint/approval
inline constexpr const char* kRecursion = "E_RECURSION";  // deffunction that calls itself
inline constexpr const char* kWildcardParameter =
    "E_WILDCARD_PARAM";  // deffunction with a $? parameter
inline constexpr const char* kForbiddenConstruct =
    "E_FORBIDDEN_CONSTRUCT";                                       // deftemplate, defmodule ...
inline constexpr const char* kDuplicateRule = "E_DUPLICATE_RULE";  // same rule name twice in a set
inline constexpr const char* kDuplicateFunction = "E_DUPLICATE_FUNCTION";
inline constexpr const char* kGlobalMutation =
    "E_GLOBAL_MUTATION";                                 // bind of a ?*global* at run time
inline constexpr const char* kBadRegex = "E_BAD_REGEX";  // constant pattern RE2 cannot compile
inline constexpr const char* kBadPattern =
    "E_BAD_PATTERN";  // pattern-hit without constant kind/pattern
inline constexpr const char* kTimeZone =
    "E_TIME_ZONE";  // a constant time zone the tz database does not know
inline constexpr const char* kPatternTooLarge =
    "E_PATTERN_TOO_LARGE";  // indexed pattern over the matcher's memory budget
inline constexpr const char* kRuleName =
    "E_RULE_NAME";  // decision/rewrite/allow/hint/approval credited to another rule
inline constexpr const char* kCompile = "E_COMPILE";     // any other CLIPS load error
inline constexpr const char* kNoRules = "E_NO_RULES";    // nothing to load
inline constexpr const char* kRead = "E_READ";           // rule file cannot be read
inline constexpr const char* kCase = "E_CASE";           // a rule test case file is malformed
inline constexpr const char* kFileMode = "E_FILE_MODE";  // rule file others could change
inline constexpr const char* kEffectsTable =
    "E_EFFECTS_TABLE";  // the command-effects table (*.toml) is malformed
inline constexpr const char* kPathClasses =
    "E_PATH_CLASSES";  // the path classes table (*.toml) is malformed
inline constexpr const char* kOverlay =
    "E_OVERLAY";  // a rule overlay (*.toml with [[rule]]) is malformed
inline constexpr const char* kOverlayRule =
    "E_OVERLAY_RULE";  // an overlay entry names no loaded rule (warning)
inline constexpr const char* kData =
    "E_DATA";  // a data file (*.data.toml, *.data.json) is malformed
inline constexpr const char* kDataValue =
    "E_DATA_VALUE";  // a data file holds a NUL byte or invalid UTF-8
inline constexpr const char* kDataLimit =
    "E_DATA_LIMIT";  // a data string or the data entries over the limit
inline constexpr const char* kDataSet =
    "E_DATA_SET";  // a rule names a data set no data file defines
// Reading a proposal (the request is refused; no decision).
inline constexpr const char* kInputJson = "E_INPUT_JSON";    // proposal is not valid JSON / UTF-8
inline constexpr const char* kInputShape = "E_INPUT_SHAPE";  // proposal JSON has the wrong shape
inline constexpr const char* kInputTooLarge =
    "E_INPUT_TOO_LARGE";  // size or nesting over the limit
// Deciding: the decision failed closed (outcome reject, `error_code` names the cause).
inline constexpr const char* kFacts = "E_FACTS";         // the proposal could not become facts
inline constexpr const char* kDeadline = "E_DEADLINE";   // rules ran past the deadline
inline constexpr const char* kRunLimit = "E_RUN_LIMIT";  // rules fired run_limit times
inline constexpr const char* kRuntime = "E_RUNTIME";     // a rule failed at run time
inline constexpr const char* kMemory = "E_MEMORY";       // over the rule memory budget
inline constexpr const char* kEngineBuild =
    "E_ENGINE_BUILD";                             // a worker cannot build the rules in force
inline constexpr const char* kAudit = "E_AUDIT";  // the audit log cannot be written
inline constexpr const char* kSessionStore =
    "E_SESSION_STORE";  // the session's history cannot be read
// Daemon protocol: framing (the connection is closed after the reply).
inline constexpr const char* kFramePrefix = "E_FRAME_PREFIX";  // length prefix is not 6 hex digits
inline constexpr const char* kFrameTooLarge =
    "E_FRAME_TOO_LARGE";  // declared length over the limit
inline constexpr const char* kFrameTruncated = "E_FRAME_TRUNCATED";  // peer closed inside a frame
// Daemon protocol: messages (the connection stays open).
inline constexpr const char* kBadJson = "E_BAD_JSON";        // not JSON, or not UTF-8
inline constexpr const char* kTooDeep = "E_TOO_DEEP";        // nesting over the limit
inline constexpr const char* kBadRequest = "E_BAD_REQUEST";  // JSON, but not a request envelope
inline constexpr const char* kUnknownAction = "E_UNKNOWN_ACTION";    // no such action
inline constexpr const char* kNotImplemented = "E_NOT_IMPLEMENTED";  // an action this daemon lacks
// Daemon protocol: authentication and authorization.
inline constexpr const char* kAuthRequired = "E_AUTH_REQUIRED";  // request before auth
inline constexpr const char* kAuthFailed = "E_AUTH_FAILED";  // unknown token (connection closed)
inline constexpr const char* kForbidden = "E_FORBIDDEN";     // role lacks the right
inline constexpr const char* kAuthRevoked =
    "E_AUTH_REVOKED";  // a reload revoked the token (closed)
inline constexpr const char* kPeerNotAllowed =
    "E_PEER_NOT_ALLOWED";  // Unix peer uid not allowed (closed)
inline constexpr const char* kPlaintextToken =
    "E_PLAINTEXT_TOKEN";  // client: no token in clear text to another host
// Daemon protocol: resources and lifecycle.
inline constexpr const char* kAuthTimeout =
    "E_AUTH_TIMEOUT";  // no auth before the deadline (closed)
inline constexpr const char* kIdleTimeout =
    "E_IDLE_TIMEOUT";  // silent past the idle timeout (closed)
inline constexpr const char* kTooManyConnections =
    "E_TOO_MANY_CONNECTIONS";                   // over max_connections (closed)
inline constexpr const char* kBusy = "E_BUSY";  // decision queue full; retry later
inline constexpr const char* kShuttingDown =
    "E_SHUTTING_DOWN";  // the daemon stopped before the request ran
inline constexpr const char* kReloadFailed =
    "E_RELOAD_FAILED";  // old rules kept; diagnostics attached
inline constexpr const char* kResponseTooLarge =
    "E_RESPONSE_TOO_LARGE";                                  // the reply does not fit a frame
inline constexpr const char* kNoProvider = "E_NO_PROVIDER";  // submit: no model provider configured
inline constexpr const char* kInternal = "E_INTERNAL";       // a bug; the request failed closed
// Daemon protocol: approvals (pending, approve, deny).
inline constexpr const char* kApprovalNotFound =
    "E_APPROVAL_NOT_FOUND";  // no approval has this token or id
inline constexpr const char* kApprovalClosed =
    "E_APPROVAL_CLOSED";  // already answered: used, denied, run
inline constexpr const char* kApprovalExpired = "E_APPROVAL_EXPIRED";  // past its expiry
inline constexpr const char* kSelfApproval = "E_SELF_APPROVAL";  // the approver is the requester
inline constexpr const char* kAlreadyApproved =
    "E_ALREADY_APPROVED";  // this approver already voted
inline constexpr const char* kApprovalRefused =
    "E_APPROVAL_REFUSED";  // the rules now refuse it: not run
inline constexpr const char* kApprovalDigest = "E_APPROVAL_DIGEST";  // not the digest of its action
inline constexpr const char* kApprovalStore = "E_APPROVAL_STORE";    // the approvals store failed
inline constexpr const char* kTooManyApprovals =
    "E_TOO_MANY_APPROVALS";  // the requester holds max_pending_per_principal
// Running a decided command under its envelope (`warden exec`, the `envelope` request).
inline constexpr const char* kExecUnknown =
    "E_EXEC_UNKNOWN";  // no such shell decision of this principal
inline constexpr const char* kExecNotApproved =
    "E_EXEC_NOT_APPROVED";                                       // the decision did not approve it
inline constexpr const char* kExecExpired = "E_EXEC_EXPIRED";    // decided too long ago
inline constexpr const char* kExecUsed = "E_EXEC_USED";          // already run once
inline constexpr const char* kExecMismatch = "E_EXEC_MISMATCH";  // not the command that was decided
inline constexpr const char* kExecCommand =
    "E_EXEC_COMMAND";  // the command cannot be run as decided
inline constexpr const char* kExecConfine =
    "E_EXEC_CONFINE";  // no confinement could be built or applied
// Actuators: an approved action that did not run, or did not finish (a result's error_code).
inline constexpr const char* kActBadAction = "E_ACT_BAD_ACTION";
inline constexpr const char* kActDenied = "E_ACT_DENIED";
inline constexpr const char* kActFailed = "E_ACT_FAILED";
inline constexpr const char* kActTimeout = "E_ACT_TIMEOUT";
inline constexpr const char* kActShellSyntax = "E_ACT_SHELL_SYNTAX";
inline constexpr const char* kActRedirect = "E_ACT_REDIRECT";
inline constexpr const char* kActTooLarge = "E_ACT_TOO_LARGE";
inline constexpr const char* kActUnknownTool = "E_ACT_UNKNOWN_TOOL";
inline constexpr const char* kActNoActuator = "E_ACT_NO_ACTUATOR";
inline constexpr const char* kActCrashed = "E_ACT_CRASHED";
inline constexpr const char* kConfineUnsupported = "E_CONFINE_UNSUPPORTED";
inline constexpr const char* kConfineSetup = "E_CONFINE_SETUP";
// The pipeline (`submit`, `chat`): error events of a run.
inline constexpr const char* kAction = "E_ACTION";
inline constexpr const char* kModelOutput = "E_MODEL_OUTPUT";
inline constexpr const char* kNoDecider = "E_NO_DECIDER";
inline constexpr const char* kLoop = "E_LOOP";
inline constexpr const char* kBudget = "E_BUDGET";
inline constexpr const char* kDisagreement = "E_DISAGREEMENT";
inline constexpr const char* kCascade = "E_CASCADE";
// Agent hooks (`warden hook`), the agent-setup commands and their decider: a hook's deny reason.
inline constexpr const char* kHookInputTooLarge = "E_HOOK_INPUT_TOO_LARGE";
inline constexpr const char* kHookInputJson = "E_HOOK_INPUT_JSON";
inline constexpr const char* kHookInputShape = "E_HOOK_INPUT_SHAPE";
inline constexpr const char* kHookInputRead = "E_HOOK_INPUT_READ";
inline constexpr const char* kHookInputTimeout = "E_HOOK_INPUT_TIMEOUT";
inline constexpr const char* kHookEvent = "E_HOOK_EVENT";
inline constexpr const char* kHookExec = "E_HOOK_EXEC";
inline constexpr const char* kCodexTranscript = "E_CODEX_TRANSCRIPT";
inline constexpr const char* kCodexCallMissing = "E_CODEX_CALL_MISSING";
inline constexpr const char* kCodexCallArguments = "E_CODEX_CALL_ARGUMENTS";
inline constexpr const char* kCodexCallMismatch = "E_CODEX_CALL_MISMATCH";
inline constexpr const char* kCodexShell = "E_CODEX_SHELL";
inline constexpr const char* kCodexTty = "E_CODEX_TTY";
inline constexpr const char* kDecider = "E_DECIDER";
inline constexpr const char* kUnavailable = "E_UNAVAILABLE";
inline constexpr const char* kTimeout = "E_TIMEOUT";
inline constexpr const char* kClientConfig = "E_CONFIG";
inline constexpr const char* kTls = "E_TLS";
inline constexpr const char* kBadReply = "E_BAD_REPLY";
inline constexpr const char* kUsage = "E_USAGE";
inline constexpr const char* kSettingsParse = "E_SETTINGS_PARSE";
inline constexpr const char* kSettingsShape = "E_SETTINGS_SHAPE";
inline constexpr const char* kIo = "E_IO";

struct Entry {
  const char* code;
  const char* meaning;
};

// Every stable code with its one-line meaning (the table in docs/PROTOCOL.md).
inline constexpr Entry kTable[] = {
    {kParse, "CLIPS syntax error in a rule file"},
    {kUnbalanced, "parenthesis or string not closed in a rule file"},
    {kUnknownFunction, "a rule calls an undefined function"},
    {kMissingArrow, "a rule has no `=>` between its conditions and its actions"},
    {kUnknownTemplate, "a rule's pattern names a template the engine does not define"},
    {kUnknownSlot, "a pattern or an asserted fact names a slot its template does not have"},
    {kSlotValue,
     "a constant a slot cannot hold: the wrong type, not among its allowed values, or two values in a one-value slot"},
    {kUnknownOutcome, "an outcome other than approve, reject or approval-required"},
    {kUnboundVariable, "a rule's actions use a variable its conditions never bind"},
    {kDeadPattern,
     "warning: a pattern constant no proposal can have, so the pattern never matches (an error with check --strict)"},
    {kForbiddenFunction, "a rule calls a CLIPS function not on the allowlist"},
    {kForbiddenAssert,
     "a rule asserts a fact other than a decision, rewrite, allow, hint or approval"},
    {kRecursion, "a deffunction calls itself"},
    {kWildcardParameter, "a deffunction with a $? parameter"},
    {kForbiddenConstruct, "a rule file defines a construct rules may not define"},
    {kDuplicateRule, "the same rule name twice in a rule set"},
    {kDuplicateFunction, "the same function name twice in a rule set"},
    {kGlobalMutation, "a rule changes a global variable at run time"},
    {kBadRegex, "a constant pattern RE2 cannot compile"},
    {kBadPattern, "pattern-hit without a constant kind and pattern"},
    {kTimeZone, "a rule names a time zone the system tz database does not know (local-hour …)"},
    {kPatternTooLarge,
     "an indexed pattern-hit pattern does not fit the matcher's memory budget even alone"},
    {kRuleName,
     "a decision, rewrite, allow, hint or approval credits another rule than the one asserting it, has no (rule NAME), or is asserted outside a defrule"},
    {kCompile, "any other error while compiling the rules"},
    {kNoRules, "nothing to load"},
    {kRead, "a rule file cannot be read"},
    {kCase, "a rule test case file is malformed"},
    {kFileMode, "a rule, token or config file others could change (or read, for secrets)"},
    {kEffectsTable,
     "the command-effects table (a *.toml file with [program.*] entries) is malformed"},
    {kPathClasses, "the path classes table (a *.toml file with [[class]] entries) is malformed"},
    {kOverlay,
     "a rule overlay (a *.toml file with [[rule]] entries) is malformed: the rules do not load"},
    {kOverlayRule,
     "warning: a rule overlay entry names no loaded rule (an error with check --strict)"},
    {kData,
     "a data file (*.data.toml, *.data.json) is malformed: syntax, shape, a value that is not a string, a bad or repeated set name"},
    {kDataValue, "a data file holds a NUL byte or text that is not valid UTF-8"},
    {kDataLimit, "a data string is over 4096 bytes, or the data files hold over 250000 entries"},
    {kDataSet,
     "a rule names (as a constant) a data set no data file defines, or reads a list with data-value"},
    {kInputJson, "the proposal is not valid JSON or not UTF-8"},
    {kInputShape, "the proposal JSON has the wrong shape"},
    {kInputTooLarge, "the proposal is over the size or nesting limit"},
    {kFacts, "decision failed closed: the proposal could not become facts"},
    {kDeadline, "decision failed closed: the rules ran past the deadline"},
    {kRunLimit, "decision failed closed: the rules fired run_limit times"},
    {kRuntime, "decision failed closed: a rule failed at run time"},
    {kMemory, "decision failed closed: over the rule memory budget"},
    {kEngineBuild, "decision failed closed: the worker cannot build the rules in force (retried)"},
    {kAudit,
     "decision failed closed: the daemon's audit log cannot be written (disk full, permission)"},
    {kSessionStore,
     "decision failed closed: the session's history cannot be read from its store (PostgreSQL unreachable)"},
    {kFramePrefix, "length prefix is not 6 hex digits (connection closed)"},
    {kFrameTooLarge, "declared length over limits.max_frame_bytes (connection closed)"},
    {kFrameTruncated, "the client closed inside a frame (connection closed)"},
    {kBadJson, "not JSON, or not UTF-8"},
    {kTooDeep, "nesting over limits.max_json_depth"},
    {kBadRequest, "JSON, but not a request envelope (or a bad field)"},
    {kUnknownAction, "no such action"},
    {kNotImplemented, "the action is not implemented by this daemon yet"},
    {kAuthRequired, "request before auth"},
    {kAuthFailed, "unknown token (connection closed)"},
    {kForbidden, "the role lacks the right"},
    {kAuthRevoked,
     "a reload removed this connection's token or changed its identity (connection closed)"},
    {kPeerNotAllowed, "Unix-socket peer uid not in unix.allow_uids (connection closed)"},
    {kPlaintextToken,
     "the client refused to send a token over plain TCP to a non-loopback address (use TLS or the Unix socket)"},
    {kAuthTimeout, "no auth within limits.auth_timeout_ms (connection closed)"},
    {kIdleTimeout, "no request within limits.idle_timeout_ms (connection closed)"},
    {kTooManyConnections, "over limits.max_connections (connection closed)"},
    {kBusy, "the decision queue (or this principal's share of it) is full; retry later"},
    {kShuttingDown, "the daemon stopped before the request ran"},
    {kReloadFailed, "reload failed; the old rules are kept"},
    {kResponseTooLarge, "the reply would not fit in one frame"},
    {kNoProvider, "submit needs a model provider: none is configured ([[reasoning.providers]])"},
    {kInternal, "a bug; the request failed closed"},
    {kApprovalNotFound, "no pending approval has this token (or id)"},
    {kApprovalClosed, "the approval was already answered (approved and used, denied or expired)"},
    {kApprovalExpired, "the approval expired before it was approved"},
    {kSelfApproval, "an approver cannot approve their own request"},
    {kAlreadyApproved, "this approver already approved it; another approver is needed"},
    {kApprovalRefused, "approved, but the rules in force now refuse the action: it was not run"},
    {kApprovalDigest,
     "the digest given is not the digest of the approval's action: nothing was approved"},
    {kApprovalStore, "the approvals store cannot be read or written; nothing was approved"},
    {kTooManyApprovals,
     "approval required, but the requester already holds approvals.max_pending_per_principal pending approvals: rejected, nothing stored"},
    {kExecUnknown,
     "exec: no shell decision with this id of this principal is known (never decided here, or forgotten)"},
    {kExecNotApproved,
     "exec: the decision rejected the command or requires an approval: nothing runs"},
    {kExecExpired, "exec: the decision is too old to run; decide the command again"},
    {kExecUsed, "exec: the decision has already been run once; decide the command again"},
    {kExecMismatch, "exec: the command to run is not byte for byte the command that was decided"},
    {kExecCommand,
     "exec: the command cannot run as decided (a NUL byte, not a shell run, no such cwd)"},
    {kExecConfine, "exec: the decision's confinement cannot be built or applied: nothing runs"},
    {kActBadAction, "the action's payload is malformed for its actuator: not run"},
    {kActDenied,
     "the actuator's confinement refused the action (a path, host or size it does not allow)"},
    {kActFailed,
     "the action could not be carried out (the command could not start, the file or host could not be reached)"},
    {kActTimeout, "the action ran past its time limit and was stopped"},
    {kActShellSyntax,
     "the command needs a shell (pipes, redirections, expansions) and no rule granted `shell-syntax`: not run"},
    {kActRedirect, "the HTTP server answered with a redirect, which is not followed"},
    {kActTooLarge, "the action's input or output is over a size cap"},
    {kActUnknownTool, "no tool of that name is registered: not run"},
    {kActNoActuator, "no actuator serves the action's target: not run"},
    {kActCrashed, "the actuator failed unexpectedly (a bug): the action's outcome is unknown"},
    {kConfineUnsupported,
     "the kernel lacks a part of the confinement the run requires (Landlock, seccomp, namespaces): not run"},
    {kConfineSetup, "the run's confinement could not be built: not run"},
    {kAction,
     "the model's action cannot be dispatched to an actuator, so it is not decided or run"},
    {kModelOutput, "the model's answer is not an action the pipeline can read"},
    {kNoDecider, "no rules are available to decide the run's proposals"},
    {kLoop, "the run stopped: its feedback went past the depth limit or its step budget"},
    {kBudget, "the provider cascade spent its budget before a provider answered"},
    {kDisagreement, "the providers asked for agreement gave different answers"},
    {kCascade, "every model provider of the cascade failed"},
    {kHookInputTooLarge, "the hook's input is over its size limit: denied"},
    {kHookInputJson, "the hook's input is not JSON, or not UTF-8: denied"},
    {kHookInputShape, "the hook's input lacks a field or has one of the wrong type: denied"},
    {kHookInputRead, "the hook's input could not be read: denied"},
    {kHookInputTimeout, "no complete hook input arrived in time: denied"},
    {kHookEvent, "the hook was called for an event other than PreToolUse: denied"},
    {kHookExec, "an approved command could not be handed to `warden exec` to run confined: denied"},
    {kCodexTranscript,
     "Codex: the rollout file is missing, not a regular file or unreadable: denied"},
    {kCodexCallMissing, "Codex: the rollout has no function call with the hook's call id: denied"},
    {kCodexCallArguments,
     "Codex: the call's arguments are not JSON, or name an unknown tool or field: denied"},
    {kCodexCallMismatch, "Codex: the rollout's call and the hook's input disagree: denied"},
    {kCodexShell, "Codex: the shell that would run the command is not bash: denied"},
    {kCodexTty,
     "Codex: the call asks for a terminal (tty: true), whose input the hook never sees: denied"},
    {kDecider, "the hook has no decider: neither a daemon address nor rules it can load"},
    {kUnavailable, "the daemon cannot be reached, or the connection broke"},
    {kTimeout, "the time budget ran out before the daemon's reply"},
    {kClientConfig, "the client's token or TLS settings cannot be used"},
    {kTls, "the daemon's certificate failed the checks"},
    {kBadReply, "the daemon's reply is not a decision"},
    {kUsage,
     "the hook's options cannot work for this agent (e.g. `--on-approval-required ask` for Codex)"},
    {kSettingsParse,
     "`warden hook install`: the agent's settings file is not valid JSON (or TOML): left unchanged"},
    {kSettingsShape,
     "`warden hook install`: the agent's settings are not shaped as the agent defines them: left unchanged"},
    {kIo, "`warden hook install`: the settings file cannot be read or written"},
};

// Whether `c` is one of the input errors (E_INPUT_…: the proposal itself is not valid).
constexpr bool is_input_error(std::string_view c) { return c.substr(0, 8) == "E_INPUT_"; }

// True when `c` is in kTable.
constexpr bool is_known(std::string_view c) {
  for (const Entry& e : kTable) {
    if (std::string_view(e.code) == c) return true;
  }
  return false;
}
}  // namespace code

enum class Severity { Error, Warning };

struct Diagnostic {
  std::string code;
  Severity severity = Severity::Error;
  std::string file;  // rule file path as given; empty for input errors
  long line = 0;     // 1-based; 0 when unknown
  std::string rule;  // construct name when known
  std::string message;
  long column = 0;  // 1-based, in characters, of the mistake on `line`; 0 when unknown

  // "rules/shell.clp:42: error E_PARSE: message"
  std::string to_text() const;
  // {"code":…,"severity":…,"file":…,"line":…[,"column":…],"rule":…,"message":…}
  std::string to_json() const;
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& diagnostics);

}  // namespace warden
