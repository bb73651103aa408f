#include "server/pipeline_workers.h"

#include <algorithm>
#include <exception>

namespace warden::server {

PipelineWorkers::PipelineWorkers(unsigned threads, std::size_t max_queue, Logger log)
    : threads_(threads ? threads : 1),
      max_queue_(max_queue),
      per_principal_(std::max<std::size_t>(1, max_queue / 4)),
      log_(std::move(log)) {}

PipelineWorkers::~PipelineWorkers() { stop(); }

std::string PipelineWorkers::start() {
  try {
    for (unsigned i = 0; i < threads_; ++i) pool_.emplace_back([this] { loop(); });
  } catch (const std::exception& e) {
    stop();
    return std::string("cannot start a pipeline thread: ") + e.what();
  }
  return {};
}

PipelineWorkers::Submitted PipelineWorkers::submit(PipelineJob job) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return Submitted::Stopped;
    if (queued_ >= max_queue_) return Submitted::Busy;
    std::deque<PipelineJob>& line = waiting_[job.principal];
    if (line.size() >= per_principal_) return Submitted::Busy;
    if (line.empty()) turns_.push_back(job.principal);
    line.push_back(std::move(job));
    ++queued_;
  }
  wake_.notify_one();
  return Submitted::Queued;
}

void PipelineWorkers::stop() {
  std::deque<PipelineJob> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    for (auto& [principal, line] : waiting_) {
      for (PipelineJob& job : line) left.push_back(std::move(job));
    }
    waiting_.clear();
    turns_.clear();
    queued_ = 0;
  }
  wake_.notify_all();
  for (PipelineJob& job : left) {
    try {
      if (job.cancelled) job.cancelled();
    } catch (const std::exception& e) {
      log_->error("pipeline job cancellation failed: {}", e.what());
    }
  }
  for (std::thread& t : pool_) {
    if (t.joinable()) t.join();
  }
  pool_.clear();
}

std::size_t PipelineWorkers::queued() const {
  std::lock_guard lock(mutex_);
  return queued_;
}

std::size_t PipelineWorkers::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

void PipelineWorkers::loop() {
  for (;;) {
    PipelineJob job;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || queued_ > 0; });
      if (stopping_) return;  // stop() cancels what is queued
      // Round-robin: the next principal's oldest run; the principal goes to the back of
      // the turns while it has more waiting.
      std::string principal = std::move(turns_.front());
      turns_.pop_front();
      auto it = waiting_.find(principal);
      job = std::move(it->second.front());
      it->second.pop_front();
      --queued_;
      if (it->second.empty()) {
        waiting_.erase(it);
      } else {
        turns_.push_back(std::move(principal));
      }
      ++running_;
    }
    try {
      job.run();
    } catch (const std::exception& e) {
      log_->error("pipeline run failed: {}", e.what());
    } catch (...) {
      log_->error("pipeline run failed: unknown exception");
    }
    std::lock_guard lock(mutex_);
    --running_;
  }
}

}  // namespace warden::server
