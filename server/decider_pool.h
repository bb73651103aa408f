// Decision workers: a fixed set of threads, each with its own Engine (a CLIPS environment is
// single-threaded), fed by a bounded queue that is fair between principals: one sub-queue
// per principal, served round-robin, each with its own cap, so one flooding agent waits
// behind itself, not in front of everyone. Jobs of closed connections are dropped unrun.
// A worker rebuilds its Engine between decisions when the ActivePolicy generation changes;
// if the rebuild fails it decides nothing on the old rules: its decisions fail closed
// (E_ENGINE_BUILD) and it retries the rebuild with backoff.
// submit() and status() are thread-safe (called from the I/O thread); start()/stop() belong
// to the daemon's main thread. Callbacks of a job run on a worker thread (or in stop()).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "engine/engine.h"
#include "engine/session_memory.h"
#include "server/active_policy.h"
#include "server/fair_queue.h"
#include "server/log.h"

namespace warden::server {

// A session's turn: while a decision of one (principal, session) is held by its SessionTurn,
// no other decision of that session starts, so each sees the effects of the one before it
// (pipelined requests of one session are decided in the order they were queued). The pool
// hands the turn to `done`; whoever remembers the decision's effects (after its audit
// record, or after a scoped grant approved it) keeps it until then. Released when the last
// copy goes.
using SessionTurn = std::shared_ptr<void>;

struct DecideJob {
  std::string proposal_json;
  bool explain = false;
  // The authenticated principal: rules see it (empty: the proposal's own context), and the
  // job waits in its sub-queue. Its groups come from the token file.
  std::string principal;
  std::vector<std::string> groups;
  // The proposal's context.session. With the pool's session memory, the decision sees the
  // history of (principal, session) and, when approved, adds its effects to it.
  std::string session;
  // Where the proposal arrives (SPEC §2): the pipeline depth of the signal it answers and the
  // model attempt it is (0 for a proposal no model made). The rules see both in `proposal`.
  std::int64_t depth = 0;
  std::int64_t attempt = 0;
  // With session memory: true leaves remembering an approved decision's effects to the
  // job's completion (SessionMemory::remember, at the decision's second), which the daemon
  // does only once the decision is in the audit log and answered as decided.
  bool defer_remember = false;
  // Set (to true) by the connection when it closes: the job is dropped without running.
  // May be null (never abandoned).
  std::shared_ptr<const std::atomic<bool>> abandoned;
  // Exactly one of these is called, once, on a worker thread or in stop(); neither may throw
  // (exceptions are caught and logged). done gets the result, the decision's time (µs
  // since the epoch, taken by the worker just before deciding; the engine's clock returned
  // exactly its second) and the session's turn (null without a session); cancelled is
  // called when the job will never run (the pool stopped, or the connection abandoned it).
  std::function<void(DecideResult&&, std::int64_t time_us, SessionTurn turn)> done;
  std::function<void()> cancelled;
};

// Builds one worker's Engine; throws on failure. The default constructs an Engine; tests
// inject failures through it.
using EngineFactory =
    std::function<std::unique_ptr<Engine>(std::shared_ptr<const Policy>, const EngineOptions&)>;

struct PoolOptions {
  unsigned workers = 1;
  std::size_t max_queue = 1024;               // jobs waiting, all principals together
  std::size_t max_queue_per_principal = 256;  // jobs waiting for one principal
  // After a failed rebuild, the first retry waits this long (0: retry at every job); each
  // further failure doubles the wait, up to rebuild_retry_max. A new generation retries at once.
  std::chrono::milliseconds rebuild_retry{100};
  std::chrono::milliseconds rebuild_retry_max{5000};
  EngineFactory engine_factory;  // empty: std::make_unique<Engine>
  // Session memory shared by every worker (thread-safe), owned by the daemon; null: none.
  // A history that cannot be read fails the decision closed (E_SESSION_STORE).
  SessionHistory* sessions = nullptr;
  // The decisions' clock, µs since the epoch; empty: the system clock.
  std::function<std::int64_t()> clock_us;
};

// A new random decision id (32 hex digits), for decisions the engine did not make.
std::string new_decision_id();

class DeciderPool {
 public:
  enum class Submitted {
    Queued,   // done or cancelled will be called
    Busy,     // the queue or the principal's share is full: answer E_BUSY (no callback)
    Stopped,  // the pool is stopping (no callback)
  };

  struct Status {
    std::size_t queued = 0;      // jobs waiting
    std::size_t principals = 0;  // principals with jobs waiting
    unsigned behind = 0;         // workers whose last rebuild failed (deciding nothing)
    std::vector<std::string> worker_digests;  // rules each worker decides on ("" if none)
    std::uint64_t busy = 0;                   // submits refused as busy, since start
    std::uint64_t abandoned = 0;              // jobs dropped unrun because their connection closed
  };

  DeciderPool(ActivePolicy& policy, EngineOptions engine_options, PoolOptions options, Logger log);
  ~DeciderPool();
  DeciderPool(const DeciderPool&) = delete;
  DeciderPool& operator=(const DeciderPool&) = delete;

  // Builds one Engine per worker and starts the threads. Returns an error text on failure.
  std::string start();
  Submitted submit(DecideJob job);
  // Stops the workers after their current job; queued jobs are cancelled.
  void stop();

  Status status() const;
  std::size_t queue_depth() const;
  // Workers deciding right now (a gauge; relaxed).
  unsigned deciding() const { return deciding_.load(std::memory_order_relaxed); }
  unsigned size() const { return options_.workers; }
  const PoolOptions& options() const { return options_; }

 private:
  struct Worker;
  struct Turns;  // sessions with a decision in progress; outlives the pool while turns do
  enum class Next { Job, Abandoned, Stopping };
  void run(Worker* worker);
  Next next_job(DecideJob* job, std::vector<DecideJob>* abandoned);
  bool take(DecideJob* job, std::vector<DecideJob>* abandoned);  // mutex_ held
  void purge_abandoned(std::vector<DecideJob>* abandoned);       // mutex_ held
  void ensure_engine(Worker* worker);
  DecideResult decide(Worker* worker, const DecideJob& job, std::int64_t* time_us);

  ActivePolicy& policy_;
  EngineOptions engine_options_;
  PoolOptions options_;
  Logger log_;

  std::shared_ptr<Turns> turns_state_;  // before mutex_: holds it
  std::mutex& mutex_;
  std::condition_variable& wake_;
  FairQueue<DecideJob> queue_;  // one line per principal
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> pool_;
  std::atomic<std::uint64_t> busy_{0};
  std::atomic<std::uint64_t> abandoned_{0};
  std::atomic<unsigned> deciding_{0};
};

}  // namespace warden::server
