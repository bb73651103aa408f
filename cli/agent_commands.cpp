// `warden hook …` and `warden mcp-gateway`: registration and the decider flags they share.
#include "cli/agent_commands.h"

#include "cli/commands.h"

namespace warden::cli {

void add_decider_flags(CLI::App* cmd, agents::DeciderConfig* c) {
  cmd->add_option("--addr", c->addr,
                  "Daemon HOST:PORT or unix:PATH (default $WARDEN_ADDR, else the daemon's Unix "
                  "socket when there is one, else 127.0.0.1:9105)");
  cmd->add_option_function<std::string>(
      "--unix", [c](const std::string& path) { c->addr = "unix:" + path; },
      "Connect to the daemon's Unix socket at PATH");
  cmd->add_option("--token", c->token, "Token (default $WARDEN_TOKEN; prefer --token-file)");
  cmd->add_option("--token-file", c->token_file,
                  "Read the token from this file (default $WARDEN_TOKEN_FILE)");
  cmd->add_flag("--tls", c->tls, "Use TLS and verify the daemon's certificate");
  cmd->add_option("--ca", c->ca, "PEM file of the CA that signed the daemon's certificate");
  cmd->add_option("--pin", c->pin, "sha256:HEX of the daemon's certificate (DER)");
  cmd->add_option("--tls-server-name", c->server_name, "Name the daemon's certificate must carry");
  cmd->add_option("--rules", c->rules,
                  "Decide in-process from these rule files or directories (no daemon)");
  cmd->add_option("--workspace", c->workspace, "In-process: the agent's workspace root");
  cmd->add_option("--home", c->home, "In-process: what ~ and $HOME mean in paths");
  cmd->add_option("--principal", c->principal, "In-process: the principal deciding as");
  cmd->add_option("--group", c->groups, "In-process: a group of the principal (repeatable)");
  cmd->add_option_function<int>(
      "--timeout-ms", [c](int ms) { c->budget = std::chrono::milliseconds(ms > 0 ? ms : 1); },
      "Budget of one decision, connect to reply (default 5000); in-process, the "
      "rules' deadline");
}

void register_agent_commands(CLI::App& app, int* exit_code) {
  auto* hook = app.add_subcommand(
      "hook", "PreToolUse hook for Claude Code and Codex, its installer and doctor");
  hook->require_subcommand(1);
  register_hook_run(*hook, exit_code);
  register_hook_setup(*hook, exit_code);
  register_gateway_commands(app, exit_code);
}

}  // namespace warden::cli
