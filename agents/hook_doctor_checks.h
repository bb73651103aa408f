// Internal to `hook doctor` (hook_doctor*.cpp): the report helpers and each agent's own
// checks of the traps that make a hook fail open. Not for other callers; no shared state.
#pragma once

#include <rapidjson/document.h>
#include <toml++/toml.h>

#include <optional>
#include <string>
#include <vector>

#include "agents/hook_doctor.h"

namespace warden::agents::doctor {

void add(DoctorReport* r, CheckLevel level, std::string text);
std::optional<std::string> read_text(const std::string& path);
// The value of FLAG (`FLAG VALUE` or `FLAG=VALUE`) among a hook command's words; "" if absent.
std::string flag_value(const std::vector<std::string>& words, const std::string& flag);

// Claude Code: disableAllHooks, bypassPermissions, permissions, hooks in the other layers.
void check_claude_layers(const DoctorOptions& o, const rapidjson::Document& checked,
                         DoctorReport* r);
// Codex: hooks feature, approval-required mapping, hook trust, approval_policy, sandbox_mode.
// `entry` is Warden's hook (null when there is none).
void check_codex(const DoctorOptions& o, const toml::table& config, const HookEntry* entry,
                 DoctorReport* r);

}  // namespace warden::agents::doctor
