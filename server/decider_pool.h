// Decision workers: a fixed set of threads, each with its own Engine (a CLIPS environment is
// single-threaded), taking proposals from one queue. The I/O thread only enqueues; it never
// waits on a decision. A worker rebuilds its Engine when the ActivePolicy generation changes,
// between decisions, so a decision always finishes on the rules it began with.
// submit() and queue_depth() are thread-safe; start()/stop() belong to the daemon's main thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"
#include "server/active_policy.h"
#include "server/log.h"

namespace warden::server {

struct DecideJob {
  std::string proposal_json;
  bool explain = false;
  std::optional<std::string> principal;  // the authenticated principal (rules see it)
  std::vector<std::string> groups;       // its groups from the token file
  // Runs on the worker thread with the result; must not throw (exceptions are caught and
  // logged). Called exactly once, unless the pool is stopped before the job starts, in which
  // case `cancelled` is called instead (if set).
  std::function<void(DecideResult&&)> done;
  std::function<void()> cancelled;
};

class DeciderPool {
 public:
  DeciderPool(ActivePolicy& policy, EngineOptions options, unsigned workers, Logger log);
  ~DeciderPool();
  DeciderPool(const DeciderPool&) = delete;
  DeciderPool& operator=(const DeciderPool&) = delete;

  // Builds one Engine per worker and starts the threads. Returns an error text on failure.
  std::string start();
  void submit(DecideJob job);
  // Stops the workers after their current job; queued jobs are cancelled.
  void stop();

  std::size_t queue_depth() const;
  unsigned size() const { return workers_; }

 private:
  struct Worker;
  void run(Worker* worker);

  ActivePolicy& policy_;
  EngineOptions options_;
  unsigned workers_;
  Logger log_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<DecideJob> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Worker>> pool_;
};

}  // namespace warden::server
