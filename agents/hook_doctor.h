// `warden hook doctor`: checks a Claude Code or Codex hook setup and prints OK/INFO/WARN/FAIL
// lines: the settings parse, Warden's PreToolUse entry exists and matches every tool, its
// binary runs, its budget fits the hook timeout, a probe through the exact configured command
// denies `rm -rf /`, and the agents' known fail-open traps. Called by the CLI; no shared state.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "agents/hook_install.h"

namespace warden::agents {

enum class CheckLevel { Ok, Info, Warn, Fail };
std::string_view level_name(CheckLevel level);  // "OK", "INFO", "WARN", "FAIL"

struct DoctorLine {
  CheckLevel level;
  std::string text;
};

struct DoctorReport {
  std::vector<DoctorLine> lines;
  bool failed() const;  // any FAIL
};

struct DoctorOptions {
  HookAgent agent = HookAgent::ClaudeCode;
  std::string settings_file;  // the file `hook install` wrote
  std::string project_dir;    // "" for the user's settings; the probe runs here (else $HOME)
  // Claude Code's other settings layers (user, project, local, managed): default paths when
  // empty; tests point them into a temporary directory.
  std::string claude_user_settings;
  std::string claude_managed_settings = "/etc/claude-code/managed-settings.json";
  // Codex: the codex binary the doctor asks (`codex app-server`, hooks/list) whether Warden's
  // hook is trusted; empty: the trust table in the user config is read instead.
  std::string codex_binary;
  std::string codex_requirements = "/etc/codex/requirements.toml";  // allow_managed_hooks_only
  bool probe = true;
  // Only a guard against a hook that never answers (then FAIL); not a latency check.
  std::chrono::milliseconds probe_deadline{60000};
};

DoctorReport run_doctor(const DoctorOptions& options);

// What a hook command answered to one synthetic PreToolUse call.
struct ProbeAnswer {
  bool ran = false;     // false: could not start, or no answer before the deadline
  std::string failure;  // why there is no answer
  int exit_code = -1;
  bool json = false;     // stdout held a hookSpecificOutput with a permissionDecision
  std::string decision;  // "allow" | "deny" | "ask" | "" (no valid answer)
  std::string reason;
  std::string stdout_text, stderr_text;
};

// Runs `command` with /bin/sh -c in `cwd`, a PreToolUse JSON for Bash `shell_command` on
// stdin, and reads the answer as the agent would (JSON on stdout; exit 2 denies).
ProbeAnswer probe_hook(HookAgent agent, const std::string& command, const std::string& cwd,
                       const std::string& shell_command, std::chrono::milliseconds deadline);

// True when `matcher` (Claude Code / Codex semantics) selects tool `tool`.
bool matcher_covers(HookAgent agent, bool has_matcher, const std::string& matcher,
                    const std::string& tool);

}  // namespace warden::agents
