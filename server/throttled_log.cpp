#include "server/throttled_log.h"

namespace warden::server {

void ThrottledLog::log(const Logger& logger, spdlog::level::level_enum level, std::string_view kind,
                       const std::string& message) {
  if (!logger) return;
  std::lock_guard lock(mutex_);
  auto now = Clock::now();
  summarize_expired(logger, now, false);
  auto it = kinds_.find(kind);
  if (it == kinds_.end()) it = kinds_.emplace(std::string(kind), Kind{now, 0, 0, level}).first;
  Kind& k = it->second;
  if (k.logged < burst_) {
    ++k.logged;
    logger->log(level, "{}", message);
  } else {
    ++k.suppressed;
  }
}

void ThrottledLog::flush(const Logger& logger) {
  if (!logger) return;
  std::lock_guard lock(mutex_);
  summarize_expired(logger, Clock::now(), true);
}

void ThrottledLog::summarize_expired(const Logger& logger, Clock::time_point now, bool all) {
  for (auto it = kinds_.begin(); it != kinds_.end();) {
    Kind& k = it->second;
    if (!all && now - k.window_start < interval_) {
      ++it;
      continue;
    }
    if (k.suppressed > 0) {
      auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - k.window_start);
      logger->log(k.level, "{}: {} more in the last {} s (not logged one by one)", it->first,
                  k.suppressed, seconds.count());
    }
    it = kinds_.erase(it);
  }
}

}  // namespace warden::server
