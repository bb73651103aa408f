// Tool call → proposal (agents/hook_proposal.h): every mapping of the contract, unknown
// tools, mcp__SERVER__TOOL, malformed inputs; and approved action → Claude's updatedInput.
#include "agents/hook_proposal.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>

using namespace warden::agents;

namespace {

HookCall call_of(const std::string& tool, const std::string& input_json,
                 const std::string& cwd = "/home/user/project") {
  HookCall call;
  call.session_id = "s-1";
  call.cwd = cwd;
  call.hook_event_name = "PreToolUse";
  call.tool_name = tool;
  call.tool_use_id = "toolu_1";
  call.permission_mode = "default";
  call.tool_input.Parse(input_json.c_str());
  REQUIRE(call.tool_input.IsObject());
  return call;
}

std::string text(const rapidjson::Value& v) {
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  v.Accept(w);
  return b.GetString();
}

// The proposal as a document; fails the test when the mapping refuses.
rapidjson::Document mapped(const HookCall& call, std::string_view agent = "claude-code") {
  std::string json;
  HookError error;
  INFO(error.message);
  REQUIRE(hook_proposal(call, agent, &json, &error));
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  REQUIRE(doc.IsObject());
  return doc;
}

std::string payload(const HookCall& call) { return text(mapped(call)["payload"]); }
std::string target(const rapidjson::Document& d) {
  return std::string(d["target"].GetString()) + "/" + d["action"].GetString();
}

std::string proposal_refused(const HookCall& call) {
  std::string json;
  HookError error;
  CHECK_FALSE(hook_proposal(call, "claude-code", &json, &error));
  CHECK_FALSE(error.message.empty());
  return error.code;
}

}  // namespace

TEST_CASE("proposal: context and explanation", "[agents][hook]") {
  auto d = mapped(call_of("Bash", R"({"command":"ls","description":"List files"})"), "coder-7");
  CHECK(
      text(d["context"]) ==
      R"({"agent":"coder-7","session":"s-1","source":"hook","tool_use_id":"toolu_1","tool":"Bash"})");
  CHECK(std::string(d["explanation"].GetString()) == "List files");
  auto w = mapped(call_of("Write", R"({"file_path":"/a","content":"x"})"));
  CHECK(std::string(w["explanation"].GetString()).empty());
}

TEST_CASE("proposal: Bash is a shell run in the hook's cwd", "[agents][hook]") {
  auto c = call_of(
      "Bash", R"({"command":"ls -la","description":"d","timeout":1000,"run_in_background":true})");
  auto d = mapped(c);
  CHECK(target(d) == "shell/run");
  CHECK(
      text(d["payload"]) ==
      R"({"command":"ls -la","cwd":"/home/user/project","timeout":1000,"run_in_background":true})");
  // A cwd inside the input does not override the hook's.
  CHECK(payload(call_of("Bash", R"({"command":"ls","cwd":"/"})")) ==
        R"({"command":"ls","cwd":"/home/user/project"})");
}

TEST_CASE("proposal: a Bash command that is not a string is refused", "[agents][hook]") {
  CHECK(proposal_refused(call_of("Bash", R"({"command":["ls","-l"]})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Bash", R"({"command":7})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Bash", R"({})")) == kHookInputShape);
}

TEST_CASE("proposal: the file writing tools", "[agents][hook]") {
  auto w = mapped(call_of("Write", R"({"file_path":"/p/a.txt","content":"hi\n"})"));
  CHECK(target(w) == "file/write");
  CHECK(text(w["payload"]) ==
        R"({"cwd":"/home/user/project","action":"write","path":"/p/a.txt","content":"hi\n"})");

  CHECK(
      payload(call_of(
          "Edit",
          R"({"file_path":"/p/a","old_string":"a","new_string":"b","replace_all":false})")) ==
      R"({"cwd":"/home/user/project","action":"write","path":"/p/a","content":"b","old_string":"a","replace_all":false})");

  auto m = mapped(call_of(
      "MultiEdit",
      R"({"file_path":"/p/a","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]})"));
  CHECK(target(m) == "file/write");
  CHECK(
      text(m["payload"]) ==
      R"({"cwd":"/home/user/project","action":"write","path":"/p/a","content":"b\nd","edits":[{"old_string":"a","new_string":"b"},{"old_string":"c","new_string":"d"}]})");

  CHECK(
      payload(call_of(
          "NotebookEdit",
          R"J({"notebook_path":"/p/n.ipynb","new_source":"print(1)","cell_id":"c1","edit_mode":"replace"})J")) ==
      R"J({"cwd":"/home/user/project","action":"write","path":"/p/n.ipynb","content":"print(1)","cell_id":"c1","edit_mode":"replace"})J");
  CHECK(
      payload(call_of("NotebookEdit",
                      R"({"notebook_path":"/p/n.ipynb","cell_id":"c1","edit_mode":"delete"})")) ==
      R"({"cwd":"/home/user/project","action":"write","path":"/p/n.ipynb","content":"","cell_id":"c1","edit_mode":"delete"})");

  CHECK(proposal_refused(call_of("Write", R"({"content":"x"})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Write", R"({"file_path":"/a"})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Edit", R"({"file_path":"/a","new_string":1})")) ==
        kHookInputShape);
  CHECK(proposal_refused(call_of("MultiEdit", R"({"file_path":"/a","edits":{}})")) ==
        kHookInputShape);
  CHECK(proposal_refused(call_of(
            "MultiEdit", R"({"file_path":"/a","edits":[{"old_string":"a"}]})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("NotebookEdit", R"({"notebook_path":"/a","new_source":[]})")) ==
        kHookInputShape);
}

TEST_CASE("proposal: the file reading tools", "[agents][hook]") {
  auto r = mapped(call_of("Read", R"({"file_path":"/p/a.txt","offset":2,"limit":10})"));
  CHECK(target(r) == "file/read");
  CHECK(text(r["payload"]) ==
        R"({"cwd":"/home/user/project","action":"read","path":"/p/a.txt","offset":2,"limit":10})");
  CHECK(
      payload(call_of("Grep",
                      R"({"pattern":"bye","path":"/p/src","glob":"*.c","type":"c","-i":true})")) ==
      R"({"cwd":"/home/user/project","action":"read","pattern":"bye","path":"/p/src","glob":"*.c","type":"c","-i":true})");
  // No path: the hook's cwd.
  CHECK(
      payload(call_of("Grep", R"({"pattern":"bye"})")) ==
      R"({"cwd":"/home/user/project","action":"read","pattern":"bye","path":"/home/user/project"})");
  CHECK(
      payload(call_of("Glob", R"({"pattern":"*.txt"})")) ==
      R"({"cwd":"/home/user/project","action":"read","pattern":"*.txt","path":"/home/user/project"})");
  CHECK(payload(call_of("LS", R"({"path":"/p","ignore":["*.o"]})")) ==
        R"({"cwd":"/home/user/project","action":"read","path":"/p","ignore":["*.o"]})");
  CHECK(proposal_refused(call_of("Read", R"({"file_path":3})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Grep", R"({"path":"/p"})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("Glob", R"({"pattern":"*","path":5})")) == kHookInputShape);
}

TEST_CASE("proposal: WebFetch and WebSearch are http GETs", "[agents][hook]") {
  auto f = mapped(call_of("WebFetch", R"({"url":"https://example.com/","prompt":"summarize"})"));
  CHECK(target(f) == "http/get");
  CHECK(text(f["payload"]) ==
        R"({"method":"GET","url":"https://example.com/","prompt":"summarize"})");
  auto s = mapped(call_of(
      "WebSearch", R"({"query":"warden","allowed_domains":["a.org"],"blocked_domains":[]})"));
  CHECK(target(s) == "http/get");
  CHECK(text(s["payload"]) ==
        R"({"method":"GET","query":"warden","allowed_domains":["a.org"],"blocked_domains":[]})");
  CHECK_FALSE(s["payload"].HasMember("url"));
  CHECK(proposal_refused(call_of("WebFetch", R"({"prompt":"x"})")) == kHookInputShape);
  CHECK(proposal_refused(call_of("WebSearch", R"({})")) == kHookInputShape);
}

TEST_CASE("proposal: mcp__SERVER__TOOL is a tool call on that server", "[agents][hook]") {
  auto d = mapped(call_of("mcp__files__read_file", R"({"path":"/etc/passwd"})"));
  CHECK(target(d) == "tool/call");
  CHECK(text(d["payload"]) ==
        R"({"server":"files","tool":"read_file","args":{"path":"/etc/passwd"}})");
  // SERVER is up to the next "__"; the tool keeps the rest.
  CHECK(payload(call_of("mcp__git_hub__create__issue", "{}")) ==
        R"({"server":"git_hub","tool":"create__issue","args":{}})");
  std::string server, tool;
  CHECK_FALSE(split_mcp_tool("mcp__files", &server, &tool));
  CHECK_FALSE(split_mcp_tool("mcp____x", &server, &tool));
  CHECK_FALSE(split_mcp_tool("mcp__s__", &server, &tool));
  CHECK_FALSE(split_mcp_tool("MCP__s__t", &server, &tool));
  // Not a well-formed MCP name: an agent's own tool, still decided.
  CHECK(payload(call_of("mcp__files", R"({"a":1})")) ==
        R"({"cwd":"/home/user/project","tool":"mcp__files","args":{"a":1}})");
}

TEST_CASE("proposal: any other tool is a tool call the rules see", "[agents][hook]") {
  for (const char* tool :
       {"TodoWrite", "Task", "ExitPlanMode", "apply_patch", "view_image", "bash"}) {
    INFO(tool);
    auto d = mapped(call_of(tool, R"({"command":"*** Begin Patch"})"));
    CHECK(target(d) == "tool/call");
    CHECK(text(d["payload"]) == std::string(R"({"cwd":"/home/user/project","tool":")") + tool +
                                    R"(","args":{"command":"*** Begin Patch"}})");
  }
  CHECK(tool_kind("Bash") == ToolKind::Bash);
  CHECK(tool_kind("bash") == ToolKind::Other);  // names are exact
}

TEST_CASE("updatedInput: the rewritten fields go back under the tool's names", "[agents][hook]") {
  auto check = [](const HookCall& call, const std::string& key, const std::string& value,
                  const std::string& want) {
    std::string proposal, error, input;
    HookError herr;
    REQUIRE(hook_proposal(call, "claude-code", &proposal, &herr));
    rapidjson::Document action;
    action.Parse(proposal.c_str());
    action["payload"][key.c_str()].SetString(value.c_str(), action.GetAllocator());
    INFO(error);
    REQUIRE(updated_tool_input(call, proposal, text(action), &input, &error));
    CHECK(input == want);
  };
  check(call_of("Bash", R"({"command":"rm -rf build","description":"clean"})"), "command",
        "rm -r build", R"({"command":"rm -r build","description":"clean"})");
  check(call_of("Write", R"({"file_path":"/p/a","content":"key=SECRET"})"), "content",
        "key=[REDACTED]", R"({"file_path":"/p/a","content":"key=[REDACTED]"})");
  check(call_of("Write", R"({"file_path":"/p/a","content":"x"})"), "path", "/p/b",
        R"({"file_path":"/p/b","content":"x"})");
  check(call_of("Edit", R"({"file_path":"/p/a","old_string":"a","new_string":"b"})"), "content",
        "c", R"({"file_path":"/p/a","old_string":"a","new_string":"c"})");
  check(call_of("NotebookEdit", R"({"notebook_path":"/p/n","new_source":"x"})"), "content", "y",
        R"({"notebook_path":"/p/n","new_source":"y"})");
  check(call_of("Read", R"({"file_path":"/p/a"})"), "path", "/p/b", R"({"file_path":"/p/b"})");
  check(call_of("WebFetch", R"({"url":"http://a/","prompt":"p"})"), "url", "https://a/",
        R"({"url":"https://a/","prompt":"p"})");
}

TEST_CASE("updatedInput: a tool call's rewritten args replace the input", "[agents][hook]") {
  auto call = call_of("mcp__files__read_file", R"({"path":"/p/a","n":1})");
  std::string proposal, input, error;
  HookError herr;
  REQUIRE(hook_proposal(call, "claude-code", &proposal, &herr));
  rapidjson::Document action;
  action.Parse(proposal.c_str());
  action["payload"]["args"]["path"].SetString("/p/b");
  REQUIRE(updated_tool_input(call, proposal, text(action), &input, &error));
  CHECK(input == R"({"path":"/p/b","n":1})");
}

TEST_CASE("updatedInput: a rewrite with no place in the tool's input is refused",
          "[agents][hook]") {
  auto refuse = [](const HookCall& call, const std::string& key) {
    std::string proposal, input, error;
    HookError herr;
    REQUIRE(hook_proposal(call, "claude-code", &proposal, &herr));
    rapidjson::Document action;
    action.Parse(proposal.c_str());
    action["payload"][key.c_str()].SetString("changed");
    CHECK_FALSE(updated_tool_input(call, proposal, text(action), &input, &error));
    CHECK(error.find(key) != std::string::npos);
  };
  refuse(call_of("Bash", R"({"command":"ls"})"), "cwd");
  refuse(
      call_of("MultiEdit", R"({"file_path":"/a","edits":[{"old_string":"a","new_string":"b"}]})"),
      "content");
  refuse(call_of("WebFetch", R"({"url":"http://a/"})"), "method");
  refuse(call_of("mcp__s__t", R"({})"), "server");
  refuse(call_of("TodoWrite", R"({})"), "tool");

  auto call = call_of("Bash", R"({"command":"ls"})");
  std::string input, error;
  CHECK_FALSE(updated_tool_input(call, "{}", "not json", &input, &error));
}

TEST_CASE("updatedInput: nothing changed is the input as it was", "[agents][hook]") {
  auto call = call_of("Bash", R"({"command":"ls","description":"d"})");
  std::string proposal, input, error;
  HookError herr;
  REQUIRE(hook_proposal(call, "claude-code", &proposal, &herr));
  REQUIRE(updated_tool_input(call, proposal, proposal, &input, &error));
  CHECK(input == R"({"command":"ls","description":"d"})");
}
