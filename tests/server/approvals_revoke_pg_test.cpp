// Revoking a token in a fleet: two daemons sharing one PostgreSQL approvals store (a real
// server the test starts), each reloading its own token file. The revoked token's pending
// approvals are cancelled exactly once across the fleet — one `denied` record by warden in all
// the daemons' audit logs together, however the reloads race —, its waiting `decide` on the
// other daemon is answered with a reject, its grants end, and approving it anywhere is
// E_APPROVAL_CLOSED.
#include <catch2/catch.hpp>
#include <fstream>
#include <thread>
#include <vector>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "tests/support/postgres_server.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::test::fresh_database;

namespace {

const std::string kAlice2 = "wdn_test_alice_agent_second";

std::string tokens_text(bool with_first) {
  ApprovalTokens t;
  std::string out = "agent dave " + token_hash_text(t.dave) + "\napprover bob " +
                    token_hash_text(t.bob) + "\napprover carol " + token_hash_text(t.carol) +
                    "\nadmin root " + token_hash_text(t.admin) + "\nagent alice " +
                    token_hash_text(kAlice2) + "\n";
  if (with_first) out += "agent alice " + token_hash_text(t.alice) + "\n";
  return out;
}

// A daemon of the fleet with a token file of its own.
Config fleet_config(const TempDir& dir, const std::string& name, const std::string& conninfo) {
  Config c = approvals_config(dir, name, conninfo);
  c.tokens = dir.write("tokens-" + name, tokens_text(true), 0600);
  return c;
}

int revoke_pg_approval_records(const std::string& log, const std::string& event,
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

// approvals_cancelled of a reload reply, -1 when it is not an ok reply.
int cancelled_of(const std::string& reply) {
  auto p = payload_of(reply);
  if (!p.IsObject() || !p.HasMember("ok") || !p["ok"].IsBool() || !p["ok"].GetBool() ||
      !p.HasMember("approvals_cancelled") || !p["approvals_cancelled"].IsInt()) {
    return -1;
  }
  return p["approvals_cancelled"].GetInt();
}

}  // namespace

TEST_CASE(
    "PostgreSQL: every daemon reloads its token file; a revoked token's approvals are "
    "cancelled once",
    "[server][approvals][postgres][revoke]") {
  TempDir dir;
  const std::string conninfo = fresh_database("revoke");
  Config a_config = fleet_config(dir, "daemon-a", conninfo);
  Config b_config = fleet_config(dir, "daemon-b", conninfo);
  RunningDaemon a(a_config);
  REQUIRE(a.ok());
  RunningDaemon b(b_config);
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice), alice2(a.address(), kAlice2);
  Party bob_on_b(b.address(), t.bob);

  // On A: one approval alice waits for, one she does not, one scoped grant; and one of her
  // other token.
  alice.send(make_request("w", "decide",
                          "\"proposal\":" + shell_action("touch waited.txt") + ",\"wait_s\":60"));
  auto event = parse(alice.read());
  INFO(to_json_text(event));
  REQUIRE(str(event["payload"], "event") == "approval-required");
  const ApprovalRef waited = approval_ref(event["payload"]["approval"]);
  Party alice_more(a.address(), t.alice);
  auto asked = [](Party& agent, const std::string& command) {
    auto p = payload_of(agent.call(decide_request("q", shell_action(command))));
    REQUIRE(str(p["decision"], "outcome") == "approval-required");
    return approval_ref(p["approval"]);
  };
  const ApprovalRef other = asked(alice_more, "touch other.txt");
  const ApprovalRef scoped = asked(alice_more, "touch scoped.txt");
  REQUIRE(error_code(bob_on_b.call(approve_request(scoped, ",\"scope_minutes\":30"))) == "");
  const ApprovalRef kept = asked(alice2, "touch kept.txt");
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped.txt")) == "approve");

  // Both daemons get the new token file and reload at once.
  dir.write("tokens-daemon-a", tokens_text(false), 0600);
  dir.write("tokens-daemon-b", tokens_text(false), 0600);
  std::string reply_a, reply_b;
  std::thread reload_a(
      [&] { reply_a = call_on_thread(a.address(), t.admin, make_request("r", "reload")); });
  std::thread reload_b(
      [&] { reply_b = call_on_thread(b.address(), t.admin, make_request("r", "reload")); });
  reload_a.join();
  reload_b.join();
  INFO(reply_a << "\n" << reply_b);
  REQUIRE(cancelled_of(reply_a) >= 0);
  REQUIRE(cancelled_of(reply_b) >= 0);
  // Two pending approvals of the revoked token, each cancelled by exactly one daemon.
  CHECK(cancelled_of(reply_a) + cancelled_of(reply_b) == 2);
  CHECK(revoke_pg_approval_records(a_config.state_dir + "/audit.jsonl", "denied", "warden") +
            revoke_pg_approval_records(b_config.state_dir + "/audit.jsonl", "denied", "warden") ==
        2);

  // Approving them on either daemon: closed.
  Party carol_on_a(a.address(), t.carol);
  CHECK(error_code(bob_on_b.call(approve_request(waited))) == err::kApprovalClosed);
  CHECK(error_code(carol_on_a.call(approve_request(other))) == err::kApprovalClosed);
  // The waiting decide hears a reject.
  std::string answer = alice.read(30000ms);
  INFO(answer);
  CHECK(reply_id(answer) == "w");
  CHECK(str(payload_of(answer)["decision"], "outcome") == "reject");
  // The revoked token's grant ended; the other token's approval is still pending and
  // answerable.
  CHECK(outcome_of_decide(alice2, shell_action("touch scoped.txt")) == "approval-required");
  CHECK(error_code(bob_on_b.call(approve_request(kept))) == "");

  // Reloading again cancels nothing more anywhere.
  Party admin_a(a.address(), t.admin), admin_b(b.address(), t.admin);
  CHECK(cancelled_of(admin_a.call(make_request("r2", "reload"))) == 0);
  CHECK(cancelled_of(admin_b.call(make_request("r2", "reload"))) == 0);
  CHECK(revoke_pg_approval_records(a_config.state_dir + "/audit.jsonl", "denied", "warden") +
            revoke_pg_approval_records(b_config.state_dir + "/audit.jsonl", "denied", "warden") ==
        2);
}
