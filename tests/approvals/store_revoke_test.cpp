// What an approval grants and which token asked for it, against both backends (SQLite and a
// real PostgreSQL server): grants are stored and read back, and bound into the digest an
// approver answers with; cancel_requester closes one token's pending approvals (exactly once,
// however many callers race) and ends the grants its approvals left, leaving other tokens'
// alone; stores made before these columns open and gain them.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "approvals/store.h"
#include "tests/approvals/store_backend.h"

using namespace warden::approvals;
using namespace warden::approvals::testing;

namespace {

const CapabilityGrant kShell{"shell-syntax", "build-pipelines", "make | tee is how we build"};

NewApproval asked_with(const std::string& command, const std::string& token_id,
                       std::vector<CapabilityGrant> grants = {}) {
  NewApproval n = request();
  n.action_json = R"({"target":"shell","action":"run","payload":{"command":")" + command + "\"}}";
  n.proposal_json = n.action_json;
  n.requester_token_id = token_id;
  n.grants = std::move(grants);
  return n;
}

Grant grant_of(const Approval& a, const std::string& key) {
  Grant g;
  g.approval_id = a.id;
  g.principal = a.principal;
  g.session = a.session;
  g.action_hash = key;
  g.expires_ms = kNow + kHour;
  g.uses_left = 0;
  g.approver = "bob";
  return g;
}

}  // namespace

TEST_CASE("grants are stored, shown and bound into the approval's digest",
          "[approvals][grants][digest]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created plain = store->create(asked_with("make", "t1"));
  CHECK(plain.approval.grants.empty());
  CHECK(plain.approval.digest == plain.approval.action_hash);

  Created c = store->create(asked_with("make | tee log", "t1", {kShell}));
  CHECK(c.approval.digest == answer_digest(c.approval.action_hash, {kShell}));
  CHECK(c.approval.digest != c.approval.action_hash);
  auto a = store->get(c.approval.id);
  REQUIRE(a);
  CHECK(a->grants == std::vector<CapabilityGrant>{kShell});
  CHECK(a->digest == c.approval.digest);
  CHECK(a->requester_token_id == "t1");
  auto listed = store->list(Filter{});
  REQUIRE(listed.size() == 2);
  for (const Approval& l : listed) {
    CHECK(l.grants == (l.id == c.approval.id ? std::vector<CapabilityGrant>{kShell}
                                             : std::vector<CapabilityGrant>{}));
  }

  // The action's digest alone, or one over other grants, approves nothing.
  CHECK(store->approve(a->id, a->action_hash, "bob", "", kNow).result ==
        ApproveResult::DigestMismatch);
  CapabilityGrant wider = kShell;
  wider.capability = "private-network";
  CHECK(store->approve(a->id, answer_digest(a->action_hash, {kShell, wider}), "bob", "", kNow)
            .result == ApproveResult::DigestMismatch);
  CHECK(store->get(a->id)->votes.empty());
  CHECK(store->approve(a->id, a->digest, "bob", "", kNow).result == ApproveResult::Claimed);
  // Granting nothing, the action's digest is the answer, as it always was.
  CHECK(store->approve(plain.approval.id, plain.approval.action_hash, "bob", "", kNow).result ==
        ApproveResult::Claimed);
}

TEST_CASE("grants that are not a list of capabilities are refused, never guessed",
          "[approvals][grants][errors]") {
  Backend b(BACKENDS);
  std::string id;
  {
    auto store = b.open();
    id = store->create(asked_with("make | tee log", "t1", {kShell})).approval.id;
  }
  exec_sql(b, "UPDATE approvals SET grants_json = '[{\"capability\":1}]'");
  auto store = b.open();
  CHECK_THROWS_AS(store->get(id), StoreError);
}

TEST_CASE("cancel_requester closes one token's pending approvals and ends its grants, once",
          "[approvals][revoke]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created pending1 = store->create(asked_with("touch a", "t1"));
  Created pending2 = store->create(asked_with("touch b", "t1"));
  Created claimed = store->create(asked_with("touch c", "t1"));
  Created granted = store->create(asked_with("touch d", "t1"));
  Created other_token = store->create(asked_with("touch e", "t2"));
  Created no_token = store->create(asked_with("touch f", ""));
  NewApproval bob_asked = asked_with("touch g", "t1");
  bob_asked.principal = "dave";  // the same token id under another principal
  Created other_principal = store->create(bob_asked);
  REQUIRE(store->approve(claimed.approval.id, claimed.approval.digest, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  REQUIRE(store->approve(granted.approval.id, granted.approval.digest, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  REQUIRE(store->finish(granted.approval.id, Status::Executed, "{}", kNow));
  store->add_grant(grant_of(granted.approval, "key-d"));
  REQUIRE(store->approve(other_token.approval.id, other_token.approval.digest, "bob", "", kNow)
              .result == ApproveResult::Claimed);
  REQUIRE(store->finish(other_token.approval.id, Status::Executed, "{}", kNow));
  store->add_grant(grant_of(other_token.approval, "key-e"));

  auto open = store->open_requesters(kNow);
  CHECK(open == std::vector<TokenRequester>{{"t1", "alice"}, {"t1", "dave"}, {"t2", "alice"}});

  std::vector<Approval> cancelled =
      store->cancel_requester("t1", "alice", "warden", "the token was revoked", kNow + 5);
  std::vector<std::string> ids;
  for (const auto& a : cancelled) ids.push_back(a.id);
  std::sort(ids.begin(), ids.end());
  std::vector<std::string> expected{pending1.approval.id, pending2.approval.id};
  std::sort(expected.begin(), expected.end());
  CHECK(ids == expected);
  for (const auto& a : cancelled) {
    CHECK(a.status == Status::Denied);
    CHECK(a.closed_by == "warden");
    CHECK(a.close_note == "the token was revoked");
    CHECK(a.closed_ms == kNow + 5);
  }
  // A claimed approval is being carried out: not this call's to close.
  CHECK(store->get(claimed.approval.id)->status == Status::Approved);
  // Its grant ended; the other token's did not.
  CHECK_FALSE(store->use_grant("alice", "s1", "key-d", kNow + 10));
  CHECK(store->use_grant("alice", "s1", "key-e", kNow + 10));
  CHECK(store->get(other_token.approval.id)->status == Status::Executed);
  CHECK(store->get(no_token.approval.id)->status == Status::Pending);
  CHECK(store->get(other_principal.approval.id)->status == Status::Pending);
  // Idempotent: nothing more to cancel, nothing returned twice.
  CHECK(store->cancel_requester("t1", "alice", "warden", "again", kNow + 20).empty());
  CHECK(store->get(pending1.approval.id)->close_note == "the token was revoked");
  // An empty token id names no requester.
  CHECK(store->cancel_requester("", "alice", "warden", "none", kNow + 20).empty());
  CHECK(store->get(no_token.approval.id)->status == Status::Pending);
  CHECK(store->open_requesters(kNow) ==
        std::vector<TokenRequester>{{"t1", "dave"}, {"t2", "alice"}});
  // A cancelled approval cannot be approved.
  CHECK(store->approve(pending1.approval.id, pending1.approval.digest, "bob", "", kNow).result ==
        ApproveResult::Closed);
}

TEST_CASE("cancel_requester raced by several daemons returns each approval once",
          "[approvals][revoke][race]") {
  Backend b(BACKENDS);
  constexpr int kApprovals = 12;
  constexpr int kDaemons = 4;
  {
    auto store = b.open();
    for (int i = 0; i < kApprovals; ++i)
      store->create(asked_with("touch " + std::to_string(i), "t1"));
  }
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kDaemons; ++i) stores.push_back(b.open());
  std::vector<std::vector<std::string>> seen(kDaemons);
  std::vector<std::string> errors(kDaemons);
  std::vector<std::thread> threads;
  for (int i = 0; i < kDaemons; ++i) {
    threads.emplace_back([&, i] {
      try {
        for (const auto& a :
             stores[i]->cancel_requester("t1", "alice", "warden", "revoked", kNow)) {
          seen[i].push_back(a.id);
        }
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> all;
  for (int i = 0; i < kDaemons; ++i) {
    INFO(errors[i]);
    CHECK(errors[i].empty());
    all.insert(all.end(), seen[i].begin(), seen[i].end());
  }
  std::sort(all.begin(), all.end());
  CHECK(all.size() == kApprovals);
  CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
}

TEST_CASE("a store made before grants and requester tokens opens and gains the columns",
          "[approvals][grants]") {
  Backend b(BACKENDS);
  std::string id, hash;
  {
    auto store = b.open();
    Created c = store->create(asked_with("make", ""));
    id = c.approval.id;
    hash = c.approval.action_hash;
  }
  exec_sql(b, "ALTER TABLE approvals DROP COLUMN grants_json");
  exec_sql(b, "ALTER TABLE approvals DROP COLUMN requester_token_id");
  auto store = b.open();
  auto a = store->get(id);
  REQUIRE(a);
  CHECK(a->grants.empty());
  CHECK(a->requester_token_id.empty());
  CHECK(a->digest == hash);
  CHECK(store->approve(id, hash, "bob", "", kNow).result == ApproveResult::Claimed);
  Created c = store->create(asked_with("make | tee log", "t9", {kShell}));
  CHECK(store->get(c.approval.id)->grants == std::vector<CapabilityGrant>{kShell});
}
