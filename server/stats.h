// Counters of the running daemon, reported by the `status` request and on /metrics
// (server/metrics.h). Relaxed atomics: written from the I/O thread, the workers and the
// reloader, read by status and the metrics listener. Every label set is bounded: outcomes,
// the stable error codes (engine/diagnostic.h), the rules loaded since start.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/diagnostic.h"

namespace warden::server {

// A latency histogram of fixed buckets (upper bounds in µs, Prometheus `le` in seconds):
// 50 µs to 1 s, then +Inf. Each bucket counts its own observations (not cumulative).
class LatencyHistogram {
 public:
  static constexpr std::array<std::uint64_t, 14> kBoundsUs = {
      50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000};
  // The bounds as Prometheus writes them (seconds), index for index.
  static constexpr std::array<const char*, 14> kBoundsText = {
      "0.00005", "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005",
      "0.01",    "0.025",  "0.05",    "0.1",    "0.25",  "0.5",    "1"};

  void observe(std::uint64_t us) {
    std::size_t i = 0;
    while (i < kBoundsUs.size() && us > kBoundsUs[i]) ++i;
    buckets_[i].fetch_add(1, std::memory_order_relaxed);
    sum_us_.fetch_add(us, std::memory_order_relaxed);
  }
  struct Snapshot {
    std::array<std::uint64_t, 15> cumulative{};  // observations <= each bound; last: all
    std::uint64_t sum_us = 0;
    std::uint64_t count() const { return cumulative.back(); }
  };
  // Each bucket is read once, so count (the last cumulative bucket) is their sum.
  Snapshot snapshot() const {
    Snapshot s;
    std::uint64_t running = 0;
    for (std::size_t i = 0; i < buckets_.size(); ++i) {
      running += buckets_[i].load(std::memory_order_relaxed);
      s.cumulative[i] = running;
    }
    s.sum_us = sum_us_.load(std::memory_order_relaxed);
    return s;
  }

 private:
  std::array<std::atomic<std::uint64_t>, 15> buckets_{};
  std::atomic<std::uint64_t> sum_us_{0};
};

// Decisions failed closed, by their stable error code (warden::code::kTable); a code not in
// the table is counted as "other".
class CodeCounters {
 public:
  static constexpr std::size_t kCodes = std::size(code::kTable);
  void add(std::string_view error_code) {
    std::size_t i = 0;
    while (i < kCodes && std::string_view(code::kTable[i].code) != error_code) ++i;
    counts_[i].fetch_add(1, std::memory_order_relaxed);
  }
  // The code at index i, or "other" for i == kCodes.
  static const char* name(std::size_t i) { return i < kCodes ? code::kTable[i].code : "other"; }
  std::uint64_t get(std::size_t i) const { return counts_[i].load(std::memory_order_relaxed); }

 private:
  std::array<std::atomic<std::uint64_t>, kCodes + 1> counts_{};
};

// Decisions each loaded rule took part in: those where it asserted an enforcing decision fact
// and those where it asserted a monitor one. Only names of rules loaded since start are
// counted (`loaded` is called with every rule set put in force); a decision fact crediting any
// other name is counted as unlisted. Names are never forgotten: a counter continues when a rule
// comes back. Thread-safe.
class RuleCounters {
 public:
  struct Counts {
    std::atomic<std::uint64_t> enforce{0}, monitor{0};
  };
  struct Row {
    std::string rule;
    std::uint64_t enforce = 0, monitor = 0;
  };

  // The rules in force from now on (their names, in load order).
  void loaded(const std::vector<std::string>& names) {
    std::unique_lock lock(mutex_);
    for (const std::string& name : names) {
      auto& slot = counts_[name];
      if (!slot) slot = std::make_unique<Counts>();
    }
    current_ = names;
  }
  void add(std::string_view rule, bool monitor) {
    {
      std::shared_lock lock(mutex_);
      auto it = counts_.find(std::string(rule));
      if (it != counts_.end()) {
        (monitor ? it->second->monitor : it->second->enforce)
            .fetch_add(1, std::memory_order_relaxed);
        return;
      }
    }
    unlisted_.fetch_add(1, std::memory_order_relaxed);
  }
  // The rules in force, in load order, with their counts.
  std::vector<Row> rows() const {
    std::shared_lock lock(mutex_);
    std::vector<Row> out;
    out.reserve(current_.size());
    for (const std::string& name : current_) {
      auto it = counts_.find(name);
      if (it == counts_.end()) continue;
      out.push_back({name, it->second->enforce.load(std::memory_order_relaxed),
                     it->second->monitor.load(std::memory_order_relaxed)});
    }
    return out;
  }
  std::uint64_t unlisted() const { return unlisted_.load(std::memory_order_relaxed); }

 private:
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<Counts>> counts_;
  std::vector<std::string> current_;
  std::atomic<std::uint64_t> unlisted_{0};
};

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
  Counter defaulted{0};      // decisions no enforcing rule decided (default_outcome)
  Counter reloads{0};
  Counter reload_failures{0};
  // By error code, rule and time taken (/metrics).
  CodeCounters failed_closed_by_code;
  RuleCounters rules;
  LatencyHistogram decision_seconds;  // the rules' run (Decision::elapsed_us)
  // The metrics listener (server/metrics_http.h): answers by status code, and connections
  // closed unanswered because max_connections were open.
  std::array<Counter, 6> http_responses{};  // index: http_status_index()
  Counter http_refused{0};

  static void add(Counter& counter, std::uint64_t n = 1) {
    counter.fetch_add(n, std::memory_order_relaxed);
  }
  static std::uint64_t get(const Counter& counter) {
    return counter.load(std::memory_order_relaxed);
  }
  // A decision failed closed with this code (also counted in failed_closed).
  void add_failed_closed(std::string_view code) {
    add(failed_closed);
    failed_closed_by_code.add(code);
  }

  // The status codes the metrics listener answers with, in http_responses order.
  static constexpr std::array<unsigned, 6> kHttpStatuses = {200, 400, 404, 405, 431, 503};
  static std::size_t http_status_index(unsigned status) {
    for (std::size_t i = 0; i < kHttpStatuses.size(); ++i) {
      if (kHttpStatuses[i] == status) return i;
    }
    return 1;  // counted as 400
  }
};

}  // namespace warden::server
