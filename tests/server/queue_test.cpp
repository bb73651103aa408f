// The decision queue under a hostile client: bounded (E_BUSY), fair between principals,
// jobs of closed connections dropped unrun, and workers that cannot rebuild their engine
// fail closed instead of deciding on stale rules. Workers are held with gates (an engine
// factory or a completion that blocks), never with timing.
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>
#include <stdexcept>

#include "server/decider_pool.h"
#include "server/errors.h"
#include "server/request_handler.h"
#include "server_fixture.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

// Records what happened to each job, in order.
struct Tracker {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<std::string> done;       // labels, in completion order
  std::vector<std::string> cancelled;  // labels
  std::vector<DecideResult> results;   // parallel to done

  DecideJob job(const std::string& label, const std::string& principal,
                std::shared_ptr<const std::atomic<bool>> abandoned = nullptr,
                const std::string& proposal = kShellProposal) {
    DecideJob j;
    j.proposal_json = proposal;
    j.principal = principal;
    j.abandoned = std::move(abandoned);
    j.done = [this, label](DecideResult&& r, std::int64_t, SessionTurn) {
      std::lock_guard lock(mutex);
      done.push_back(label);
      results.push_back(std::move(r));
      cv.notify_all();
    };
    j.cancelled = [this, label] {
      std::lock_guard lock(mutex);
      cancelled.push_back(label);
      cv.notify_all();
    };
    return j;
  }

  // A job whose completion holds its worker: opens `started`, then waits for `release`.
  DecideJob blocker(Gate& started, Gate& release, const std::string& label = "blocker") {
    DecideJob j = job(label, label);
    j.done = [inner = std::move(j.done), &started, &release](DecideResult&& r, std::int64_t t,
                                                             SessionTurn turn) {
      started.open();
      release.wait();
      inner(std::move(r), t, std::move(turn));
    };
    return j;
  }

  std::size_t total() {
    std::lock_guard lock(mutex);
    return done.size() + cancelled.size();
  }
  bool wait_total(std::size_t n, std::chrono::milliseconds deadline = 20000ms) {
    std::unique_lock lock(mutex);
    return cv.wait_for(lock, deadline, [&] { return done.size() + cancelled.size() >= n; });
  }
  std::size_t position(const std::string& label) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::find(done.begin(), done.end(), label) - done.begin());
  }
};

std::shared_ptr<const Policy> compile(const char* text) {
  auto loaded = Policy::compile({{"policy.clp", text}});
  REQUIRE(loaded.policy);
  return loaded.policy;
}

// A pool over real engines whose builds can be made to fail.
struct PoolHarness {
  ActivePolicy policy;
  std::shared_ptr<const Policy> rules_a = compile(kRulesA);
  std::shared_ptr<const Policy> rules_b = compile(kRulesB);
  std::atomic<int> builds{0};
  std::atomic<bool> fail_builds{false};
  std::unique_ptr<DeciderPool> pool;

  explicit PoolHarness(PoolOptions options) {
    policy.set(rules_a);
    options.engine_factory = [this](std::shared_ptr<const Policy> p, const EngineOptions& o) {
      ++builds;
      if (fail_builds) throw std::runtime_error("injected: cannot allocate the environment");
      return std::make_unique<Engine>(std::move(p), o);
    };
    pool = std::make_unique<DeciderPool>(policy, EngineOptions{}, std::move(options),
                                         make_logger("off", false));
    std::string error = pool->start();
    REQUIRE(error.empty());
  }
  ~PoolHarness() { pool->stop(); }
};

PoolOptions one_worker() {
  PoolOptions o;
  o.workers = 1;
  return o;
}

// alice and carol are agents (carol uses the fixture's second token), root is admin.
std::string two_agent_tokens(const TempDir& dir) {
  Tokens t;
  return dir.write("tokens", "agent alice " + token_hash_text(t.agent) + "\nagent carol " +
                                 token_hash_text(t.approver) + "\nadmin root " +
                                 token_hash_text(t.admin) + "\n");
}

}  // namespace

TEST_CASE("a full decision queue refuses the next submit as busy, at once", "[server][queue]") {
  Gate started, release;
  Tracker t;
  PoolOptions o = one_worker();
  o.max_queue = 4;
  o.max_queue_per_principal = 3;
  PoolHarness h(o);
  REQUIRE(h.pool->submit(t.blocker(started, release)) == DeciderPool::Submitted::Queued);
  REQUIRE(started.wait());  // the worker is held; everything below waits in the queue
  for (int i = 0; i < 3; ++i) {
    CHECK(h.pool->submit(t.job("a" + std::to_string(i), "alice")) ==
          DeciderPool::Submitted::Queued);
  }
  CHECK(h.pool->submit(t.job("a-over", "alice")) == DeciderPool::Submitted::Busy);  // her share
  CHECK(h.pool->submit(t.job("b0", "bob")) == DeciderPool::Submitted::Queued);
  CHECK(h.pool->submit(t.job("c0", "carol")) == DeciderPool::Submitted::Busy);  // the whole queue
  DeciderPool::Status s = h.pool->status();
  CHECK(s.queued == 4);
  CHECK(s.principals == 2);
  CHECK(s.busy == 2);
  release.open();
  REQUIRE(t.wait_total(5));
  CHECK(t.done.size() == 5);
  CHECK(t.cancelled.empty());  // refused jobs get no callback: the caller answered E_BUSY
  CHECK(t.position("a-over") == t.done.size());
  CHECK(t.position("c0") == t.done.size());
}

TEST_CASE("a principal's backlog does not delay another principal's decision", "[server][queue]") {
  Gate started, release;
  Tracker t;
  PoolOptions o = one_worker();
  o.max_queue = 5000;
  o.max_queue_per_principal = 2000;
  PoolHarness h(o);
  REQUIRE(h.pool->submit(t.blocker(started, release)) == DeciderPool::Submitted::Queued);
  REQUIRE(started.wait());
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(h.pool->submit(t.job("a" + std::to_string(i), "alice")) ==
            DeciderPool::Submitted::Queued);
  }
  REQUIRE(h.pool->submit(t.job("victim", "bob", nullptr, kReplyProposal)) ==
          DeciderPool::Submitted::Queued);
  release.open();
  REQUIRE(t.wait_total(1002));
  // Round-robin: blocker, alice's first, then bob — not after alice's 1000.
  CHECK(t.position("victim") == 2);
  CHECK(t.position("victim") < t.position("a1"));
  CHECK(t.position("a999") == 1001);
}

TEST_CASE("queued decisions of a closed connection never run", "[server][queue]") {
  Gate started, release;
  Tracker t;
  PoolHarness h(one_worker());
  REQUIRE(h.pool->submit(t.blocker(started, release)) == DeciderPool::Submitted::Queued);
  REQUIRE(started.wait());
  auto closed = std::make_shared<std::atomic<bool>>(false);
  for (int i = 0; i < 10; ++i) {
    REQUIRE(h.pool->submit(t.job("gone" + std::to_string(i), "alice", closed)) ==
            DeciderPool::Submitted::Queued);
  }
  REQUIRE(h.pool->submit(t.job("kept", "alice")) == DeciderPool::Submitted::Queued);
  closed->store(true);  // what Session::close does
  release.open();
  REQUIRE(t.wait_total(12));
  CHECK(t.done == std::vector<std::string>{"blocker", "kept"});
  CHECK(t.cancelled.size() == 10);
  CHECK(h.pool->status().abandoned == 10);
}

TEST_CASE("jobs of closed connections do not hold places in a full queue", "[server][queue]") {
  Gate started, release;
  Tracker t;
  PoolOptions o = one_worker();
  o.max_queue = 3;
  PoolHarness h(o);
  REQUIRE(h.pool->submit(t.blocker(started, release)) == DeciderPool::Submitted::Queued);
  REQUIRE(started.wait());
  auto closed = std::make_shared<std::atomic<bool>>(false);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(h.pool->submit(t.job("gone" + std::to_string(i), "alice", closed)) ==
            DeciderPool::Submitted::Queued);
  }
  CHECK(h.pool->submit(t.job("refused", "bob")) == DeciderPool::Submitted::Busy);
  closed->store(true);
  CHECK(h.pool->submit(t.job("admitted", "bob")) == DeciderPool::Submitted::Queued);
  release.open();
  REQUIRE(t.wait_total(5));
  CHECK(t.done == std::vector<std::string>{"blocker", "admitted"});
  CHECK(t.cancelled.size() == 3);
}

TEST_CASE("a worker whose rebuild fails decides nothing on old rules and retries",
          "[server][queue]") {
  PoolOptions o = one_worker();
  o.rebuild_retry = 0ms;  // retry at every job
  Tracker t;
  PoolHarness h(o);
  auto decide = [&](const std::string& label) {
    std::size_t seen = t.total();
    REQUIRE(h.pool->submit(t.job(label, "alice")) == DeciderPool::Submitted::Queued);
    REQUIRE(t.wait_total(seen + 1));
    std::lock_guard lock(t.mutex);
    return t.results.back();
  };
  DecideResult before = decide("before");
  REQUIRE(before.ok);
  CHECK(before.decision.rules_digest == h.rules_a->digest());
  CHECK(before.decision.error_code.empty());

  h.fail_builds = true;
  h.policy.set(h.rules_b);
  int builds = h.builds;
  DecideResult failed = decide("failed");
  REQUIRE(failed.ok);
  CHECK(failed.decision.outcome == Outcome::Reject);
  CHECK(failed.decision.error_code == code::kEngineBuild);
  CHECK(code::is_known(failed.decision.error_code));
  CHECK(failed.decision.reason.find("injected") != std::string::npos);
  CHECK(failed.decision.rules.empty());  // no rule of the old set decided it
  CHECK(failed.decision.rules_digest == h.rules_b->digest());
  CHECK(h.builds == builds + 1);
  DeciderPool::Status s = h.pool->status();
  CHECK(s.behind == 1);
  CHECK(s.worker_digests == std::vector<std::string>{""});

  DecideResult again = decide("again");
  CHECK(again.decision.error_code == code::kEngineBuild);
  CHECK(h.builds == builds + 2);  // retried

  h.fail_builds = false;
  DecideResult after = decide("after");
  REQUIRE(after.ok);
  CHECK(after.decision.error_code.empty());
  CHECK(after.decision.rules_digest == h.rules_b->digest());
  CHECK(after.decision.rules.at(0).rule == "no-shell-b");
  s = h.pool->status();
  CHECK(s.behind == 0);
  CHECK(s.worker_digests == std::vector<std::string>{h.rules_b->digest()});
}

TEST_CASE("a failed rebuild is retried after its backoff or at the next reload",
          "[server][queue]") {
  PoolOptions o = one_worker();
  o.rebuild_retry = std::chrono::hours(1);
  Tracker t;
  PoolHarness h(o);
  auto decide = [&](const std::string& label) {
    std::size_t seen = t.total();
    REQUIRE(h.pool->submit(t.job(label, "alice")) == DeciderPool::Submitted::Queued);
    REQUIRE(t.wait_total(seen + 1));
    std::lock_guard lock(t.mutex);
    return t.results.back();
  };
  h.fail_builds = true;
  h.policy.set(h.rules_b);
  int builds = h.builds;
  CHECK(decide("1").decision.error_code == code::kEngineBuild);
  CHECK(decide("2").decision.error_code == code::kEngineBuild);  // still failing closed
  CHECK(h.builds == builds + 1);                                 // within the backoff
  h.fail_builds = false;
  h.policy.set(h.rules_a);  // a new generation is tried at once
  DecideResult r = decide("3");
  CHECK(r.decision.error_code.empty());
  CHECK(r.decision.rules_digest == h.rules_a->digest());
  CHECK(h.builds == builds + 2);
}

TEST_CASE("status counts the workers behind and names each worker's rules", "[server][queue]") {
  Gate started1, started2, release;  // outlive the pool
  Tracker t;
  PoolOptions o;
  o.workers = 2;
  o.rebuild_retry = 0ms;
  PoolHarness h(o);
  Config config;
  ServerContext context;
  context.config = &config;
  context.log = make_logger("off", false);
  context.pool = h.pool.get();
  RequestHandler handler(context);
  auto status = [&] { return parse("{" + handler.status_fields() + "}"); };
  auto doc = status();
  CHECK(doc["workers_behind"].GetUint() == 0);
  REQUIRE(doc["worker_digests"].Size() == 2);
  CHECK(std::string(doc["worker_digests"][0].GetString()) == h.rules_a->digest());

  h.fail_builds = true;
  h.policy.set(h.rules_b);
  // Two jobs held at once land on both workers; each tries the new rules first and fails.
  REQUIRE(h.pool->submit(t.blocker(started1, release, "1")) == DeciderPool::Submitted::Queued);
  REQUIRE(h.pool->submit(t.blocker(started2, release, "2")) == DeciderPool::Submitted::Queued);
  REQUIRE(started1.wait());
  REQUIRE(started2.wait());
  doc = status();
  CHECK(doc["workers_behind"].GetUint() == 2);
  CHECK(std::string(doc["worker_digests"][1].GetString()).empty());
  release.open();
  REQUIRE(t.wait_total(2));
  for (const DecideResult& r : t.results) CHECK(r.decision.error_code == code::kEngineBuild);
}

TEST_CASE("the handler answers E_BUSY when the queue is full", "[server][queue]") {
  Gate started, release;
  Tracker t;
  std::atomic<int> later_calls{0};
  PoolOptions o = one_worker();
  o.max_queue = 1;
  PoolHarness h(o);
  Config config;
  ServerContext context;
  context.config = &config;
  context.log = make_logger("off", false);
  context.pool = h.pool.get();
  RequestHandler handler(context);
  SessionAuth auth;
  auth.identity = Identity{"alice", Role::Agent, {}, {}};
  REQUIRE(h.pool->submit(t.blocker(started, release)) == DeciderPool::Submitted::Queued);
  REQUIRE(started.wait());
  auto later = [&](Reply) { ++later_calls; };
  CHECK_FALSE(handler.handle(decide_request("1", kShellProposal), &auth, later));  // queued
  std::optional<Reply> busy = handler.handle(decide_request("2", kShellProposal), &auth, later);
  REQUIRE(busy);
  CHECK(error_code(busy->json) == err::kBusy);
  CHECK(reply_id(busy->json) == "2");
  CHECK_FALSE(busy->close);
  CHECK(Stats::get(context.stats.errors) == 1);
  release.open();
  REQUIRE(t.wait_total(1));
  REQUIRE(eventually([&] { return later_calls == 1; }));
}

TEST_CASE("over sockets: past a principal's share, decides get E_BUSY while others queue",
          "[server][queue]") {
  TempDir dir;
  Config config = test_config(dir);
  config.tokens = two_agent_tokens(dir);
  config.workers = 1;
  config.limits.max_queue = 3;
  config.limits.max_queue_per_principal = 2;
  HeldRebuild held;
  RunningDaemon d(config, held.options());
  REQUIRE(d.ok());
  DeciderPool& pool = *d.daemon().context().pool;
  Tokens tokens;
  std::string error;
  auto connect = [&](Client& c, const std::string& token) {
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    REQUIRE(c.authenticate(token, 5000ms, &error));
  };
  Client held_conn, alice, alice2, carol, carol2;
  connect(held_conn, tokens.agent);
  connect(alice, tokens.agent);
  connect(alice2, tokens.agent);
  connect(carol, tokens.approver);  // carol is an agent in this token file
  connect(carol2, tokens.approver);

  held.arm(d);
  REQUIRE(held_conn.send_message(decide_request("held", kShellProposal), &error));
  REQUIRE(held.entered.wait());  // the only worker is inside a rebuild until released
  REQUIRE(alice.send_bytes(encode_frame(decide_request("a0", kShellProposal)) +
                               encode_frame(decide_request("a1", kShellProposal)),
                           &error));
  REQUIRE(eventually([&] { return pool.queue_depth() == 2; }));
  // Alice's share is full: her next decide is refused now, not queued behind the others.
  REQUIRE(alice2.send_message(decide_request("a2", kShellProposal), &error));
  std::string busy = read_or_fail(alice2);
  CHECK(error_code(busy) == err::kBusy);
  CHECK(reply_id(busy) == "a2");
  // Carol still gets a place; after her, the whole queue is full.
  REQUIRE(carol.send_message(decide_request("c0", kReplyProposal), &error));
  REQUIRE(eventually([&] { return pool.queue_depth() == 3; }));
  REQUIRE(carol2.send_message(decide_request("c1", kReplyProposal), &error));
  CHECK(error_code(read_or_fail(carol2)) == err::kBusy);

  held.release.open();
  CHECK(error_code(read_or_fail(held_conn)) == "");
  CHECK(error_code(read_or_fail(alice)) == "");
  CHECK(error_code(read_or_fail(alice)) == "");
  std::string c0 = read_or_fail(carol);
  CHECK(error_code(c0) == "");
  CHECK(
      std::string(parse(c0)["payload"]["decision"]["action"]["context"]["principal"].GetString()) ==
      "carol");
  CHECK(pool.status().busy == 2);
  // The refused connections stay usable.
  REQUIRE(alice2.send_message(decide_request("a3", kShellProposal), &error));
  CHECK(error_code(read_or_fail(alice2)) == "");
}

TEST_CASE("over sockets: a reset connection's queued decisions are dropped unrun",
          "[server][queue]") {
  TempDir dir;
  Config config = test_config(dir);
  config.workers = 1;
  HeldRebuild held;
  RunningDaemon d(config, held.options());
  REQUIRE(d.ok());
  ServerContext& context = d.daemon().context();
  Client held_conn;
  connect_agent(held_conn, d);
  auto flood = std::make_unique<Client>();
  connect_agent(*flood, d);
  std::string error;

  held.arm(d);
  REQUIRE(held_conn.send_message(decide_request("held", kShellProposal), &error));
  REQUIRE(held.entered.wait());
  std::string burst;
  for (int i = 0; i < 20; ++i)
    burst += encode_frame(decide_request(std::to_string(i), kShellProposal));
  REQUIRE(flood->send_bytes(burst, &error));
  REQUIRE(eventually([&] { return context.pool->queue_depth() == 20; }));
  // Close with a reset (SO_LINGER 0), as a client killed mid-flood does.
  linger hard{1, 0};
  REQUIRE(setsockopt(flood->fd(), SOL_SOCKET, SO_LINGER, &hard, sizeof hard) == 0);
  flood->close();
  REQUIRE(eventually([&] { return Stats::get(context.stats.connections_current) == 1; }));

  held.release.open();
  CHECK(error_code(read_or_fail(held_conn)) == "");
  REQUIRE(eventually([&] { return context.pool->status().abandoned == 20; }));
  CHECK(context.pool->queue_depth() == 0);
  CHECK(Stats::get(context.stats.decisions) == 1);  // only the held one ran
}

TEST_CASE("decisions of one session start one at a time, in order; other sessions do not wait",
          "[server][queue][session]") {
  Tracker t;
  PoolOptions o;
  o.workers = 2;
  PoolHarness h(o);
  // The first decision of session s1 keeps its turn after its completion returned, as the
  // daemon does until its effects are remembered.
  std::mutex kept_mutex;
  SessionTurn kept;
  Gate first_done;
  DecideJob first = t.job("s1-first", "alice");
  first.session = "s1";
  first.done = [&, inner = std::move(first.done)](DecideResult&& r, std::int64_t time,
                                                  SessionTurn turn) {
    {
      std::lock_guard lock(kept_mutex);
      kept = std::move(turn);
    }
    inner(std::move(r), time, nullptr);
    first_done.open();
  };
  DecideJob second = t.job("s1-second", "alice");
  second.session = "s1";
  DecideJob other = t.job("s2", "alice");
  other.session = "s2";
  DecideJob carol = t.job("carol-s1", "carol");  // another principal's s1 is another session
  carol.session = "s1";
  REQUIRE(h.pool->submit(std::move(first)) == DeciderPool::Submitted::Queued);
  REQUIRE(h.pool->submit(std::move(second)) == DeciderPool::Submitted::Queued);
  REQUIRE(h.pool->submit(std::move(other)) == DeciderPool::Submitted::Queued);
  REQUIRE(h.pool->submit(std::move(carol)) == DeciderPool::Submitted::Queued);
  REQUIRE(first_done.wait());
  // Both workers are free, yet s1's second decision waits for the first one's turn.
  REQUIRE(t.wait_total(3));
  {
    std::lock_guard lock(t.mutex);
    CHECK(std::find(t.done.begin(), t.done.end(), "s1-second") == t.done.end());
    CHECK(std::find(t.done.begin(), t.done.end(), "s2") != t.done.end());
    CHECK(std::find(t.done.begin(), t.done.end(), "carol-s1") != t.done.end());
  }
  {
    std::lock_guard lock(kept_mutex);
    REQUIRE(kept);
    kept.reset();  // the first decision's effects are remembered: the next may start
  }
  REQUIRE(t.wait_total(4));
  CHECK(t.position("s1-first") < t.position("s1-second"));
}
