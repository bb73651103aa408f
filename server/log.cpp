#include "server/log.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <chrono>
#include <ctime>

#include "server/json_text.h"

namespace warden::server {

namespace {

// {"time":"2024-01-01T12:00:00.123Z","level":"info","logger":"warden","msg":"…"}
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    using namespace std::chrono;
    auto since = msg.time.time_since_epoch();
    std::time_t secs = duration_cast<seconds>(since).count();
    auto millis = duration_cast<milliseconds>(since).count() % 1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(millis));
    std::string line = "{\"time\":\"";
    line += stamp;
    line += "\",\"level\":";
    auto level = spdlog::level::to_string_view(msg.level);
    append_json_string(line, std::string_view(level.data(), level.size()));
    line += ",\"msg\":";
    append_json_string(line, std::string_view(msg.payload.data(), msg.payload.size()));
    line += "}\n";
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

Logger make_logger(const std::string& level, bool json) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("warden", sink);
  if (json) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  }
  logger->set_level(spdlog::level::from_str(level));
  logger->flush_on(spdlog::level::warn);
  return logger;
}

}  // namespace warden::server
