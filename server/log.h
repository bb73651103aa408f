// The daemon's logger: spdlog to stderr, as text or as JSON lines (log.json). Each Daemon
// makes its own logger, so several daemons (tests) can run in one process. spdlog loggers
// are thread-safe (the _mt sink).
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace warden::server {

using Logger = std::shared_ptr<spdlog::logger>;

// level: trace, debug, info, warn, error, off (validated by the config).
Logger make_logger(const std::string& level, bool json);

}  // namespace warden::server
