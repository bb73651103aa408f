#include "server/pipeline_workers.h"

#include <algorithm>
#include <exception>

namespace warden::server {

PipelineWorkers::PipelineWorkers(unsigned threads, std::size_t max_queue, Logger log)
    : threads_(threads ? threads : 1), log_(std::move(log)), waiting_(max_queue, max_queue / 4) {}

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
    const std::string principal = job.principal;
    if (!waiting_.push(principal, job)) return Submitted::Busy;
  }
  wake_.notify_one();
  return Submitted::Queued;
}

void PipelineWorkers::stop() {
  std::vector<PipelineJob> left;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    waiting_.drain(&left);
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
  return waiting_.size();
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
      wake_.wait(lock, [&] { return stopping_ || waiting_.size() > 0; });
      if (stopping_) return;  // stop() cancels what is queued
      waiting_.take(&job);    // round-robin: the next principal's oldest run
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
