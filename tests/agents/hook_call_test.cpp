// Parsing the hook's stdin (agents/hook_call.h) and reading it (agents/hook_stdin.h): the
// real inputs Claude Code and Codex sent (tests/agents/data), and every refusal by its code.
#include "agents/hook_call.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <thread>

#include "agents/hook_stdin.h"
#include "tests/build_paths.h"

using namespace warden::agents;
using namespace std::chrono_literals;

namespace {

std::string sample(const std::string& name) {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR "/tests/agents/data/") + name, std::ios::binary);
  INFO(name);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string refused(std::string_view text) {
  HookCall call;
  HookError error;
  CHECK_FALSE(parse_hook_call(text, &call, &error));
  CHECK_FALSE(error.message.empty());
  return error.code;
}

}  // namespace

TEST_CASE("hook input: Claude Code's Bash call as it sent it", "[agents][hook]") {
  HookCall call;
  HookError error;
  REQUIRE(parse_hook_call(sample("claude_Bash.json"), &call, &error));
  CHECK(call.session_id == "4f376cf3-8763-4319-b5d3-def0cccb03a0");
  CHECK(call.cwd == "/work/hook-samples/run/claude/work");
  CHECK(call.hook_event_name == "PreToolUse");
  CHECK(call.tool_name == "Bash");
  CHECK(call.tool_use_id == "toolu_7132_1");
  CHECK(call.permission_mode == "default");
  REQUIRE(call.tool_input.IsObject());
  CHECK(std::string(call.tool_input["command"].GetString()) == "ls");
}

TEST_CASE("hook input: Codex's calls as it sent them", "[agents][hook]") {
  HookCall call;
  HookError error;
  REQUIRE(parse_hook_call(sample("codex_Bash.json"), &call, &error));
  CHECK(call.tool_name == "Bash");
  CHECK(call.permission_mode == "bypassPermissions");
  CHECK(std::string(call.tool_input["command"].GetString()) == "ls");
  REQUIRE(parse_hook_call(sample("codex_apply_patch.json"), &call, &error));
  CHECK(call.tool_name == "apply_patch");
}

TEST_CASE("hook input: every sample parses", "[agents][hook]") {
  for (const char* name : {"claude_Bash.json", "claude_Edit.json", "claude_Glob.json",
                           "claude_Grep.json", "claude_Read.json", "claude_TaskCreate.json",
                           "claude_WebFetch.json", "claude_WebSearch.json", "claude_Write.json",
                           "codex_Bash.json", "codex_apply_patch.json", "codex_view_image.json"}) {
    HookCall call;
    HookError error;
    INFO(name << ": " << error.message);
    CHECK(parse_hook_call(sample(name), &call, &error));
  }
}

TEST_CASE("hook input: absent optional fields are empty", "[agents][hook]") {
  HookCall call;
  HookError error;
  REQUIRE(parse_hook_call(R"({"hook_event_name":"PreToolUse","tool_name":"X","tool_input":{}})",
                          &call, &error));
  CHECK(call.session_id.empty());
  CHECK(call.cwd.empty());
  CHECK(call.tool_use_id.empty());
  CHECK(call.permission_mode.empty());
}

TEST_CASE("hook input: refusals, each with its code", "[agents][hook]") {
  CHECK(refused("") == kHookInputJson);
  CHECK(refused("{") == kHookInputJson);
  CHECK(refused("not json") == kHookInputJson);
  CHECK(refused("{\"tool_name\":\"B\xff\"}") == kHookInputJson);  // invalid UTF-8
  CHECK(refused("[]") == kHookInputShape);
  CHECK(refused("\"PreToolUse\"") == kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PreToolUse","tool_input":{}})") == kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PreToolUse","tool_name":7,"tool_input":{}})") ==
        kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PreToolUse","tool_name":"","tool_input":{}})") ==
        kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PreToolUse","tool_name":"Bash"})") == kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":"ls"})") ==
        kHookInputShape);
  CHECK(refused(R"({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{}})") ==
        kHookEvent);
  CHECK(refused(R"({"tool_name":"Bash","tool_input":{}})") == kHookEvent);
  CHECK(refused(R"({"hook_event_name":1,"tool_name":"Bash","tool_input":{}})") == kHookInputShape);
  CHECK(
      refused(R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"cwd":[]})") ==
      kHookInputShape);
  CHECK(
      refused(
          R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{},"session_id":1})") ==
      kHookInputShape);
  std::string big(kMaxHookInputBytes + 1, ' ');
  CHECK(refused(big) == kHookInputTooLarge);
}

TEST_CASE("hook stdin: read to end of file, or to one whole object on an open pipe",
          "[agents][hook]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const std::string text = R"({"a":{"b":"}"}})";
  REQUIRE(::write(p[1], text.data(), text.size()) == static_cast<ssize_t>(text.size()));
  std::string got;
  HookError error;
  // The pipe stays open: the complete object ends the read.
  CHECK(read_hook_input(p[0], 1024, std::chrono::steady_clock::now() + 20s, &got, &error));
  CHECK(got == text);
  // A partial object on an open pipe waits for the deadline, then refuses.
  REQUIRE(::write(p[1], "{\"a\":", 5) == 5);
  CHECK_FALSE(read_hook_input(p[0], 1024, std::chrono::steady_clock::now() + 200ms, &got, &error));
  CHECK(error.code == kHookInputTimeout);
  // More than the cap is refused.
  std::string big(2000, ' ');
  REQUIRE(::write(p[1], big.data(), big.size()) == static_cast<ssize_t>(big.size()));
  ::close(p[1]);
  CHECK_FALSE(read_hook_input(p[0], 1024, std::chrono::steady_clock::now() + 20s, &got, &error));
  CHECK(error.code == kHookInputTooLarge);
  ::close(p[0]);
}

TEST_CASE("hook stdin: end of file returns what was read, even when it is not JSON",
          "[agents][hook]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  REQUIRE(::write(p[1], "garbage", 7) == 7);
  ::close(p[1]);
  std::string got;
  HookError error;
  CHECK(read_hook_input(p[0], 1024, std::chrono::steady_clock::now() + 20s, &got, &error));
  CHECK(got == "garbage");
  ::close(p[0]);
}

TEST_CASE("hook stdin: braces and quotes inside strings do not end the input early",
          "[agents][hook]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  const std::string first = R"({"a":"\"}],{)";  // inside a string: an escaped quote, } ] {
  const std::string rest = R"(\\","b":[1,{"c":"]"}]})";
  REQUIRE(::write(p[1], first.data(), first.size()) == static_cast<ssize_t>(first.size()));
  std::thread writer([&] {
    std::this_thread::sleep_for(
        50ms);  // the reader has seen the first part by now, or not: either way
    for (char c : rest) REQUIRE(::write(p[1], &c, 1) == 1);
  });
  std::string got;
  HookError error;
  CHECK(read_hook_input(p[0], 1024, std::chrono::steady_clock::now() + 20s, &got, &error));
  writer.join();
  CHECK(got == first + rest);
  HookCall call;
  CHECK_FALSE(parse_hook_call(got, &call, &error));  // valid JSON, no tool_name
  CHECK(error.code == kHookInputShape);
  ::close(p[0]);
  ::close(p[1]);
}

TEST_CASE("hook stdin: 8 MiB of whitespace is read to the cap quickly, in any chunks",
          "[agents][hook]") {
  int p[2];
  REQUIRE(::pipe2(p, O_CLOEXEC) == 0);
  ::signal(SIGPIPE, SIG_IGN);  // the reader may stop first
  std::thread writer([&] {
    std::string chunk(4096, ' ');
    for (std::size_t sent = 0; sent <= kMaxHookInputBytes; sent += chunk.size()) {
      if (::write(p[1], chunk.data(), chunk.size()) <= 0) break;
    }
    ::close(p[1]);
  });
  std::string got;
  HookError error;
  CHECK_FALSE(read_hook_input(p[0], kMaxHookInputBytes, std::chrono::steady_clock::now() + 60s,
                              &got, &error));
  CHECK(error.code == kHookInputTooLarge);
  ::close(p[0]);
  writer.join();
}
