// What the MCP gateway asks Warden and does with the answer: a tools/call becomes a `tool`
// proposal and is forwarded (as the rules approved it) or refused with the reason; a
// tools/list result loses the tools a rule rejects. No I/O. Safe from several threads: the
// decider is used by one at a time behind a mutex.
#pragma once

#include <rapidjson/document.h>

#include <mutex>
#include <string>

#include "agents/decider.h"

namespace warden::agents::mcp {

struct GateConfig {
  std::string server;                // the MCP server's name in proposals
  std::string agent = "mcp-client";  // context.agent
  std::string session;               // context.session (a random id per gateway process)
  bool filter_tools = true;          // decide every listed tool (action "list")
};

// What becomes of one tools/call.
struct CallAnswer {
  enum class Action { Forward, Refuse, Invalid } action = Action::Refuse;
  bool changed = false;  // Forward: a rule rewrote the call (the request carries the rewrite)
  std::string text;      // Refuse: the isError text for the model; Invalid: the error message
  std::string tool;      // the tool's name, for the log
};

class ToolGate {
 public:
  ToolGate(GateConfig config, Decider& decider);

  // Decides one tools/call request (the JSON-RPC object). On Forward the request is replaced
  // by canonical_call of what was decided (on a rewrite: the approved tool and args; `alloc`
  // is the allocator of the document holding `request`): what the rules saw is what runs.
  CallAnswer decide_call(rapidjson::Value& request, rapidjson::Document::AllocatorType& alloc);

  // {"jsonrpc":"2.0","id":ID,"method":"tools/call","params":{"name":TOOL,"arguments":ARGS,
  // "_meta":…}}: the request's id and _meta, nothing else of it (no arguments when args is
  // null).
  static rapidjson::Value canonical_call(const rapidjson::Value& request, std::string_view tool,
                                         const rapidjson::Value* args,
                                         rapidjson::Document::AllocatorType& alloc);

  // Removes from a tools/list response (the JSON-RPC object) every tool whose `list` proposal
  // is rejected, or could not be decided. Returns how many it removed.
  int filter_list(rapidjson::Value& response, rapidjson::Document::AllocatorType& alloc,
                  std::string* log);

  // The proposals, as JSON text (tests and the log use them too).
  std::string call_proposal(std::string_view tool, const rapidjson::Value* args) const;
  std::string list_proposal(std::string_view tool) const;

  const GateConfig& config() const { return config_; }

 private:
  Verdict decide(const std::string& proposal);
  std::string proposal(bool call, std::string_view tool, const rapidjson::Value* args) const;

  GateConfig config_;
  Decider& decider_;
  std::mutex decider_mutex_;
};

// A random session id (32 hex digits) for one gateway process.
std::string random_session_id();

}  // namespace warden::agents::mcp
