// Approvals interrupted after their claim (the daemon carrying them out stopped before it
// recorded what happened): recover_claimed refuses those of the restarting daemon and those
// claimed longer ago than a bound, ends the grants they left, and returns each exactly once;
// against both backends (SQLite and a real PostgreSQL server).
#include <catch2/catch.hpp>
#include <set>

#include "approvals/store.h"
#include "tests/approvals/store_backend.h"

using namespace warden::approvals;
using namespace warden::approvals::testing;

namespace {

const char* const kResult = R"({"error_code":"E_APPROVAL_REFUSED","reason":"interrupted"})";

// A claimed approval of `command`, by `daemon` at `at_ms`.
Created claimed(Store& store, const std::string& command, const std::string& daemon,
                std::int64_t at_ms) {
  NewApproval n = request();
  n.action_json = R"({"target":"shell","payload":{"command":")" + command + "\"}}";
  n.created_ms = at_ms;
  n.expires_ms = at_ms + 10 * kHour;
  Created c = store.create(n);
  REQUIRE(
      store.approve(c.approval.id, c.approval.action_hash, "bob", "", at_ms, 0, daemon).result ==
      ApproveResult::Claimed);
  return c;
}

}  // namespace

TEST_CASE("recover_claimed: this daemon's claims and old claims are refused, once",
          "[approvals][recover]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created mine = claimed(*store, "touch mine", "daemon-a", kNow - 1000);
  Created recent = claimed(*store, "touch recent", "daemon-b", kNow - 1000);
  Created old = claimed(*store, "touch old", "daemon-b", kNow - 2 * kHour);
  Created legacy = claimed(*store, "touch legacy", "", kNow - 1000);
  // The interrupted claim had already left its grant.
  store->add_grant(Grant{mine.approval.id, "alice", "s1", "key-mine", kNow + kHour, 0, "bob"});
  REQUIRE(store->use_grant("alice", "s1", "key-mine", kNow));
  // A finished approval is not touched.
  Created done = claimed(*store, "touch done", "daemon-a", kNow - 1000);
  REQUIRE(store->finish(done.approval.id, Status::Executed, "{}", kNow));

  auto recovered = store->recover_claimed("daemon-a", kNow - kHour, kResult, kNow);
  std::set<std::string> ids;
  for (const auto& a : recovered) {
    ids.insert(a.id);
    CHECK(a.status == Status::Refused);
    CHECK(a.result_json == kResult);
  }
  CHECK(ids == std::set<std::string>{mine.approval.id, old.approval.id});
  CHECK(store->get(recent.approval.id)->status == Status::Approved);
  CHECK(store->get(legacy.approval.id)->status == Status::Approved);
  CHECK(store->get(done.approval.id)->status == Status::Executed);
  // Its grant ended with it.
  CHECK_FALSE(store->use_grant("alice", "s1", "key-mine", kNow));
  // Exactly once: a second recovery (another daemon of the fleet starting) finds nothing;
  // an empty daemon id matches no claim by name.
  CHECK(store->recover_claimed("daemon-a", kNow - kHour, kResult, kNow).empty());
  CHECK(store->recover_claimed("", kNow - kHour, kResult, kNow).empty());
  // Once old enough, anyone's claim is recovered.
  auto later = store->recover_claimed("daemon-c", kNow + kHour, kResult, kNow + 2 * kHour);
  CHECK(later.size() == 2);
  CHECK(store->get(recent.approval.id)->status == Status::Refused);
  CHECK(store->get(legacy.approval.id)->status == Status::Refused);
  // A refused approval stays closed.
  CHECK(store->finish(mine.approval.id, Status::Executed, "{}", kNow) == false);
}
