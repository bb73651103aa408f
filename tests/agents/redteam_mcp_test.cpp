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

#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"
#include "tests/build_paths.h"

namespace {

using warden::cli::testing::Child;

const std::string kData = WARDEN_SOURCE_DIR "/tests/agents/data";
const std::string kShipped = WARDEN_SOURCE_DIR "/rules";

using warden::server::testing::TempDir;

rapidjson::Document parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str(), line.size());
  INFO("line: " << line);
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

bool is_error_result(const rapidjson::Value& r) {
  return r.IsObject() && r.HasMember("result") && r["result"].IsObject() &&
         r["result"].HasMember("isError") && r["result"]["isError"].GetBool();
}

bool is_jsonrpc_error(const rapidjson::Value& r) { return r.IsObject() && r.HasMember("error"); }

struct Gateway {
  TempDir dir;
  std::string log = dir.str() + "/server.log";
  Child child;

  // shipped: decide with the shipped pack (server name "fs", workspace /home/u/proj).
  explicit Gateway(bool shipped = false) : child(args(shipped, dir.str() + "/server.log")) {}

  static std::vector<std::string> args(bool shipped, const std::string& log) {
    std::vector<std::string> a{"mcp-gateway"};
    if (shipped) {
      a.insert(a.end(), {"--server-name", "fs", "--rules", kShipped, "--workspace", "/home/u/proj",
                         "--home", "/home/u", "--on-approval-required", "deny"});
    } else {
      a.insert(a.end(), {"--server-name", "fake", "--rules", kData + "/mcp_rules"});
    }
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
    return parse(read());
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
  Gateway g;
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
  Gateway g(true);
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
  CHECK(is_error_result(r));
  r = g.call(
      R"({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"README.md"}}})");
  CHECK_FALSE(is_error_result(r));
  CHECK_FALSE(is_jsonrpc_error(r));
  CHECK(g.server_log().find(".ssh") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a duplicate method (ping, then tools/call) is refused", "[mcp][redteam]") {
  Gateway g;
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
  Gateway g;
  // Escapes, spacing and members the gateway does not decide: the server gets the canonical
  // serialization of jsonrpc, id, method and params {name, arguments, _meta}.
  auto r = g.call(
      "{ \"jsonrpc\" : \"2.0\", \"id\" : 3, \"method\" : \"tools\\/call\", \"extra\": 1, "
      "\"params\" : { \"name\" : \"ec\\u0068o\", \"arguments\" : {\"x\":\"\\u0041\"}, "
      "\"_meta\":{\"progressToken\":5}, \"args\": {\"x\": \"B\"} } }");
  CHECK(r["id"].GetInt() == 3);
  CHECK_FALSE(is_error_result(r));
  const std::string log = g.server_log();
  CHECK(
      log ==
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"x":"A"},"_meta":{"progressToken":5}}})"
      "\n");
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: tools/call as a notification (no id) is not forwarded undecided",
          "[mcp][redteam]") {
  Gateway g;
  g.send(
      R"({"jsonrpc":"2.0","method":"tools/call","params":{"name":"secret_tool","arguments":{}}})");
  auto r = parse(g.read());  // an error for it (id null), not silence
  CHECK(is_jsonrpc_error(r));
  CHECK(r["id"].IsNull());
  g.sync();
  CHECK(g.server_log().find("secret_tool") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: a lone surrogate escape is refused (RapidJSON and Node decode it apart)",
          "[mcp][redteam]") {
  Gateway g;
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
  Gateway g(true);
  // params as an array: nothing to decide → an error.
  auto r = g.call(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":["delete_repo",{}]})");
  CHECK(is_jsonrpc_error(r));
  // A tool the pack hides from tools/list, called directly: decided as a call, refused.
  r = g.call(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"delete_repo","arguments":{}}})");
  CHECK(is_error_result(r));
  // An escaped method name is still tools/call.
  r = g.call(
      R"({"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_error_result(r));
  // A batch member is decided like a single call.
  r = g.call(
      R"([{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.aws/credentials"}}}])");
  REQUIRE(r.IsArray());
  CHECK(is_error_result(r[0]));
  // Odd ids: an object id is invalid.
  r = g.call(
      R"({"jsonrpc":"2.0","id":{"a":1},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"x"}}})");
  CHECK(is_jsonrpc_error(r));
  // A client line shaped like a response that also names a method is decided as a request.
  r = g.call(
      R"({"jsonrpc":"2.0","id":5,"result":{},"method":"tools/call","params":{"name":"read_text_file","arguments":{"path":"/home/u/.ssh/id_rsa"}}})");
  CHECK(is_error_result(r));
  r = g.call(
      R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{}}})");
  const std::string log = g.server_log();
  CHECK(log.find("delete_repo") == std::string::npos);
  CHECK(log.find(".ssh") == std::string::npos);
  CHECK(log.find(".aws") == std::string::npos);
  CHECK(g.child.finish() == 0);
}

TEST_CASE("redteam mcp: deep nesting is refused and the gateway lives on", "[mcp][redteam]") {
  Gateway g;
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
