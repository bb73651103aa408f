// Pipeline threads: a fixed set of threads that run `submit` requests through the pipeline
// (model calls, decisions, actuators — each run blocks its thread for as long as it takes),
// fed by a bounded queue with one line per principal: threads take one run from each
// waiting principal in turn, and no principal holds more than a quarter of the queue
// (at least one place), so an agent that floods waits behind its own backlog and cannot
// make every other agent's submit E_BUSY. Decisions stay on the DeciderPool: a pipeline thread
// waits for its decision there, never the other way round, so the two pools cannot deadlock.
// submit() is thread-safe; start()/stop() belong to the daemon's main thread. A job's
// callbacks run on a pipeline thread (or in stop()).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server/fair_queue.h"
#include "server/log.h"

namespace warden::server {

struct PipelineJob {
  std::string principal;  // whose run: the queue is shared fairly between principals
  // Exactly one is called, once: run on a pipeline thread, or cancelled when the job will
  // never run (the daemon stopped first). Neither may throw (exceptions are caught and logged).
  std::function<void()> run;
  std::function<void()> cancelled;
};

class PipelineWorkers {
 public:
  enum class Submitted { Queued, Busy, Stopped };

  PipelineWorkers(unsigned threads, std::size_t max_queue, Logger log);
  ~PipelineWorkers();
  PipelineWorkers(const PipelineWorkers&) = delete;
  PipelineWorkers& operator=(const PipelineWorkers&) = delete;

  // Starts the threads; an error text when a thread cannot be made.
  std::string start();
  Submitted submit(PipelineJob job);
  // Cancels the jobs still queued, then waits for the running ones to return (a run
  // whose requester is gone stops at its next step).
  void stop();

  std::size_t queued() const;
  // Runs one principal may have waiting: a quarter of max_queue, at least 1.
  std::size_t max_queued_per_principal() const { return waiting_.max_per_key(); }
  std::size_t running() const;
  unsigned size() const { return threads_; }

 private:
  void loop();

  const unsigned threads_;
  Logger log_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  FairQueue<PipelineJob> waiting_;  // one line per principal
  std::size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> pool_;
};

}  // namespace warden::server
