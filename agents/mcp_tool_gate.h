// What the MCP gateway asks Warden and does with the answer: a tools/call becomes a `tool`
// proposal, and every other request that reads or acts (resources/read, resources/subscribe,
// prompts/get, completion/complete) a proposal of its own (request_proposal); each is
// forwarded (as the rules approved it) or refused with the reason. A tools/list result loses
// the tools a rule rejects. No I/O. Safe from several threads: the decider is used by one at a
// time behind a mutex.
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

  // Decides one request whose method client_method() calls Decide (agents/mcp_methods.h). On
  // Forward the request is replaced by {"jsonrpc","id","method","params"} with only the params
  // the proposal carried (resources: uri; prompts/get: name, arguments; completion/complete:
  // ref, argument, context; each with _meta). A rule's rewrite is refused: only tools/call
  // forwards a rewritten form.
  CallAnswer decide_request(rapidjson::Value& request, rapidjson::Document::AllocatorType& alloc);

  // The proposal for a decided request (JSON text), or "" with *problem set when its params
  // lack what it needs (a string uri; a string name for prompts/get):
  // - resources/read, resources/subscribe of a local file: URI → {"target":"file",
  //   "action":"read","payload":{"path":P,"uri":U,"server":S,"mcp_method":M}};
  // - of an http(s): URI → {"target":"http","action":"get","payload":{"method":"GET",
  //   "url":U,"server":S,"mcp_method":M}};
  // - anything else → {"target":"mcp","action":mcp_action(M),"payload":{"server":S,
  //   "mcp_method":M,"params":PARAMS}} (PARAMS: what is forwarded), no effect derived;
  // explanation "" and the context of call_proposal.
  std::string request_proposal(std::string_view method, const rapidjson::Value& params,
                               std::string* problem) const;

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
