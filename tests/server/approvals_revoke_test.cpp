// Revoking a token reaches what it started, through a real daemon with the SQLite store: a
// reload (or a start) whose token file no longer has the token cancels its pending approvals
// (closed denied by warden, recorded once, approving them is E_APPROVAL_CLOSED), answers its
// waiting `decide` with a reject, and ends the grants its approvals left; a daemon that does
// not accept the token refuses to approve what it asked for. Another token of the same
// principal keeps what it started.
#include <catch2/catch.hpp>
#include <fstream>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

// alice's second agent token (another terminal of the same person).
const std::string kRevokeAlice2 = "wdn_test_alice_agent_second";

std::string tokens_with_both() {
  return ApprovalTokens{}.file_text() + "agent alice " + token_hash_text(kRevokeAlice2) + "\n";
}

// The same without alice's first token: it is revoked.
std::string tokens_without_first() {
  ApprovalTokens t;
  return "agent dave " + token_hash_text(t.dave) + "\napprover bob " + token_hash_text(t.bob) +
         "\napprover carol " + token_hash_text(t.carol) + "\nadmin root " +
         token_hash_text(t.admin) + "\nagent alice " + token_hash_text(kRevokeAlice2) + "\n";
}

Config revoke_config(const TempDir& dir, const std::string& state = "state") {
  Config c = approvals_config(dir, state);
  c.tokens = dir.write("tokens", tokens_with_both(), 0600);
  return c;
}

void revoke_first(const TempDir& dir) { dir.write("tokens", tokens_without_first(), 0600); }

ApprovalRef revoke_ask(Party& agent, const std::string& command) {
  std::string reply = agent.call(decide_request("q", shell_action(command)));
  INFO(reply);
  auto p = payload_of(reply);
  REQUIRE(str(p["decision"], "outcome") == "approval-required");
  return approval_ref(p["approval"]);
}

rapidjson::Document revoke_shown(Party& approver, const std::string& id) {
  rapidjson::Document p =
      payload_of(approver.call(make_request("s", "pending", "\"id\":" + json_string(id))));
  REQUIRE(p.HasMember("approvals"));
  REQUIRE(p["approvals"].Size() == 1);
  rapidjson::Document out;
  out.CopyFrom(p["approvals"][0], out.GetAllocator());
  return out;
}

// The `approval` records of `event` by `by` in the audit log.
int revoke_approval_records(const std::string& log, const std::string& event,
                            const std::string& by) {
  std::ifstream in(log);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.find("\"kind\":\"approval\"") != std::string::npos &&
        line.find("\"event\":\"" + event + "\"") != std::string::npos &&
        line.find("\"by\":\"" + by + "\"") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

}  // namespace

TEST_CASE("a reload that revokes a token cancels its pending approvals",
          "[server][approvals][revoke]") {
  TempDir dir;
  Config config = revoke_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), alice2(d.address(), kRevokeAlice2), bob(d.address(), t.bob),
      admin(d.address(), t.admin);
  const ApprovalRef first = revoke_ask(alice, "touch first.txt");
  const ApprovalRef second = revoke_ask(alice2, "touch second.txt");
  CHECK(str(revoke_shown(bob, first.id), "requester_token_id") == token_id(hash_token(t.alice)));
  CHECK(str(revoke_shown(bob, second.id), "requester_token_id") ==
        token_id(hash_token(kRevokeAlice2)));

  revoke_first(dir);
  std::string reloaded = admin.call(make_request("r", "reload"));
  INFO(reloaded);
  REQUIRE(error_code(reloaded) == "");
  CHECK(payload_of(reloaded)["approvals_cancelled"].GetInt() == 1);

  // The revoked token's approval: closed, by warden, saying why; it cannot be approved.
  rapidjson::Document a = revoke_shown(bob, first.id);
  CHECK(str(a, "status") == "denied");
  CHECK(str(a, "closed_by") == "warden");
  CHECK(str(a, "close_note").find("revoked") != std::string::npos);
  std::string late = bob.call(approve_request(first));
  INFO(late);
  CHECK(error_code(late) == err::kApprovalClosed);
  CHECK(late.find("revoked") != std::string::npos);
  // Recorded once, as denied by warden.
  const std::string log = config.state_dir + "/audit.jsonl";
  CHECK(revoke_approval_records(log, "denied", "warden") == 1);

  // The other token of the same principal keeps its approval.
  CHECK(str(revoke_shown(bob, second.id), "status") == "pending");
  std::string ok = bob.call(approve_request(second));
  INFO(ok);
  CHECK(error_code(ok) == "");
  CHECK(str(payload_of(ok), "status") == "granted");

  // A reload that revokes nothing more cancels nothing more.
  std::string again = admin.call(make_request("r2", "reload"));
  REQUIRE(error_code(again) == "");
  CHECK(payload_of(again)["approvals_cancelled"].GetInt() == 0);
  CHECK(revoke_approval_records(log, "denied", "warden") == 1);
}

TEST_CASE("a decide waiting on an approval of a revoked token never gets approve",
          "[server][approvals][revoke]") {
  TempDir dir;
  Config config = revoke_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
  alice.send(make_request("w", "decide",
                          "\"proposal\":" + shell_action("touch waited.txt") + ",\"wait_s\":60"));
  auto event = parse(alice.read());
  INFO(to_json_text(event));
  REQUIRE(str(event["payload"], "event") == "approval-required");
  const ApprovalRef asked = approval_ref(event["payload"]["approval"]);

  revoke_first(dir);
  REQUIRE(error_code(admin.call(make_request("r", "reload"))) == "");
  // An approver who answers now approves nothing.
  CHECK(error_code(bob.call(approve_request(asked))) == err::kApprovalClosed);
  // The waiting decide is answered: a reject saying why, then the connection's token is
  // refused.
  std::string answer = alice.read();
  INFO(answer);
  CHECK(reply_id(answer) == "w");
  auto p = payload_of(answer);
  REQUIRE(p.HasMember("decision"));
  CHECK(str(p["decision"], "outcome") == "reject");
  CHECK(str(p["decision"], "reason").find("revoked") != std::string::npos);
  CHECK(str(p["approval"], "status") == "denied");
  std::string closing = alice.read();
  INFO(closing);
  CHECK(error_code(closing) == err::kAuthRevoked);
}

TEST_CASE("the grants a revoked token's approvals left end; another token's stay",
          "[server][approvals][revoke][grants]") {
  TempDir dir;
  Config config = revoke_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), alice2(d.address(), kRevokeAlice2), bob(d.address(), t.bob),
      admin(d.address(), t.admin);
  // Scoped grants for alice's session s1: one asked for with each of her tokens.
  const ApprovalRef first = revoke_ask(alice, "touch scoped-first.txt");
  REQUIRE(error_code(bob.call(approve_request(first, ",\"scope_minutes\":30"))) == "");
  const ApprovalRef second = revoke_ask(alice2, "touch scoped-second.txt");
  REQUIRE(error_code(bob.call(approve_request(second, ",\"scope_minutes\":30"))) == "");
  // Either token of alice's uses either grant (a grant is the principal's and session's).
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped-first.txt")) == "approve");
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped-second.txt")) == "approve");

  revoke_first(dir);
  REQUIRE(error_code(admin.call(make_request("r", "reload"))) == "");
  // What the revoked token's approval granted asks again; the other token's grant holds.
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped-first.txt")) == "approval-required");
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped-second.txt")) == "approve");
}

TEST_CASE("a daemon started with a token file without the token cancels what it asked for",
          "[server][approvals][revoke]") {
  TempDir dir;
  Config config = revoke_config(dir);
  ApprovalTokens t;
  ApprovalRef asked;
  {
    RunningDaemon d(config);
    REQUIRE(d.ok());
    Party alice(d.address(), t.alice);
    asked = revoke_ask(alice, "touch before-restart.txt");
  }
  revoke_first(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Party bob(d.address(), t.bob);
  rapidjson::Document a = revoke_shown(bob, asked.id);
  CHECK(str(a, "status") == "denied");
  CHECK(str(a, "closed_by") == "warden");
  CHECK(error_code(bob.call(approve_request(asked))) == err::kApprovalClosed);
}

TEST_CASE("a daemon that does not accept the requester's token refuses to approve it",
          "[server][approvals][revoke]") {
  // Two daemons on one SQLite store: B's token file never had alice's first token (B started
  // before anything was asked, so nothing was cancelled as it started).
  TempDir dir;
  Config b_config = approvals_config(dir, "daemon-b");
  b_config.tokens = dir.write("tokens-b", tokens_without_first(), 0600);
  Config a_config = revoke_config(dir, "daemon-a");
  a_config.approvals.path = (dir.path() / "shared.db").string();
  b_config.approvals.path = a_config.approvals.path;
  RunningDaemon b(b_config);
  REQUIRE(b.ok());
  RunningDaemon a(a_config);
  REQUIRE(a.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice), bob_on_b(b.address(), t.bob);
  const ApprovalRef asked = revoke_ask(alice, "touch elsewhere.txt");
  std::string reply = bob_on_b.call(approve_request(asked));
  INFO(reply);
  CHECK(error_code(reply) == err::kApprovalClosed);
  CHECK(reply.find("revoked") != std::string::npos);
  rapidjson::Document shown_a = revoke_shown(bob_on_b, asked.id);
  CHECK(str(shown_a, "status") == "denied");
  CHECK(shown_a["votes"].Size() == 0);
  // Nothing was granted: alice asks again on A.
  CHECK(outcome_of_decide(alice, shell_action("touch elsewhere.txt")) == "approval-required");
  // Recorded once, on the daemon that cancelled it.
  CHECK(revoke_approval_records(b_config.state_dir + "/audit.jsonl", "denied", "warden") == 1);
  CHECK(revoke_approval_records(a_config.state_dir + "/audit.jsonl", "denied", "warden") == 0);
}
