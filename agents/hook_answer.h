// What the hook answers the agent: the PreToolUse JSON on stdout, the exit code and a line
// for stderr, from a Verdict (agents/decider.h) or from a failure. Claude Code and Codex read
// the same shape; a deny is also exit 2 with the reason on stderr, which both CLIs obey even
// if the JSON shape drifts. Called by `warden hook claude-code|codex`. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "agents/decider.h"
#include "agents/hook_call.h"
#include "agents/hook_exec.h"

namespace warden::agents {

// What approval-required becomes: Claude Code's own prompt ("ask"; a deny in headless `-p`
// runs, and a deny in every permission mode but "default" and "plan": bypassPermissions,
// dontAsk, auto and acceptEdits may settle a prompt without a human) or a deny that says so.
// Codex runs a command it was answered "ask", so for Codex it is always Deny.
enum class OnApprovalRequired { Ask, Deny };

struct HookAnswer {
  std::string stdout_json;  // {"hookSpecificOutput":{…}}, one line
  std::string stderr_text;  // the reason, one line (empty on allow and ask)
  int exit_code = 2;        // 0 allow or ask, 2 deny
  std::string decision;     // "allow", "ask", "deny", or "none" (stdout {}: the agent's own check)
  std::string reason;       // permissionDecisionReason, starts with "Warden: "
};

// The answer to a decision. proposal_json is what was decided (for Claude's updatedInput when
// a rule rewrote the action). Not ok → deny naming the error code. With exec.enabled, an
// approved Bash call of Claude Code is allowed with an updatedInput whose command runs the
// approved command through `warden exec` (agents/hook_exec.h), under its decision's
// envelope; when that line cannot be built, deny (E_HOOK_EXEC).
HookAnswer answer_verdict(HookAgent agent, const HookCall& call, std::string_view proposal_json,
                          const Verdict& verdict, OnApprovalRequired on_approval_required,
                          const ExecWrap& exec = {});

// A deny for a call that was not decided: code and message name the cause.
HookAnswer answer_failure(std::string_view code, std::string_view message);

// An approval's id or token from the daemon as shown to the agent or on a terminal:
// base64url and id characters only (anything else becomes '?'), at most 128.
std::string token_text(std::string_view text);

}  // namespace warden::agents
