// JSON-RPC 2.0 lines of the MCP stdio transport, as the gateway (agents/mcp_gateway.h) sees
// them: one line parsed and classified (request, notification, response, invalid), a batch
// split into its members, and the few messages the gateway writes itself. Pure functions over
// text and RapidJSON values; no I/O, safe from any thread.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden::agents::mcp {

// The largest line the gateway reads in either direction (16 MiB); a longer one is refused.
inline constexpr std::size_t kMaxLineBytes = 16u << 20;

// JSON-RPC error codes the gateway answers with.
inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kServerGone = -32000;  // the MCP server exited or broke the transport
inline constexpr int kInternalError = -32603;

enum class Kind { Request, Notification, Response, Invalid };

// One member of a line (the line itself, or one element of a batch).
struct Message {
  Kind kind = Kind::Invalid;
  std::string method;   // Request, Notification
  std::string id;       // Request, Response: the id as JSON text ("7", "\"a\"", "null")
  std::string problem;  // Invalid: why
};

// Classifies a parsed JSON-RPC member. A member with "method" is a request (with an "id" that
// is a string, a number or null) or a notification (no "id"); one with "result" or "error"
// and an "id" is a response; anything else is Invalid (its id kept when readable).
Message classify(const rapidjson::Value& member);

// One parsed line. ok == false: not JSON, invalid UTF-8, too deep, ambiguous (a duplicate
// member name or a lone surrogate escape at any depth: other JSON readers take it otherwise),
// or neither an object nor a non-empty array (error_code and problem say which, id is the
// line's id if it had one).
struct Line {
  bool ok = false;
  int error_code = 0;
  std::string problem;
  std::string id = "null";
  bool batch = false;
  rapidjson::Document doc;       // the whole line
  std::vector<Message> members;  // one per batch element, or the single message
};

Line parse_line(std::string_view text);

// {"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}; id is JSON text.
std::string error_response(std::string_view id, int code, std::string_view message);

// A tools/call result the model reads: {"jsonrpc":"2.0","id":ID,"result":{"content":
// [{"type":"text","text":TEXT}],"isError":true}}.
std::string refusal_response(std::string_view id, std::string_view text);

// Several of the responses above (each a JSON object text) as one batch array.
std::string batch_of(const std::vector<std::string>& responses);

}  // namespace warden::agents::mcp
