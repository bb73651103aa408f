// HookCall: one PreToolUse hook invocation as Claude Code or Codex sends it on stdin, parsed
// and checked (size cap, UTF-8, shape, event). Called by `warden hook claude-code|codex`
// (cli/hook_run_commands.cpp) before mapping the call to a proposal. Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/diagnostic.h"

namespace warden::agents {

enum class HookAgent { ClaudeCode, Codex };

// "claude-code" or "codex": the subcommand and the proposal's context.agent.
std::string_view agent_name(HookAgent agent);

// Hook input larger than this is refused (E_HOOK_INPUT_TOO_LARGE): far above any real tool
// call, and the daemon refuses proposals over its frame limit (1 MiB by default) anyway.
inline constexpr std::size_t kMaxHookInputBytes = std::size_t{8} << 20;

// Why a hook input was refused; every one of these becomes a deny.
using ::warden::code::kHookEvent;       // not a PreToolUse call
using ::warden::code::kHookInputJson;   // not JSON, or not UTF-8
using ::warden::code::kHookInputShape;  // missing or mistyped field
using ::warden::code::kHookInputTooLarge;

struct HookError {
  std::string code;
  std::string message;
};

struct HookCall {
  std::string session_id;       // "" when absent
  std::string cwd;              // "" when absent
  std::string hook_event_name;  // always "PreToolUse" once parsed
  std::string tool_name;        // non-empty
  std::string tool_use_id;      // "" when absent
  std::string
      permission_mode;  // "default", "plan", "acceptEdits", "bypassPermissions", …; "" when absent
  std::string
      transcript_path;  // "" when absent or null; Codex's rollout, read by agents/codex_call.h
  rapidjson::Document tool_input;  // always an object
};

// Parses the hook's stdin. Refuses (false, *error set): text over kMaxHookInputBytes, invalid
// JSON or UTF-8, a duplicate member name, a lone surrogate escape or nesting deeper than
// kMaxJsonDepth (agents/json_strict.h) anywhere (the agent read its JSON otherwise), a
// non-object, a missing or non-string tool_name, a tool_input that is not an object, a
// hook_event_name other than "PreToolUse", and a session_id, cwd, tool_use_id,
// permission_mode or transcript_path that is present but not a string (a null
// transcript_path, Codex's when it keeps no rollout, is absent).
bool parse_hook_call(std::string_view text, HookCall* call, HookError* error);

}  // namespace warden::agents
