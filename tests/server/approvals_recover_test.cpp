// An approval claimed and never finished (the daemon carrying it out was killed between the
// claim and what followed) does not stay `approved` forever: as the daemon that claimed it
// starts again it is refused, exactly once, recorded in the audit log, its grant ended; a
// real daemon with the SQLite store.
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>

#include "approvals/store.h"
#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

int records(const std::string& log, const std::string& needle_a, const std::string& needle_b) {
  std::ifstream in(log);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    n += line.find(needle_a) != std::string::npos && line.find(needle_b) != std::string::npos;
  }
  return n;
}

std::int64_t recover_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("an approval interrupted after its claim is refused once as its daemon restarts",
          "[server][approvals][recover]") {
  TempDir dir;
  Config config = approvals_config(dir);
  fs::create_directories(config.state_dir);
  config.approvals.path = config.state_dir + "/approvals.db";
  const std::string log = config.state_dir + "/audit.jsonl";
  std::string stuck_id, other_id;
  std::string stuck_key;
  {
    // What the daemon had done when it was killed: alice's request stored, bob's approve
    // claimed on this daemon (and, for decide, its grant written), nothing after that.
    RunningDaemon d(config);
    REQUIRE(d.ok());
    ApprovalTokens t;
    Party alice(d.address(), t.alice);
    std::string reply = alice.call(decide_request("1", shell_action("touch stuck.txt")));
    stuck_id = str(payload_of(reply)["approval"], "id");
    reply = alice.call(decide_request("2", shell_action("touch other.txt")));
    other_id = str(payload_of(reply)["approval"], "id");
    REQUIRE(!stuck_id.empty());
  }
  {
    auto store = approvals::open_sqlite(config.approvals.path);
    auto stuck = store->get(stuck_id);
    REQUIRE(stuck);
    REQUIRE(store
                ->approve(stuck_id, stuck->action_hash, "bob", "", recover_now_ms(), 60,
                          config.audit.daemon_id)
                .result == approvals::ApproveResult::Claimed);
    // Another daemon's claim of a moment ago is its own business: not recovered here.
    auto other = store->get(other_id);
    REQUIRE(
        store->approve(other_id, other->action_hash, "carol", "", recover_now_ms(), 0, "daemon-b")
            .result == approvals::ApproveResult::Claimed);
  }
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  auto shown =
      payload_of(bob.call(make_request("s", "pending", "\"id\":" + json_string(stuck_id))));
  INFO(to_json_text(shown));
  REQUIRE(shown["approvals"].Size() == 1);
  const auto& a = shown["approvals"][0];
  CHECK(str(a, "status") == "refused");
  CHECK(str(a["result"], "error_code") == err::kApprovalRefused);
  CHECK(str(a["result"], "reason").find("interrupted") != std::string::npos);
  CHECK(str(payload_of(bob.call(
                make_request("s", "pending", "\"id\":" + json_string(other_id))))["approvals"][0],
            "status") == "approved");
  // Closed: it cannot be answered again, and it approves nothing.
  ApprovalRef ref{stuck_id, "", str(a, "action_hash")};
  CHECK(error_code(bob.call(approve_request(ref))) == err::kApprovalClosed);
  CHECK(outcome_of_decide(alice, shell_action("touch stuck.txt")) == "approval-required");
  d.stop();
  CHECK(records(log, "\"event\":\"refused\"", stuck_id) == 1);
  // Exactly once: starting again recovers nothing more.
  RunningDaemon again(config);
  REQUIRE(again.ok());
  again.stop();
  CHECK(records(log, "\"event\":\"refused\"", stuck_id) == 1);
  CHECK(records(log, "\"event\":\"refused\"", other_id) == 0);
}
