// An approver's vote is bound to the digest of the action they were shown, and each vote
// keeps the scope its approver asked for; against both backends (SQLite and a real
// PostgreSQL server).
#include <libpq-fe.h>
#include <sqlite3.h>

#include <catch2/catch.hpp>

#include "approvals/internal.h"
#include "approvals/store.h"
#include "tests/approvals/store_backend.h"

using namespace warden::approvals;
using namespace warden::approvals::testing;

namespace {

NewApproval of_command(const std::string& command, int approvers = 1) {
  NewApproval n = request();
  n.action_json = R"({"target":"shell","action":"run","payload":{"command":")" + command + "\"}}";
  n.proposal_json = n.action_json;
  n.approvers_needed = approvers;
  return n;
}

}  // namespace

TEST_CASE("approve: the digest an approver saw must be the action's; a token never approves",
          "[approvals][digest]") {
  Backend b(BACKENDS);
  auto store = b.open();
  // The agent holds two approvals: a harmless one it shows a person, and the one it wants.
  Created shown = store->create(of_command("make docs-preview"));
  Created wanted = store->create(of_command("deploy prod --drop-database"));
  REQUIRE(shown.approval.action_hash != wanted.approval.action_hash);

  // The approver looked at `shown` and answers with its digest, but under `wanted`'s id.
  auto swapped = store->approve(wanted.approval.id, shown.approval.action_hash, "bob", "", kNow);
  CHECK(swapped.result == ApproveResult::DigestMismatch);
  REQUIRE(swapped.approval);
  CHECK(swapped.approval->status == Status::Pending);
  CHECK(swapped.approval->votes.empty());  // nothing recorded
  // Neither a digest of another form nor the requester's token approves.
  CHECK(store->approve(wanted.approval.id, "", "bob", "", kNow).result ==
        ApproveResult::DigestMismatch);
  CHECK(store->approve(wanted.approval.id, wanted.token, "bob", "", kNow).result ==
        ApproveResult::DigestMismatch);
  CHECK(store->approve(wanted.token, wanted.approval.action_hash, "bob", "", kNow).result ==
        ApproveResult::NotFound);
  CHECK(store->get(wanted.approval.id)->status == Status::Pending);
  CHECK(store->get(wanted.approval.id)->votes.empty());

  // What was shown is approved by its own id and digest.
  auto ok = store->approve(shown.approval.id, shown.approval.action_hash, "bob", "", kNow);
  CHECK(ok.result == ApproveResult::Claimed);
  // A digest mismatch on a second vote of a two-approver approval records nothing either.
  Created two = store->create(of_command("chmod 600 x", 2));
  CHECK(store->approve(two.approval.id, two.approval.action_hash, "bob", "", kNow).result ==
        ApproveResult::NeedMore);
  CHECK(store->approve(two.approval.id, shown.approval.action_hash, "carol", "", kNow).result ==
        ApproveResult::DigestMismatch);
  CHECK(store->get(two.approval.id)->votes.size() == 1);
  CHECK(store->get(two.approval.id)->status == Status::Pending);
}

TEST_CASE("each vote keeps the scope its approver asked for", "[approvals][digest]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created c = store->create(of_command("chmod 600 y", 2));
  REQUIRE(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow, 1440).result ==
          ApproveResult::NeedMore);
  auto out = store->approve(c.approval.id, c.approval.action_hash, "carol", "", kNow + 1, 5);
  REQUIRE(out.result == ApproveResult::Claimed);
  REQUIRE(out.approval->votes.size() == 2);
  CHECK(out.approval->votes[0].scope_minutes == 1440);
  CHECK(out.approval->votes[1].scope_minutes == 5);
  Created one = store->create(of_command("chmod 600 z"));
  auto plain = store->approve(one.approval.id, one.approval.action_hash, "bob", "", kNow);
  REQUIRE(plain.result == ApproveResult::Claimed);
  CHECK(plain.approval->votes[0].scope_minutes == 0);
}

TEST_CASE("a store made before votes had a scope opens and gains the column",
          "[approvals][digest]") {
  Backend b(BACKENDS);
  std::string id, hash;
  {
    auto store = b.open();
    Created c = store->create(of_command("chmod 600 old", 2));
    id = c.approval.id;
    hash = c.approval.action_hash;
    REQUIRE(store->approve(id, hash, "bob", "", kNow).result == ApproveResult::NeedMore);
  }
  exec_sql(b, "ALTER TABLE approval_votes DROP COLUMN scope_minutes");
  auto store = b.open();
  auto a = store->get(id);
  REQUIRE(a);
  REQUIRE(a->votes.size() == 1);
  CHECK(a->votes[0].scope_minutes == 0);
  auto out = store->approve(id, hash, "carol", "", kNow, 30);
  REQUIRE(out.result == ApproveResult::Claimed);
  CHECK(out.approval->votes[1].scope_minutes == 30);
}

// The store's JSON columns are read with json::parse_stored (bindings/json.h): a row edited on
// disk with a NUL byte after the array (RapidJSON took it for the end) or a zero RapidJSON
// would misread is refused (grants: StoreError; groups and rules: no items). Strings read back
// as the store's writer wrote them, bytes that are not UTF-8 included.
TEST_CASE("store columns: a NUL or a misread zero in the JSON is refused", "[store]") {
  using namespace std::string_literals;
  const std::string grant = R"({"capability":"net","rule":"r","reason":"why"})";
  CHECK(detail::parse_grants("[" + grant + "]", "a1").size() == 1);
  CHECK(
      detail::parse_grants("[{\"capability\":\"n\",\"rule\":\"r\",\"reason\":\"w\xff\"}]", "a1")[0]
          .reason == "w\xff");
  for (const std::string& bad : {"[" + grant + "]\0[]"s, "[" + grant + "]\0"s}) {
    INFO(bad);
    try {
      detail::parse_grants(bad, "a1");
      FAIL("parse_grants read a column the shared parser refuses");
    } catch (const StoreError& e) {
      CHECK(std::string(e.what()) ==
            "approval store: the grants of a1 are not a list of capabilities");
    }
  }
  CHECK(detail::parse_json_array(R"(["dev","ops"])") == std::vector<std::string>{"dev", "ops"});
  CHECK(detail::parse_json_array("[\"dev\"]\0[\"root\"]"s).empty());
  CHECK(detail::parse_json_array("[\"dev\",0e66]").empty());
  CHECK(detail::parse_json_array("[\"d\xffv\"]") == std::vector<std::string>{"d\xffv"});
}
