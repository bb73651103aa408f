// `warden mcp-gateway [flags] -- COMMAND [ARGS…]` (agents/mcp_gateway.h): wiring only.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iostream>

#include "agents/mcp_gateway.h"
#include "cli/agent_commands.h"
#include "cli/commands.h"

namespace warden::cli {

namespace {

struct GatewayFlags {
  agents::DeciderConfig decider;
  std::string server_name;
  std::string agent = "mcp-client";
  std::string on_approval_required = "deny";
  bool no_filter_tools = false;
  std::vector<std::string> command;
};

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The words after the first `--` that follows `mcp-gateway` in this process's argv
// (/proc/self/cmdline), exactly as given; without such a `--`, what CLI11 collected.
std::vector<std::string> server_command(const std::vector<std::string>& positional,
                                        const std::vector<std::string>& remaining) {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::vector<std::string> argv;
  for (std::string word; std::getline(in, word, '\0');) argv.push_back(word);
  auto sub = std::find(argv.begin(), argv.end(), "mcp-gateway");
  auto dashes = sub == argv.end() ? argv.end() : std::find(sub, argv.end(), "--");
  if (dashes != argv.end()) return {dashes + 1, argv.end()};
  std::vector<std::string> command = positional;
  command.insert(command.end(), remaining.begin(), remaining.end());
  return command;
}

}  // namespace

void register_gateway_commands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<GatewayFlags>();
  auto* cmd = app.add_subcommand(
      "mcp-gateway",
      "Stdio MCP proxy: start the MCP server COMMAND as a child and decide every tools/call "
      "(and filter tools/list) with Warden before it reaches the server");
  add_decider_flags(cmd, &flags->decider);
  cmd->add_option("--server-name", flags->server_name,
                  "The MCP server's name in proposals (payload.server; default: the basename "
                  "of COMMAND)");
  cmd->add_option("--agent", flags->agent, "context.agent of the proposals (default mcp-client)");
  cmd->add_option("--on-approval-required", flags->on_approval_required,
                  "What a call that needs a human's approval gets: deny (an isError result "
                  "saying so; the only mode so far)")
      ->check(CLI::IsMember({"deny"}));
  cmd->add_flag("--no-filter-tools", flags->no_filter_tools,
                "Pass tools/list through unfiltered (calls are still decided)");
  // Everything after `--` (or from the first word that is not a flag) is the server's argv,
  // its own flags and `--` included. CLI11 2.1 splits such a tail between the positional and
  // remaining() depending on the flags before it, so the command is taken from the raw
  // argv (server_command) and CLI11 only has to accept it.
  cmd->prefix_command();
  cmd->add_option("command", flags->command, "The MCP server's command line, after --");
  cmd->footer(
      "The MCP server's command line comes last: warden mcp-gateway [OPTIONS] -- COMMAND "
      "[ARGS...]");
  cmd->callback([cmd, flags, exit_code] {
    flags->command = server_command(flags->command, cmd->remaining());
    if (flags->command.empty()) {
      std::cerr << "warden mcp-gateway: no MCP server to start (… -- COMMAND [ARGS...])\n";
      *exit_code = kExitUsage;
      return;
    }
    std::string error;
    auto decider = agents::make_decider(flags->decider, &error);
    if (!decider) {
      std::cerr << "warden mcp-gateway: cannot decide: " << error << "\n";
      *exit_code = kExitUsage;
      return;
    }
    agents::mcp::GatewayOptions options;
    options.command = flags->command;
    options.gate.server =
        flags->server_name.empty() ? basename_of(flags->command.front()) : flags->server_name;
    options.gate.agent = flags->agent;
    options.gate.session = agents::mcp::random_session_id();
    options.gate.filter_tools = !flags->no_filter_tools;
    *exit_code = agents::mcp::run_gateway(options, *decider, STDIN_FILENO, STDOUT_FILENO);
  });
}

}  // namespace warden::cli
