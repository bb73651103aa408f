// `warden mcp-gateway` as a child process in front of a fake MCP server
// (tests/agents/data/mcp_fake_server.py, which logs every line it receives), deciding with the
// test rules in tests/agents/data/mcp_rules: what is forwarded, what is refused, what the
// client gets back, and what happens when the server dies.
#include <rapidjson/document.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/agents/serve_child.h"
#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace {

using warden::cli::testing::Child;

const std::string kData = WARDEN_SOURCE_DIR "/tests/agents/data";

using warden::server::testing::TempDir;

rapidjson::Document parse_reply(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str(), line.size());
  INFO("line: " << line);
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::string text_of(const rapidjson::Value& response) {
  REQUIRE(response.HasMember("result"));
  const auto& content = response["result"]["content"];
  REQUIRE(content.IsArray());
  REQUIRE(content.Size() >= 1);
  return content[0]["text"].GetString();
}

bool is_error_result(const rapidjson::Value& response) {
  return response.HasMember("result") && response["result"].HasMember("isError") &&
         response["result"]["isError"].GetBool();
}

// The gateway in front of the fake server, deciding with the test rules unless told otherwise.
struct Gateway {
  TempDir dir;
  std::string log = dir.str() + "/server.log";
  Child child;

  explicit Gateway(std::vector<std::string> flags = {})
      : child(args(std::move(flags), dir.str() + "/server.log")) {}

  static std::vector<std::string> args(std::vector<std::string> flags, const std::string& log) {
    std::vector<std::string> a{"mcp-gateway", "--server-name", "fake"};
    bool decider = false;
    for (auto& f : flags) decider = decider || f == "--rules" || f == "--addr";
    if (!decider) a.insert(a.end(), {"--rules", kData + "/mcp_rules"});
    a.insert(a.end(), flags.begin(), flags.end());
    a.insert(a.end(), {"--", "python3", kData + "/mcp_fake_server.py", log});
    return a;
  }

  void send(const std::string& line) { child.write(line + "\n"); }
  std::string read() {
    std::string line = child.read_line();
    INFO("stderr: " << child.err());
    REQUIRE_FALSE(child.timed_out);
    return line;
  }
  rapidjson::Document call(const std::string& line) {
    send(line);
    return parse_reply(read());
  }
  // What the server received so far (read after a round trip through it).
  std::string server_log() const {
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void initialize() {
    auto r = call(R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{}})");
    REQUIRE(r["id"].GetInt() == 0);
  }
};

std::string tools_call_line(const std::string& id, const std::string& tool,
                            const std::string& args = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + "}}";
}

}  // namespace

TEST_CASE("mcp-gateway forwards an approved call unchanged and keeps its id", "[mcp]") {
  Gateway g;
  g.initialize();
  g.send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  const std::string line = tools_call_line("\"call-1\"", "echo", R"({"path":"a b","n":1})");
  auto r = g.call(line);
  REQUIRE(r["id"].IsString());
  CHECK(std::string(r["id"].GetString()) == "call-1");
  CHECK_FALSE(is_error_result(r));
  CHECK(text_of(r) == R"({"args": {"n": 1, "path": "a b"}, "tool": "echo"})");
  auto r2 = g.call(tools_call_line("17", "echo"));
  REQUIRE(r2["id"].IsInt());
  CHECK(r2["id"].GetInt() == 17);
  // The notification and the call reached the server byte for byte.
  const std::string log = g.server_log();
  CHECK(log.find("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n") !=
        std::string::npos);
  CHECK(log.find(line + "\n") != std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway refuses a rejected call with the reason and never forwards it", "[mcp]") {
  Gateway g;
  g.initialize();
  auto r = g.call(tools_call_line("5", "secret_tool", R"({"path":"/home/u/.ssh/id_rsa"})"));
  CHECK(r["id"].GetInt() == 5);
  CHECK(is_error_result(r));
  CHECK(text_of(r) == "Warden: secret_tool reads credentials (rule fake-secret)");
  g.call(tools_call_line("6", "echo"));  // a round trip: the server has seen everything before it
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway denies a call that needs approval (--on-approval-required deny)", "[mcp]") {
  Gateway g({"--on-approval-required", "deny"});
  auto r = g.call(tools_call_line("\"a\"", "ask_tool"));
  CHECK(is_error_result(r));
  const std::string text = text_of(r);
  CHECK(text.rfind("Warden: ", 0) == 0);
  CHECK(text.find("approval") != std::string::npos);
  CHECK(text.find("ask_tool sends mail (rule fake-ask)") != std::string::npos);
  g.call(tools_call_line("6", "echo"));
  CHECK(g.server_log().find("ask_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway forwards the arguments a rule rewrote", "[mcp]") {
  Gateway g;
  auto r = g.call(tools_call_line("1", "rewrite_me", R"({"text":"rm -rf ~","keep":true})"));
  CHECK_FALSE(is_error_result(r));
  CHECK(text_of(r) == R"({"args": {"keep": true, "text": "safe"}, "tool": "rewrite_me"})");
  CHECK(g.server_log().find("rm -rf") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway answers malformed client messages itself and forwards none", "[mcp]") {
  Gateway g;
  auto r = g.call("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\"");  // cut short
  CHECK(r["error"]["code"].GetInt() == -32700);
  CHECK(r["id"].IsNull());
  r = g.call(
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"e\xff\"}}");
  CHECK(r["error"]["code"].GetInt() == -32700);  // invalid UTF-8
  r = g.call("42");
  CHECK(r["error"]["code"].GetInt() == -32600);
  r = g.call(R"({"id":3,"method":"tools/call","params":{"name":"echo"}})");  // no "jsonrpc"
  CHECK(r["error"]["code"].GetInt() == -32600);
  CHECK(r["id"].GetInt() == 3);
  r = g.call(R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{}}})");
  CHECK(r["error"]["code"].GetInt() == -32602);  // no tool name: nothing to decide
  r = g.call("[]");
  CHECK(r["error"]["code"].GetInt() == -32600);
  g.call(tools_call_line("9", "echo"));
  const std::string log = g.server_log();
  CHECK(log == tools_call_line("9", "echo") + "\n");  // only the good call reached the server
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway refuses a line over 16 MiB and reads on after it", "[mcp]") {
  Gateway g;
  std::string huge =
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":")";
  huge += std::string(17u << 20, 'a') + "\"}}}";
  auto r = g.call(huge);
  CHECK(r["error"]["code"].GetInt() == -32700);
  CHECK(r["id"].IsNull());
  CHECK(g.call(tools_call_line("2", "echo"))["id"].GetInt() == 2);
  CHECK(g.server_log() == tools_call_line("2", "echo") + "\n");
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway decides each call of a batch", "[mcp]") {
  Gateway g;
  g.send("[" + tools_call_line("1", "echo") + "," + tools_call_line("2", "secret_tool") +
         R"(,{"jsonrpc":"2.0","method":"notifications/progress","params":{}},)" +
         tools_call_line("\"3\"", "echo") + "]");
  // The gateway answers the refused call at once; the server answers the rest as a batch.
  auto refused = parse_reply(g.read());
  REQUIRE(refused.IsArray());
  REQUIRE(refused.Size() == 1);
  CHECK(refused[0]["id"].GetInt() == 2);
  CHECK(is_error_result(refused[0]));
  auto answered = parse_reply(g.read());
  REQUIRE(answered.IsArray());
  REQUIRE(answered.Size() == 2);
  CHECK(answered[0]["id"].GetInt() == 1);
  CHECK(std::string(answered[1]["id"].GetString()) == "3");
  const std::string log = g.server_log();
  CHECK(log.find("secret_tool") == std::string::npos);
  CHECK(log.find("notifications/progress") != std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway hides the tools a rule rejects from tools/list", "[mcp]") {
  auto names = [](const rapidjson::Document& r) {
    std::vector<std::string> out;
    for (const auto& t : r["result"]["tools"].GetArray()) out.push_back(t["name"].GetString());
    return out;
  };
  {
    Gateway g;
    auto r = g.call(R"({"jsonrpc":"2.0","id":"list","method":"tools/list"})");
    auto listed = names(r);
    CHECK(std::find(listed.begin(), listed.end(), "hidden_tool") == listed.end());
    CHECK(std::find(listed.begin(), listed.end(), "echo") != listed.end());
    CHECK(listed.size() == 8);
    CHECK(g.child.finish() == 0);
  }
  {
    Gateway g({"--no-filter-tools"});
    auto r = g.call(R"({"jsonrpc":"2.0","id":"list","method":"tools/list"})");
    CHECK(names(r).size() == 9);
    CHECK(g.child.finish() == 0);
  }
}

TEST_CASE("mcp-gateway relays a server-initiated request and the client's answer", "[mcp]") {
  Gateway g;
  g.send(tools_call_line("1", "ask_client"));
  auto request = parse_reply(g.read());
  CHECK(std::string(request["method"].GetString()) == "roots/list");
  CHECK(std::string(request["id"].GetString()) == "srv-1");
  auto r = g.call(R"({"jsonrpc":"2.0","id":"srv-1","result":{"roots":[]}})");
  CHECK(r["id"].GetInt() == 1);
  CHECK(text_of(r) == R"(client said {"roots": []})");
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway answers pending requests when the server dies, then exits", "[mcp]") {
  Gateway g;
  g.initialize();
  auto r = g.call(tools_call_line("\"boom\"", "crash"));
  CHECK(std::string(r["id"].GetString()) == "boom");
  CHECK(r["error"]["code"].GetInt() == -32000);
  CHECK(std::string(r["error"]["message"].GetString()) == "MCP server exited: status 3");
  // The gateway ends on its own, with the client still connected.
  CHECK(g.child.wait_stderr("MCP server exited"));
  CHECK(g.child.finish() == 1);
}

TEST_CASE("mcp-gateway owes no answer for a cancelled request when the server dies", "[mcp]") {
  Gateway g;
  g.send(tools_call_line("1", "silent"));
  g.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  g.send(tools_call_line("2", "silent"));
  g.send(tools_call_line("3", "crash"));
  std::set<int> ids;
  for (int i = 0; i < 2; ++i) {
    auto r = parse_reply(g.read());
    CHECK(r["error"]["code"].GetInt() == -32000);
    ids.insert(r["id"].GetInt());
  }
  CHECK(ids == std::set<int>{2, 3});
  CHECK(g.child.finish() == 1);
  CHECK(g.child.out().empty());  // nothing for the cancelled request
  CHECK(g.server_log().find("notifications/cancelled") != std::string::npos);
}

TEST_CASE("mcp-gateway reports a malformed server message to the request it answered", "[mcp]") {
  Gateway g;
  auto r = g.call(tools_call_line("8", "garbage"));
  CHECK(r["id"].GetInt() == 8);
  CHECK(r["error"]["code"].GetInt() == -32000);
  CHECK(std::string(r["error"]["message"].GetString()).find("malformed") != std::string::npos);
  CHECK(text_of(g.call(tools_call_line("9", "echo"))).find("echo") != std::string::npos);
  CHECK(g.child.finish() == 0);
  CHECK(g.child.err().find("malformed message from the MCP server") != std::string::npos);
}

TEST_CASE("mcp-gateway fails closed without a decision", "[mcp]") {
  // No daemon listens at this socket: every call is refused with the cause, every tool hidden.
  TempDir nowhere;
  Gateway g({"--addr", "unix:" + nowhere.str() + "/none.sock", "--timeout-ms", "2000"});
  auto r = g.call(tools_call_line("1", "echo"));
  CHECK(is_error_result(r));
  CHECK(text_of(r).rfind("Warden: no decision", 0) == 0);
  auto list = g.call(R"({"jsonrpc":"2.0","id":2,"method":"tools/list"})");
  CHECK(list["result"]["tools"].Size() == 0);
  g.call(R"({"jsonrpc":"2.0","id":3,"method":"ping"})");  // other requests still pass
  CHECK(g.server_log().find("tools/call") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway exits with an error when the server cannot start", "[mcp]") {
  Child child({"mcp-gateway", "--rules", kData + "/mcp_rules", "--", "/nonexistent/mcp-server"});
  CHECK(child.finish() == 1);
  CHECK(child.err().find("cannot run /nonexistent/mcp-server") != std::string::npos);
}

TEST_CASE("mcp-gateway needs a server command", "[mcp]") {
  Child child({"mcp-gateway", "--rules", kData + "/mcp_rules"});
  CHECK(child.finish() == 2);
  CHECK(child.err().find("no MCP server to start") != std::string::npos);
}

TEST_CASE("mcp-gateway refuses bad rules before starting the server", "[mcp]") {
  TempDir dir;
  std::ofstream(dir.str() + "/broken.clp")
      << "(defrule broken (proposal (id ?id)) => (assert (decision \n";
  Child child({"mcp-gateway", "--rules", dir.str(), "--", "python3", kData + "/mcp_fake_server.py",
               dir.str() + "/server.log"});
  CHECK(child.finish() == 2);
  CHECK(::access((dir.str() + "/server.log").c_str(), F_OK) != 0);
}

TEST_CASE("mcp-gateway stops a server that outlives its input, and exits 0", "[mcp]") {
  TempDir dir;
  const std::string log = dir.str() + "/server.log";
  Child child({"mcp-gateway", "--server-name", "fake", "--rules", kData + "/mcp_rules", "--",
               "python3", kData + "/mcp_fake_server.py", log, "--linger"});
  child.write(tools_call_line("1", "echo") + "\n");
  CHECK(child.read_line().find("echo") != std::string::npos);
  CHECK(child.finish() == 0);  // stdin closed: grace, SIGTERM (ignored), SIGKILL
  CHECK(child.err().find("did not exit after its input closed") != std::string::npos);
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  CHECK(s.str().find("lingering") != std::string::npos);
}

TEST_CASE("mcp-gateway ends the session on SIGTERM", "[mcp]") {
  Gateway g;
  g.initialize();
  g.child.terminate();
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway decides through a running daemon", "[mcp]") {
  TempDir state;
  warden::agents::testing::ServeChild serve(state, {kData + "/mcp_rules"});
  Gateway g({"--addr", serve.address(), "--token-file", serve.token_file()});
  auto refused = g.call(tools_call_line("1", "secret_tool"));
  CHECK(is_error_result(refused));
  CHECK(text_of(refused) == "Warden: secret_tool reads credentials (rule fake-secret)");
  auto rewritten = g.call(tools_call_line("2", "rewrite_me", R"({"text":"rm -rf ~"})"));
  CHECK(text_of(rewritten) == R"({"args": {"text": "safe"}, "tool": "rewrite_me"})");
  auto list = g.call(R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  CHECK(list["result"]["tools"].Size() == 8);
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway passes lifecycle and list methods byte for byte", "[mcp]") {
  Gateway g;
  const std::vector<std::string> lines = {
      R"({"jsonrpc":"2.0","id":1,"method":"ping"})",
      R"({"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"c"}})",
      R"({"jsonrpc":"2.0","id":3,"method":"resources/templates/list"})",
      R"({"jsonrpc":"2.0","id":4,"method":"prompts/list"})",
      R"({"jsonrpc":"2.0","id":5,"method":"logging/setLevel","params":{"level":"info"}})",
      R"({"jsonrpc":"2.0","id":6,"method":"resources/unsubscribe","params":{"uri":"file:///x"}})",
  };
  for (const auto& line : lines) g.call(line);  // the fake server answers each (an error or not)
  g.send(R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  g.call(tools_call_line("9", "echo"));
  const std::string log = g.server_log();
  for (const auto& line : lines) CHECK(log.find(line + "\n") != std::string::npos);
  CHECK(log.find("notifications/roots/list_changed") != std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("mcp-gateway decides prompts/get and forwards it as decided", "[mcp]") {
  Gateway g;
  // Approved by the test rule fake-prompt: forwarded with only name, arguments and _meta.
  auto r = g.call(
      R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","extra":1,"params":{"name":"greet","arguments":{"who":"x"},"_meta":{"progressToken":2},"uri":"file:///etc/shadow"}})");
  REQUIRE(r.HasMember("result"));
  // Not approved by a rule: the default (approval-required) → refused with a JSON-RPC error.
  r = g.call(R"({"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{"name":"other"}})");
  REQUIRE(r.HasMember("error"));
  CHECK(r["error"]["code"].GetInt() == -32001);
  CHECK(std::string(r["error"]["message"].GetString()).rfind("Warden: ", 0) == 0);
  g.call(tools_call_line("9", "echo"));
  const std::string log = g.server_log();
  CHECK(
      log.find(
          R"({"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"greet","arguments":{"who":"x"},"_meta":{"progressToken":2}}})"
          "\n") != std::string::npos);
  CHECK(log.find("other") == std::string::npos);
  CHECK(log.find("shadow") == std::string::npos);
  CHECK(g.child.finish() == 0);
}
