// Codex's config.toml: adds Warden's [[hooks.PreToolUse]] block as text (so the user's
// comments and layout survive), or updates an existing Warden command in place; checks every
// result with toml++. Reads the PreToolUse hooks back for `hook doctor`. No I/O, no state.
#pragma once

#include <toml++/toml.h>

#include <string>
#include <string_view>
#include <vector>

#include "agents/hook_install.h"

namespace warden::agents {

// The matcher Warden's Codex entry uses: every tool (Codex 0.169 treats "*" as match-all;
// "Bash" alone would leave apply_patch and MCP tools unguarded).
inline constexpr const char* kCodexMatcher = "*";

// `text` is the file's content ("" for a missing file). Refuses (E_SETTINGS_SHAPE) a file
// whose hooks or hooks.PreToolUse cannot take an appended [[hooks.PreToolUse]] table (an
// inline table or array), and a Warden command written as a multi-line string. The entry's
// `timeout` (seconds) is set to `timeout_seconds`: replaced where it stands, or written on the
// line after the command when an existing entry has none.
SettingsEdit add_codex_hook(std::string_view text, const std::string& command,
                            int timeout_seconds = kHookTimeoutSeconds);

// Every command hook under hooks.PreToolUse of a parsed config.
std::vector<HookEntry> codex_pretooluse_hooks(const toml::table& config);

// A TOML basic string ("…" with escapes) holding `value`.
std::string toml_quote(std::string_view value);

}  // namespace warden::agents
