// `warden mcp-gateway -- COMMAND [ARGS…]` (agents/mcp_gateway.h).
#include "cli/agent_commands.h"
#include "cli/commands.h"

namespace warden::cli {

void register_gateway_commands(CLI::App& app, int* exit_code) {
  (void)app;
  (void)exit_code;  // skeleton: filled in by the issue-8 work
}

}  // namespace warden::cli
