// A fleet: two daemons sharing one PostgreSQL approvals store (a real server from Debian's
// packages, started by the test on a loopback port). An approval created on one daemon is
// listed and answered on the other; the requester waiting on the first daemon gets the answer
// (LISTEN/NOTIFY); approvers racing on both daemons: exactly one approves.
#include <atomic>
#include <catch2/catch.hpp>
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

std::string pg_outcome_of(const std::string& reply) {
  auto p = payload_of(reply);
  return p.IsObject() && p.HasMember("decision") ? str(p["decision"], "outcome") : "<none>";
}

}  // namespace

TEST_CASE("PostgreSQL: two daemons share approvals; the answer reaches the requester's daemon",
          "[server][approvals][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("fleet");
  RunningDaemon a(approvals_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(approvals_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice);
  Party bob_on_b(b.address(), t.bob);

  // Created on A, listed on B.
  alice.send(make_request("w", "decide",
                          "\"proposal\":" + shell_action("touch fleet.txt") + ",\"wait_s\":60"));
  auto event = parse(alice.read());
  INFO(to_json_text(event));
  REQUIRE(str(event["payload"], "event") == "approval-required");
  const ApprovalRef token = approval_ref(event["payload"]["approval"]);
  const std::string id = token.id;
  auto list = payload_of(bob_on_b.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(str(list["approvals"][0], "id") == id);
  CHECK(str(list["approvals"][0], "daemon_id") == "daemon-a");

  // Approved on B; A's waiting client hears it.
  std::string ok = bob_on_b.call(approve_request(token));
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  CHECK(str(payload_of(ok), "status") == "granted");
  std::string reply = alice.read(30000ms);
  INFO(reply);
  CHECK(pg_outcome_of(reply) == "approve");

  // Self-approval and reuse are refused on either daemon.
  Party alice_approver(b.address(), t.alice_approver);
  Party carol_on_a(a.address(), t.carol);
  CHECK(error_code(carol_on_a.call(approve_request(token))) == err::kApprovalClosed);
  alice.send(make_request("w2", "decide", "\"proposal\":" + shell_action("touch other.txt")));
  std::string second = alice.read();
  const ApprovalRef token2 = approval_ref(payload_of(second)["approval"]);
  CHECK(error_code(alice_approver.call(approve_request(token2))) == err::kSelfApproval);
}

TEST_CASE("PostgreSQL: approvers racing on two daemons, exactly one approves",
          "[server][approvals][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("fleet");
  RunningDaemon a(approvals_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(approvals_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice);
  for (int round = 0; round < 8; ++round) {
    std::string reply = alice.call(
        decide_request("d", shell_action("touch race" + std::to_string(round) + ".txt")));
    const ApprovalRef token = approval_ref(payload_of(reply)["approval"]);
    REQUIRE(!token.hash.empty());
    std::atomic<int> ok{0}, refused{0};
    std::vector<std::thread> racers;
    int i = 0;
    for (const std::string& who : {t.bob, t.carol, t.carol, t.bob}) {
      const std::string address = (i++ % 2 == 0) ? a.address() : b.address();
      racers.emplace_back([&, who, address] {
        std::string code = reply_code(call_on_thread(address, who, approve_request(token)));
        if (code.empty()) ++ok;
        if (code == err::kApprovalClosed || code == err::kAlreadyApproved) ++refused;
      });
    }
    for (auto& r : racers) r.join();
    CHECK(ok.load() == 1);
    CHECK(refused.load() == 3);
  }
}

TEST_CASE("PostgreSQL: an unreachable store stops the daemon at startup",
          "[server][approvals][postgres]") {
  TempDir dir;
  RunningDaemon d(
      approvals_config(dir, "state", "host=127.0.0.1 port=1 dbname=none connect_timeout=2"));
  CHECK_FALSE(d.ok());
  // The session memory, kept in the same database, is opened first (with the workers).
  CHECK(d.start_result().step == "workers");
  CHECK(d.start_result().exit_code == 4);
}

TEST_CASE("PostgreSQL: across daemons, an approver's answer is bound to the action shown",
          "[server][approvals][postgres][digest]") {
  TempDir dir;
  const std::string conninfo = fresh_database("fleet");
  RunningDaemon a(approvals_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(approvals_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice);
  Party bob_on_b(b.address(), t.bob);
  auto ask = [&](const std::string& command) {
    return approval_ref(
        payload_of(alice.call(decide_request("d", shell_action(command))))["approval"]);
  };
  const ApprovalRef preview = ask("touch docs-preview.txt");
  const ApprovalRef drop = ask("touch drop-database.txt");
  // bob, on the other daemon, looked at the preview; handed the other id, nothing is approved.
  std::string swapped = bob_on_b.call(approve_request(ApprovalRef{drop.id, "", preview.hash}));
  INFO(swapped);
  CHECK(error_code(swapped) == err::kApprovalDigest);
  auto shown =
      payload_of(bob_on_b.call(make_request("s", "pending", "\"id\":" + json_string(drop.id))));
  REQUIRE(shown["approvals"].Size() == 1);
  CHECK(str(shown["approvals"][0], "status") == "pending");
  CHECK(shown["approvals"][0]["votes"].Size() == 0);
  CHECK(error_code(bob_on_b.call(approve_request(preview))) == "");
  CHECK(pg_outcome_of(alice.call(decide_request("r", shell_action("touch drop-database.txt")))) ==
        "approval-required");
}
