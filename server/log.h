// The daemon's logger: spdlog to stderr, as text or as JSON lines (log.json). Each Daemon
// makes its own logger, so several daemons (tests) can run in one process. spdlog loggers
// are thread-safe (the _mt sink).
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>
#include <string_view>

namespace warden::server {

using Logger = std::shared_ptr<spdlog::logger>;

// level: trace, debug, info, warn, error, off (validated by the config).
Logger make_logger(const std::string& level, bool json);

// Text from outside the daemon (a model's log line, an actuator's message, a reason) made
// safe for one line of the text log: C0 controls and DEL as \n \r \t or \xNN, C1 controls
// (U+0080–U+009F) as \uNNNN, bytes that are not UTF-8 as \xNN. A log line cannot be split
// in two, forged, or move an operator's terminal.
std::string log_text(std::string_view text);

}  // namespace warden::server
