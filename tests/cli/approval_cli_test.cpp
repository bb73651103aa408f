// `warden pending|approve|deny` and the approval parts of decide, submit and the hooks, as far
// as they need no daemon: the request payloads, the text a person reads (never a token for a
// listed approval), the requester's "approve with" line, and the flags' ranges.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "agents/hook_answer.h"
#include "cli/approval_text.h"
#include "cli/submit_events.h"
#include "tests/cli/cli_process.h"

using namespace warden::cli;
using warden::cli::testing::run_warden;

namespace {

constexpr std::int64_t kNow = 1795400000000;  // ms

rapidjson::Document parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  INFO(text);
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

rapidjson::Document fields(const std::string& f) { return parse("{" + f + "}"); }

// An APPROVAL as the daemon lists it, with a token planted where none belongs.
const char* const kApproval = R"({"id":"apr_0123456789abcdef01234567","status":"pending",
  "principal":"alice","session":"s-41","agent":"claude-code","origin":"decide",
  "action":{"target":"shell","action":"run","payload":{"command":"deploy prod --force"}},
  "action_hash":"sha256:ab","rules":["deploys-need-two","prod-is-special"],
  "reason":"deploys need a person","decision_id":"d-1","created_ms":1795399748000,
  "expires_ms":1795403348000,"approvers_needed":2,
  "votes":[{"approver":"bob","note":"looks fine","at_ms":1795399940000}],
  "closed_by":"","close_note":"","result":null,
  "token":"TOKSECRETaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","how":"warden approve TOKSECRETaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})";

}  // namespace

TEST_CASE("pending, approve and deny send the protocol's payloads", "[cli][approval]") {
  PendingQuery none;
  CHECK(pending_fields(none).empty());
  PendingQuery q;
  q.agent = "claude-code";
  q.session = "s\"1";
  q.rule = "deploys";
  q.min_age_s = 30;
  q.watch = true;
  auto p = fields(pending_fields(q));
  CHECK(std::string(p["agent"].GetString()) == "claude-code");
  CHECK(std::string(p["session"].GetString()) == "s\"1");
  CHECK(std::string(p["rule"].GetString()) == "deploys");
  CHECK(p["min_age_s"].GetInt64() == 30);
  CHECK(p["watch"].GetBool());
  PendingQuery zero;
  zero.min_age_s = 0;
  CHECK(fields(pending_fields(zero))["min_age_s"].GetInt64() == 0);

  auto a = fields(approve_fields("apr_0123456789abcdef01234567", "sha256:ab", "", std::nullopt));
  CHECK(std::string(a["id"].GetString()) == "apr_0123456789abcdef01234567");
  CHECK(std::string(a["digest"].GetString()) == "sha256:ab");
  CHECK_FALSE(a.HasMember("token"));
  CHECK_FALSE(a.HasMember("note"));
  CHECK_FALSE(a.HasMember("scope_minutes"));
  CHECK(std::string(fields(show_fields("apr_1"))["id"].GetString()) == "apr_1");
  CHECK(is_action_digest("sha256:" + std::string(64, 'f')));
  CHECK_FALSE(is_action_digest("sha256:" + std::string(63, 'f')));
  CHECK_FALSE(is_action_digest("sha256:" + std::string(64, 'F')));
  CHECK_FALSE(is_action_digest("wapr_" + std::string(66, 'f')));
  auto b = fields(approve_fields("apr_1", "sha256:ab", "ship it", 30));
  CHECK(std::string(b["note"].GetString()) == "ship it");
  CHECK(b["scope_minutes"].GetInt() == 30);

  auto by_id = fields(deny_fields("apr_0123456789abcdef01234567", "no"));
  CHECK(std::string(by_id["id"].GetString()) == "apr_0123456789abcdef01234567");
  CHECK_FALSE(by_id.HasMember("token"));
  CHECK(std::string(by_id["note"].GetString()) == "no");
  auto by_token = fields(deny_fields("Zm9vYmFyYmF6cXV4cXV1eHh4eHh4eHh4eHh4eHh4eHg", ""));
  CHECK(by_token.HasMember("token"));
  CHECK_FALSE(by_token.HasMember("id"));
  CHECK_FALSE(by_token.HasMember("note"));
  CHECK_FALSE(is_approval_id("apr_0123"));
  CHECK_FALSE(is_approval_id("apr_0123456789ABCDEF01234567"));
  CHECK(is_approval_id("apr_0123456789abcdef01234567"));
}

TEST_CASE("a pending approval shows id, age, requester, rules, reason and the action",
          "[cli][approval]") {
  auto approval = parse(kApproval);
  const std::string block = approval_block(approval, kNow);
  CHECK(block ==
        "apr_0123456789abcdef01234567  pending  age 4m12s  expires in 55m48s  approvals 1 of 2\n"
        "  requested by alice  session s-41  agent claude-code  via decide\n"
        "  rules deploys-need-two, prod-is-special: deploys need a person\n"
        "  action shell run: deploy prod --force\n"
        "  approved by bob 1m00s ago: looks fine\n");
  CHECK(
      approval_line(approval, kNow) ==
      "apr_0123456789abcdef01234567  pending  alice/s-41/claude-code  [deploys-need-two, prod-is-special]  "
      "shell run: deploy prod --force  (approvals 1 of 2, expires in 55m48s)");
}

TEST_CASE("the printers never show a token for a listed approval", "[cli][approval]") {
  const std::string secret = "TOKSECRET";
  auto approval = parse(kApproval);
  CHECK(approval_block(approval, kNow).find(secret) == std::string::npos);
  CHECK(approval_line(approval, kNow).find(secret) == std::string::npos);
  const std::string list = std::string(R"({"event":"approvals","approvals":[)") + kApproval + "]}";
  const std::string created =
      std::string(R"({"event":"approval-created","approval":)") + kApproval + "}";
  std::string denied = kApproval;
  denied.replace(denied.find("\"pending\""), 9, "\"denied\"");
  const std::string closed =
      std::string(R"({"event":"approval-closed","approval":)") + denied + "}";
  for (const std::string& event : {list, created, closed}) {
    INFO(event);
    const std::string text = watch_event_text(event, kNow);
    CHECK_FALSE(text.empty());
    CHECK(text.find(secret) == std::string::npos);
    const std::string json = watch_event_json(event);
    CHECK(json.find(secret) == std::string::npos);
    CHECK(json.find("apr_0123456789abcdef01234567") != std::string::npos);
  }
  auto reply = parse(std::string(R"({"approvals":[)") + kApproval + "," + kApproval + "]}");
  const std::string json = without_tokens(reply);
  CHECK(json.find(secret) == std::string::npos);
  CHECK(parse(json)["approvals"].Size() == 2);
  auto approved =
      parse(std::string(R"({"ok":true,"status":"granted","approval":)") + kApproval + "}");
  CHECK(approve_reply_text(approved).find(secret) == std::string::npos);
  CHECK(without_tokens(approved).find(secret) == std::string::npos);
  CHECK(deny_reply_text(approved).find(secret) == std::string::npos);
}

TEST_CASE("watch events: one line per approval created or closed", "[cli][approval]") {
  const std::string created =
      std::string(R"({"event":"approval-created","approval":)") + kApproval + "}";
  CHECK(watch_event_text(created, kNow)
            .rfind("+ apr_0123456789abcdef01234567  pending  alice/s-41/claude-code", 0) == 0);
  const std::string denied =
      R"({"event":"approval-closed","approval":{"id":"apr_1","status":"denied",
      "principal":"alice","session":"s","agent":"","closed_by":"carol","close_note":"not today","votes":[]}})";
  CHECK(watch_event_text(denied, kNow) == "- apr_1  denied by carol: not today  (alice/s/-)\n");
  const std::string approved =
      R"({"event":"approval-closed","approval":{"id":"apr_2","status":"executed",
      "principal":"alice","session":"","agent":"x","closed_by":"","votes":[{"approver":"bob"}]}})";
  CHECK(watch_event_text(approved, kNow) == "- apr_2  executed by bob  (alice/-/x)\n");
  const std::string expired =
      R"({"event":"approval-closed","approval":{"id":"apr_3","status":"expired",
      "principal":"alice","votes":[]}})";
  CHECK(watch_event_text(expired, kNow) == "- apr_3  expired  (alice/-/-)\n");
  CHECK(watch_event_text(R"({"event":"approvals","approvals":[]})", kNow).empty());
  CHECK(watch_event_text(R"({"event":"something-else"})", kNow).empty());
}

TEST_CASE("text from the daemon cannot drive the terminal", "[cli][approval]") {
  const std::string hostile = R"({"id":"apr_x\u001b[2J","status":"pending","principal":"a\u009bb",
      "rules":["r\u0007"],"reason":"why\u202e","created_ms":1,"expires_ms":2,"approvers_needed":1,
      "action":{"target":"shell","action":"run","payload":{"command":"ls\u001b]0;x\u0007"}}})";
  auto approval = parse(hostile);
  for (const std::string& shown : {approval_block(approval, kNow), approval_line(approval, kNow)}) {
    CHECK(shown.find('\x1b') == std::string::npos);
    CHECK(shown.find('\x07') == std::string::npos);
    CHECK(shown.find("\xc2\x9b") == std::string::npos);
    CHECK(shown.find("\xe2\x80\xae") == std::string::npos);
  }
}

TEST_CASE("the approve reply in words, per status", "[cli][approval]") {
  const std::string a =
      R"("approval":{"id":"apr_9","approvers_needed":2,"votes":[{"approver":"bob"}],
      "action":{"target":"http","action":"post","payload":{"method":"POST","url":"https://x.example/a"}}})";
  CHECK(approve_reply_text(parse(R"({"ok":true,"status":"pending",)" + a + "}")) ==
        "your approval of apr_9 is counted: 1 of 2; 1 more approver must approve\n"
        "  action http POST: https://x.example/a\n");
  CHECK(approve_reply_text(parse(R"({"ok":true,"status":"granted",)" + a + "}")) ==
        "approved apr_9: the requester may run it now\n  action http POST: https://x.example/a\n");
  CHECK(approve_reply_text(
            parse(R"({"ok":true,"status":"executed","result":{"exit_code":0},)" + a + "}")) ==
        "approved apr_9; it ran\n  action http POST: https://x.example/a\n  exit 0\n");
  CHECK(approve_reply_text(parse(
            R"({"ok":true,"status":"executed","result":{"ok":false,"exit_code":2},)" + a + "}")) ==
        "approved apr_9; it ran and failed\n  action http POST: https://x.example/a\n  exit 2\n");
  CHECK(approve_reply_text(
            parse(R"({"ok":true,"status":"refused","decision":{"reason":"host blocked now"},)" + a +
                  "}")) ==
        "approved apr_9, but the rules refused it at the last mile: not run (host blocked now)\n"
        "  action http POST: https://x.example/a\n");
  CHECK(deny_reply_text(parse(R"({"ok":true,)" + a + "}")) ==
        "denied apr_9\n  action http POST: https://x.example/a\n");
}

TEST_CASE("the requester sees how to get its action approved", "[cli][approval]") {
  auto pending = parse(R"({"id":"apr_1","token":"TOK-abc_1","status":"pending","expires_ms":1,
      "approvers_needed":1,"how":"warden approve TOK-abc_1"})");
  CHECK(approve_with_line(pending) == "approve with: warden approve apr_1");
  auto answered = parse(R"({"id":"apr_1","token":"TOK-abc_1","status":"denied"})");
  CHECK(approve_with_line(answered).empty());
  CHECK(approve_with_line(parse(R"({"id":"apr_1","status":"pending"})")) ==
        "approve with: warden approve apr_1");
  CHECK(approve_with_line(parse(R"({"token":"TOK","status":"pending"})")).empty());

  auto reply =
      parse(R"({"ok":true,"decision":{"outcome":"approval-required"},"approval":{"id":"apr_1",
      "token":"TOK-abc_1","status":"pending","expires_ms":1,"approvers_needed":2}})");
  CHECK(decide_approval_text(reply) ==
        "approval apr_1: pending (2 approvers); approve with: warden approve apr_1");
  auto waited =
      parse(R"({"ok":true,"decision":{"outcome":"approve"},"approval":{"id":"apr_1","token":"TOK",
      "status":"approved"}})");
  CHECK(decide_approval_text(waited) == "approval apr_1: approved");
  CHECK(decide_approval_text(parse(R"({"ok":true,"decision":{}})")).empty());

  // submit's events.
  CHECK(render_event(R"({"event":"approval-required","decision_id":"d-7","approval":{"id":"apr_1",
      "token":"TOK-abc_1","expires_ms":1,"approvers_needed":1,"how":"warden approve TOK-abc_1"}})") ==
        "  ⏸ suspended until an approver answers (decision d-7)\n"
        "    approve with: warden approve apr_1\n");
  CHECK(render_event(R"({"event":"approval-required","decision_id":"d-7"})") ==
        "  ⏸ suspended until an approver answers (decision d-7)\n");
  CHECK(render_event(
            R"({"event":"approval-result","approval_id":"apr_1","status":"executed","by":"bob",
      "note":"","result":{"exit_code":0}})") == "  ✓ approved by bob; it ran\n");
  CHECK(
      render_event(R"({"event":"approval-result","approval_id":"apr_1","status":"denied","by":"bob",
      "note":"not now"})") == "  ✗ denied by bob: not now\n");
  CHECK(render_event(
            R"({"event":"approval-result","approval_id":"apr_1","status":"refused","by":"bob"})") ==
        "  ✗ approved by bob, but the rules refused it at the last mile: not run\n");
  CHECK(render_event(R"({"event":"approval-result","approval_id":"apr_1","status":"expired"})") ==
        "  ✗ the approval expired: not run\n");
  // What happened, not "it ran": an action that could not run, or ran and failed.
  CHECK(render_event(
            R"({"event":"approval-result","approval_id":"apr_1","status":"refused","by":"bob",
      "result":{"ok":false,"error_code":"E_ACT_SHELL_SYNTAX","reason":"it could not run: E_ACT_SHELL_SYNTAX: needs a shell"}})") ==
        "  ✗ approved by bob, but not run: it could not run: E_ACT_SHELL_SYNTAX: needs a shell\n");
  CHECK(render_event(
            R"({"event":"approval-result","approval_id":"apr_1","status":"executed","by":"bob",
      "note":"","result":{"ok":false,"exit_code":2,"error_code":"E_ACT_FAILED"}})") ==
        "  ✗ approved by bob; it ran and failed: E_ACT_FAILED\n");
}

TEST_CASE("duration_text", "[cli][approval]") {
  CHECK(duration_text(-5) == "0s");
  CHECK(duration_text(59999) == "59s");
  CHECK(duration_text(60000) == "1m00s");
  CHECK(duration_text(3600000 + 5 * 60000) == "1h05m");
  CHECK(duration_text(86400000LL * 3 + 3600000 * 4) == "3d04h");
}

const std::string kAprId = "apr_0123456789abcdef01234567";
const std::string kAprDigest = "sha256:" + std::string(64, '0');

// The flags parse (the command then fails to reach a daemon that is not there: exit 4, the
// cause on stderr) or are refused as usage errors (exit 2) — no daemon needed.
TEST_CASE("pending, approve and deny flags: parsed, ranges checked", "[cli][approval]") {
  const std::vector<std::string> nowhere = {"--unix", "/nonexistent/warden-test.sock",
                                            "--timeout-ms", "500"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), nowhere.begin(), nowhere.end());
    return args;
  };
  for (const auto& args :
       {with({"pending"}),
        with({"pending", "--agent", "a", "--session", "s", "--rule", "r", "--min-age", "60",
              "--format", "json"}),
        with({"pending", "--watch", "--format", "text"}),
        with({"approve", kAprId, "--digest", kAprDigest}),
        with({"approve", kAprId, "--digest", kAprDigest, "--note", "ok", "--scope-minutes", "1"}),
        with({"approve", kAprId, "--digest", kAprDigest, "--scope-minutes", "1440", "--format",
              "json"}),
        with({"deny", "apr_0123456789abcdef01234567", "--note", "no"}), with({"deny", "TOKEN"})}) {
    INFO(args[0] << " " << (args.size() > 1 ? args[1] : ""));
    auto r = run_warden(args);
    CHECK(r.code == 4);
    CHECK(r.err.find("warden: ") == 0);
    CHECK(r.out.empty());
  }
  for (const auto& args :
       {with({"approve", kAprId, "--digest", kAprDigest, "--scope-minutes", "0"}),
        with({"approve", kAprId, "--digest", kAprDigest, "--scope-minutes", "1441"}),
        with({"approve", kAprId, "--digest", kAprDigest, "--scope-minutes", "x"}),
        with({"approve", "TOKEN", "--digest", kAprDigest}),
        with({"approve", kAprId, "--digest", "sha256:00"}), with({"approve", kAprId}),
        with({"approve"}), with({"deny"}), with({"pending", "--min-age", "-1"}),
        with({"pending", "--format", "yaml"}), with({"decide", "--wait", "3601"}),
        with({"decide", "--wait", "-1"}), with({"submit", "hello", "--wait", "4000"})}) {
    INFO(args[0] << " " << (args.size() > 1 ? args[1] : ""));
    auto r = run_warden(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
  }
  // In range: parsed, then no daemon.
  auto decide = run_warden(with({"decide", "--wait", "3600"}), "{\"target\":\"shell\"}\n");
  CHECK(decide.code == 4);
  auto submit = run_warden(with({"submit", "hello", "--wait", "60"}));
  CHECK(submit.code == 4);
}

TEST_CASE("the hooks take --wait and fail closed without a daemon", "[cli][approval]") {
  const std::string input =
      R"({"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"},"cwd":"/tmp"})";
  auto r = run_warden(
      {"hook", "claude-code", "--wait", "30", "--unix", "/nonexistent/warden-test.sock"}, input);
  CHECK(r.code == 2);
  CHECK(r.out.find("\"permissionDecision\":\"deny\"") != std::string::npos);
  CHECK(r.out.find("E_UNAVAILABLE") != std::string::npos);
  auto bad = run_warden({"hook", "codex", "--wait", "3601"}, input);
  CHECK(bad.code == 2);
}

// The hook's answer when the daemon opened an approval: the agent and the user are told the
// command that approves it; once a person answered (or with no token) they are not.
TEST_CASE("the hook's approval-required answer carries the approve command",
          "[cli][approval][hook]") {
  using namespace warden;
  using namespace warden::agents;
  HookCall call;
  call.session_id = "s";
  call.cwd = "/home/user/project";
  call.hook_event_name = "PreToolUse";
  call.tool_name = "Bash";
  call.permission_mode = "default";
  call.tool_input.SetObject();
  call.tool_input.AddMember("command", "deploy prod", call.tool_input.GetAllocator());
  const std::string proposal =
      R"({"target":"shell","action":"run","payload":{"command":"deploy prod"}})";
  Verdict v;
  v.ok = true;
  v.outcome = Outcome::ApprovalRequired;
  v.reason = "deploys need a person";
  v.rules = {"deploys"};
  v.decision_id = "d1";
  v.approval_id = "apr_0123456789abcdef01234567";
  v.approval_token = "Zm9v-YmFy_YmF6";
  v.approval_status = "pending";
  for (auto [agent, mode] : {std::pair{HookAgent::ClaudeCode, OnApprovalRequired::Ask},
                             std::pair{HookAgent::ClaudeCode, OnApprovalRequired::Deny},
                             std::pair{HookAgent::Codex, OnApprovalRequired::Deny}}) {
    HookAnswer a = answer_verdict(agent, call, proposal, v, mode);
    INFO(a.stdout_json);
    // An approver looks the approval up by its id; the token is never the way to approve.
    CHECK(a.reason.find("approve with: warden approve apr_0123456789abcdef01234567") !=
          std::string::npos);
    CHECK(a.stdout_json.find("approve with: warden approve apr_0123456789abcdef01234567") !=
          std::string::npos);
    CHECK(a.reason.find("Zm9v-YmFy_YmF6") == std::string::npos);
    if (a.decision == "deny") {
      CHECK(a.exit_code == 2);
      CHECK(a.stderr_text.find("warden approve apr_0123456789abcdef01234567") != std::string::npos);
    }
  }
  CHECK(
      answer_verdict(HookAgent::ClaudeCode, call, proposal, v, OnApprovalRequired::Ask).decision ==
      "ask");
  CHECK(answer_verdict(HookAgent::Codex, call, proposal, v, OnApprovalRequired::Deny).decision ==
        "deny");

  Verdict answered = v;
  answered.approval_status = "expired";
  CHECK(answer_verdict(HookAgent::ClaudeCode, call, proposal, answered, OnApprovalRequired::Deny)
            .reason.find("warden approve") == std::string::npos);
  Verdict tokenless = v;
  tokenless.approval_token.clear();
  CHECK(answer_verdict(HookAgent::ClaudeCode, call, proposal, tokenless, OnApprovalRequired::Deny)
            .reason.find("warden approve") == std::string::npos);
  // An id with characters an id never has is not passed on as they are.
  Verdict odd = v;
  odd.approval_id = "a b;rm -rf ~\n";
  const std::string reason =
      answer_verdict(HookAgent::Codex, call, proposal, odd, OnApprovalRequired::Deny).reason;
  CHECK(reason.find("rm -rf") == std::string::npos);
  CHECK(reason.find("warden approve a?b?rm?-rf???") != std::string::npos);
}

TEST_CASE(
    "pending pages: limit and after are sent; a listing's truncated action is never shown as the action",
    "[cli][approval]") {
  PendingQuery q;
  q.limit = 40;
  q.after = "1795399748000:apr_0123456789abcdef01234567";
  auto p = fields(pending_fields(q));
  CHECK(p["limit"].GetInt64() == 40);
  CHECK(std::string(p["after"].GetString()) == q.after);
  CHECK_FALSE(fields(pending_fields(PendingQuery{})).HasMember("limit"));

  const std::string cut =
      R"({"id":"apr_0123456789abcdef01234567","status":"pending","principal":"alice",
      "session":"s","agent":"a","origin":"decide","action":null,"action_hash":"sha256:ab","rules":["r"],
      "reason":"why","created_ms":1795399748000,"expires_ms":1795403348000,"approvers_needed":1,"votes":[],
      "history":[],"truncated":true,"action_bytes":102400,"action_preview":"{\"target\":\"shell\",\"payload\":{\"command\":\"touch hhhh"})";
  auto approval = parse(cut);
  const std::string block = approval_block(approval, kNow);
  CHECK(block.find("  action (too large to list: 102400 bytes; warden approve "
                   "apr_0123456789abcdef01234567 shows it in full) begins: ") != std::string::npos);
  const std::string detail = approval_detail(approval, kNow);
  CHECK(detail.find("the action as it will run: left out of this list (102400 bytes); warden "
                    "approve apr_0123456789abcdef01234567 shows it in full") != std::string::npos);
  CHECK(detail.find("(none)") == std::string::npos);
  CHECK(approval_line(approval, kNow).find("too large to list") != std::string::npos);
}

TEST_CASE("watch: an approval still pending is never shown as closed, whatever the event says",
          "[cli][approval]") {
  const std::string closed_but_pending =
      std::string(R"({"event":"approval-closed","approval":)") + kApproval + "}";
  CHECK(watch_event_text(closed_but_pending, kNow).empty());
  const std::string more = std::string(R"({"event":"approvals","approvals":[)") + kApproval +
                           R"(],"more":true,"next":"1:apr_0123456789abcdef01234567"})";
  const std::string text = watch_event_text(more, kNow);
  CHECK(text.rfind("= apr_0123456789abcdef01234567  pending", 0) == 0);
  CHECK(text.find("more are pending than this first page: warden pending lists them all") !=
        std::string::npos);
}
