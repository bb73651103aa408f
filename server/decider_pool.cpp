#include "server/decider_pool.h"

#include <exception>

namespace warden::server {

struct DeciderPool::Worker {
  std::unique_ptr<Engine> engine;
  std::uint64_t generation = 0;
  std::thread thread;
};

DeciderPool::DeciderPool(ActivePolicy& policy, EngineOptions options, unsigned workers, Logger log)
    : policy_(policy),
      options_(std::move(options)),
      workers_(workers ? workers : 1),
      log_(std::move(log)) {}

DeciderPool::~DeciderPool() { stop(); }

std::string DeciderPool::start() {
  for (unsigned i = 0; i < workers_; ++i) {
    auto worker = std::make_unique<Worker>();
    try {
      worker->generation = policy_.generation();
      worker->engine = std::make_unique<Engine>(policy_.get(), options_);
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

void DeciderPool::submit(DecideJob job) {
  bool queued = false;
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(std::move(job));
      queued = true;
    }
  }
  if (queued) {
    wake_.notify_one();
  } else if (job.cancelled) {
    job.cancelled();  // stopped: the job never runs
  }
}

void DeciderPool::stop() {
  std::deque<DecideJob> dropped;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_all();
  for (auto& worker : pool_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
  for (DecideJob& job : dropped) {
    if (job.cancelled) job.cancelled();
  }
}

std::size_t DeciderPool::queue_depth() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

void DeciderPool::run(Worker* worker) {
  for (;;) {
    DecideJob job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    // Rebuild the engine between decisions when the rules were swapped.
    std::uint64_t generation = policy_.generation();
    if (generation != worker->generation) {
      try {
        auto engine = std::make_unique<Engine>(policy_.get(), options_);
        worker->engine = std::move(engine);
      } catch (const std::exception& e) {
        log_->error("decision worker keeps its previous rules: cannot build an engine: {}",
                    e.what());
      }
      worker->generation = generation;
    }
    DecideResult result;
    try {
      DecideRequest request;
      request.proposal_json = job.proposal_json;
      request.explain = job.explain;
      request.principal = job.principal;
      request.groups = job.groups;
      result = worker->engine->decide(request);
    } catch (const std::exception& e) {
      // Fail closed: the engine promises not to throw, but a worker must never die.
      log_->error("decision failed: {}", e.what());
      result = DecideResult{};
      result.ok = false;
      result.error.code = "E_INTERNAL";
      result.error.message = std::string("internal error while deciding: ") + e.what();
    } catch (...) {
      log_->error("decision failed: unknown exception");
      result = DecideResult{};
      result.ok = false;
      result.error.code = "E_INTERNAL";
      result.error.message = "internal error while deciding";
    }
    try {
      job.done(std::move(result));
    } catch (const std::exception& e) {
      log_->error("decision completion failed: {}", e.what());
    } catch (...) {
      log_->error("decision completion failed");
    }
  }
}

}  // namespace warden::server
