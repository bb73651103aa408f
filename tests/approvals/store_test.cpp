// The approval store's semantics, run against both backends: SQLite in a temporary file and
// a real PostgreSQL server (one per test binary run, a fresh database per test case).
#include "approvals/store.h"

#include <libpq-fe.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/approvals/store_backend.h"

using namespace warden::approvals;
using namespace warden::approvals::testing;
namespace fs = std::filesystem;

namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Every row of every table as text (PostgreSQL).
std::string pg_dump_rows(const std::string& conninfo) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  std::string out;
  for (const char* sql : {"SELECT row_to_json(a)::text FROM approvals a",
                          "SELECT row_to_json(v)::text FROM approval_votes v",
                          "SELECT row_to_json(g)::text FROM approval_grants g"}) {
    PGresult* r = PQexec(c, sql);
    REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
    for (int i = 0; i < PQntuples(r); ++i) out += std::string(PQgetvalue(r, i, 0)) + "\n";
    PQclear(r);
  }
  PQfinish(c);
  return out;
}

// Collects notifications from a store thread.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> events;  // "kind:id"
  Listener listener() {
    return [this](std::string_view kind, std::string_view id) {
      std::lock_guard lock(mu);
      events.push_back(std::string(kind) + ":" + std::string(id));
      cv.notify_all();
    };
  }
  // Waits (bounded, generously) until `event` arrived.
  bool wait_for(const std::string& event) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, std::chrono::seconds(30), [&] {
      return std::find(events.begin(), events.end(), event) != events.end();
    });
  }
};

}  // namespace

TEST_CASE("the PostgreSQL test server starts and creates databases", "[approvals][pg]") {
  auto& server = pg_server();
  CHECK(server.port() > 0);
  std::string info = server.create_database("smoke_" + std::to_string(::getpid()));
  PGconn* c = PQconnectdb(info.c_str());
  CHECK(PQstatus(c) == CONNECTION_OK);
  PQfinish(c);
}

TEST_CASE("names, hashes and parsing", "[approvals]") {
  CHECK(action_hash("abc") ==
        "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (Status s : {Status::Pending, Status::Approved, Status::Denied, Status::Expired,
                   Status::Executed, Status::Refused}) {
    CHECK(parse_status(status_name(s)) == s);
  }
  CHECK_FALSE(parse_status("Pending").has_value());
  CHECK(approve_result_name(ApproveResult::Claimed) == "claimed");
}

TEST_CASE("create, get and list with filters", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  CHECK(store->kind() == b.kind());

  auto n1 = request("alice", "s1", "claude", {"ask-rm"});
  auto n2 = request("bob", "s2", "codex", {"ask-push", "ask-rm"});
  n2.created_ms = kNow + 1000;
  auto n3 = request("carol", "s3", "claude", {"ask-push"});
  n3.created_ms = kNow + 2000;
  n3.approvers_needed = 2;
  Created c1 = store->create(n1), c2 = store->create(n2), c3 = store->create(n3);

  SECTION("tokens and ids have their shapes") {
    for (const auto* c : {&c1, &c2, &c3}) {
      CHECK(c->token.rfind("wapr_", 0) == 0);
      CHECK(c->token.size() == 5 + 43);
      CHECK(c->token.find_first_not_of(
                "wapr_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") ==
            std::string::npos);
      CHECK(c->approval.id.rfind("apr_", 0) == 0);
      CHECK(c->approval.id.size() == 4 + 24);
      CHECK(c->approval.id.find_first_not_of("apr_0123456789abcdef") == std::string::npos);
    }
    CHECK(c1.token != c2.token);
    CHECK(c1.approval.id != c2.approval.id);
  }

  SECTION("get returns every field") {
    auto a = store->get(c1.approval.id);
    REQUIRE(a);
    CHECK(a->status == Status::Pending);
    CHECK(a->action_hash == action_hash(n1.action_json));
    CHECK(a->action_json == n1.action_json);
    CHECK(a->proposal_json == n1.proposal_json);
    CHECK(a->principal == "alice");
    CHECK(a->groups == std::vector<std::string>{"dev", "ops"});
    CHECK(a->session == "s1");
    CHECK(a->agent == "claude");
    CHECK(a->rules == std::vector<std::string>{"ask-rm"});
    CHECK(a->reason == n1.reason);
    CHECK(a->decision_id == "dec_1");
    CHECK(a->origin == "decide");
    CHECK(a->daemon_id == "host-1:1");
    CHECK(a->created_ms == kNow);
    CHECK(a->expires_ms == kNow + kHour);
    CHECK(a->approvers_needed == 1);
    CHECK(a->votes.empty());
    CHECK(a->closed_by.empty());
    CHECK(a->closed_ms == 0);
    CHECK(a->result_json.empty());
    CHECK_FALSE(store->get("apr_000000000000000000000000").has_value());
    CHECK(store->get(c3.approval.id)->approvers_needed == 2);
  }

  SECTION("find_by_token opens only its approval and changes nothing") {
    auto a = store->find_by_token(c2.token);
    REQUIRE(a);
    CHECK(a->id == c2.approval.id);
    CHECK(a->status == Status::Pending);
    CHECK_FALSE(store->find_by_token("wapr_nope").has_value());
    CHECK_FALSE(store->find_by_token(c2.approval.id).has_value());
  }

  SECTION("list filters, oldest first") {
    Filter f;
    f.now_ms = kNow + 5000;
    using V = std::vector<std::string>;
    const auto &i1 = c1.approval.id, &i2 = c2.approval.id, &i3 = c3.approval.id;
    CHECK(ids(store->list(f)) == V{i1, i2, i3});
    Filter agent = f;
    agent.agent = "claude";
    CHECK(ids(store->list(agent)) == V{i1, i3});
    Filter session = f;
    session.session = "s2";
    CHECK(ids(store->list(session)) == V{i2});
    Filter rule = f;
    rule.rule = "ask-push";
    CHECK(ids(store->list(rule)) == V{i2, i3});
    rule.rule = "ask";
    CHECK(store->list(rule).empty());
    Filter principal = f;
    principal.principal = "carol";
    CHECK(ids(store->list(principal)) == V{i3});
    Filter age = f;
    age.min_age_ms = 4000;  // created at or before kNow + 1000
    CHECK(ids(store->list(age)) == V{i1, i2});
    age.min_age_ms = 10000;
    CHECK(store->list(age).empty());
    Filter limit = f;
    limit.limit = 2;
    CHECK(ids(store->list(limit)) == V{i1, i2});

    REQUIRE(store->deny(c2.approval.id, "ops", "", kNow + 10).result == DenyResult::Denied);
    CHECK(ids(store->list(f)) == V{i1, i3});
    Filter denied = f;
    denied.status = Status::Denied;
    CHECK(ids(store->list(denied)) == V{i2});
    Filter any = f;
    any.status.reset();
    CHECK(ids(store->list(any)) == V{i1, i2, i3});
  }
}

TEST_CASE("the token is never stored, only its hash", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created c = store->create(request());
  store->add_grant(
      Grant{c.approval.id, "alice", "s1", c.approval.action_hash, kNow + kHour, 1, "bob"});
  REQUIRE(store->approve(c.approval.id, c.approval.action_hash, "bob", "ok", kNow).result ==
          ApproveResult::Claimed);
  const std::string secret = c.token.substr(5);  // without the "wapr_" prefix
  std::string everything;
  if (b.kind() == "sqlite") {
    for (const auto& entry : fs::directory_iterator(b.dir())) {
      everything += file_bytes(entry.path().string());
    }
  } else {
    everything = pg_dump_rows(b.location());
  }
  CHECK(everything.find(c.approval.id) != std::string::npos);  // the dump did see the rows
  CHECK(everything.find(secret) == std::string::npos);
  CHECK(everything.find(secret.substr(0, 20)) == std::string::npos);
}

TEST_CASE("a pending approval survives closing and reopening the store", "[approvals]") {
  Backend b(BACKENDS);
  Created c;
  {
    auto store = b.open();
    c = store->create(request());
  }
  auto store = b.open();
  auto a = store->find_by_token(c.token);
  REQUIRE(a);
  CHECK(a->id == c.approval.id);
  CHECK(a->status == Status::Pending);
  CHECK(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow).result ==
        ApproveResult::Claimed);
}

TEST_CASE("approve: claimed once, then closed; denied stays closed", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created c = store->create(request());

  SECTION("approve claims, reuse is closed") {
    auto out =
        store->approve(c.approval.id, c.approval.action_hash, "bob", "looks fine", kNow + 10);
    CHECK(out.result == ApproveResult::Claimed);
    REQUIRE(out.approval);
    CHECK(out.approval->status == Status::Approved);
    CHECK(out.approval->closed_ms == kNow + 10);
    REQUIRE(out.approval->votes.size() == 1);
    CHECK(out.approval->votes[0].approver == "bob");
    CHECK(out.approval->votes[0].note == "looks fine");
    CHECK(out.approval->votes[0].at_ms == kNow + 10);
    auto again = store->approve(c.approval.id, c.approval.action_hash, "carol", "", kNow + 20);
    CHECK(again.result == ApproveResult::Closed);
    REQUIRE(again.approval);
    CHECK(again.approval->status == Status::Approved);
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow + 20).result ==
          ApproveResult::Closed);
    CHECK(store->deny(c.token, "carol", "", kNow + 30).result == DenyResult::Closed);
  }
  SECTION("an unknown id is not found; a token never approves") {
    auto out =
        store->approve("apr_" + std::string(24, '0'), c.approval.action_hash, "bob", "", kNow);
    CHECK(out.result == ApproveResult::NotFound);
    CHECK_FALSE(out.approval);
    CHECK(store->approve(c.token, c.approval.action_hash, "bob", "", kNow).result ==
          ApproveResult::NotFound);
    CHECK(store->get(c.approval.id)->status == Status::Pending);
    CHECK(store->deny("apr_nope", "bob", "", kNow).result == DenyResult::NotFound);
  }
  SECTION("deny by token, then approve is closed") {
    auto d = store->deny(c.token, "bob", "no thanks", kNow + 5);
    CHECK(d.result == DenyResult::Denied);
    REQUIRE(d.approval);
    CHECK(d.approval->status == Status::Denied);
    CHECK(d.approval->closed_by == "bob");
    CHECK(d.approval->close_note == "no thanks");
    CHECK(d.approval->closed_ms == kNow + 5);
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "carol", "", kNow + 6).result ==
          ApproveResult::Closed);
    CHECK(store->deny(c.token, "carol", "", kNow + 6).result == DenyResult::Closed);
  }
  SECTION("deny by id; the requester may withdraw") {
    auto d = store->deny(c.approval.id, "alice", "withdrawn", kNow + 5);
    CHECK(d.result == DenyResult::Denied);
    CHECK(store->get(c.approval.id)->status == Status::Denied);
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow + 6).result ==
          ApproveResult::Closed);
  }
}

TEST_CASE("expiry: approve past expires_ms is Expired; expire_due moves each once", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  auto n = request();
  n.expires_ms = kNow + 1000;
  Created a = store->create(n), c = store->create(n), d = store->create(n);
  auto later = request();
  later.expires_ms = kNow + kHour;
  Created live = store->create(later);

  CHECK(store->expire_due(kNow + 999).empty());
  auto out = store->approve(a.approval.id, a.approval.action_hash, "bob", "",
                            kNow + 1000);  // now == expires_ms: expired
  CHECK(out.result == ApproveResult::Expired);
  REQUIRE(out.approval);
  CHECK(out.approval->status == Status::Expired);
  CHECK(out.approval->closed_ms == kNow + 1000);
  CHECK(out.approval->votes.empty());
  CHECK(store->approve(a.approval.id, a.approval.action_hash, "bob", "", kNow + 1001).result ==
        ApproveResult::Closed);
  CHECK(store->deny(c.token, "bob", "", kNow + 2000).result == DenyResult::Expired);

  auto moved = store->expire_due(kNow + 3000);
  REQUIRE(moved.size() == 1);
  CHECK(moved[0].id == d.approval.id);
  CHECK(moved[0].status == Status::Expired);
  CHECK(moved[0].closed_ms == kNow + 3000);
  CHECK(store->expire_due(kNow + 4000).empty());
  CHECK(store->get(live.approval.id)->status == Status::Pending);
  CHECK(store->approve(d.approval.id, d.approval.action_hash, "bob", "", kNow + 5000).result ==
        ApproveResult::Closed);
  CHECK(
      store->approve(live.approval.id, live.approval.action_hash, "bob", "", kNow + 5000).result ==
      ApproveResult::Claimed);
}

TEST_CASE("self approval, double votes and two distinct approvers", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();

  SECTION("the requester cannot approve") {
    Created c = store->create(request("alice"));
    auto out = store->approve(c.approval.id, c.approval.action_hash, "alice", "", kNow);
    CHECK(out.result == ApproveResult::SelfApproval);
    REQUIRE(out.approval);
    CHECK(out.approval->status == Status::Pending);
    CHECK(out.approval->votes.empty());
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  }
  SECTION("two approvers: NeedMore, AlreadyApproved, then Claimed") {
    auto n = request("alice");
    n.approvers_needed = 2;
    Created c = store->create(n);
    auto first = store->approve(c.approval.id, c.approval.action_hash, "bob", "one", kNow + 1);
    CHECK(first.result == ApproveResult::NeedMore);
    REQUIRE(first.approval);
    CHECK(first.approval->status == Status::Pending);
    CHECK(first.approval->votes.size() == 1);
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "bob", "again", kNow + 2).result ==
          ApproveResult::AlreadyApproved);
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "alice", "", kNow + 2).result ==
          ApproveResult::SelfApproval);
    auto second = store->approve(c.approval.id, c.approval.action_hash, "carol", "two", kNow + 3);
    CHECK(second.result == ApproveResult::Claimed);
    REQUIRE(second.approval);
    CHECK(second.approval->status == Status::Approved);
    REQUIRE(second.approval->votes.size() == 2);
    CHECK(second.approval->votes[0].approver == "bob");
    CHECK(second.approval->votes[0].note == "one");
    CHECK(second.approval->votes[1].approver == "carol");
    CHECK(second.approval->votes[1].note == "two");
    CHECK(store->approve(c.approval.id, c.approval.action_hash, "dave", "", kNow + 4).result ==
          ApproveResult::Closed);
  }
}

namespace {

// N callers approving the same token at once, spread over `stores` (several stores on one
// location are several daemons). Returns how many of each result.
std::map<ApproveResult, int> race(std::vector<std::unique_ptr<Store>>& stores, const Created& c,
                                  const std::vector<std::string>& approvers) {
  std::mutex mu;
  std::map<ApproveResult, int> results;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  std::vector<std::string> errors;
  for (std::size_t i = 0; i < approvers.size(); ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(approvers.size())) std::this_thread::yield();
      try {
        auto out = stores[i % stores.size()]->approve(c.approval.id, c.approval.action_hash,
                                                      approvers[i], "", kNow + 1);
        std::lock_guard lock(mu);
        ++results[out.result];
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        errors.push_back(e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) FAIL_CHECK("approve threw: " << e);
  return results;
}

}  // namespace

TEST_CASE("racing approvers: exactly one Claimed", "[approvals][race]") {
  Backend b(BACKENDS);
  std::vector<std::unique_ptr<Store>> stores;
  stores.push_back(b.open());
  stores.push_back(b.open());  // a second daemon on the same store

  SECTION("one approver needed, eight distinct approvers on two daemons") {
    for (int round = 0; round < 5; ++round) {
      Created c = stores[0]->create(request());
      std::vector<std::string> approvers;
      for (int i = 0; i < 8; ++i) approvers.push_back("approver" + std::to_string(i));
      auto r = race(stores, c, approvers);
      CHECK(r[ApproveResult::Claimed] == 1);
      CHECK(r[ApproveResult::Closed] == 7);
      auto a = stores[1]->get(c.approval.id);
      REQUIRE(a);
      CHECK(a->status == Status::Approved);
      CHECK(a->votes.size() == 1);
    }
  }
  SECTION("the same approver eight times") {
    Created c = stores[0]->create(request());
    auto r = race(stores, c, std::vector<std::string>(8, "bob"));
    CHECK(r[ApproveResult::Claimed] == 1);
    CHECK(r[ApproveResult::Closed] == 7);
  }
  SECTION("two approvers needed, two different approvers racing twice each") {
    for (int round = 0; round < 5; ++round) {
      auto n = request();
      n.approvers_needed = 2;
      Created c = stores[1]->create(n);
      auto r = race(stores, c, {"bob", "carol", "bob", "carol"});
      CHECK(r[ApproveResult::Claimed] == 1);
      CHECK(r[ApproveResult::NeedMore] == 1);
      // The other two: a repeated vote while pending, or after the claim: closed.
      CHECK(r[ApproveResult::AlreadyApproved] + r[ApproveResult::Closed] == 2);
      auto a = stores[0]->get(c.approval.id);
      REQUIRE(a);
      CHECK(a->status == Status::Approved);
      CHECK(a->votes.size() == 2);
    }
  }
}

TEST_CASE("finish moves only an approved approval", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created c = store->create(request());
  CHECK_FALSE(store->finish(c.approval.id, Status::Executed, "{}", kNow));  // still pending
  REQUIRE(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  CHECK_FALSE(store->finish(c.approval.id, Status::Denied, "{}", kNow));  // not a finish state
  CHECK_FALSE(store->finish(c.approval.id, Status::Pending, "{}", kNow));
  CHECK(store->finish(c.approval.id, Status::Executed, R"({"exit":0,"stdout":"ok"})", kNow + 1));
  auto a = store->get(c.approval.id);
  REQUIRE(a);
  CHECK(a->status == Status::Executed);
  CHECK(a->result_json == R"({"exit":0,"stdout":"ok"})");
  CHECK_FALSE(store->finish(c.approval.id, Status::Refused, "{}", kNow + 2));
  CHECK(store->get(c.approval.id)->status == Status::Executed);
  CHECK_FALSE(store->finish("apr_missing", Status::Executed, "{}", kNow));

  Created r = store->create(request());
  REQUIRE(store->approve(r.approval.id, r.approval.action_hash, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  CHECK(store->finish(r.approval.id, Status::Refused, R"({"why":"rules changed"})", kNow));
  CHECK(store->get(r.approval.id)->status == Status::Refused);

  Created d = store->create(request());
  REQUIRE(store->deny(d.token, "bob", "", kNow).result == DenyResult::Denied);
  CHECK_FALSE(store->finish(d.approval.id, Status::Executed, "{}", kNow));
}

TEST_CASE("grants match exactly, are consumed once and expire", "[approvals][grants]") {
  Backend b(BACKENDS);
  auto store = b.open();
  Created c = store->create(request());
  const std::string hash = c.approval.action_hash;

  SECTION("exact principal, session and hash only; one use") {
    store->add_grant(Grant{c.approval.id, "alice", "s1", hash, kNow + kHour, 1, "bob"});
    CHECK_FALSE(store->use_grant("Alice", "s1", hash, kNow));
    CHECK_FALSE(store->use_grant("alice", "s2", hash, kNow));
    CHECK_FALSE(store->use_grant("alice", "", hash, kNow));
    CHECK_FALSE(store->use_grant("alice", "s1", action_hash("other"), kNow));
    CHECK_FALSE(store->use_grant("bob", "s1", hash, kNow));
    auto g = store->use_grant("alice", "s1", hash, kNow);
    REQUIRE(g);
    CHECK(g->approval_id == c.approval.id);
    CHECK(g->principal == "alice");
    CHECK(g->session == "s1");
    CHECK(g->action_hash == hash);
    CHECK(g->expires_ms == kNow + kHour);
    CHECK(g->approver == "bob");
    CHECK_FALSE(store->use_grant("alice", "s1", hash, kNow));
  }
  SECTION("a counted grant is used that many times") {
    store->add_grant(Grant{c.approval.id, "alice", "s1", hash, kNow + kHour, 3, "bob"});
    for (int i = 0; i < 3; ++i) CHECK(store->use_grant("alice", "s1", hash, kNow));
    CHECK_FALSE(store->use_grant("alice", "s1", hash, kNow));
  }
  SECTION("an unlimited grant lasts until it expires") {
    store->add_grant(Grant{c.approval.id, "alice", "s1", hash, kNow + 1000, 0, "bob"});
    for (int i = 0; i < 10; ++i) CHECK(store->use_grant("alice", "s1", hash, kNow + i));
    CHECK(store->use_grant("alice", "s1", hash, kNow + 999));
    CHECK_FALSE(store->use_grant("alice", "s1", hash, kNow + 1000));
    CHECK_FALSE(store->use_grant("alice", "s1", hash, kNow + 5000));
  }
  SECTION("an expired one-use grant never matches") {
    store->add_grant(Grant{c.approval.id, "alice", "s1", hash, kNow + 1000, 1, "bob"});
    CHECK_FALSE(store->use_grant("alice", "s1", hash, kNow + 1000));
    CHECK(store->use_grant("alice", "s1", hash, kNow + 999));
  }
  SECTION("a one-use grant raced by many callers on two daemons is used once") {
    std::vector<std::unique_ptr<Store>> stores;
    stores.push_back(b.open());
    stores.push_back(b.open());
    for (int round = 0; round < 5; ++round) {
      store->add_grant(Grant{c.approval.id, "alice", "s1", hash, kNow + kHour, 1, "bob"});
      std::atomic<int> used{0}, ready{0}, failed{0};
      std::vector<std::thread> threads;
      for (int i = 0; i < 8; ++i) {
        threads.emplace_back([&, i] {
          ready.fetch_add(1);
          while (ready.load() < 8) std::this_thread::yield();
          try {
            if (stores[i % 2]->use_grant("alice", "s1", hash, kNow)) used.fetch_add(1);
          } catch (...) {
            failed.fetch_add(1);
          }
        });
      }
      for (auto& t : threads) t.join();
      CHECK(failed.load() == 0);
      CHECK(used.load() == 1);
    }
  }
}

TEST_CASE("listeners hear created, closed and finished", "[approvals][listen]") {
  Backend b(BACKENDS);
  // The recorders outlive the stores whose threads call them.
  Recorder here, there;
  auto store = b.open();
  store->listen(here.listener());
  // For PostgreSQL a second daemon hears them too (SQLite tells only its own process).
  std::unique_ptr<Store> other;
  if (b.kind() == "postgres") {
    other = b.open();
    other->listen(there.listener());
  }
  Created c = store->create(request());
  const std::string& id = c.approval.id;
  REQUIRE(here.wait_for("created:" + id));
  REQUIRE(store->approve(c.approval.id, c.approval.action_hash, "bob", "", kNow).result ==
          ApproveResult::Claimed);
  REQUIRE(here.wait_for("closed:" + id));
  REQUIRE(store->finish(id, Status::Executed, "{}", kNow));
  REQUIRE(here.wait_for("finished:" + id));
  Created d = store->create(request());
  REQUIRE(store->deny(d.approval.id, "bob", "", kNow).result == DenyResult::Denied);
  REQUIRE(here.wait_for("closed:" + d.approval.id));
  if (other) {
    CHECK(there.wait_for("created:" + id));
    CHECK(there.wait_for("closed:" + id));
    CHECK(there.wait_for("finished:" + id));
    CHECK(there.wait_for("closed:" + d.approval.id));
    // And the other way round: a change made by the second daemon.
    Created e = other->create(request());
    CHECK(here.wait_for("created:" + e.approval.id));
    CHECK(there.wait_for("created:" + e.approval.id));
  }
  // A listener that calls back into the store does not deadlock it.
  if (b.kind() == "sqlite") {
    auto reentrant = b.open();
    std::atomic<int> seen{0};
    Store* raw = reentrant.get();
    reentrant->listen([&](std::string_view, std::string_view approval_id) {
      if (raw->get(approval_id)) seen.fetch_add(1);
    });
    reentrant->create(request());
    CHECK(seen.load() == 1);
  }
  std::lock_guard lock(here.mu);
  CHECK(std::count(here.events.begin(), here.events.end(), "created:" + id) == 1);
}

TEST_CASE("hostile strings round-trip unchanged", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  const std::vector<std::string> hostile = {
      "'; DROP TABLE approvals; --",
      "Robert'); DELETE FROM approval_votes; --",
      "\"double\" 'single' `back` \\backslash\\ $1 ?1 %s",
      "(((parens))) [] {} <>",
      "ünïcødé — 日本語 — emoji 🚀 — rtl \u202e",
      "line\nbreak\ttab\r",
      "",
  };
  for (const auto& s : hostile) {
    NewApproval n = request(s, s, s, {s, "plain"});
    n.action_json = R"({"type":"shell","payload":{"command":")" + s + "\"}}";
    n.proposal_json = s;
    n.groups = {s};
    n.reason = s;
    n.decision_id = s;
    n.origin = s;
    n.daemon_id = s;
    Created c = store->create(n);
    auto a = store->get(c.approval.id);
    REQUIRE(a);
    CHECK(a->principal == s);
    CHECK(a->session == s);
    CHECK(a->agent == s);
    CHECK(a->rules == std::vector<std::string>{s, "plain"});
    CHECK(a->groups == std::vector<std::string>{s});
    CHECK(a->action_json == n.action_json);
    CHECK(a->proposal_json == s);
    CHECK(a->reason == s);
    CHECK(a->decision_id == s);
    CHECK(a->origin == s);
    CHECK(a->daemon_id == s);
    Filter f;
    f.now_ms = kNow;
    f.agent = s;
    f.session = s;
    f.rule = s;
    f.principal = s;
    if (!s.empty()) CHECK(ids(store->list(f)) == std::vector<std::string>{c.approval.id});
    const std::string approver = s + "-approver";
    auto out = store->approve(c.approval.id, c.approval.action_hash, approver, s, kNow);
    REQUIRE(out.result == ApproveResult::Claimed);
    REQUIRE(out.approval->votes.size() == 1);
    CHECK(out.approval->votes[0].approver == approver);
    CHECK(out.approval->votes[0].note == s);
    CHECK(store->finish(c.approval.id, Status::Executed, s, kNow));
    CHECK(store->get(c.approval.id)->result_json == s);
    store->add_grant(Grant{c.approval.id, s, s, a->action_hash, kNow + kHour, 1, approver});
    auto g = store->use_grant(s, s, a->action_hash, kNow);
    REQUIRE(g);
    CHECK(g->approver == approver);
  }
  Filter any;
  any.status.reset();
  any.now_ms = kNow;
  CHECK(store->list(any).size() == hostile.size());
}

TEST_CASE("an unusable store throws StoreError", "[approvals][errors]") {
  SECTION("sqlite: a path in a missing directory") {
    CHECK_THROWS_AS(open_sqlite("/nonexistent-warden-dir/sub/approvals.db"), StoreError);
  }
  SECTION("sqlite: a directory instead of a file") {
    warden::testing::TempDir tmp{"warden-approvals"};
    CHECK_THROWS_AS(open_sqlite(tmp.str()), StoreError);
  }
  SECTION("sqlite: a file that is not a database") {
    warden::testing::TempDir tmp{"warden-approvals"};
    const std::string path = tmp.write("junk.db", std::string(4096, 'x'));
    CHECK_THROWS_AS(open_sqlite(path), StoreError);
  }
  SECTION("postgres: nothing listens there") {
    // A port that was free a moment ago: nothing accepts connections on it.
    auto& server = pg_server();
    const std::string info = "host=127.0.0.1 port=" + std::to_string(server.port() == 1 ? 2 : 1) +
                             " user=postgres dbname=postgres connect_timeout=5";
    CHECK_THROWS_AS(open_postgres(info), StoreError);
  }
  SECTION("postgres: a database that does not exist") {
    const std::string info = "host=127.0.0.1 port=" + std::to_string(pg_server().port()) +
                             " user=postgres dbname=no_such_database";
    try {
      open_postgres(info);
      FAIL("open_postgres succeeded");
    } catch (const StoreError& e) {
      CHECK(std::string(e.what()).find("no_such_database") != std::string::npos);
    }
  }
}

TEST_CASE("daemons starting at once create the schema once", "[approvals][race]") {
  Backend b(BACKENDS);
  std::vector<std::unique_ptr<Store>> stores(6);
  std::vector<std::string> errors;
  std::mutex mu;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < stores.size(); ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(stores.size())) std::this_thread::yield();
      try {
        stores[i] = b.open();
      } catch (const std::exception& e) {
        std::lock_guard lock(mu);
        errors.push_back(e.what());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) FAIL_CHECK("open threw: " << e);
  REQUIRE(errors.empty());
  Created c = stores[0]->create(request());
  for (auto& s : stores) CHECK(s->find_by_token(c.token).has_value());
}

TEST_CASE("sqlite: a store opening a file another connection is writing waits for it",
          "[approvals][race]") {
  // Switching the file to WAL takes its write lock from within a read transaction, where
  // SQLite's busy handler does not wait: the store waits itself rather than failing with
  // "database is locked" (as when daemons start at once and one switches the file).
  Backend b("sqlite");
  sqlite3* writer = nullptr;
  REQUIRE(sqlite3_open(b.location().c_str(), &writer) == SQLITE_OK);
  REQUIRE(sqlite3_exec(writer, "CREATE TABLE held (x INTEGER); BEGIN IMMEDIATE", nullptr, nullptr,
                       nullptr) == SQLITE_OK);
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::string error;
  std::unique_ptr<Store> store;
  std::thread opener([&] {
    std::unique_ptr<Store> s;
    std::string e;
    try {
      s = b.open();
    } catch (const std::exception& ex) {
      e = ex.what();
    }
    std::lock_guard lock(mu);
    store = std::move(s);
    error = e;
    done = true;
    cv.notify_all();
  });
  {
    // The opener meets the held lock first (one that gives up does so at once); then the
    // writer lets go.
    std::unique_lock lock(mu);
    cv.wait_for(lock, std::chrono::milliseconds(300), [&] { return done; });
  }
  CHECK(sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK);
  opener.join();
  sqlite3_close(writer);
  CHECK(error == "");
  REQUIRE(store != nullptr);
  Created c = store->create(request());
  CHECK(store->find_by_token(c.token).has_value());
}

TEST_CASE("expire_due raced by several daemons returns each approval once", "[approvals][race]") {
  Backend b(BACKENDS);
  std::vector<std::unique_ptr<Store>> stores;
  for (int i = 0; i < 3; ++i) stores.push_back(b.open());
  auto n = request();
  n.expires_ms = kNow + 10;
  std::set<std::string> created;
  for (int i = 0; i < 20; ++i) created.insert(stores[i % 3]->create(n).approval.id);
  std::mutex mu;
  std::vector<std::string> moved;
  std::atomic<int> ready{0}, failed{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < 6) std::this_thread::yield();
      try {
        auto out = stores[i % 3]->expire_due(kNow + 100);
        std::lock_guard lock(mu);
        for (auto& a : out) moved.push_back(a.id);
      } catch (...) {
        failed.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failed.load() == 0);
  CHECK(moved.size() == created.size());
  CHECK(std::set<std::string>(moved.begin(), moved.end()) == created);
}

TEST_CASE("a NUL in a value: SQLite keeps it, PostgreSQL refuses it", "[approvals]") {
  Backend b(BACKENDS);
  auto store = b.open();
  const std::string with_nul("before\0after", 12);
  auto n = request();
  n.reason = with_nul;
  if (b.kind() == "sqlite") {
    Created c = store->create(n);
    CHECK(store->get(c.approval.id)->reason == with_nul);
  } else {
    // Never silently cut at the NUL.
    CHECK_THROWS_AS(store->create(n), StoreError);
    Filter any;
    any.status.reset();
    CHECK(store->list(any).empty());
  }
}

TEST_CASE("postgres: a dropped connection is re-established once", "[approvals][pg]") {
  Backend b("postgres");
  Recorder heard;  // outlives the store whose thread calls it
  auto store = b.open();
  store->listen(heard.listener());
  Created before = store->create(request());
  REQUIRE(heard.wait_for("created:" + before.approval.id));

  // Another session terminates every connection of this store (as a server restart would).
  PGconn* admin = PQconnectdb(b.location().c_str());
  REQUIRE(PQstatus(admin) == CONNECTION_OK);
  PGresult* r = PQexec(admin,
                       "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()");
  REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
  CHECK(PQntuples(r) == 2);  // the command connection and the listening one
  PQclear(r);
  PQfinish(admin);

  auto a = store->get(before.approval.id);  // reconnects
  REQUIRE(a);
  CHECK(a->status == Status::Pending);
  // The listening connection comes back as well: a later change is heard again.
  bool heard_after = false;
  for (int i = 0; i < 50 && !heard_after; ++i) {
    Created c = store->create(request());
    std::unique_lock lock(heard.mu);
    heard_after = heard.cv.wait_for(lock, std::chrono::milliseconds(200), [&] {
      return std::find(heard.events.begin(), heard.events.end(), "created:" + c.approval.id) !=
             heard.events.end();
    });
  }
  CHECK(heard_after);
  CHECK(store->approve(before.approval.id, before.approval.action_hash, "bob", "", kNow).result ==
        ApproveResult::Claimed);
}

TEST_CASE("a store whose tables have another shape is refused at open", "[approvals][errors]") {
  Backend b(BACKENDS);
  const char* sql = "CREATE TABLE approvals (id TEXT PRIMARY KEY, token_hash TEXT, status TEXT)";
  if (b.kind() == "sqlite") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(b.location().c_str(), &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  } else {
    PGconn* c = PQconnectdb(b.location().c_str());
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    PGresult* r = PQexec(c, sql);
    REQUIRE(PQresultStatus(r) == PGRES_COMMAND_OK);
    PQclear(r);
    PQfinish(c);
  }
  CHECK_THROWS_AS(b.open(), StoreError);
}

TEST_CASE("sqlite: a new store file is readable by its owner only", "[approvals]") {
  Backend b("sqlite");
  auto store = b.open();
  store->create(request());
  CHECK((fs::status(b.location()).permissions() & (fs::perms::group_all | fs::perms::others_all)) ==
        fs::perms::none);
}

TEST_CASE("a store asking the same question again sees what another store changed since",
          "[approvals]") {
  // The SQLite store keeps its statements prepared: one left holding its read snapshot would
  // answer from before the other daemon's change.
  Backend b(BACKENDS);
  auto one = b.open();
  auto other = b.open();
  Filter pending;
  pending.now_ms = kNow;
  CHECK(other->list(pending).empty());
  Created c = one->create(request());
  for (int round = 0; round < 3; ++round) {
    REQUIRE(other->list(pending).size() == 1);
    REQUIRE(other->get(c.approval.id).has_value());
    CHECK(other->get(c.approval.id)->status == Status::Pending);
    CHECK(other->find_by_token(c.token).has_value());
  }
  REQUIRE(one->deny(c.approval.id, "ops", "", kNow + 10).result == DenyResult::Denied);
  CHECK(other->list(pending).empty());
  CHECK(other->get(c.approval.id)->status == Status::Denied);
  Created d = other->create(request("bob", "s2"));
  CHECK(one->list(pending).size() == 1);
  CHECK(one->get(d.approval.id)->principal == "bob");
  CHECK(other->deny(d.approval.id, "ops", "", kNow + 20).result == DenyResult::Denied);
  CHECK(one->get(d.approval.id)->status == Status::Denied);
}
