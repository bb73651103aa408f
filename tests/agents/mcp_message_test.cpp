// JSON-RPC lines (agents/mcp_message.h) and the gateway's decisions (agents/mcp_tool_gate.h)
// without processes: a scripted Decider stands in for Warden where a verdict is needed.
#include "agents/mcp_message.h"

#include <catch2/catch.hpp>
#include <string>

#include "agents/mcp_tool_gate.h"
#include "protocol/message.h"

using namespace warden::agents;
using namespace warden::agents::mcp;

TEST_CASE("JSON-RPC members are classified with their ids as JSON text", "[mcp]") {
  auto one = [](const std::string& text) {
    Line l = parse_line(text);
    REQUIRE(l.ok);
    REQUIRE(l.members.size() == 1);
    return l.members[0];
  };
  auto m = one(R"({"jsonrpc":"2.0","id":"a\"b","method":"tools/call","params":{}})");
  CHECK(m.kind == Kind::Request);
  CHECK(m.method == "tools/call");
  CHECK(m.id == R"("a\"b")");
  CHECK(one(R"({"jsonrpc":"2.0","id":7,"method":"x"})").id == "7");
  CHECK(one(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})")
            .kind == Kind::Notification);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"result":{}})").kind == Kind::Response);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}})").kind == Kind::Response);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"result":{},"error":{}})").kind == Kind::Invalid);
  CHECK(one(R"({"jsonrpc":"2.0","id":{},"method":"x"})").kind == Kind::Invalid);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"method":7})").kind == Kind::Invalid);
  CHECK(one(R"({"jsonrpc":"2.0","id":1,"method":"x","params":"s"})").kind == Kind::Invalid);
  auto no_version = one(R"({"jsonrpc":"1.0","id":3,"method":"x"})");
  CHECK(no_version.kind == Kind::Invalid);
  CHECK(no_version.id == "3");
}

TEST_CASE("lines that are not JSON-RPC are refused with the right code", "[mcp]") {
  CHECK(parse_line("{").error_code == kParseError);
  CHECK(parse_line("\"\xc3\x28\"").error_code == kParseError);  // invalid UTF-8
  CHECK(parse_line("[]").error_code == kInvalidRequest);
  CHECK(parse_line("null").error_code == kInvalidRequest);
  // Deep nesting is parsed without recursion and refused whole (copying or writing it would
  // recurse): no crash.
  std::string deep = std::string(100000, '[') + std::string(100000, ']');
  Line l = parse_line(deep);
  CHECK_FALSE(l.ok);
  CHECK(l.error_code == kInvalidRequest);
  CHECK(l.problem.find("nested deeper") != std::string::npos);
  // Duplicate names at any depth, and a lone surrogate escape: refused whole.
  CHECK(parse_line(R"({"jsonrpc":"2.0","id":1,"method":"a","method":"b"})").error_code ==
        kInvalidRequest);
  CHECK(parse_line(R"([{"jsonrpc":"2.0","id":1,"method":"a","params":{"x":{"y":1,"y":2}}}])")
            .error_code == kInvalidRequest);
  CHECK(parse_line(R"({"jsonrpc":"2.0","id":1,"method":"a\udc00"})").error_code == kInvalidRequest);
  CHECK(parse_line(R"({"jsonrpc":"2.0","id":1,"method":"a","params":{"y":1,"z":{"y":2}}})").ok);
}

TEST_CASE("the gateway's own messages are well-formed JSON-RPC", "[mcp]") {
  CHECK(error_response("\"x\"", -32000, "gone \"now\"") ==
        R"({"jsonrpc":"2.0","id":"x","error":{"code":-32000,"message":"gone \"now\""}})");
  CHECK(error_response("not json", -32700, "m") ==
        R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}})");
  CHECK(
      refusal_response("5", "Warden: no\n") ==
      R"({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Warden: no\n"}],"isError":true}})");
}

namespace {

// Answers every proposal with one scripted verdict and remembers the proposals.
class ScriptedDecider final : public Decider {
 public:
  Verdict next;
  std::vector<std::string> seen;
  Verdict decide(std::string_view proposal) override {
    seen.emplace_back(proposal);
    return next;
  }
  std::string describe() const override { return "scripted"; }
};

Verdict approve_as(const std::string& action_json) {
  Verdict v;
  v.ok = true;
  v.outcome = warden::Outcome::Approve;
  v.rewritten = true;
  v.action_json = action_json;
  return v;
}

}  // namespace

TEST_CASE("a tools/call becomes the tool proposal of the brief", "[mcp]") {
  ScriptedDecider d;
  d.next = approve_as("{}");
  d.next.rewritten = false;
  ToolGate gate({"fs", "claude-code", "sess1", true}, d);
  rapidjson::Document req;
  req.Parse(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read","arguments":{"path":"/x"}}})");
  auto a = gate.decide_call(req, req.GetAllocator());
  CHECK(a.action == CallAnswer::Action::Forward);
  CHECK_FALSE(a.changed);
  REQUIRE(d.seen.size() == 1);
  CHECK(
      d.seen[0] ==
      R"({"target":"tool","action":"call","payload":{"server":"fs","tool":"read","args":{"path":"/x"}},)"
      R"("explanation":"","context":{"agent":"claude-code","session":"sess1","source":"mcp-gateway"}})");
  CHECK(gate.list_proposal("read").find(
            R"("action":"list","payload":{"server":"fs","tool":"read"})") != std::string::npos);
}

TEST_CASE("a rewrite that moves the call to another server is refused", "[mcp]") {
  ScriptedDecider d;
  d.next = approve_as(R"({"target":"tool","payload":{"server":"other","tool":"read","args":{}}})");
  ToolGate gate({"fs", "mcp-client", "s", true}, d);
  rapidjson::Document req;
  req.Parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}})");
  auto a = gate.decide_call(req, req.GetAllocator());
  CHECK(a.action == CallAnswer::Action::Refuse);
  CHECK(a.text.find("another server") != std::string::npos);

  d.next = approve_as(
      R"({"target":"tool","payload":{"server":"fs","tool":"read2","args":{"p":"safe"}}})");
  a = gate.decide_call(req, req.GetAllocator());
  CHECK(a.action == CallAnswer::Action::Forward);
  CHECK(a.changed);
  CHECK(
      warden::protocol::to_json_text(req) ==
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read2","arguments":{"p":"safe"}}})");
}

TEST_CASE("no decision: calls refused with the cause, listed tools hidden", "[mcp]") {
  ScriptedDecider d;
  d.next.ok = false;
  d.next.error_code = "E_UNAVAILABLE";
  d.next.error_message = "connection refused";
  ToolGate gate({"fs", "mcp-client", "s", true}, d);
  rapidjson::Document req;
  req.Parse(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read"}})");
  auto a = gate.decide_call(req, req.GetAllocator());
  CHECK(a.action == CallAnswer::Action::Refuse);
  CHECK(a.text ==
        "Warden: no decision, so the call was not run (E_UNAVAILABLE: connection refused)");
  rapidjson::Document res;
  res.Parse(
      R"({"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b"}],"nextCursor":"c"}})");
  std::string log;
  CHECK(gate.filter_list(res, res.GetAllocator(), &log) == 2);
  CHECK(warden::protocol::to_json_text(res) ==
        R"({"jsonrpc":"2.0","id":2,"result":{"tools":[],"nextCursor":"c"}})");
  CHECK(log.find("E_UNAVAILABLE") != std::string::npos);
}
