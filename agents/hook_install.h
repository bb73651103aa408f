// `warden hook install`: writes Warden's PreToolUse entry into the settings of Claude Code
// (.claude/settings.json) or Codex (.codex/config.toml), merged with what is there and
// idempotent. Also the shell-word helpers the installer and `hook doctor` share to build and
// recognise a Warden hook command. Called by cli/hook_setup_commands.cpp; no shared state.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/hook_call.h"  // HookAgent, agent_name

namespace warden::agents {

// The agent named "claude-code" or "codex" (agent_name's inverse).
std::optional<HookAgent> parse_agent(std::string_view name);

// Where the agent reads its settings. project: PROJECT/.claude/settings.json or
// PROJECT/.codex/config.toml; user (project empty): $HOME/.claude/settings.json, or
// $CODEX_HOME/config.toml else $HOME/.codex/config.toml. Empty when HOME is unset.
std::string settings_path(HookAgent agent, const std::string& project_dir);

// POSIX shell quoting: the word unchanged when it is made of safe characters, else in
// single quotes ('it'\''s').
std::string shell_quote(std::string_view word);
// Splits a command line into words as sh would for plain words and quotes ('…', "…", \x).
// nullopt when the line uses anything else (unbalanced quotes, $(…), `…`, |, ;, &, <, >):
// such a command is not one Warden wrote and is never taken for Warden's.
std::optional<std::vector<std::string>> split_shell_words(std::string_view line);

// True when `command` runs a warden binary (its program's file name is "warden") with
// `hook AGENT` as its first arguments: the entry `hook install` updates in place.
bool is_warden_hook_command(std::string_view command, HookAgent agent);

// The flags passed through to `warden hook AGENT`; empty strings are left out.
struct HookFlags {
  std::string addr;
  std::string unix_socket;
  std::string token_file;
  std::vector<std::string> rules;
  std::string workspace;
  std::string on_approval_required;  // "ask" | "deny" | "" (Codex: always "deny")
  std::string timeout_ms;
  std::string wait_s;  // --wait SECONDS: the daemon may hold its reply that long
};

// "<warden> hook AGENT <flags>", every word shell-quoted.
std::string hook_command(const std::string& warden_path, HookAgent agent, const HookFlags& flags);

// Seconds the agent gives the hook before it gives up on it (written as the entry's timeout).
inline constexpr int kHookTimeoutSeconds = 30;
// The hook's decision budget when the command gives no --timeout-ms.
inline constexpr int kHookDefaultBudgetMs = 5000;
// What a hook's decision budget (--timeout-ms) must leave of the agent's timeout: the hook's
// own start-up and the grace of its overrun guard. A budget closer to the timeout lets the
// agent give up first, and both agents treat a hook that timed out as no objection.
inline constexpr int kHookMarginMs = 1000;

// One command hook of a PreToolUse matcher group, as read from either agent's settings.
struct HookEntry {
  bool has_matcher = false;  // a group without a matcher matches every tool
  std::string matcher;
  std::string type;  // "command" for a hook Warden wrote
  std::string command;
  std::optional<double> timeout_seconds;
  int group = -1;    // index of its matcher group under PreToolUse
  int handler = -1;  // index among the group's hooks
};

// A settings text after adding or updating Warden's entry (the text is the whole new file).
struct SettingsEdit {
  bool ok = false;
  std::string error_code;
  std::string error;
  bool changed = false;
  bool added = false;
  std::string text;
};

struct InstallResult {
  bool ok = false;
  std::string error_code;  // E_USAGE, E_SETTINGS_PARSE, E_SETTINGS_SHAPE, E_IO
  std::string error;
  enum class Change { Added, Updated, Unchanged } change = Change::Unchanged;
  std::string file;
  std::string command;
};
std::string_view change_name(InstallResult::Change change);  // "added", "updated", "unchanged"

// The hook timeout (seconds) to write for a hook run of `budget_ms` that may wait `wait_s`
// seconds for a person: kHookTimeoutSeconds, or more when budget + wait + kHookMarginMs needs it.
int hook_timeout_seconds(long budget_ms, long wait_s);

// Writes the entry for `command` with `timeout_seconds` into `settings_file` (created, with
// its directory below the project, when missing). The file is replaced atomically (temporary
// file + rename, same mode) and only when something changed; on any error it is left untouched.
InstallResult install_hook(HookAgent agent, const std::string& settings_file,
                           const std::string& command, int timeout_seconds = kHookTimeoutSeconds);

// Replaces `path` with `text` atomically, keeping the file's mode (0644 minus umask for a
// new file); a symlink is kept and the file it points to replaced. false with *error on
// failure; the old file is then untouched.
bool write_file_atomically(const std::string& path, const std::string& text, std::string* error);

}  // namespace warden::agents
