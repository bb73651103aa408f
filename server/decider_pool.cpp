#include "server/decider_pool.h"

#include <algorithm>
#include <exception>
#include <random>
#include <unordered_set>

#include "bindings/text.h"
#include "engine/diagnostic.h"

namespace warden::server {

namespace {

using Clock = std::chrono::steady_clock;

template <typename Fn>
void call_quietly(const Logger& log, const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    log->error("decision {} failed: {}", what, e.what());
  } catch (...) {
    log->error("decision {} failed", what);
  }
}

bool is_abandoned(const DecideJob& job) {
  return job.abandoned && job.abandoned->load(std::memory_order_acquire);
}

}  // namespace

std::string new_decision_id() {
  thread_local std::mt19937_64 random{std::random_device{}()};
  std::string id(32, '0');
  std::uint64_t a = random(), b = random();
  for (int i = 0; i < 16; ++i) {
    id[i] = text::hex_digit(static_cast<unsigned>(a >> (i * 4)));
    id[16 + i] = text::hex_digit(static_cast<unsigned>(b >> (i * 4)));
  }
  return id;
}

// The pool's lock and wake-up, with the sessions whose turn is held: shared with every
// SessionTurn, which may be released after the pool is gone.
struct DeciderPool::Turns {
  std::mutex mutex;
  std::condition_variable wake;
  std::unordered_set<std::string> held;  // principal + '\0' + session
};

namespace {

std::string turn_key(const DecideJob& job) {
  if (job.session.empty()) return {};
  std::string key = job.principal;
  key.push_back('\0');
  key.append(job.session);
  return key;
}

}  // namespace

struct DeciderPool::Worker {
  std::unique_ptr<Engine> engine;  // null after a failed rebuild: decide nothing
  std::uint64_t generation = 0;    // the generation last tried (built or failed)
  std::string build_error;         // why the last rebuild failed
  Clock::time_point next_retry{};
  std::chrono::milliseconds backoff{0};
  // Read by status(); written by the worker under the pool mutex.
  std::string digest;
  bool behind = false;
  std::thread thread;
  // The time of the decision being made, µs since the epoch: the engine's clock reads it.
  std::int64_t now_us = 0;
  EngineOptions options;  // the pool's, with the clock above
};

DeciderPool::DeciderPool(ActivePolicy& policy, EngineOptions engine_options, PoolOptions options,
                         Logger log)
    : policy_(policy),
      engine_options_(std::move(engine_options)),
      options_(std::move(options)),
      log_(std::move(log)),
      turns_state_(std::make_shared<Turns>()),
      mutex_(turns_state_->mutex),
      wake_(turns_state_->wake),
      queue_(options_.max_queue, options_.max_queue_per_principal) {
  options_.workers = std::max(1u, options_.workers);
  options_.max_queue = std::max<std::size_t>(1, options_.max_queue);
  options_.max_queue_per_principal = std::max<std::size_t>(1, options_.max_queue_per_principal);
  if (!options_.engine_factory) {
    options_.engine_factory = [](std::shared_ptr<const Policy> policy,
                                 const EngineOptions& engine_options) {
      return std::make_unique<Engine>(std::move(policy), engine_options);
    };
  }
  if (!options_.clock_us) {
    options_.clock_us = [] {
      return std::chrono::duration_cast<std::chrono::microseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
          .count();
    };
  }
}

DeciderPool::~DeciderPool() { stop(); }

std::string DeciderPool::start() {
  for (unsigned i = 0; i < options_.workers; ++i) {
    auto worker = std::make_unique<Worker>();
    // Rules see (now) as the second of the decision's recorded time, so a replay that sets
    // the clock to the recorded time decides with the same (now).
    worker->options = engine_options_;
    worker->options.clock = [w = worker.get()] {
      std::int64_t us = w->now_us;
      return us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    };
    try {
      worker->generation = policy_.generation();
      auto policy = policy_.get();
      worker->engine = options_.engine_factory(policy, worker->options);
      worker->digest = policy ? policy->digest() : "";
    } catch (const std::exception& e) {
      stop();
      return std::string("cannot build a rule engine: ") + e.what();
    }
    pool_.push_back(std::move(worker));
  }
  for (auto& worker : pool_) {
    Worker* w = worker.get();
    w->thread = std::thread([this, w] { run(w); });
  }
  return {};
}

DeciderPool::Submitted DeciderPool::submit(DecideJob job) {
  std::vector<DecideJob> abandoned;
  Submitted result = Submitted::Queued;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Submitted::Stopped;
    // Jobs of closed connections do not hold places: drop them before refusing anyone.
    if (queue_.full(job.principal)) purge_abandoned(&abandoned);
    const std::string principal = job.principal;
    if (!queue_.push(principal, job)) result = Submitted::Busy;
  }
  if (result == Submitted::Busy) busy_.fetch_add(1, std::memory_order_relaxed);
  if (result == Submitted::Queued) wake_.notify_one();
  for (DecideJob& dropped : abandoned) {
    if (dropped.cancelled) call_quietly(log_, "cancellation", dropped.cancelled);
  }
  return result;
}

void DeciderPool::purge_abandoned(std::vector<DecideJob>* abandoned) {
  abandoned_.fetch_add(queue_.remove_if(is_abandoned, abandoned), std::memory_order_relaxed);
}

void DeciderPool::stop() {
  std::vector<DecideJob> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.drain(&dropped);
  }
  wake_.notify_all();
  for (auto& worker : pool_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  for (DecideJob& job : dropped) {
    if (job.cancelled) call_quietly(log_, "cancellation", job.cancelled);
  }
}

DeciderPool::Status DeciderPool::status() const {
  Status s;
  std::lock_guard lock(mutex_);
  s.queued = queue_.size();
  s.principals = queue_.keys();
  for (const auto& worker : pool_) {
    s.worker_digests.push_back(worker->digest);
    s.behind += worker->behind ? 1 : 0;
  }
  s.busy = busy_.load(std::memory_order_relaxed);
  s.abandoned = abandoned_.load(std::memory_order_relaxed);
  return s;
}

std::size_t DeciderPool::queue_depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

bool DeciderPool::take(DecideJob* job, std::vector<DecideJob>* abandoned) {
  // Round-robin: the first principal in turn with a job that may start gives it and goes to
  // the back. A job may start unless a decision of its session is in progress; jobs of one
  // session start in the order they were queued.
  using Choice = FairQueue<DecideJob>::Choice;
  std::unordered_set<std::string> waiting;  // sessions with an earlier job still queued
  return queue_.take(
      job, [&](const std::string&) { waiting.clear(); },
      [&](const DecideJob& j) {
        if (is_abandoned(j)) {
          abandoned_.fetch_add(1, std::memory_order_relaxed);
          return Choice::Drop;
        }
        std::string key = turn_key(j);
        if (!key.empty() && (turns_state_->held.count(key) || waiting.count(key))) {
          waiting.insert(std::move(key));
          return Choice::Skip;
        }
        if (!key.empty()) turns_state_->held.insert(std::move(key));
        return Choice::Take;
      },
      abandoned);
}

DeciderPool::Next DeciderPool::next_job(DecideJob* job, std::vector<DecideJob>* abandoned) {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (stopping_) return Next::Stopping;
    if (queue_.size() > 0 && take(job, abandoned)) return Next::Job;
    // Their connection is gone: released outside the lock, then look again.
    if (!abandoned->empty()) return Next::Abandoned;
    wake_.wait(lock);
  }
}

void DeciderPool::run(Worker* worker) {
  for (;;) {
    DecideJob job;
    std::vector<DecideJob> abandoned;
    Next next = next_job(&job, &abandoned);
    // Their connection is gone; the callback only releases it (on the I/O thread).
    for (DecideJob& dropped : abandoned) {
      if (dropped.cancelled) call_quietly(log_, "cancellation", dropped.cancelled);
    }
    if (next == Next::Stopping) return;
    if (next == Next::Abandoned) continue;
    SessionTurn turn;
    if (std::string key = turn_key(job); !key.empty()) {
      turn = SessionTurn(turns_state_.get(), [state = turns_state_, key = std::move(key)](void*) {
        {
          std::lock_guard lock(state->mutex);
          state->held.erase(key);
        }
        state->wake.notify_all();
      });
    }
    std::int64_t time_us = 0;
    deciding_.fetch_add(1, std::memory_order_relaxed);
    DecideResult result = decide(worker, job, &time_us);
    call_quietly(log_, "completion",
                 [&] { job.done(std::move(result), time_us, std::move(turn)); });
    deciding_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void DeciderPool::ensure_engine(Worker* worker) {
  // Rebuild between decisions when the rules were swapped, or retry a failed rebuild.
  std::uint64_t generation = policy_.generation();
  bool swapped = generation != worker->generation;
  bool retry = !worker->engine && Clock::now() >= worker->next_retry;
  if (!swapped && !retry) return;
  worker->generation = generation;
  auto policy = policy_.get();
  std::string digest = policy ? policy->digest() : "";
  try {
    // The old engine goes first: it must never decide on rules no longer in force.
    worker->engine.reset();
    worker->engine = options_.engine_factory(policy, worker->options);
    worker->backoff = std::chrono::milliseconds(0);
    worker->build_error.clear();
    std::lock_guard lock(mutex_);
    worker->digest = digest;
    worker->behind = false;
  } catch (const std::exception& e) {
    worker->engine.reset();
    worker->build_error = e.what();
  } catch (...) {
    worker->engine.reset();
    worker->build_error = "unknown error";
  }
  if (worker->engine) {
    if (retry && !swapped) log_->info("decision worker rebuilt its engine for {}", digest);
    return;
  }
  worker->backoff = worker->backoff.count() == 0
                        ? options_.rebuild_retry
                        : std::min(worker->backoff * 2, options_.rebuild_retry_max);
  worker->next_retry = Clock::now() + worker->backoff;
  log_->error(
      "decision worker cannot build an engine for {}: {}; its decisions fail closed, retry in "
      "{} ms",
      digest, worker->build_error, worker->backoff.count());
  std::lock_guard lock(mutex_);
  worker->digest.clear();
  worker->behind = true;
}

DecideResult DeciderPool::decide(Worker* worker, const DecideJob& job, std::int64_t* time_us) {
  DecideResult result;
  auto started = Clock::now();
  ensure_engine(worker);
  worker->now_us = options_.clock_us();
  *time_us = worker->now_us;
  // Nothing decided: a reject with the code and the reason why.
  auto undecided = [&](const char* error_code, std::string reason) {
    result = DecideResult{};
    result.ok = true;
    Decision& d = result.decision;
    d.decision_id = new_decision_id();
    d.outcome = Outcome::Reject;
    d.error_code = error_code;
    d.reason = std::move(reason);
    d.action_json = job.proposal_json;
    auto policy = policy_.get();
    d.rules_digest = policy ? policy->digest() : "";
    d.elapsed_us =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count();
    return result;
  };
  if (!worker->engine) {
    // Fail closed: no engine for the rules in force, and the old rules may not decide.
    return undecided(code::kEngineBuild,
                     "no decision: this worker cannot build the rules in force (" +
                         worker->build_error + "); the rebuild is retried");
  }
  try {
    DecideRequest request;
    request.proposal_json = job.proposal_json;
    request.explain = job.explain;
    request.depth = job.depth;
    request.attempt = job.attempt;
    if (!job.principal.empty()) request.principal = job.principal;
    request.groups = job.groups;
    if (options_.sessions && !job.session.empty()) {
      // Snapshot before, remember after: workers share the memory, each decision sees what
      // was approved in its session before it started.
      try {
        result = decide_in_session(*worker->engine, *options_.sessions, request,
                                   SessionKey{job.principal, job.session}, /*record=*/false);
      } catch (const SessionHistoryError& e) {
        // Fail closed: without the session's history the rules could approve what it would
        // refuse ("no network after a credential read"). Nothing was decided.
        return undecided(
            code::kSessionStore,
            std::string("no decision: the session's history cannot be read (") + e.what() + ")");
      }
      if (!job.defer_remember && result.ok) {
        try {
          options_.sessions->remember(job.principal, job.session, result.decision,
                                      engine_now(*worker->engine));
        } catch (const SessionHistoryError& e) {
          // Counted and retried by the store; the decision stands as decided.
          log_->error("session memory: an approved decision's effects are not stored: {}",
                      e.what());
        }
      }
    } else {
      result = worker->engine->decide(request);
    }
  } catch (const std::exception& e) {
    // Fail closed: the engine promises not to throw, but a worker must never die.
    log_->error("decision failed: {}", e.what());
    result = DecideResult{};
    result.error.code = code::kInternal;
    result.error.message = std::string("internal error while deciding: ") + e.what();
  } catch (...) {
    log_->error("decision failed: unknown exception");
    result = DecideResult{};
    result.error.code = code::kInternal;
    result.error.message = "internal error while deciding";
  }
  return result;
}

}  // namespace warden::server
