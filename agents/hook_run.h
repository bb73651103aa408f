// One PreToolUse hook run, free of processes and pipes: hook input text → HookCall →
// proposal → decision → the agent's answer. `warden hook claude-code|codex` reads stdin, builds
// the Decider and prints what this returns; tests call it with a real decider. Never throws;
// every failure is a deny naming its cause. One thread at a time per Decider.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "agents/decider.h"
#include "agents/hook_answer.h"
#include "agents/hook_call.h"

namespace warden::agents {

struct HookRunOptions {
  HookAgent agent = HookAgent::ClaudeCode;
  std::string agent_label;  // context.agent; empty: agent_name(agent)
  OnApprovalRequired on_approval_required = OnApprovalRequired::Ask;
  ExecWrap exec;  // enabled: approved Bash calls run through `warden exec` (Claude Code)
};

// decider may be null when it could not be built; decider_error then says why (a deny with
// E_DECIDER). The input is parsed before anything is decided, so a malformed input is
// refused even when no decider exists.
HookAnswer run_hook(std::string_view input, Decider* decider, std::string_view decider_error,
                    const HookRunOptions& options);

// Builds the decider (loading rules, or connecting to the daemon); null with *error set when
// it cannot.
using MakeDecider = std::function<std::unique_ptr<Decider>(std::string* error)>;

// The same run, building the decider only once the input has been parsed and mapped: a
// malformed input is refused at once, never after a rule pack's load that may itself run
// out the budget.
HookAnswer run_hook(std::string_view input, const MakeDecider& make, const HookRunOptions& options);

}  // namespace warden::agents
