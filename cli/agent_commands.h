// Subcommands that put Warden in front of real agents: `warden hook …` (the PreToolUse hook
// of Claude Code and Codex, its installer and doctor) and `warden mcp-gateway -- CMD`.
// Each family registers into the `hook` app or the top-level app; flags shared by every
// front end that asks for decisions are added by add_decider_flags.
#pragma once

#include <CLI/CLI.hpp>

#include "agents/decider.h"

namespace warden::cli {

// --addr, --unix, --token, --token-file, --tls, --ca, --pin, --tls-server-name, --rules,
// --workspace, --home, --principal, --group, --timeout-ms into *config.
void add_decider_flags(CLI::App* cmd, agents::DeciderConfig* config);

void register_hook_run(CLI::App& hook,
                       int* exit_code);  // hook claude-code|codex (hook_run_commands.cpp)
void register_hook_setup(CLI::App& hook,
                         int* exit_code);  // hook install|doctor (hook_setup_commands.cpp)
void register_gateway_commands(CLI::App& app,
                               int* exit_code);  // mcp-gateway (gateway_commands.cpp)

}  // namespace warden::cli
