// The approvals store's state as the daemon's own calls find it: a decorator over
// approvals::Store that notes the outcome of every call (the approval service's requests,
// its sweeper's periodic expiry pass), so `health-check` and `status` can say the store is
// failing while it is, and the daemon's log says so when it starts and when it ends. The
// calls themselves are passed through unchanged, errors included. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "approvals/store.h"
#include "server/log.h"

namespace warden::server {

class StoreHealth {
 public:
  struct Snapshot {
    bool ok = true;
    std::string error;           // the last call's error while failing
    std::uint64_t failures = 0;  // calls that failed since start
  };
  explicit StoreHealth(Logger log) : log_(std::move(log)) {}
  void succeeded();
  void failed(const std::string& error);
  Snapshot get() const;

 private:
  Logger log_;
  mutable std::mutex mutex_;
  Snapshot state_;
};

// `store` with every call's outcome noted in *health (which must outlive the result).
std::unique_ptr<approvals::Store> monitored_store(std::unique_ptr<approvals::Store> store,
                                                  StoreHealth* health);

}  // namespace warden::server
