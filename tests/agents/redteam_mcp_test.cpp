// Red-team corpus for `warden mcp-gateway`: client lines a hostile model (or client) can send
// so that the gateway decides one thing and the MCP server runs another. The server is the
// fake one (tests/agents/data/mcp_fake_server.py: Python's json, which like JSON.parse in the
// Node servers keeps the LAST of duplicate names) and it logs every line it receives, so each
// test proves what reached it. Decisions: the test rules (mcp_rules) or the shipped pack.
#include <rapidjson/document.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace {

using warden::cli::testing::Child;

const std::string kAgentData = WARDEN_SOURCE_DIR "/tests/agents/data";
const std::string kShipped = WARDEN_SOURCE_DIR "/rules";

using warden::server::testing::TempDir;

rapidjson::Document parse_line(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str(), line.size());
  INFO("line: " << line);
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

bool is_error_answer(const rapidjson::Value& r) {
  return r.IsObject() && r.HasMember("result") && r["result"].IsObject() &&
         r["result"].HasMember("isError") && r["result"]["isError"].GetBool();
}

bool is_jsonrpc_error(const rapidjson::Value& r) { return r.IsObject() && r.HasMember("error"); }

struct RedteamGateway {
  TempDir dir;
  std::string log = dir.str() + "/server.log";
  Child child;

  // shipped: decide with the shipped pack (server name "fs", workspace /home/u/proj).
  explicit RedteamGateway(bool shipped = false) : child(args(shipped, dir.str() + "/server.log")) {}

  static std::vector<std::string> args(bool shipped, const std::string& log) {
    std::vector<std::string> a{"mcp-gateway"};
    if (shipped) {
      a.insert(a.end(), {"--server-name", "fs", "--rules", kShipped, "--workspace", "/home/u/proj",
                         "--home", "/home/u", "--on-approval-required", "deny"});
    } else {
      a.insert(a.end(), {"--server-name", "fake", "--rules", kAgentData + "/mcp_rules"});
    }
    a.insert(a.end(), {"--", "python3", kAgentData + "/mcp_fake_server.py", log});
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
    return parse_line(read());
  }
  // A round trip through the server: everything sent before it has been logged.
  void sync(int id = 999) {
    auto r = call(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                  R"(,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
    REQUIRE(r["id"].GetInt() == id);
  }
  std::string server_log() const {
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

}  // namespace

TEST_CASE("redteam mcp: duplicate params.name is refused, not forwarded", "[mcp][redteam]") {
  RedteamGateway g;
  // The gateway (first name) would see echo; the server (last name) would run secret_tool.
  auto r = g.call(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"name":"secret_tool"}})");
  CHECK(r["id"].GetInt() == 1);
  CHECK(is_jsonrpc_error(r));
  CHECK(std::string(r["error"]["message"].GetString()).find("duplicate") != std::string::npos);
  g.sync();
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: duplicate arguments with the shipped pack: the credential read never runs",
          "[mcp][redteam]") {
  RedteamGateway g(true);
  auto r = g.call(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"README.md"},"arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_jsonrpc_error(r));
  // A nested duplicate too (inside arguments).
  r = g.call(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"README.md","path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_jsonrpc_error(r));
  // Sanity: the same read alone is refused by the shipped pack, and README.md passes.
  r = g.call(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_error_answer(r));
  r = g.call(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"README.md"}}})");
  CHECK_FALSE(is_error_answer(r));
  CHECK_FALSE(is_jsonrpc_error(r));
  CHECK(g.server_log().find(".ssh") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a duplicate method (ping, then tools/call) is refused", "[mcp][redteam]") {
  RedteamGateway g;
  auto r = g.call(
      R"({"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/call","params":{"name":"secret_tool","arguments":{}}})");
  CHECK(is_jsonrpc_error(r));
  CHECK(r["id"].GetInt() == 7);
  // A duplicate id, or one inside a batch member, is refused the same way.
  r = g.call(
      R"([{"jsonrpc":"2.0","id":8,"method":"ping","method":"tools/call","params":{"name":"secret_tool"}}])");
  CHECK(is_jsonrpc_error(r));
  g.sync();
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a decided call reaches the server as what was decided (canonical form)",
          "[mcp][redteam]") {
  RedteamGateway g;
  // Escapes, spacing and members the gateway does not decide: the server gets the canonical
  // serialization of jsonrpc, id, method and params {name, arguments, _meta}.
  auto r = g.call(
      "{ \"jsonrpc\" : \"2.0\", \"id\" : 3, \"method\" : \"tools\\/call\", \"extra\": 1, "
      "\"params\" : { \"name\" : \"ec\\u0068o\", \"arguments\" : {\"x\":\"\\u0041\"}, "
      "\"_meta\":{\"progressToken\":5}, \"args\": {\"x\": \"B\"} } }");
  CHECK(r["id"].GetInt() == 3);
  CHECK_FALSE(is_error_answer(r));
  const std::string log = g.server_log();
  CHECK(
      log ==
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":"A"},"_meta":{"progressToken":5}}})"
      "\n");
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: tools/call as a notification (no id) is not forwarded undecided",
          "[mcp][redteam]") {
  RedteamGateway g;
  g.send(
      R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"secret_tool","arguments":{}}})");
  auto r = parse_line(g.read());  // an error for it (id null), not silence
  CHECK(is_jsonrpc_error(r));
  CHECK(r["id"].IsNull());
  g.sync();
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a lone surrogate escape is refused (RapidJSON and Node decode it apart)",
          "[mcp][redteam]") {
  RedteamGateway g;
  auto r = g.call(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"path":"a\udc00b"}}})");
  CHECK(is_jsonrpc_error(r));
  r = g.call(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"p\udc00":"x"}}})");
  CHECK(is_jsonrpc_error(r));
  g.sync();
  CHECK(g.server_log().find("a\\udc00b") == std::string::npos);
  CHECK(g.server_log().find("\xed\xb0\x80") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: shapes that were already refused or decided stay so", "[mcp][redteam]") {
  RedteamGateway g(true);
  // params as an array: nothing to decide → an error.
  auto r = g.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":["delete_repo",{}]})");
  CHECK(is_jsonrpc_error(r));
  // A tool the pack hides from tools/list, called directly: decided as a call, refused.
  r = g.call(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_repo","arguments":{}}})");
  CHECK(is_error_answer(r));
  // An escaped method name is still tools/call.
  r = g.call(
      R"({"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_error_answer(r));
  // A batch member is decided like a single call.
  r = g.call(
      R"([{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.aws/credentials"}}}])");
  REQUIRE(r.IsArray());
  CHECK(is_error_answer(r[0]));
  // Odd ids: an object id is invalid.
  r = g.call(
      R"({"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"x"}}})");
  CHECK(is_jsonrpc_error(r));
  // A client line shaped like a response that also names a method is decided as a request.
  r = g.call(
      R"({"jsonrpc":"2.0","id":5,"result":{},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_error_answer(r));
  r = g.call(
      R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
  const std::string log = g.server_log();
  CHECK(log.find("delete_repo") == std::string::npos);
  CHECK(log.find(".ssh") == std::string::npos);
  CHECK(log.find(".aws") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: deep nesting is refused and the gateway lives on", "[mcp][redteam]") {
  RedteamGateway g;
  for (int depth : {200, 300000}) {
    INFO(depth);
    auto r = g.call(
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"x":)" +
        std::string(depth, '[') + std::string(depth, ']') + "}}}");
    CHECK(is_jsonrpc_error(r));
  }
  g.sync();  // still relaying
  CHECK(g.server_log().find("[[[") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

namespace {

// The error code of a JSON-RPC error response, 0 for anything else.
int error_code(const rapidjson::Value& r) {
  if (!r.IsObject() || !r.HasMember("error") || !r["error"].IsObject()) return 0;
  const auto& e = r["error"];
  return e.HasMember("code") && e["code"].IsInt() ? e["code"].GetInt() : 0;
}

std::string error_message(const rapidjson::Value& r) {
  if (error_code(r) == 0 || !r["error"].HasMember("message") || !r["error"]["message"].IsString())
    return "";
  return r["error"]["message"].GetString();
}

// A response's integer id, -1 for anything else.
int id_of(const rapidjson::Value& r) {
  return r.IsObject() && r.HasMember("id") && r["id"].IsInt() ? r["id"].GetInt() : -1;
}

std::string request(int id, const std::string& method, const std::string& params) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":)" + method +
         R"(,"params":)" + params + "}";
}

std::string read_uri(int id, const std::string& uri) {
  return request(id, R"("resources/read")", R"({"uri":")" + uri + R"("})");
}

}  // namespace

TEST_CASE("redteam mcp: resources/read of a credential is decided as a file read and refused",
          "[mcp][redteam]") {
  RedteamGateway g(true);
  for (const std::string uri : {
           "file:///home/u/.ssh/id_rsa", "file:///home/u/proj/.env",
           "file://localhost/home/u/.aws/credentials", "FILE:///home/u/.ssh/id_ed25519",
           "file:/home/u/.ssh/id_rsa",
           "file:///home/u/.ss%68/id_rsa",                 // an escaped letter: decoded
           "file:///home/u/proj/sub/../../.ssh/id_rsa",    // dot segments
           "file:///home/u/proj/%2e%2e/.ssh/id_rsa",       // an escaped dot: not a plain path
           "file:///home/u/proj/.env?x=1",                 // a query: not a plain path
           "file://attacker.example/home/u/.ssh/id_rsa",   // another host
           "file:///home/u/proj\\\\..\\\\.ssh\\\\id_rsa",  // backslashes
           "file:///home/u/proj/.env ",                    // a trailing blank (Node drops it)
           "file:///home/u/proj/.e\\tnv",                  // a tab (WHATWG parsers drop it)
           "file:////home/u/.ssh/id_rsa",                  // an empty host, then "//home"
       }) {
    INFO(uri);
    auto r = g.call(read_uri(1, uri));
    CHECK(is_jsonrpc_error(r));
    CHECK(id_of(r) == 1);
    CHECK(error_code(r) == -32001);
    CHECK(error_message(r).rfind("Warden: ", 0) == 0);
  }
  // resources/subscribe is decided the same way.
  auto r =
      g.call(request(2, R"("resources/subscribe")", R"({"uri":"file:///home/u/.ssh/id_rsa"})"));
  CHECK(error_code(r) == -32001);
  // A workspace file passes (files-read-workspace), forwarded as {uri, _meta} only.
  r = g.call(request(3, R"("resources/read")",
                     R"({"uri":"file:///home/u/proj/README.md","path":"/home/u/.ssh/id_rsa"})"));
  CHECK_FALSE(is_jsonrpc_error(r));
  g.sync();
  const std::string log = g.server_log();
  CHECK(log.find(".ssh") == std::string::npos);
  CHECK(log.find(".aws") == std::string::npos);
  CHECK(log.find(".env") == std::string::npos);
  CHECK(
      log.find(
          R"({"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"file:///home/u/proj/README.md"}})") !=
      std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a web resource is decided as an HTTP GET", "[mcp][redteam]") {
  RedteamGateway g(true);
  auto r = g.call(read_uri(1, "http://169.254.169.254/latest/meta-data/iam/"));
  CHECK(error_code(r) == -32001);
  CHECK(error_message(r).find("169.254.169.254") != std::string::npos);
  g.sync();
  CHECK(g.server_log().find("169.254") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: prompts/get, completion/complete and other resources are decided",
          "[mcp][redteam]") {
  RedteamGateway g(true);
  // The shipped pack has no rule for them: the default (approval-required) → denied.
  auto r = g.call(request(1, R"("prompts/get")",
                          R"({"name":"summarize","arguments":{"file":"/home/u/.ssh/id_rsa"}})"));
  CHECK(error_code(r) == -32001);
  CHECK(error_message(r).find("approval") != std::string::npos);
  r = g.call(request(
      2, R"("completion/complete")",
      R"({"ref":{"type":"ref/resource","uri":"file:///{path}"},"argument":{"name":"path","value":"/home/u/.ssh/"}})"));
  CHECK(error_code(r) == -32001);
  r = g.call(read_uri(3, "db://prod/users"));
  CHECK(error_code(r) == -32001);
  // Without what the method needs: invalid params, not forwarded.
  r = g.call(request(4, R"("prompts/get")", R"({"arguments":{}})"));
  CHECK(error_code(r) == -32602);
  r = g.call(request(5, R"("resources/read")", R"({"uri":7})"));
  CHECK(error_code(r) == -32602);
  // As a notification (no id): refused, not forwarded.
  g.send(
      R"({"jsonrpc":"2.0","method":"resources/read","params":{"uri":"file:///home/u/.ssh/id_rsa"}})");
  r = parse_line(g.read());
  CHECK((r.HasMember("id") && r["id"].IsNull()));
  CHECK(error_code(r) == -32600);
  g.sync();
  const std::string log = g.server_log();
  CHECK(log.find("prompts/get") == std::string::npos);
  CHECK(log.find("completion/complete") == std::string::npos);
  CHECK(log.find("db://") == std::string::npos);
  CHECK(log.find(".ssh") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: near-miss and unknown method names are refused, never forwarded",
          "[mcp][redteam]") {
  RedteamGateway g;  // the test rules approve every call of the fake server but secret_tool
  int id = 1;
  for (const std::string method : {
           R"("Tools/call")",
           R"("tools/call ")",
           R"(" tools/call")",
           R"("TOOLS/CALL")",
           R"("tools/call\t")",
           R"("tools/call\n")",
           R"("tools//call")",
           R"("Resources/Read")",
           R"("resources/read ")",
           R"("tasks/get")",
           R"("shell/exec")",
           R"("")",
       }) {
    INFO(method);
    auto r = g.call(request(id, method, R"({"name":"secret_tool","arguments":{}})"));
    CHECK(id_of(r) == id);
    CHECK(error_code(r) == -32601);
    ++id;
  }
  // In a batch, beside a good call.
  auto r = g.call("[" + request(50, R"("Tools/call")", R"({"name":"secret_tool"})") + "]");
  REQUIRE(r.IsArray());
  REQUIRE(r.Size() == 1);
  CHECK(error_code(r[0]) == -32601);
  // A notification of an unknown method is dropped.
  g.send(R"({"jsonrpc":"2.0","method":"Tools/call","params":{"name":"secret_tool"}})");
  g.sync();
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: the server's requests of unknown methods never reach the client",
          "[mcp][redteam]") {
  RedteamGateway g;
  g.send(
      R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask_client_odd","arguments":{}}})");
  // The gateway answered shell/exec for the client (-32601) and dropped notifications/odd.
  const std::string line = g.read();
  auto r = parse_line(line);
  CHECK(line.find("shell/exec") == std::string::npos);
  CHECK(line.find("notifications/odd") == std::string::npos);
  REQUIRE(id_of(r) == 1);
  CHECK(std::string(r["result"]["content"][0]["text"].GetString()) ==
        R"(client said {"error": -32601})");
  CHECK(g.child.finish() == 0);
  CHECK(g.child.out().find("shell/exec") == std::string::npos);
  CHECK(g.child.out().find("notifications/odd") == std::string::npos);
}
