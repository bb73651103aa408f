// `warden mcp-gateway [flags] -- COMMAND [ARGS…]` (agents/mcp_gateway.h): wiring only.
#include <unistd.h>

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

}  // namespace

void register_gateway_commands(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<GatewayFlags>();
  auto* cmd = app.add_subcommand(
      "mcp-gateway",
      "Stdio MCP proxy: start the MCP server COMMAND as a child and decide every tools/call "
      "(and filter tools/list) with Warden before it reaches the server");
  add_decider_flags(cmd, &flags->decider);
  // Here --server-name names the MCP server in proposals; the daemon certificate's name, the
  // shared flag elsewhere, is --tls-server-name.
  cmd->remove_option(cmd->get_option("--server-name"));
  cmd->add_option("--tls-server-name", flags->decider.server_name,
                  "Name the daemon's certificate must carry");
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
  cmd->add_option("command", flags->command, "The MCP server's command line, after --")
      ->required();
  cmd->callback([flags, exit_code] {
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
