// Rate-limited logging for events a hostile client can repeat at will (refused or evicted
// connections, failed auth, auth timeouts, framing errors): per kind of event, at most a few
// lines per interval, then one summary line saying how many were left out.
// Thread-safe (a mutex); owned by Connections, used by the listener and the sessions.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "server/log.h"

namespace warden::server {

class ThrottledLog {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ThrottledLog(std::size_t burst = 5, Clock::duration interval = std::chrono::seconds(10))
      : burst_(burst), interval_(interval) {}

  // Logs `message` unless `kind` already logged `burst` lines in this interval; then only
  // counts it. When an interval with suppressed lines is over, one summary line is logged
  // (at the next event of any kind, or at flush()).
  void log(const Logger& logger, spdlog::level::level_enum level, std::string_view kind,
           const std::string& message);
  void flush(const Logger& logger);

 private:
  struct Kind {
    Clock::time_point window_start;
    std::size_t logged = 0;
    std::size_t suppressed = 0;
    spdlog::level::level_enum level = spdlog::level::info;
  };
  void summarize_expired(const Logger& logger, Clock::time_point now, bool all);

  std::size_t burst_;
  Clock::duration interval_;
  std::mutex mutex_;
  std::map<std::string, Kind, std::less<>> kinds_;
};

}  // namespace warden::server
