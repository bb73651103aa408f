// The silent actuators: `reply` (a message to the requester, through Context::notify),
// `log` (a line to the daemon's log) and `system` (a notice to the requester and the log).
// They produce no feedback signal by default (ActuatorsConfig::silent). Thread-safe when the
// log function is.
#pragma once

#include <functional>
#include <string_view>

#include "actuators/actuator.h"

namespace warden::actuators {

using LogFunction = std::function<void(std::string_view)>;

class ReplyActuator : public Actuator {
 public:
  explicit ReplyActuator(bool silent) : silent_(silent) {}
  std::string_view name() const override { return "reply"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  bool silent_;
};

class LogActuator : public Actuator {
 public:
  LogActuator(LogFunction log, bool silent) : log_(std::move(log)), silent_(silent) {}
  std::string_view name() const override { return "log"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  LogFunction log_;
  bool silent_;
};

class SystemActuator : public Actuator {
 public:
  SystemActuator(LogFunction log, bool silent) : log_(std::move(log)), silent_(silent) {}
  std::string_view name() const override { return "system"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  LogFunction log_;
  bool silent_;
};

}  // namespace warden::actuators
