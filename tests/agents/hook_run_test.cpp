// The real `warden hook claude-code|codex` binary with hook input on stdin: in-process over
// --rules and against a real `warden serve` child; denies, allows, approval-required mapping,
// rewrites, and every failure (malformed input, daemon down, budget, rule errors) as exit 2.
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/codex_call.h"
#include "tests/agents/serve_child.h"
#include "tests/build_paths.h"
#include "tests/server/server_fixture.h"

using namespace warden::agents::testing;
using warden::cli::testing::Child;
using warden::cli::testing::kWarden;

namespace {

const std::string kTestRules = WARDEN_SOURCE_DIR "/tests/agents/data/hook_rules";

struct Answer {
  int code = -1;
  std::string out, err;
  std::string decision, reason;
  std::string updated_command;  // updatedInput.command, "" when absent
  bool has_updated = false;
};

// Runs the hook and checks the answer's shape: one JSON line; deny ⇔ exit 2 with the
// reason on stderr; allow and ask ⇔ exit 0.
Answer hook(std::vector<std::string> args, const std::string& input,
            std::vector<std::string> env = {}) {
  Child child(with_test_budget(std::move(args)), std::move(env));
  child.write(input);
  Answer a;
  a.code = child.finish();
  REQUIRE_FALSE(child.timed_out);
  a.out = child.out();
  a.err = child.err();
  INFO("stdout: " << a.out << "\nstderr: " << a.err);
  rapidjson::Document d;
  d.Parse(a.out.c_str());
  REQUIRE(d.IsObject());
  REQUIRE(a.out.find('\n') == a.out.size() - 1);
  const auto& h = d["hookSpecificOutput"];
  REQUIRE(h.IsObject());
  CHECK(std::string(h["hookEventName"].GetString()) == "PreToolUse");
  a.decision = h["permissionDecision"].GetString();
  a.reason = h["permissionDecisionReason"].GetString();
  CHECK(a.reason.rfind("Warden: ", 0) == 0);
  if (h.HasMember("updatedInput")) {
    a.has_updated = true;
    a.updated_command = h["updatedInput"]["command"].GetString();
  }
  if (a.decision == "deny") {
    CHECK(a.code == 2);
    CHECK(a.err.find(a.reason.substr(0, 40)) != std::string::npos);
  } else {
    CHECK(a.code == 0);
  }
  return a;
}

// Codex's hook reads a Bash call's real arguments from Codex's rollout (agents/codex_call.h):
// a Bash input gets a one-line rollout for its tool_use_id and command as transcript_path
// (Claude Code ignores it). The files live in one directory removed at exit.
std::string with_rollout(const std::string& text) {
  static const warden::testing::TempDir dir{"warden-hook-run-test"};
  static int n = 0;
  rapidjson::Document d;
  d.Parse(text.c_str());
  if (!d.IsObject() || !d.HasMember("tool_name") ||
      std::string(d["tool_name"].GetString()) != "Bash" || !d.HasMember("tool_input") ||
      !d["tool_input"].HasMember("command")) {
    return text;
  }
  const std::string path = dir / "rollout-" + std::to_string(++n) + ".jsonl";
  std::ofstream(path, std::ios::binary) << warden::agents::codex_exec_command_line(
      d["tool_use_id"].GetString(), d["tool_input"]["command"].GetString());
  auto& al = d.GetAllocator();
  if (d.HasMember("transcript_path")) d.RemoveMember("transcript_path");
  d.AddMember("transcript_path", rapidjson::Value(path.c_str(), al), al);
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d.Accept(w);
  return b.GetString();
}

std::string bash_input(const std::string& command, const std::string& mode = "default",
                       bool description = true) {
  rapidjson::Document d;
  d.SetObject();
  auto& al = d.GetAllocator();
  rapidjson::Value input(rapidjson::kObjectType);
  input.AddMember("command", rapidjson::Value(command.c_str(), al), al);
  if (description) input.AddMember("description", "a test command", al);
  d.AddMember("session_id", "sess-1", al);
  d.AddMember("cwd", "/home/user/project", al);
  d.AddMember("hook_event_name", "PreToolUse", al);
  d.AddMember("permission_mode", rapidjson::Value(mode.c_str(), al), al);
  d.AddMember("tool_name", "Bash", al);
  d.AddMember("tool_input", input, al);
  d.AddMember("tool_use_id", "toolu_1", al);
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d.Accept(w);
  return with_rollout(b.GetString());
}

std::string sample_with_rollout(const std::string& name) {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR "/tests/agents/data/") + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return with_rollout(s.str());
}

std::vector<std::string> in_process(std::string agent, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"hook", agent, "--rules", kShippedRules, "--rules", kTestRules};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("hook, in-process: rm -rf / is denied with the rule's reason, ls is allowed",
          "[agents][hook_run]") {
  for (std::string agent : {"claude-code", "codex"}) {
    INFO(agent);
    auto rm = hook(in_process(agent), bash_input("rm -rf /"));
    CHECK(rm.decision == "deny");
    CHECK(rm.reason.find("deletes outside the workspace: /") !=
          std::string::npos);  // the decision's reason
    CHECK(rm.reason.find("shell-destructive-rm") != std::string::npos);
    CHECK(rm.err.find("shell-destructive-rm") != std::string::npos);
  }
  auto ls = hook(in_process("claude-code"), bash_input("ls"));
  CHECK(ls.decision == "allow");
  CHECK(ls.reason.find("everyday-shell") != std::string::npos);
  // Codex sends no description; with the test rules alone its ls is approved.
  auto codex_ls =
      hook({"hook", "codex", "--rules", kTestRules}, sample_with_rollout("codex_Bash.json"));
  CHECK(codex_ls.decision == "allow");
  CHECK(codex_ls.reason.find("hook-test-ls") != std::string::npos);
}

TEST_CASE("hook, daemon: rm -rf / denied, ls allowed, over TCP with a token file",
          "[agents][hook_run]") {
  TempDir dir;
  ServeChild serve(dir, {kShippedRules, kTestRules});
  for (std::string agent : {"claude-code", "codex"}) {
    INFO(agent);
    std::vector<std::string> args{"hook",          agent,          "--addr",
                                  serve.address(), "--token-file", serve.token_file()};
    auto rm = hook(args, bash_input("rm -rf /"));
    CHECK(rm.decision == "deny");
    CHECK(rm.reason.find("shell-destructive-rm") != std::string::npos);
    auto ls = hook(args, bash_input("ls"));
    CHECK(ls.decision == "allow");
  }
  // The address and token from the environment.
  auto env_ls = hook({"hook", "claude-code"}, bash_input("ls"),
                     {"WARDEN_ADDR=" + serve.address(), "WARDEN_TOKEN=" + Tokens{}.agent});
  CHECK(env_ls.decision == "allow");
  // No address at all: the daemon's Unix socket in its state directory.
  auto sock_ls = hook({"hook", "claude-code", "--token-file", serve.token_file()}, bash_input("ls"),
                      {"XDG_STATE_HOME=" + (dir.path() / "state").string()});
  CHECK(sock_ls.decision == "allow");
}

TEST_CASE("hook: malformed input is denied, exit 2, naming the cause", "[agents][hook_run]") {
  struct Case {
    std::string input, code;
  };
  for (
      const auto& c : std::vector<Case>{
          {"", "E_HOOK_INPUT_JSON"},
          {"not json", "E_HOOK_INPUT_JSON"},
          {"{\"tool_name\":\"Bash\xff\"}", "E_HOOK_INPUT_JSON"},
          {"[1]", "E_HOOK_INPUT_SHAPE"},
          {R"({"hook_event_name":"PreToolUse","tool_input":{"command":"ls"}})",
           "E_HOOK_INPUT_SHAPE"},
          {R"({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}})",
           "E_HOOK_EVENT"},
          {R"({"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":["ls"]}})",
           "E_HOOK_INPUT_SHAPE"},
      }) {
    for (std::string agent : {"claude-code", "codex"}) {
      INFO(agent << " " << c.input);
      auto a = hook(in_process(agent), c.input);
      CHECK(a.decision == "deny");
      CHECK(a.reason.find(c.code) != std::string::npos);
    }
  }
  // Over the 8 MiB cap.
  auto big = hook(in_process("claude-code"), std::string((8u << 20) + 10, ' '));
  CHECK(big.decision == "deny");
  CHECK(big.reason.find("E_HOOK_INPUT_TOO_LARGE") != std::string::npos);
}

TEST_CASE("hook: the daemon down, or silent past the budget, is a deny", "[agents][hook_run]") {
  const std::string closed = closed_address();
  for (std::string agent : {"claude-code", "codex"}) {
    auto down = hook({"hook", agent, "--addr", closed, "--token", "t"}, bash_input("ls"));
    CHECK(down.decision == "deny");
    CHECK(down.reason.find("E_UNAVAILABLE") != std::string::npos);
    CHECK(down.reason.find(closed) != std::string::npos);
  }
  SilentListener silent;
  auto slow = hook(
      {"hook", "claude-code", "--addr", silent.address(), "--token", "t", "--timeout-ms", "300"},
      bash_input("ls"));
  CHECK(slow.decision == "deny");
  CHECK(slow.reason.find("E_TIMEOUT") != std::string::npos);
}

TEST_CASE("hook: a wrong token, broken rules and bad flags are a deny", "[agents][hook_run]") {
  TempDir dir;
  ServeChild serve(dir, {kTestRules});
  auto wrong = hook({"hook", "claude-code", "--addr", serve.address(), "--token", "wdn_wrong"},
                    bash_input("ls"));
  CHECK(wrong.decision == "deny");
  CHECK(wrong.reason.find("E_AUTH_FAILED") != std::string::npos);

  dir.write("broken/broken.clp", warden::server::testing::kBrokenRules);
  auto broken =
      hook({"hook", "claude-code", "--rules", (dir.path() / "broken").string()}, bash_input("ls"));
  CHECK(broken.decision == "deny");
  CHECK(broken.reason.find("E_DECIDER") != std::string::npos);

  // A flag CLI11 does not know is exit 2 (a deny for both agents), never an allow.
  Child bad({"hook", "claude-code", "--no-such-flag"});
  bad.write(bash_input("ls"));
  CHECK(bad.finish() == 2);

  // Codex cannot be told to ask.
  auto ask = hook(in_process("codex", {"--on-approval-required", "ask"}), bash_input("ls"));
  CHECK(ask.decision == "deny");
  CHECK(ask.reason.find("E_USAGE") != std::string::npos);
}

TEST_CASE("hook: approval-required follows --on-approval-required and the agent",
          "[agents][hook_run]") {
  TempDir dir;
  ServeChild serve(dir, {kShippedRules, kTestRules});
  const std::vector<std::string> daemon{"--addr", serve.address(), "--token-file",
                                        serve.token_file()};
  for (const auto& where :
       {std::vector<std::string>{"--rules", kShippedRules, "--rules", kTestRules}, daemon}) {
    auto with = [&](std::string agent, std::vector<std::string> more) {
      std::vector<std::string> args{"hook", agent};
      args.insert(args.end(), where.begin(), where.end());
      args.insert(args.end(), more.begin(), more.end());
      return args;
    };
    const std::string marker = bash_input("echo needs-approval");
    auto ask = hook(with("claude-code", {}), marker);
    CHECK(ask.decision == "ask");
    CHECK(ask.reason.find("a human must look at this") != std::string::npos);
    auto deny = hook(with("claude-code", {"--on-approval-required", "deny"}), marker);
    CHECK(deny.decision == "deny");
    CHECK(deny.reason.find("a human must look at this") != std::string::npos);
    auto bypass =
        hook(with("claude-code", {}), bash_input("echo needs-approval", "bypassPermissions"));
    CHECK(bypass.decision == "deny");
    auto codex = hook(with("codex", {}), marker);
    CHECK(codex.decision == "deny");
    if (where == daemon) {
      // The daemon stored a pending approval: the agent is told how a person approves it.
      CHECK(codex.reason.find("it is waiting for one (approval apr_") != std::string::npos);
      CHECK(codex.reason.find("approve with: warden approve apr_") != std::string::npos);
    } else {
      CHECK(codex.reason.find("Codex cannot ask") != std::string::npos);
    }
  }
}

TEST_CASE("hook: a rule's rewrite is Claude's updatedInput and a Codex deny",
          "[agents][hook_run]") {
  TempDir dir;
  ServeChild serve(dir, {kShippedRules, kTestRules});
  for (const auto& where :
       {std::vector<std::string>{"--rules", kShippedRules, "--rules", kTestRules},
        std::vector<std::string>{"--addr", serve.address(), "--token-file", serve.token_file()}}) {
    // Unconfined (--confine off): the rewrite alone is the updatedInput.
    std::vector<std::string> claude{"hook", "claude-code", "--confine", "off"},
        codex{"hook", "codex"};
    claude.insert(claude.end(), where.begin(), where.end());
    codex.insert(codex.end(), where.begin(), where.end());
    auto c = hook(claude, bash_input("echo old"));
    CHECK(c.decision == "allow");
    REQUIRE(c.has_updated);
    CHECK(c.updated_command == "echo new");
    auto x = hook(codex, bash_input("echo old"));
    CHECK(x.decision == "deny");
    CHECK(x.reason.find("Codex cannot run the rewritten form") != std::string::npos);
    // Nothing rewritten: no updatedInput.
    CHECK_FALSE(hook(claude, bash_input("ls")).has_updated);
  }
}

TEST_CASE("hook: by default an approved Bash call runs through warden exec", "[agents][hook_run]") {
  TempDir dir;
  ServeChild serve(dir, {kShippedRules, kTestRules});
  const std::string warden = kWarden;
  // In-process: the (rewritten) command is passed on, quoted, after -- /bin/bash -c.
  auto in = hook({"hook", "claude-code", "--rules", kShippedRules, "--rules", kTestRules},
                 bash_input("echo old"));
  CHECK(in.decision == "allow");
  REQUIRE(in.has_updated);
  CHECK(in.updated_command.rfind(warden + " exec --rules ", 0) == 0);
  CHECK(in.updated_command.find(" -- /bin/bash -c 'echo new'") != std::string::npos);
  CHECK(in.reason.find("runs confined") != std::string::npos);
  // Daemon: the decision is named; the command itself is not in the line.
  auto d =
      hook({"hook", "claude-code", "--addr", serve.address(), "--token-file", serve.token_file()},
           bash_input("ls"));
  CHECK(d.decision == "allow");
  REQUIRE(d.has_updated);
  CHECK(d.updated_command.rfind(warden + " exec --addr " + serve.address() + " --token-file ", 0) ==
        0);
  CHECK(d.updated_command.find(" --decision ") != std::string::npos);
  // A literal --token cannot be handed on: the approved call is denied, not run unconfined.
  auto t = hook({"hook", "claude-code", "--addr", serve.address(), "--token",
                 warden::server::testing::Tokens{}.agent},
                bash_input("ls"));
  CHECK(t.decision == "deny");
  CHECK(t.reason.find("E_HOOK_EXEC") != std::string::npos);
  // Codex takes no rewrite: a plain allow.
  auto x = hook({"hook", "codex", "--addr", serve.address(), "--token-file", serve.token_file()},
                bash_input("ls"));
  CHECK(x.decision == "allow");
  CHECK_FALSE(x.has_updated);
}

TEST_CASE("hook: every captured real input gets a well-formed answer", "[agents][hook_run]") {
  for (const char* name : {"claude_Bash.json", "claude_Edit.json", "claude_Glob.json",
                           "claude_Grep.json", "claude_Read.json", "claude_TaskCreate.json",
                           "claude_WebFetch.json", "claude_WebSearch.json", "claude_Write.json"}) {
    INFO(name);
    auto a = hook(in_process("claude-code"), sample_with_rollout(name));
    CHECK((a.decision == "allow" || a.decision == "deny" || a.decision == "ask"));
    CHECK(a.reason.find("E_HOOK") == std::string::npos);  // understood, then decided
  }
  for (const char* name : {"codex_Bash.json", "codex_apply_patch.json", "codex_view_image.json"}) {
    INFO(name);
    auto a = hook(in_process("codex"), sample_with_rollout(name));
    CHECK((a.decision == "allow" || a.decision == "deny"));
    CHECK(a.reason.find("E_HOOK") == std::string::npos);
  }
  // A Write outside the workspace (the real Claude Write input) is denied by the shipped rules.
  auto w = hook(in_process("claude-code"), sample_with_rollout("claude_Write.json"));
  CHECK(w.decision == "deny");
  CHECK(w.reason.find("files-write-outside-workspace") != std::string::npos);
}

TEST_CASE("hook: --agent, the session and the tool reach the rules as the proposal's context",
          "[agents][hook_run]") {
  auto named = hook({"hook", "claude-code", "--rules", kTestRules, "--agent", "coder-7"},
                    bash_input("echo who"));
  CHECK(named.decision == "deny");
  CHECK(named.reason.find("hook-test-context") != std::string::npos);
  // Under its default name the same call is not that agent's: nothing decides it, and the
  // default outcome (approval-required) asks.
  auto plain = hook({"hook", "claude-code", "--rules", kTestRules}, bash_input("echo who"));
  CHECK(plain.decision == "ask");
}

TEST_CASE("hook: a tool call too large for a proposal is denied as such", "[agents][hook_run]") {
  rapidjson::Document d;
  d.SetObject();
  auto& al = d.GetAllocator();
  const std::string content(2u << 20, 'x');  // 2 MiB: under the hook's cap, over a proposal's
  rapidjson::Value input(rapidjson::kObjectType);
  input.AddMember("file_path", "/home/user/project/big.txt", al);
  input.AddMember("content", rapidjson::Value(content.c_str(), al), al);
  d.AddMember("hook_event_name", "PreToolUse", al);
  d.AddMember("cwd", "/home/user/project", al);
  d.AddMember("tool_name", "Write", al);
  d.AddMember("tool_input", input, al);
  rapidjson::StringBuffer b;
  rapidjson::Writer<rapidjson::StringBuffer> w(b);
  d.Accept(w);
  const std::string big = b.GetString();

  auto local = hook({"hook", "claude-code", "--rules", kTestRules}, big);
  CHECK(local.decision == "deny");
  CHECK(local.reason.find("E_INPUT_TOO_LARGE") != std::string::npos);

  TempDir dir;
  ServeChild serve(dir, {kTestRules});
  auto remote = hook(
      {"hook", "claude-code", "--addr", serve.address(), "--token-file", serve.token_file()}, big);
  CHECK(remote.decision == "deny");
  CHECK(remote.reason.find("E_INPUT_TOO_LARGE") != std::string::npos);
  CHECK(remote.reason.find("frame limit") != std::string::npos);
}

TEST_CASE("hook: an agent that never finishes writing the input is denied at the budget",
          "[agents][hook_run]") {
  Child child({"hook", "claude-code", "--rules", kTestRules, "--timeout-ms", "300"});
  child.write(R"({"hook_event_name":"PreToolUse","tool_name":"Bash",)");  // and stdin stays open
  const std::string line = child.read_line();
  INFO(line << "\n" << child.err());
  CHECK(line.find("\"permissionDecision\":\"deny\"") != std::string::npos);
  CHECK(line.find("E_HOOK_INPUT_TIMEOUT") != std::string::npos);
  CHECK(child.finish() == 2);
}

TEST_CASE(
    "hook --wait: the person is shown the approval's id, an approver approves, the call proceeds",
    "[agents][hook_run][approvals]") {
  TempDir dir;
  ServeChild serve(dir, {kShippedRules, kTestRules});
  const std::string marker = bash_input("echo needs-approval");
  for (const std::string& answer : {std::string("approve"), std::string("deny")}) {
    Child child(with_test_budget({"hook", "codex", "--addr", serve.address(), "--token-file",
                                  serve.token_file(), "--wait", "60"}));
    child.write(marker);
    child.close_stdin();
    INFO(child.err());
    REQUIRE(child.wait_stderr("approve with: warden approve "));
    const std::string err = child.err();
    const std::size_t at = err.find("warden approve ") + 15;
    const std::string id = err.substr(at, err.find_first_of(" \n", at) - at);
    REQUIRE(id.rfind("apr_", 0) == 0);
    const std::string approver_token = warden::server::testing::Tokens{}.approver;
    std::vector<std::string> args{answer, id, "--addr", serve.address(), "--token", approver_token};
    if (answer == "approve") {
      // The approver looks at it first: the digest of the action shown is the answer.
      Child shown(
          {"pending", "--format", "json", "--addr", serve.address(), "--token", approver_token});
      REQUIRE(shown.finish() == 0);
      const std::string listed = shown.out();
      const std::size_t h = listed.find("\"action_hash\":\"");
      REQUIRE(h != std::string::npos);
      const std::size_t from = h + 15;
      args.push_back("--digest");
      args.push_back(listed.substr(from, listed.find('"', from) - from));
    }
    Child approver(args);
    CHECK(approver.finish() == 0);
    const int code = child.finish();
    INFO(child.out());
    rapidjson::Document d;
    d.Parse(child.out().c_str());
    REQUIRE(d.IsObject());
    const std::string decision = d["hookSpecificOutput"]["permissionDecision"].GetString();
    const std::string reason = d["hookSpecificOutput"]["permissionDecisionReason"].GetString();
    if (answer == "approve") {
      CHECK(decision == "allow");
      CHECK(code == 0);
      CHECK(reason.find("approved for this session by bob") != std::string::npos);
    } else {
      CHECK(decision == "deny");
      CHECK(code == 2);
      CHECK(reason.find("denied by bob") != std::string::npos);
    }
  }
}
