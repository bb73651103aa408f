// An approval flood, on both backends: one principal's pending approvals are capped in the
// transaction that inserts (also when several daemons race on one store), listings page
// through thousands of rows by cursor with every filter, and prune deletes closed approvals
// past their retention (with their votes) and the grants that ended, never a pending one.
#include <libpq-fe.h>
#include <sqlite3.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "approvals/store.h"
#include "tests/approvals/store_backend.h"

using namespace warden::approvals;
using namespace warden::approvals::testing;

namespace {

constexpr std::int64_t kDay = 24 * kHour;

// How many rows `sql` (SELECT count(*) …, no parameters) counts in the backend's tables.
std::int64_t count_rows(const Backend& b, const std::string& sql) {
  if (b.kind() == "sqlite") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(b.location().c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    sqlite3_stmt* s = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
    REQUIRE(sqlite3_step(s) == SQLITE_ROW);
    const std::int64_t n = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return n;
  }
  PGconn* c = PQconnectdb(b.location().c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, sql.c_str());
  REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
  const std::int64_t n = std::stoll(PQgetvalue(r, 0, 0));
  PQclear(r);
  PQfinish(c);
  return n;
}

// Every approval `f` matches, a page of `page` at a time, each page starting after the last.
std::vector<Approval> all_pages(Store& store, Filter f, std::size_t page, int* pages) {
  std::vector<Approval> out;
  f.limit = page;
  *pages = 0;
  for (;;) {
    std::vector<Approval> got = store.list(f);
    ++*pages;
    REQUIRE(got.size() <= page);
    for (auto& a : got) out.push_back(std::move(a));
    if (got.size() < page) return out;
    f.after = Cursor{out.back().created_ms, out.back().id};
  }
}

}  // namespace

TEST_CASE("one principal's pending approvals are capped; nothing is stored past the cap",
          "[approvals][flood]") {
  Backend b(BACKENDS);
  auto store = b.open();
  auto capped = [](std::string principal, std::int64_t created) {
    NewApproval n = request(std::move(principal));
    n.max_pending = 3;
    n.created_ms = created;
    n.expires_ms = created + kHour;
    return n;
  };
  std::vector<Created> alice;
  for (int i = 0; i < 3; ++i) alice.push_back(store->create(capped("alice", kNow + i)));
  try {
    store->create(capped("alice", kNow + 10));
    FAIL("the fourth pending approval of alice was stored");
  } catch (const PendingLimit& e) {
    CHECK(e.pending == 3);
    CHECK(e.limit == 3);
  }
  CHECK(count_rows(b, "SELECT count(*) FROM approvals WHERE principal = 'alice'") == 3);
  // Another principal is not affected.
  CHECK_NOTHROW(store->create(capped("bob", kNow + 11)));
  // No cap asked for: none applies.
  CHECK_NOTHROW(store->create(request("alice")));
  CHECK(count_rows(b, "SELECT count(*) FROM approvals WHERE principal = 'alice'") == 4);
  // Answered ones free their place...
  REQUIRE(store->deny(alice[0].approval.id, "ops", "", kNow + 20).result == DenyResult::Denied);
  REQUIRE(store->deny(alice[1].approval.id, "ops", "", kNow + 20).result == DenyResult::Denied);
  CHECK_NOTHROW(store->create(capped("alice", kNow + 30)));
  CHECK_THROWS_AS(store->create(capped("alice", kNow + 31)), PendingLimit);
  // ... and so do ones past their expiry, before any sweep moved them.
  CHECK_NOTHROW(store->create(capped("alice", kNow + 2 * kHour)));
}

TEST_CASE("daemons racing to create for one principal never pass the cap",
          "[approvals][flood][race]") {
  Backend b(BACKENDS);
  b.open();  // the schema
  constexpr int kStores = 4, kEach = 10, kCap = 7;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kStores; ++i) stores.push_back(b.open());
  // What each thread saw, checked after they joined: created, refused at the cap, other errors.
  std::vector<std::tuple<int, int, std::string>> seen(kStores);
  std::vector<std::thread> threads;
  for (int i = 0; i < kStores; ++i) {
    threads.emplace_back([&, i] {
      auto& [created, limited, error] = seen[static_cast<std::size_t>(i)];
      for (int k = 0; k < kEach; ++k) {
        NewApproval n = request("alice");
        n.max_pending = kCap;
        try {
          stores[static_cast<std::size_t>(i)]->create(n);
          ++created;
        } catch (const PendingLimit&) {
          ++limited;
        } catch (const std::exception& e) {
          error = e.what();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  int created = 0, limited = 0;
  for (const auto& [c, l, error] : seen) {
    CHECK(error == "");
    created += c;
    limited += l;
  }
  CHECK(created == kCap);
  CHECK(limited == kStores * kEach - kCap);
  CHECK(count_rows(b, "SELECT count(*) FROM approvals WHERE status = 'pending'") == kCap);
}

TEST_CASE("listing pages: every approval once, in order, with every filter", "[approvals][flood]") {
  Backend b(BACKENDS);
  auto store = b.open();
  std::vector<std::string> every, by_agent, by_rule, by_session;
  for (int i = 0; i < 250; ++i) {
    // Three at a time share a millisecond: the id orders them.
    NewApproval n = request("alice", i % 5 == 0 ? "s-five" : "s1", i % 3 == 0 ? "codex" : "claude",
                            i % 4 == 0 ? std::vector<std::string>{"ask-push", "ask-rm"}
                                       : std::vector<std::string>{"ask-push-force"});
    n.created_ms = kNow + i / 3;
    Created c = store->create(n);
    every.push_back(c.approval.id);
    if (i % 3 == 0) by_agent.push_back(c.approval.id);
    if (i % 4 == 0) by_rule.push_back(c.approval.id);
    if (i % 5 == 0) by_session.push_back(c.approval.id);
  }
  // A closed one is not pending.
  NewApproval closed = request("alice");
  closed.created_ms = kNow + 1;
  REQUIRE(store->deny(store->create(closed).approval.id, "ops", "", kNow + 2).result ==
          DenyResult::Denied);

  Filter f;
  f.now_ms = kNow + kHour;
  int pages = 0;
  std::vector<Approval> listed = all_pages(*store, f, 40, &pages);
  CHECK(pages == 7);  // 6 full pages of 40, then 10
  REQUIRE(listed.size() == 250);
  const std::vector<std::string> listed_ids = ids(listed);
  const std::set<std::string> distinct(listed_ids.begin(), listed_ids.end());
  CHECK(distinct.size() == 250);
  CHECK(std::set<std::string>(every.begin(), every.end()) == distinct);
  CHECK(std::is_sorted(listed.begin(), listed.end(), [](const Approval& x, const Approval& y) {
    return std::tie(x.created_ms, x.id) < std::tie(y.created_ms, y.id);
  }));

  auto same = [](std::vector<std::string> want, const std::vector<Approval>& got) {
    std::vector<std::string> g = ids(got);
    std::sort(want.begin(), want.end());
    std::sort(g.begin(), g.end());
    return want == g && std::set<std::string>(g.begin(), g.end()).size() == g.size();
  };
  Filter agent = f;
  agent.agent = "codex";
  CHECK(same(by_agent, all_pages(*store, agent, 7, &pages)));
  // "ask-push" matches only that rule, not ask-push-force.
  Filter rule = f;
  rule.rule = "ask-push";
  CHECK(same(by_rule, all_pages(*store, rule, 9, &pages)));
  rule.rule = "ask";
  CHECK(store->list(rule).empty());
  Filter session = f;
  session.session = "s-five";
  session.rule = "ask-push";
  std::vector<std::string> both;
  for (std::size_t i = 0; i < 250; i += 20) both.push_back(every[i]);  // i % 4 and i % 5
  CHECK(same(both, all_pages(*store, session, 3, &pages)));
  Filter age = f;
  age.min_age_ms = kHour - 40;  // created at or before kNow + 40: the first 123
  CHECK(all_pages(*store, age, 50, &pages).size() == 123);
  Filter any = f;
  any.status.reset();
  CHECK(all_pages(*store, any, 100, &pages).size() == 251);
}

TEST_CASE("prune deletes closed approvals past their retention and grants that ended",
          "[approvals][flood]") {
  Backend b(BACKENDS);
  auto store = b.open();
  const std::int64_t now = kNow + 40 * kDay;
  const std::int64_t cutoff = now - 30 * kDay;
  auto at = [](std::int64_t created, std::string principal = "alice") {
    NewApproval n = request(std::move(principal));
    n.created_ms = created;
    n.expires_ms = created + kHour;
    return n;
  };
  // Closed 40 days ago: denied (with a vote on another of two approvers), expired, executed.
  NewApproval two = at(kNow);
  two.approvers_needed = 2;
  Created old_denied = store->create(two);
  REQUIRE(
      store->approve(old_denied.approval.id, old_denied.approval.action_hash, "bob", "", kNow + 1)
          .result == ApproveResult::NeedMore);
  REQUIRE(store->deny(old_denied.approval.id, "carol", "", kNow + 2).result == DenyResult::Denied);
  Created old_expired = store->create(at(kNow));
  REQUIRE(store->expire_due(kNow + 2 * kHour).size() == 1);
  Created old_executed = store->create(at(kNow));
  REQUIRE(store
              ->approve(old_executed.approval.id, old_executed.approval.action_hash, "bob", "",
                        kNow + 5)
              .result == ApproveResult::Claimed);
  REQUIRE(store->finish(old_executed.approval.id, Status::Executed, "{}", kNow + 6));
  // Its grant: used up, so it ended.
  store->add_grant(
      Grant{old_executed.approval.id, "alice", "s1", "sha256:x", kNow + kHour, 1, "bob"});
  REQUIRE(store->use_grant("alice", "s1", "sha256:x", kNow + 7));
  // Closed 40 days ago, but a grant still live names it: kept while it lives.
  Created old_granted = store->create(at(kNow));
  REQUIRE(
      store->approve(old_granted.approval.id, old_granted.approval.action_hash, "bob", "", kNow + 5)
          .result == ApproveResult::Claimed);
  REQUIRE(store->finish(old_granted.approval.id, Status::Executed, "{}", kNow + 6));
  store->add_grant(
      Grant{old_granted.approval.id, "alice", "s9", "sha256:live", now + kHour, 0, "bob"});
  // Claimed 40 days ago and never finished: not closed, never pruned.
  Created old_claimed = store->create(at(kNow));
  REQUIRE(
      store->approve(old_claimed.approval.id, old_claimed.approval.action_hash, "bob", "", kNow + 5)
          .result == ApproveResult::Claimed);
  // Pending since 40 days ago with a long expiry: pending is never pruned.
  NewApproval long_lived = at(kNow);
  long_lived.expires_ms = now + kDay;
  Created old_pending = store->create(long_lived);
  // Closed a day ago: kept.
  Created recent = store->create(at(now - kDay));
  REQUIRE(store->deny(recent.approval.id, "ops", "", now - kDay + 1).result == DenyResult::Denied);
  // A grant that expired (of the recent one).
  store->add_grant(Grant{recent.approval.id, "alice", "s1", "sha256:gone", now - 10, 0, "bob"});

  Pruned pruned = store->prune(cutoff, now);
  CHECK(pruned.approvals == 3);
  CHECK(pruned.grants == 2);
  for (const Created* gone : {&old_denied, &old_expired, &old_executed}) {
    CHECK_FALSE(store->get(gone->approval.id).has_value());
    CHECK_FALSE(store->find_by_token(gone->token).has_value());
  }
  CHECK(count_rows(b, "SELECT count(*) FROM approval_votes WHERE approval_id = '" +
                          old_denied.approval.id + "'") == 0);
  for (const Created* kept : {&old_granted, &old_claimed, &old_pending, &recent}) {
    CHECK(store->get(kept->approval.id).has_value());
  }
  CHECK(store->get(old_pending.approval.id)->status == Status::Pending);
  CHECK(count_rows(b, "SELECT count(*) FROM approval_grants") == 1);
  CHECK(store->use_grant("alice", "s9", "sha256:live", now).has_value());
  // Nothing more is due.
  Pruned again = store->prune(cutoff, now);
  CHECK(again.approvals == 0);
  CHECK(again.grants == 0);
  // Once the grant ended, its approval goes too.
  Pruned later = store->prune(cutoff, now + 2 * kHour);
  CHECK(later.grants == 1);
  CHECK(later.approvals == 1);
  CHECK_FALSE(store->get(old_granted.approval.id).has_value());
}

TEST_CASE("daemons pruning one store at once delete each row once", "[approvals][flood][race]") {
  Backend b(BACKENDS);
  constexpr int kRows = 1300;  // more than two batches
  {
    auto store = b.open();
    for (int i = 0; i < kRows; ++i) {
      NewApproval n = request("alice");
      n.created_ms = kNow + i;
      n.expires_ms = kNow + i + 1;
      store->create(n);
    }
    REQUIRE(store->expire_due(kNow + kRows + 1).size() == kRows);
    Created kept = store->create(request("bob"));
    (void)kept;
  }
  constexpr int kDaemons = 3;
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < kDaemons; ++i) stores.push_back(b.open());
  std::vector<std::pair<std::int64_t, std::string>> seen(kDaemons);
  std::vector<std::thread> threads;
  for (int i = 0; i < kDaemons; ++i) {
    threads.emplace_back([&, i] {
      try {
        seen[static_cast<std::size_t>(i)].first = stores[static_cast<std::size_t>(i)]
                                                      ->prune(kNow + kRows + 10, kNow + kRows + 10)
                                                      .approvals;
      } catch (const std::exception& e) {
        seen[static_cast<std::size_t>(i)].second = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::int64_t total = 0;
  for (const auto& [n, error] : seen) {
    CHECK(error == "");
    total += n;
  }
  CHECK(total == kRows);
  CHECK(count_rows(b, "SELECT count(*) FROM approvals") == 1);
}
