// Counters of the running daemon, reported by the `status` request. Relaxed atomics:
// written from the I/O thread, the workers and the reloader, read by status.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace warden::server {

struct Stats {
  using Counter = std::atomic<std::uint64_t>;
  Counter connections_accepted{0};
  Counter connections_current{0};
  Counter connections_refused{0};  // over max_connections
  Counter requests{0};
  Counter errors{0};           // error responses of any kind
  Counter protocol_errors{0};  // framing errors and timeouts that closed a connection
  Counter auth_failures{0};
  Counter decisions{0};
  Counter approved{0};
  Counter rejected{0};
  Counter approval_required{0};
  Counter failed_closed{0};  // decisions with an engine error_code
  Counter reloads{0};
  Counter reload_failures{0};

  static void add(Counter& counter, std::uint64_t n = 1) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }
  static std::uint64_t get(const Counter& counter) {
    return counter.load(std::memory_order_relaxed);
  }
};

}  // namespace warden::server
