// Internal to `hook doctor` (hook_doctor*.cpp): the report helpers and each agent's own
// checks of the traps that make a hook fail open. Not for other callers; no shared state.
#pragma once

#include <rapidjson/document.h>
#include <toml++/toml.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "agents/hook_doctor.h"

namespace warden::agents::doctor {

void add(DoctorReport* r, CheckLevel level, std::string text);
std::optional<std::string> read_text(const std::string& path);
// The value of FLAG (`FLAG VALUE` or `FLAG=VALUE`) among a hook command's words; "" if absent.
std::string flag_value(const std::vector<std::string>& words, const std::string& flag);

// A child process run to its end (or until done(stdout so far) holds, then stopped), with
// `input` on stdin; ran == false when it could not start or the deadline passed.
struct ChildOutput {
  bool ran = false;
  std::string failure;
  int exit_code = -1;
  std::string out, err;
  bool timed_out = false;
};
ChildOutput run_child(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::string& input, std::chrono::milliseconds deadline,
                      const std::function<bool(const std::string&)>& done);

// Claude Code: disableAllHooks, bypassPermissions, permissions, hooks in the other layers.
void check_claude_layers(const DoctorOptions& o, const rapidjson::Document& checked,
                         DoctorReport* r);
// Codex: hooks feature, approval-required mapping, hook trust, approval_policy, sandbox_mode.
// `entry` is Warden's hook (null when there is none).
void check_codex(const DoctorOptions& o, const toml::table& config, const HookEntry* entry,
                 DoctorReport* r);

// Codex: whether Codex will run Warden's hook (trust), by `codex app-server` when
// o.codex_binary is set, else by the user config's trust table.
void check_codex_trust(const DoctorOptions& o, const HookEntry& entry, DoctorReport* r);

}  // namespace warden::agents::doctor
