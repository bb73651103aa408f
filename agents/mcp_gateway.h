// The MCP gateway: a stdio MCP server that starts the real one as a child and relays JSON-RPC
// both ways, deciding every request that reads or acts (tools/call, resources/read …), refusing
// methods it does not know, and filtering tools/list (agents/mcp_methods.h). `warden mcp-gateway`
// calls run_gateway once per process; it runs two relay threads and owns the shutdown, with signal
// handlers (TERM, INT, HUP, CHLD; PIPE ignored) installed for the duration of the call.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "agents/decider.h"
#include "agents/mcp_tool_gate.h"

namespace warden::agents::mcp {

struct GatewayOptions {
  GateConfig gate;
  std::vector<std::string> command;  // the MCP server's argv (argv[0] searched in PATH)
  // How long the server gets to exit after its stdin closes, and after SIGTERM.
  std::chrono::milliseconds grace{2000};
};

// Relays between the client (in_fd, out_fd: the gateway's stdin and stdout) and the server
// until one of them ends. Returns the exit status: 0 when the client ended the session (its
// stdin closed, or SIGTERM/SIGINT/SIGHUP), 1 when the server exited or broke the transport
// first (every request it had not answered got a JSON-RPC error -32000 before), 1 when the
// server could not be started. Messages for humans go to stderr.
int run_gateway(const GatewayOptions& options, Decider& decider, int in_fd, int out_fd);

}  // namespace warden::agents::mcp
