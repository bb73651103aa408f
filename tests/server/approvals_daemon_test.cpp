// Human approvals through the daemon over TCP, with the SQLite store in the state directory
// (approvals_pg_test.cpp: the same with PostgreSQL and two daemons). An agent's
// approval-required decision leaves a pending approval and a token; approvers list, approve
// and deny; the last mile re-decides; the waiting client gets the answer; scoped approvals;
// restarts; races; every transition in the audit log.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

struct Pending {
  std::string id;
  std::string token;
  std::string decision;  // the reply
  std::string hash;      // the action's digest: what an approver is shown
};

// alice decides `command` in `session`: approval-required with a token.
Pending ask(Party& agent, const std::string& command, const std::string& session = "s1",
            const std::string& id = "d") {
  std::string reply = agent.call(decide_request(id, shell_action(command, session)));
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto p = payload_of(reply);
  REQUIRE(str(p["decision"], "outcome") == "approval-required");
  REQUIRE(p.HasMember("approval"));
  Pending out{str(p["approval"], "id"), str(p["approval"], "token"), reply,
              str(p["approval"], "action_hash")};
  REQUIRE(out.id.rfind("apr_", 0) == 0);
  REQUIRE(out.token.size() >= 40);  // 32 random bytes, base64url
  REQUIRE(out.hash.rfind("sha256:", 0) == 0);
  CHECK(str(p["approval"], "how") == "warden approve " + out.id);
  return out;
}

// An approver answers approval `p`, having been shown its action (its digest).
std::string approve(Party& approver, const Pending& p, const std::string& extra = "") {
  return approver.call(
      make_request("a", "approve",
                   "\"id\":" + json_string(p.id) + ",\"digest\":" + json_string(p.hash) + extra));
}

std::string outcome_of(const std::string& reply) {
  auto p = payload_of(reply);
  return p.IsObject() && p.HasMember("decision") ? str(p["decision"], "outcome") : "<none>";
}

// How many `approval` records of this event the audit log holds.
int approval_records(const std::string& log, const std::string& event) {
  std::ifstream in(log);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.find("\"kind\":\"approval\"") != std::string::npos &&
        line.find("\"event\":\"" + event + "\"") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("approval-required leaves a pending approval: token to the requester, never listed",
          "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  Pending p = ask(alice, "touch a.txt");

  std::string listed = bob.call(make_request("l", "pending"));
  INFO(listed);
  REQUIRE(error_code(listed) == "");
  auto list = payload_of(listed);
  REQUIRE(list["approvals"].Size() == 1);
  const auto& a = list["approvals"][0];
  CHECK(str(a, "id") == p.id);
  CHECK(str(a, "status") == "pending");
  CHECK(str(a, "principal") == "alice");
  CHECK(str(a, "session") == "s1");
  CHECK(str(a, "agent") == "coder");
  CHECK(str(a, "origin") == "decide");
  CHECK(str(a["action"]["payload"], "command") == "touch a.txt");
  CHECK(str(a, "action_hash").rfind("sha256:", 0) == 0);
  CHECK(a["rules"][0].GetString() == std::string("touch-needs-approval"));
  CHECK(a["approvers_needed"].GetInt() == 1);
  CHECK(a["expires_ms"].GetInt64() - a["created_ms"].GetInt64() == 3600 * 1000);
  // The token is the requester's alone: no listing shows it.
  CHECK(listed.find(p.token) == std::string::npos);

  // Filters: agent, session, rule, age.
  ask(alice, "touch b.txt", "s2");
  auto count = [&](const std::string& filter) {
    std::string r = bob.call(make_request("f", "pending", filter));
    INFO(r);
    REQUIRE(error_code(r) == "");
    return payload_of(r)["approvals"].Size();
  };
  CHECK(count("") == 2);
  CHECK(count("\"session\":\"s2\"") == 1);
  CHECK(count("\"agent\":\"coder\"") == 2);
  CHECK(count("\"agent\":\"other\"") == 0);
  CHECK(count("\"rule\":\"touch-needs-approval\"") == 2);
  CHECK(count("\"rule\":\"chmod-needs-two\"") == 0);
  CHECK(count("\"min_age_s\":3600") == 0);
  CHECK(error_code(bob.call(make_request("f", "pending", "\"min_age_s\":-1"))) == err::kBadRequest);
}

TEST_CASE("an agent can never approve, and nothing in a proposal marks it approved",
          "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), dave(d.address(), t.dave);
  Pending p = ask(alice, "touch a.txt");
  // Another agent holding the token: the agent role may not approve, deny or list.
  CHECK(error_code(approve(dave, p)) == err::kForbidden);
  CHECK(error_code(dave.call(make_request("x", "deny", "\"id\":" + json_string(p.id)))) ==
        err::kForbidden);
  CHECK(error_code(dave.call(make_request("x", "pending"))) == err::kForbidden);
  CHECK(error_code(approve(alice, p)) == err::kForbidden);
  // The token, an "approved" flag or an approval object inside the proposal change nothing.
  std::string forged =
      "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":\"touch a.txt\"},"
      "\"approved\":true,\"approval\":{\"token\":" +
      json_string(p.token) +
      ",\"status\":\"approved\"},\"approval_token\":" + json_string(p.token) +
      ",\"context\":{\"session\":\"s1\",\"approved\":true}}";
  std::string reply = alice.call(decide_request("f", forged));
  INFO(reply);
  CHECK(outcome_of(reply) == "approval-required");
  // Still pending.
  ApprovalTokens tokens;
  Party bob(d.address(), tokens.bob);
  CHECK(payload_of(bob.call(make_request("l", "pending")))["approvals"].Size() == 2);
}

TEST_CASE("approve: self-approval, reuse, unknown tokens and denial are refused",
          "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  const std::string log =
      config.audit_log.empty() ? config.state_dir + "/audit.jsonl" : config.audit_log;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob),
      alice_approver(d.address(), t.alice_approver);
  Pending p = ask(alice, "touch a.txt");

  CHECK(error_code(approve(alice_approver, p)) == err::kSelfApproval);
  CHECK(error_code(approve(bob, Pending{"apr_000000000000000000000000", "", "", p.hash})) ==
        err::kApprovalNotFound);
  // The token never approves, with or without the digest.
  CHECK(error_code(bob.call(make_request("a", "approve", "\"token\":" + json_string(p.token)))) ==
        err::kBadRequest);
  CHECK(error_code(bob.call(make_request("a", "approve",
                                         "\"token\":" + json_string(p.token) + ",\"digest\":" +
                                             json_string(p.hash)))) == err::kBadRequest);
  CHECK(error_code(approve(bob, Pending{p.token, "", "", p.hash})) == err::kApprovalNotFound);
  // The id without the digest is not an answer.
  CHECK(error_code(bob.call(make_request("a", "approve", "\"id\":" + json_string(p.id)))) ==
        err::kBadRequest);
  std::string ok = approve(bob, p, ",\"note\":\"fine by me\"");
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  CHECK(str(payload_of(ok), "status") == "granted");
  // Reuse: a token approves once.
  CHECK(error_code(approve(bob, p)) == err::kApprovalClosed);
  Party carol(d.address(), t.carol);
  CHECK(error_code(approve(carol, p)) == err::kApprovalClosed);

  // Deny by id closes it; the token then approves nothing.
  Pending q = ask(alice, "touch b.txt");
  std::string denied =
      bob.call(make_request("n", "deny", "\"id\":" + json_string(q.id) + ",\"note\":\"no\""));
  INFO(denied);
  REQUIRE(error_code(denied) == "");
  CHECK(str(payload_of(denied)["approval"], "status") == "denied");
  CHECK(error_code(approve(carol, q)) == err::kApprovalClosed);
  CHECK(error_code(bob.call(make_request("n", "deny", "\"token\":" + json_string(q.token)))) ==
        err::kApprovalClosed);
  CHECK(error_code(bob.call(make_request("n", "deny", "\"id\":\"apr_000\""))) ==
        err::kApprovalNotFound);
  CHECK(error_code(bob.call(make_request("n", "deny"))) == err::kBadRequest);

  d.stop();
  CHECK(approval_records(log, "created") == 2);
  CHECK(approval_records(log, "approved") == 1);
  CHECK(approval_records(log, "granted") == 1);
  CHECK(approval_records(log, "denied") == 1);
}

TEST_CASE("an expired approval cannot be approved", "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  Pending p = ask(alice, "mkdir out");  // the rule asks for a 1 s expiry
  auto list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(list["approvals"][0]["expires_ms"].GetInt64() -
            list["approvals"][0]["created_ms"].GetInt64() ==
        1000);
  // Past its expiry (the sweeper or the approve itself closes it).
  REQUIRE(eventually(
      [&] { return payload_of(bob.call(make_request("l", "pending")))["approvals"].Size() == 0; }));
  CHECK(error_code(approve(bob, p)) == err::kApprovalExpired);
}

TEST_CASE("a decide approval grants one use of that exact action in that session",
          "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  Pending p = ask(alice, "touch a.txt");
  REQUIRE(error_code(approve(bob, p)) == "");
  // Another session, another action: still approval-required (and they do not use the grant).
  CHECK(outcome_of(alice.call(decide_request("1", shell_action("touch a.txt", "s2")))) ==
        "approval-required");
  CHECK(outcome_of(alice.call(decide_request("2", shell_action("touch b.txt", "s1")))) ==
        "approval-required");
  // The same action in the same session (another explanation): approved, once.
  std::string again = alice.call(decide_request("3", shell_action("touch a.txt", "s1", "retry")));
  INFO(again);
  CHECK(outcome_of(again) == "approve");
  CHECK(str(payload_of(again)["decision"], "reason").find("approved for this session by bob") !=
        std::string::npos);
  CHECK(str(payload_of(again)["approval"], "status") == "granted");
  CHECK(outcome_of(alice.call(decide_request("4", shell_action("touch a.txt", "s1")))) ==
        "approval-required");
  // Another agent in the same session name is another requester.
  Party dave(d.address(), t.dave);
  Pending q = ask(alice, "touch c.txt");
  REQUIRE(error_code(approve(bob, q)) == "");
  CHECK(outcome_of(dave.call(decide_request("5", shell_action("touch c.txt", "s1")))) ==
        "approval-required");
}

TEST_CASE("scoped approval: the identical action in the same session, for N minutes",
          "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  Pending p = ask(alice, "touch a.txt");
  CHECK(error_code(approve(bob, p, ",\"scope_minutes\":0")) == err::kBadRequest);
  CHECK(error_code(approve(bob, p, ",\"scope_minutes\":100000")) == err::kBadRequest);
  std::string ok = approve(bob, p, ",\"scope_minutes\":5");
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  const auto reply = payload_of(ok);
  const auto& result = reply["result"];
  CHECK(result["grant"]["uses"].GetInt() == 0);
  CHECK(result["grant"]["scope_minutes"].GetInt() == 5);
  for (int i = 0; i < 3; ++i) {
    std::string r = alice.call(decide_request("r", shell_action("touch a.txt", "s1")));
    INFO(r);
    CHECK(outcome_of(r) == "approve");
    CHECK(payload_of(r)["approval"]["scoped"].GetBool());
  }
  CHECK(outcome_of(alice.call(decide_request("x", shell_action("touch a.txt", "s2")))) ==
        "approval-required");
  CHECK(outcome_of(alice.call(decide_request("y", shell_action("touch a.txt -r", "s1")))) ==
        "approval-required");
  // A grant never overrides a reject: rm is refused whatever was approved.
  CHECK(outcome_of(alice.call(decide_request("z", shell_action("rm a.txt", "s1")))) == "reject");
  d.stop();
  CHECK(approval_records(config.state_dir + "/audit.jsonl", "scoped-use") == 3);
}

TEST_CASE("two-approver rule: two distinct approvers", "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), carol(d.address(), t.carol);
  Pending p = ask(alice, "chmod 600 notes.txt");
  CHECK(payload_of(p.decision)["approval"]["approvers_needed"].GetInt() == 2);
  std::string first = approve(bob, p);
  INFO(first);
  REQUIRE(error_code(first) == "");
  CHECK(str(payload_of(first), "status") == "pending");
  CHECK(error_code(approve(bob, p)) == err::kAlreadyApproved);
  // Still pending, with one vote.
  auto list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(list["approvals"][0]["votes"].Size() == 1);
  std::string second = approve(carol, p);
  INFO(second);
  REQUIRE(error_code(second) == "");
  CHECK(str(payload_of(second), "status") == "granted");
  CHECK(outcome_of(alice.call(decide_request("r", shell_action("chmod 600 notes.txt")))) ==
        "approve");
}

TEST_CASE("pending approvals survive a restart", "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  Pending p;
  {
    RunningDaemon d(config);
    REQUIRE(d.ok());
    Party alice(d.address(), ApprovalTokens{}.alice);
    p = ask(alice, "touch kept.txt");
  }
  RunningDaemon again(config);
  REQUIRE(again.ok());
  ApprovalTokens t;
  Party bob(again.address(), t.bob), alice(again.address(), t.alice);
  auto list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(str(list["approvals"][0], "id") == p.id);
  std::string ok = approve(bob, p);
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  CHECK(outcome_of(alice.call(decide_request("r", shell_action("touch kept.txt")))) == "approve");
}

TEST_CASE("rules changed to reject: approving does not let the action through",
          "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), root(d.address(), t.admin);
  Pending p = ask(alice, "touch a.txt");
  dir.write("rules/policy.clp", kTouchRefusedRules);
  std::string reloaded = root.call(make_request("r", "reload"));
  INFO(reloaded);
  REQUIRE(error_code(reloaded) == "");
  std::string refused = approve(bob, p);
  INFO(refused);
  CHECK(error_code(refused) == err::kApprovalRefused);
  CHECK(refused.find("touch is no longer allowed") != std::string::npos);
  // Closed as refused; no grant: the action is still not approved.
  CHECK(error_code(approve(bob, p)) == err::kApprovalClosed);
  CHECK(outcome_of(alice.call(decide_request("x", shell_action("touch a.txt")))) == "reject");
  d.stop();
  CHECK(approval_records(config.state_dir + "/audit.jsonl", "refused") == 1);
}

TEST_CASE("a waiting client gets the answer: approve, deny, or still pending at its timeout",
          "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);

  // The waiting client is told the token at once (an event), then gets the answer.
  auto ask_waiting = [&](const std::string& command) {
    alice.send(
        make_request("w", "decide", "\"proposal\":" + shell_action(command) + ",\"wait_s\":60"));
    auto event = parse(alice.read());
    INFO(to_json_text(event));
    REQUIRE(str(event, "type") == "event");
    REQUIRE(str(event["payload"], "event") == "approval-required");
    const auto& a = event["payload"]["approval"];
    return Pending{str(a, "id"), str(a, "token"), "", str(a, "action_hash")};
  };
  SECTION("approved") {
    Pending w = ask_waiting("touch w.txt");
    REQUIRE(error_code(approve(bob, w)) == "");
    std::string reply = alice.read();
    INFO(reply);
    CHECK(outcome_of(reply) == "approve");
    CHECK(str(payload_of(reply)["approval"], "status") == "granted");
    // It used the one grant: the same action asks again.
    CHECK(outcome_of(alice.call(decide_request("n", shell_action("touch w.txt")))) ==
          "approval-required");
  }
  SECTION("denied") {
    Pending w = ask_waiting("touch w.txt");
    std::string denied = bob.call(
        make_request("n", "deny", "\"token\":" + json_string(w.token) + ",\"note\":\"not today\""));
    REQUIRE(error_code(denied) == "");
    std::string reply = alice.read();
    INFO(reply);
    CHECK(outcome_of(reply) == "reject");
    CHECK(str(payload_of(reply)["decision"], "reason") == "denied by bob: not today");
    CHECK(str(payload_of(reply)["approval"], "status") == "denied");
  }
  SECTION("timeout") {
    std::string event = alice.call(make_request(
        "w", "decide", "\"proposal\":" + shell_action("touch t.txt") + ",\"wait_s\":1"));
    CHECK(str(parse(event), "type") == "event");
    std::string reply = alice.read();
    INFO(reply);
    CHECK(outcome_of(reply) == "approval-required");
    CHECK(str(payload_of(reply)["approval"], "status") == "pending");
    CHECK(!str(payload_of(reply)["approval"], "token").empty());
  }
  SECTION("bad wait") {
    CHECK(error_code(alice.call(make_request(
              "w", "decide", "\"proposal\":" + shell_action("touch t.txt") + ",\"wait_s\":-1"))) ==
          err::kBadRequest);
  }
}

TEST_CASE("two approvers racing on one token: exactly one approves", "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice);
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    Pending p = ask(alice, "touch race" + std::to_string(round) + ".txt");
    std::atomic<int> ok{0}, closed{0};
    std::vector<std::thread> racers;
    for (const std::string& token : {t.bob, t.carol, t.bob, t.carol}) {
      racers.emplace_back([&, token] {
        const std::string request = make_request(
            "a", "approve", "\"id\":" + json_string(p.id) + ",\"digest\":" + json_string(p.hash));
        std::string code = reply_code(call_on_thread(d.address(), token, request));
        if (code.empty()) ++ok;
        if (code == err::kApprovalClosed || code == err::kAlreadyApproved) ++closed;
      });
    }
    for (auto& r : racers) r.join();
    CHECK(ok.load() == 1);
    CHECK(closed.load() == 3);
  }
  d.stop();
  CHECK(approval_records(config.state_dir + "/audit.jsonl", "approved") == kRounds);
  CHECK(approval_records(config.state_dir + "/audit.jsonl", "granted") == kRounds);
}

TEST_CASE("pending --watch: connected approvers see approvals arrive and close",
          "[server][approvals]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), watcher(d.address(), t.carol);
  watcher.send(make_request("watch", "pending", "\"watch\":true"));
  auto first = parse(watcher.read());
  REQUIRE(str(first, "type") == "event");
  CHECK(str(first["payload"], "event") == "approvals");
  CHECK(first["payload"]["approvals"].Size() == 0);
  Pending p = ask(alice, "touch seen.txt");
  auto created = parse(watcher.read());
  CHECK(str(created["payload"], "event") == "approval-created");
  CHECK(str(created["payload"]["approval"], "id") == p.id);
  CHECK(to_json_text(created).find(p.token) == std::string::npos);
  REQUIRE(error_code(approve(bob, p)) == "");
  // It closes (approved), then is carried out (executed: granted).
  std::string last_status;
  REQUIRE(eventually([&] {
    auto e = parse(watcher.read());
    last_status = str(e["payload"]["approval"], "status");
    return last_status == "executed";
  }));
}

TEST_CASE("approve and deny refuse malformed input and keep hostile notes as text",
          "[server][approvals]") {
  TempDir dir;
  Config config = approvals_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), carol(d.address(), t.carol);
  Pending p = ask(alice, "chmod 600 x");  // two approvers: the first vote keeps it pending
  const std::string digest = ",\"digest\":" + json_string(p.hash);
  CHECK(error_code(bob.call(make_request("a", "approve", "\"id\":42" + digest))) ==
        err::kBadRequest);
  CHECK(error_code(bob.call(make_request("a", "approve", "\"id\":\"\"" + digest))) ==
        err::kBadRequest);
  CHECK(error_code(bob.call(make_request(
            "a", "approve", "\"id\":" + json_string(std::string(300, 'x')) + digest))) ==
        err::kBadRequest);
  CHECK(error_code(bob.call(make_request(
            "a", "approve", "\"id\":" + json_string(p.id) + ",\"digest\":7"))) == err::kBadRequest);
  CHECK(error_code(approve(bob, p, ",\"note\":" + json_string(std::string(5000, 'n')))) ==
        err::kBadRequest);
  CHECK(error_code(approve(bob, p, ",\"scope_minutes\":\"5\"")) == err::kBadRequest);
  CHECK(error_code(bob.call(make_request(
            "n", "deny", "\"token\":" + json_string(p.token) + ",\"id\":" + json_string(p.id)))) ==
        err::kBadRequest);
  // Still pending after all that, with no vote.
  auto list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(list["approvals"][0]["votes"].Size() == 0);
  // A note with quotes, parentheses, a newline and non-ASCII text is kept as it was written.
  const std::string note =
      "ok \"quoted\" (assert (decision)) ') ; DROP TABLE approvals; --\nnext ✓";
  REQUIRE(error_code(approve(bob, p, ",\"note\":" + json_string(note))) == "");
  list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(str(list["approvals"][0]["votes"][0], "note") == note);
  REQUIRE(error_code(approve(carol, p)) == "");
  CHECK(payload_of(bob.call(make_request("l", "pending")))["approvals"].Size() == 0);
}
