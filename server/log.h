// The daemon's logger: spdlog to stderr, as text or as JSON lines (log.json). Each Daemon
// makes its own logger, so several daemons (tests) can run in one process. spdlog loggers
// are thread-safe (the _mt sink).
//
// Structured fields: log_with() gives one line named fields (principal, session,
// decision_id, rule, outcome, error_code …). JSON lines carry each as its own member
// ({"time","level","msg",…fields}); text lines end with ` key=value` pairs. Values are text
// from outside and are escaped as such (JSON string escapes; log_text in text lines).
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden::server {

using Logger = std::shared_ptr<spdlog::logger>;

// level: trace, debug, info, warn, error, off (validated by the config).
Logger make_logger(const std::string& level, bool json);
// The same formats written to `sink` (tests read what a daemon would write to stderr).
Logger make_logger(const std::string& level, bool json, spdlog::sink_ptr sink);

// Text from outside the daemon (a model's log line, an actuator's message, a reason) made
// safe for one line of the text log: C0 controls and DEL as \n \r \t or \xNN, C1 controls
// (U+0080–U+009F) as \uNNNN, bytes that are not UTF-8 as \xNN. A log line cannot be split
// in two, forged, or move an operator's terminal.
std::string log_text(std::string_view text);

// Named fields of one log line. Keys are the daemon's own constants (lower_snake_case, never
// "time", "level" or "msg"); values may be anything.
class LogFields {
 public:
  LogFields& add(std::string_view key, std::string_view value) {
    items_.emplace_back(key, std::string(value));
    return *this;
  }
  const std::vector<std::pair<std::string_view, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string_view, std::string>> items_;
};

namespace log_detail {
// While alive, lines this thread logs carry `fields` (the formatters read them; spdlog's sinks
// format on the logging thread).
class FieldsScope {
 public:
  explicit FieldsScope(const LogFields* fields);
  ~FieldsScope();
  FieldsScope(const FieldsScope&) = delete;
  FieldsScope& operator=(const FieldsScope&) = delete;

 private:
  const LogFields* previous_;
};
}  // namespace log_detail

// log->log(level, fmt, args…) with `fields` on the line.
template <typename... Args>
void log_with(const Logger& log, spdlog::level::level_enum level, const LogFields& fields,
              spdlog::format_string_t<Args...> fmt, Args&&... args) {
  if (!log->should_log(level)) return;
  log_detail::FieldsScope scope(&fields);
  log->log(level, fmt, std::forward<Args>(args)...);
}

}  // namespace warden::server
