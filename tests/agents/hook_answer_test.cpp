// Verdict → the agent's answer (agents/hook_answer.h): allow, deny with the rule's reason,
// approval-required per agent and configuration, rewrites for Claude and Codex, failures.
#include "agents/hook_answer.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "agents/hook_proposal.h"
#include "agents/hook_run.h"

using namespace warden;
using namespace warden::agents;

namespace {

HookCall bash_call(const std::string& command, const std::string& mode = "default") {
  HookCall call;
  call.session_id = "s";
  call.cwd = "/home/user/project";
  call.hook_event_name = "PreToolUse";
  call.tool_name = "Bash";
  call.permission_mode = mode;
  call.tool_input.SetObject();
  call.tool_input.AddMember("command",
                            rapidjson::Value(command.c_str(), call.tool_input.GetAllocator()),
                            call.tool_input.GetAllocator());
  return call;
}

std::string proposal_of(const HookCall& call) {
  std::string p;
  HookError e;
  REQUIRE(hook_proposal(call, "claude-code", &p, &e));
  return p;
}

Verdict verdict(Outcome o, const std::string& reason, std::vector<std::string> rules = {"r1"}) {
  Verdict v;
  v.ok = true;
  v.outcome = o;
  v.reason = reason;
  v.rules = std::move(rules);
  v.decision_id = "d1";
  return v;
}

struct Parsed {
  std::string decision, reason;
  bool has_updated = false;
  std::string updated_command;
};

// Checks the JSON shape both CLIs read and returns its fields.
Parsed parse(const HookAnswer& a) {
  rapidjson::Document d;
  d.Parse(a.stdout_json.c_str());
  INFO(a.stdout_json);
  REQUIRE(d.IsObject());
  REQUIRE(d.MemberCount() == 1);
  const auto& h = d["hookSpecificOutput"];
  REQUIRE(h.IsObject());
  CHECK(std::string(h["hookEventName"].GetString()) == "PreToolUse");
  Parsed p;
  p.decision = h["permissionDecision"].GetString();
  p.reason = h["permissionDecisionReason"].GetString();
  CHECK(p.decision == a.decision);
  CHECK(p.reason == a.reason);
  CHECK(p.reason.rfind("Warden: ", 0) == 0);
  CHECK(a.stdout_json.find('\n') == std::string::npos);
  if (h.HasMember("updatedInput")) {
    p.has_updated = true;
    p.updated_command = h["updatedInput"]["command"].GetString();
  }
  if (p.decision == "deny") {
    CHECK(a.exit_code == 2);
    CHECK(a.stderr_text.size() == a.reason.size());  // the reason, on one line
    CHECK(a.stderr_text.rfind("Warden: ", 0) == 0);
    CHECK(a.stderr_text.find('\n') == std::string::npos);
  } else {
    CHECK(a.exit_code == 0);
    CHECK(a.stderr_text.empty());
  }
  return p;
}

}  // namespace

TEST_CASE("answer: approve is allow, for both agents", "[agents][hook]") {
  auto call = bash_call("ls");
  for (auto agent : {HookAgent::ClaudeCode, HookAgent::Codex}) {
    auto p = parse(answer_verdict(agent, call, proposal_of(call),
                                  verdict(Outcome::Approve, "everyday"), OnApprovalRequired::Deny));
    CHECK(p.decision == "allow");
    CHECK(p.reason.find("everyday") != std::string::npos);
    CHECK_FALSE(p.has_updated);
  }
}

TEST_CASE("answer: reject is deny with the rule's reason, exit 2", "[agents][hook]") {
  auto call = bash_call("rm -rf /");
  for (auto agent : {HookAgent::ClaudeCode, HookAgent::Codex}) {
    auto a =
        answer_verdict(agent, call, proposal_of(call),
                       verdict(Outcome::Reject, "recursive delete of /", {"shell-destructive-rm"}),
                       OnApprovalRequired::Ask);
    auto p = parse(a);
    CHECK(p.decision == "deny");
    CHECK(p.reason.find("recursive delete of /") != std::string::npos);
    CHECK(p.reason.find("shell-destructive-rm") != std::string::npos);
    CHECK(p.reason.find("d1") != std::string::npos);
  }
}

TEST_CASE("answer: approval-required for Claude Code", "[agents][hook]") {
  auto call = bash_call("curl x");
  auto v = verdict(Outcome::ApprovalRequired, "host not allowlisted");
  auto ask = parse(
      answer_verdict(HookAgent::ClaudeCode, call, proposal_of(call), v, OnApprovalRequired::Ask));
  CHECK(ask.decision == "ask");
  CHECK(ask.reason.find("approval required") != std::string::npos);
  CHECK(ask.reason.find("host not allowlisted") != std::string::npos);

  auto deny = parse(
      answer_verdict(HookAgent::ClaudeCode, call, proposal_of(call), v, OnApprovalRequired::Deny));
  CHECK(deny.decision == "deny");
  CHECK(deny.reason.find("--on-approval-required deny") != std::string::npos);

  // A session that bypasses permissions would run an ask: deny instead.
  auto bypass = bash_call("curl x", "bypassPermissions");
  auto b = parse(answer_verdict(HookAgent::ClaudeCode, bypass, proposal_of(bypass), v,
                                OnApprovalRequired::Ask));
  CHECK(b.decision == "deny");
  CHECK(b.reason.find("bypasses permission") != std::string::npos);
}

TEST_CASE("answer: approval-required for Codex is always deny", "[agents][hook]") {
  auto call = bash_call("curl x");
  auto v = verdict(Outcome::ApprovalRequired, "host not allowlisted");
  for (auto mode : {OnApprovalRequired::Ask, OnApprovalRequired::Deny}) {
    auto p = parse(answer_verdict(HookAgent::Codex, call, proposal_of(call), v, mode));
    CHECK(p.decision == "deny");
    CHECK(p.reason.find("Codex cannot ask") != std::string::npos);
    CHECK(p.reason.find("host not allowlisted") != std::string::npos);
  }
}

TEST_CASE("answer: a rewrite is Claude's updatedInput and Codex's deny", "[agents][hook]") {
  auto call = bash_call("rm -rf build");
  const std::string proposal = proposal_of(call);
  auto v = verdict(Outcome::Approve, "made safer");
  v.rewritten = true;
  rapidjson::Document action;
  action.Parse(proposal.c_str());
  action["payload"]["command"].SetString("rm -r build");
  v.action_json =
      R"({"target":"shell","action":"run","payload":{"command":"rm -r build","cwd":"/home/user/project"}})";

  auto claude =
      parse(answer_verdict(HookAgent::ClaudeCode, call, proposal, v, OnApprovalRequired::Ask));
  CHECK(claude.decision == "allow");
  REQUIRE(claude.has_updated);
  CHECK(claude.updated_command == "rm -r build");

  auto codex = parse(answer_verdict(HookAgent::Codex, call, proposal, v, OnApprovalRequired::Deny));
  CHECK(codex.decision == "deny");
  CHECK(codex.reason.find("Codex cannot run the rewritten form") != std::string::npos);

  // approval-required with a rewrite: Claude asks about the rewritten form.
  v.outcome = Outcome::ApprovalRequired;
  auto ask =
      parse(answer_verdict(HookAgent::ClaudeCode, call, proposal, v, OnApprovalRequired::Ask));
  CHECK(ask.decision == "ask");
  CHECK(ask.has_updated);

  // A rewrite that cannot go back into the tool input: deny.
  v.outcome = Outcome::Approve;
  v.action_json =
      R"({"target":"shell","action":"run","payload":{"command":"rm -rf build","cwd":"/"}})";
  auto bad =
      parse(answer_verdict(HookAgent::ClaudeCode, call, proposal, v, OnApprovalRequired::Ask));
  CHECK(bad.decision == "deny");
  CHECK(bad.reason.find("cannot be applied") != std::string::npos);
}

TEST_CASE("answer: no decision is deny naming the code", "[agents][hook]") {
  auto call = bash_call("ls");
  Verdict down;
  down.error_code = "E_UNAVAILABLE";
  down.error_message = "the daemon at 127.0.0.1:9 is unavailable: Connection refused";
  for (auto agent : {HookAgent::ClaudeCode, HookAgent::Codex}) {
    auto p = parse(answer_verdict(agent, call, proposal_of(call), down, OnApprovalRequired::Ask));
    CHECK(p.decision == "deny");
    CHECK(p.reason.find("E_UNAVAILABLE") != std::string::npos);
    CHECK(p.reason.find("Connection refused") != std::string::npos);
  }
  auto f = parse(answer_failure("E_HOOK_INPUT_JSON", "not JSON\nat all"));
  CHECK(f.decision == "deny");
  CHECK(f.reason.find("E_HOOK_INPUT_JSON") != std::string::npos);
  CHECK(answer_failure("E_X", "a\nb").stderr_text ==
        "Warden: denied, no decision could be made (E_X: a b)");
}

TEST_CASE("answer: reasons with quotes and control characters stay valid JSON", "[agents][hook]") {
  auto call = bash_call("ls");
  auto p = parse(answer_verdict(HookAgent::ClaudeCode, call, proposal_of(call),
                                verdict(Outcome::Reject, "bad \"x\"\t\x01 end"),
                                OnApprovalRequired::Ask));
  CHECK(p.reason.find("bad \"x\"\t\x01 end") != std::string::npos);
}

TEST_CASE("hook run: the decider is built only for an input that parsed and mapped",
          "[agents][hook_run_unit]") {
  // Building it loads a rule pack (seconds under the sanitizers) or reads a token: a
  // malformed input is refused before that, so no load can make it run out the budget.
  struct Fixed : Decider {
    Verdict decide(std::string_view) override { return verdict(Outcome::Approve, "fine"); }
    std::string describe() const override { return "fixed"; }
  };
  int built = 0;
  MakeDecider make = [&](std::string*) -> std::unique_ptr<Decider> {
    ++built;
    return std::make_unique<Fixed>();
  };
  HookRunOptions options;
  options.agent = HookAgent::Codex;
  const std::string deep = std::string(200, '[') + std::string(200, ']');
  for (
      const std::string& bad :
      {std::string("not json"),
       std::string(
           R"({"hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"ls"}})"),
       R"({"hook_event_name":"PreToolUse","tool_name":"mcp__a__b","tool_input":{"x":)" + deep +
           "}}"}) {
    INFO(bad.substr(0, 80));
    HookAnswer a = run_hook(bad, make, options);
    CHECK(a.exit_code == 2);
    CHECK(a.decision == "deny");
  }
  CHECK(built == 0);
  // A well-formed call builds it once and is decided by it; one it cannot build is a deny
  // naming why.
  const std::string ok =
      R"({"hook_event_name":"PreToolUse","cwd":"/home/user/project","tool_name":"Read","tool_input":{"file_path":"/home/user/project/a"}})";
  HookAnswer allowed = run_hook(ok, make, options);
  CHECK(built == 1);
  CHECK(allowed.decision == "allow");
  HookAnswer none = run_hook(
      ok,
      [](std::string* error) -> std::unique_ptr<Decider> {
        *error = "rules/x.clp:3: E_PARSE\n";
        return nullptr;
      },
      options);
  CHECK(none.decision == "deny");
  CHECK(none.reason.find("E_DECIDER: rules/x.clp:3: E_PARSE)") != std::string::npos);
}
