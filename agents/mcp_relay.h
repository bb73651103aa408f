// Both directions of the MCP gateway, free of processes: each client line becomes what goes to
// the server (plus the gateway's own answers), each server line what goes to the client; it
// remembers which requests the server still owes an answer. Called by the two relay threads
// and the gateway's main thread (server_gone); safe across them.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agents/mcp_tool_gate.h"

namespace warden::agents::mcp {

class Relay {
 public:
  // to_client writes one line (without '\n') to the client; to_server writes one line to the
  // server and returns false when it could not; log writes a line for humans.
  using Sink = std::function<bool(const std::string&)>;
  Relay(ToolGate& gate, Sink to_client, Sink to_server,
        std::function<void(const std::string&)> log);

  // One line from the client (without '\n'); too_long: it passed kMaxLineBytes and is gone.
  void from_client(const std::string& line);
  void client_line_too_long();
  // One line from the server.
  void from_server(const std::string& line);
  void server_line_too_long();

  // The server is gone (`why`, e.g. "MCP server exited: status 3"): every request it owes an
  // answer gets a JSON-RPC error, and so does every request forwarded from now on.
  void server_gone(const std::string& why);
  std::size_t pending() const;

 private:
  enum class Track { Other, ToolsList };
  // Registers requests about to be forwarded; false (nothing registered) when the server is gone.
  bool expect(const std::vector<std::pair<std::string, Track>>& ids);
  // Answers, on the server's behalf, the ids still pending among `ids`.
  void fail_pending(const std::vector<std::string>& ids, const std::string& why);
  // A cancelled request is no longer owed an answer (if one comes, it passes through).
  void forget_cancelled(const rapidjson::Value& notification);
  void forward(const std::string& text, const std::vector<std::pair<std::string, Track>>& ids);

  ToolGate& gate_;
  Sink to_client_;
  Sink to_server_;
  std::function<void(const std::string&)> log_;

  mutable std::mutex mutex_;
  std::map<std::string, Track> pending_;  // forwarded requests by id (JSON text)
  std::set<std::string> answered_;        // ids the gateway answered for the server
  bool gone_ = false;
  std::string gone_why_;
};

}  // namespace warden::agents::mcp
