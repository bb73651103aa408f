// The rule set currently in force: a shared_ptr<const Policy> swapped atomically by reloads
// and read by decision workers. A generation counter lets workers notice a swap with one
// atomic load per decision. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "engine/engine.h"

namespace warden::server {

class ActivePolicy {
 public:
  void set(std::shared_ptr<const Policy> policy) {
    std::lock_guard lock(mutex_);
    policy_ = std::move(policy);
    loaded_at_ = std::chrono::system_clock::now();
    generation_.fetch_add(1, std::memory_order_release);
  }

  std::shared_ptr<const Policy> get() const {
    std::lock_guard lock(mutex_);
    return policy_;
  }

  // Incremented by every set(); workers compare it with the one their Engine was built for.
  std::uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

  std::chrono::system_clock::time_point loaded_at() const {
    std::lock_guard lock(mutex_);
    return loaded_at_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const Policy> policy_;
  std::chrono::system_clock::time_point loaded_at_{};
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace warden::server
