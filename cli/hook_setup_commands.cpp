// `warden hook install|doctor` (agents/hook_install.h, agents/hook_doctor.h): options in,
// the settings file changed or checked, one line per change or check out.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "agents/decider.h"
#include "agents/hook_doctor.h"
#include "agents/hook_install.h"
#include "cli/agent_commands.h"
#include "cli/commands.h"

namespace warden::cli {
namespace {

namespace fs = std::filesystem;
using agents::HookAgent;

// The path of the running warden binary: what the agent will run as its hook.
std::string this_binary() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : self.string();
}

// The first executable NAME in $PATH, or "".
std::string on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  std::size_t at = 0;
  while (at <= dirs.size()) {
    std::size_t end = dirs.find(':', at);
    if (end == std::string::npos) end = dirs.size();
    fs::path candidate = fs::path(dirs.substr(at, end - at)) / name;
    if (end > at && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    at = end + 1;
  }
  return "";
}

std::string absolute(const std::string& path) {
  return path.empty() ? path : fs::absolute(path).lexically_normal().string();
}

// --project DIR | --user → the settings file; "" with a message on stderr when unknown.
std::string settings_file(HookAgent agent, const std::string& project, bool user) {
  std::string path = agents::settings_path(agent, user ? std::string() : project);
  if (path.empty()) std::cerr << "warden: HOME is not set; use --project DIR\n";
  return path;
}

// The daemon address a hook installed now must ask: the one the hook itself would find here
// (--addr, --unix, $WARDEN_ADDR, the daemon's Unix socket, 127.0.0.1:9105), pinned so the
// agent's environment cannot send it elsewhere; a Unix socket path is made absolute.
std::string pinned_address(const agents::HookFlags& flags) {
  if (!flags.unix_socket.empty()) return "unix:" + absolute(flags.unix_socket);
  agents::DeciderConfig config;
  config.addr = flags.addr;
  std::string addr = agents::daemon_address(config);
  if (addr.rfind("unix:", 0) == 0 && addr.size() > 5) addr = "unix:" + absolute(addr.substr(5));
  return addr;
}

void register_install(CLI::App& hook, int* exit_code) {
  auto* cmd = hook.add_subcommand(
      "install", "Write Warden's PreToolUse hook into Claude Code's or Codex's settings");
  struct Args {
    std::string agent;
    std::string project;
    bool user = false;
    agents::HookFlags flags;
    std::string token;
    std::string warden;
    int wait_s = 0;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("agent", a->agent, "claude-code or codex")
      ->required()
      ->check(CLI::IsMember({"claude-code", "codex"}));
  auto* project = cmd->add_option(
      "--project", a->project,
      "Project directory, which must exist: DIR/.claude/settings.json or DIR/.codex/config.toml "
      "(this or --user is required)");
  cmd->add_flag(
         "--user", a->user,
         "The user's settings: ~/.claude/settings.json or $CODEX_HOME (~/.codex)/config.toml")
      ->excludes(project);
  cmd->add_option("--addr", a->flags.addr,
                  "Daemon HOST:PORT or unix:PATH the hook asks (default: what the hook would find "
                  "now — $WARDEN_ADDR, else the daemon's Unix socket, else 127.0.0.1:9105 — "
                  "written into the hook)");
  cmd->add_option("--unix", a->flags.unix_socket, "The daemon's Unix socket the hook asks");
  cmd->add_option(
      "--token-file", a->flags.token_file,
      "File holding the hook's token (default: $WARDEN_TOKEN_FILE, written into the hook)");
  cmd->add_option("--token", a->token, "Refused: a token must not be written into settings");
  cmd->add_option("--rules", a->flags.rules,
                  "Decide in-process from these rule files or directories (no daemon)");
  cmd->add_option("--workspace", a->flags.workspace,
                  "In-process: the agent's workspace root (default with --project: DIR)");
  cmd->add_option("--on-approval-required", a->flags.on_approval_required,
                  "ask or deny (Claude Code default ask; Codex: always deny)")
      ->check(CLI::IsMember({"ask", "deny"}));
  cmd->add_option("--timeout-ms", a->flags.timeout_ms,
                  "Budget of one hook run (at most 29000: the hook timeout is 30 s)")
      ->check(CLI::Range(1, agents::kHookTimeoutSeconds * 1000 - agents::kHookMarginMs));
  cmd->add_option("--wait", a->wait_s,
                  "The hook waits up to SECONDS (0..3600) for a person's answer to an "
                  "approval-required call (hook --wait); the hook timeout written is raised to "
                  "budget + wait + 1 s")
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--warden", a->warden, "The warden binary the hook runs (default: this one)");
  cmd->callback([a, exit_code] {
    const HookAgent agent = *agents::parse_agent(a->agent);
    const std::string agent_name(agents::agent_name(agent));
    if (!a->token.empty()) {
      std::cerr << "warden: --token would write the token into the settings file; put it in a "
                   "file only you can read and pass --token-file FILE\n";
      *exit_code = kExitUsage;
      return;
    }
    // Where the entry goes is said, never taken from the current directory.
    if (a->project.empty() && !a->user) {
      std::cerr << "warden: hook install needs where to write: --project DIR (DIR/"
                << (agent == HookAgent::ClaudeCode ? ".claude/settings.json" : ".codex/config.toml")
                << ") or --user ("
                << (agent == HookAgent::ClaudeCode
                        ? "~/.claude/settings.json"
                        : "$CODEX_HOME/config.toml, default ~/.codex/config.toml")
                << ")\n";
      *exit_code = kExitUsage;
      return;
    }
    if (!a->user) {
      std::error_code ec;
      if (!fs::is_directory(a->project, ec)) {
        std::cerr << "warden: --project " << a->project
                  << (fs::exists(a->project, ec) ? ": not a directory" : ": no such directory")
                  << "; give the agent's project directory (it is not created)\n";
        *exit_code = kExitUsage;
        return;
      }
    }
    if (agent == HookAgent::Codex) {
      if (a->flags.on_approval_required == "ask") {
        std::cerr << "warden: Codex does not support an `ask` answer and runs the command; "
                     "approval-required must be denied for Codex (--on-approval-required deny)\n";
        *exit_code = kExitUsage;
        return;
      }
      a->flags.on_approval_required = "deny";
    }
    const bool in_process = !a->flags.rules.empty();
    if (in_process && a->wait_s > 0) {
      std::cerr << "warden: --wait needs the daemon (it holds the approvals); in-process "
                   "(--rules) there is nothing to wait for\n";
      *exit_code = kExitUsage;
      return;
    }
    if (a->wait_s > 0) a->flags.wait_s = std::to_string(a->wait_s);
    // The hook runs in the agent's working directory and environment: every path it is given
    // is absolute, and what it would otherwise take from the environment (the daemon's
    // address, the token file) is resolved here, as the hook would resolve it, and written in.
    a->flags.token_file = absolute(a->flags.token_file);
    a->flags.workspace = absolute(a->flags.workspace);
    for (auto& r : a->flags.rules) r = absolute(r);
    if (!in_process) {
      a->flags.addr = pinned_address(a->flags);
      a->flags.unix_socket.clear();
      if (a->flags.token_file.empty()) {
        if (const char* f = std::getenv("WARDEN_TOKEN_FILE"); f && *f)
          a->flags.token_file = absolute(f);
      }
      if (a->flags.token_file.empty()) {
        const char* t = std::getenv("WARDEN_TOKEN");
        std::cerr << "warden: WARNING: no token file for the hook"
                  << (t && *t ? " ($WARDEN_TOKEN is set here, but a token is never written into "
                                "settings)"
                              : "")
                  << ": unless the agent's environment sets WARDEN_TOKEN or WARDEN_TOKEN_FILE, a "
                     "daemon that needs a token denies every call; pass --token-file FILE\n";
      } else if (::access(a->flags.token_file.c_str(), R_OK) != 0) {
        std::cerr << "warden: WARNING: the token file " << a->flags.token_file
                  << " cannot be read here; the hook denies every call until the agent's user "
                     "can read it\n";
      }
    }
    // In-process in a project: the project is the agent's workspace unless told otherwise.
    if (in_process && a->flags.workspace.empty() && !a->user) {
      a->flags.workspace = absolute(a->project);
    }
    std::string warden = a->warden.empty() ? this_binary() : absolute(a->warden);
    if (warden.empty()) {
      std::cerr << "warden: cannot tell where this warden binary is; pass --warden PATH\n";
      *exit_code = kExitInternal;
      return;
    }
    std::string file = settings_file(agent, a->project, a->user);
    if (file.empty()) {
      *exit_code = kExitUsage;
      return;
    }
    const long budget_ms =
        a->flags.timeout_ms.empty() ? agents::kHookDefaultBudgetMs : std::stol(a->flags.timeout_ms);
    const int timeout_s = agents::hook_timeout_seconds(budget_ms, a->wait_s);
    std::string command = agents::hook_command(warden, agent, a->flags);
    auto result = agents::install_hook(agent, file, command, timeout_s);
    if (!result.ok) {
      std::cerr << "warden: error " << result.error_code << ": " << result.error << "\n";
      *exit_code = result.error_code == code::kIo ? kExitInternal : kExitUsage;
      return;
    }
    std::cout << result.file << ": Warden's PreToolUse entry " << agents::change_name(result.change)
              << (result.change == agents::InstallResult::Change::Unchanged
                      ? " (already up to date; nothing written)"
                      : "")
              << "\n  command: " << result.command << "\n  hook timeout: " << timeout_s
              << " s (budget " << budget_ms << " ms"
              << (a->wait_s > 0 ? " + wait " + std::to_string(a->wait_s) + " s" : std::string())
              << ", and " << agents::kHookMarginMs << " ms to start and answer)\n";
    if (agent == HookAgent::Codex && result.change != agents::InstallResult::Change::Unchanged) {
      std::cout << "  Codex skips a hook silently until it is trusted, and again after it "
                   "changed: start `codex` in the project and trust it in its hook review, then "
                   "check with `warden hook doctor codex"
                << (a->user ? std::string(" --user")
                            : " --project " + agents::shell_quote(a->project))
                << "`.\n";
    }
    *exit_code = kExitOk;
  });
}

void register_doctor(CLI::App& hook, int* exit_code) {
  auto* cmd = hook.add_subcommand(
      "doctor", "Check the hook setup of Claude Code or Codex and probe the configured hook");
  struct Args {
    std::string agent;
    std::string project = ".";
    bool user = false;
    bool no_probe = false;
    std::string codex;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("agent", a->agent, "claude-code or codex (default: each with a settings file)")
      ->check(CLI::IsMember({"claude-code", "codex"}));
  auto* project = cmd->add_option("--project", a->project, "Project directory (default: .)");
  cmd->add_flag("--user", a->user, "Check the user's settings")->excludes(project);
  cmd->add_flag("--no-probe", a->no_probe, "Do not run the configured hook command");
  cmd->add_option("--codex", a->codex,
                  "Codex binary to ask whether the hook is trusted (default: codex on PATH)");
  cmd->callback([a, exit_code] {
    std::vector<HookAgent> agents_to_check;
    if (!a->agent.empty()) {
      agents_to_check.push_back(*agents::parse_agent(a->agent));
    } else {
      for (HookAgent agent : {HookAgent::ClaudeCode, HookAgent::Codex}) {
        std::string file = agents::settings_path(agent, a->user ? std::string() : a->project);
        if (!file.empty() && fs::exists(file)) agents_to_check.push_back(agent);
      }
      if (agents_to_check.empty()) {
        std::cout << "FAIL  no Claude Code or Codex settings found ("
                  << agents::settings_path(HookAgent::ClaudeCode, a->user ? "" : a->project) << ", "
                  << agents::settings_path(HookAgent::Codex, a->user ? "" : a->project)
                  << "): run `warden hook install claude-code|codex`\n";
        *exit_code = kExitRejected;
        return;
      }
    }
    bool failed = false;
    for (HookAgent agent : agents_to_check) {
      agents::DoctorOptions options;
      options.agent = agent;
      options.project_dir = a->user ? std::string() : absolute(a->project);
      options.settings_file = settings_file(agent, a->project, a->user);
      options.probe = !a->no_probe;
      options.codex_binary = a->codex.empty() ? on_path("codex") : a->codex;
      if (options.settings_file.empty()) {
        *exit_code = kExitUsage;
        return;
      }
      std::cout << "warden hook doctor " << agents::agent_name(agent) << ": "
                << options.settings_file << "\n";
      auto report = agents::run_doctor(options);
      for (const auto& line : report.lines) {
        std::cout << agents::level_name(line.level) << "  " << line.text << "\n";
      }
      failed |= report.failed();
    }
    *exit_code = failed ? kExitRejected : kExitOk;
  });
}

}  // namespace

void register_hook_setup(CLI::App& hook, int* exit_code) {
  register_install(hook, exit_code);
  register_doctor(hook, exit_code);
}

}  // namespace warden::cli
