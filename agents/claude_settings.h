// Claude Code's settings.json: adds or updates Warden's PreToolUse entry (every other key,
// hook and the key order kept) and reads the PreToolUse hooks back for `hook doctor`.
// Pure functions over text and RapidJSON values; no I/O, no shared state.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>
#include <vector>

#include "agents/hook_install.h"

namespace warden::agents {

// `text` is the file's content ("" for a missing file). The entry is
// {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": TIMEOUT}]}
// under hooks.PreToolUse (TIMEOUT in seconds); an existing Warden hook is updated in place
// (later duplicates removed). Malformed JSON or a wrong shape (hooks not an object…) is an
// error naming the place.
SettingsEdit add_claude_hook(std::string_view text, const std::string& command,
                             int timeout_seconds = kHookTimeoutSeconds);

// Every command hook under hooks.PreToolUse of a parsed settings object (none when the shape
// is not the documented one).
std::vector<HookEntry> claude_pretooluse_hooks(const rapidjson::Value& settings);

}  // namespace warden::agents
