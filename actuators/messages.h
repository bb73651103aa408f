// The silent actuators: `reply` (a message to the requester, through Context::notify),
// `log` (a line to the daemon's log) and `system` (a notice to the requester and the log).
// They produce no feedback signal by default (ActuatorsConfig::silent). Thread-safe when the
// log function is.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "actuators/actuator.h"

namespace warden::actuators {

using LogFunction = std::function<void(std::string_view)>;

// One text from the payload (member `key`, else `other`) delivered somewhere: the three differ
// only in the member they read first and where the text goes.
class MessageActuator : public Actuator {
 public:
  std::string_view name() const override { return name_; }
  bool silent() const override { return silent_; }
  std::string description() const override { return std::string(description_); }
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) final;

 protected:
  struct Kind {
    std::string_view name, description, key, other;
  };
  MessageActuator(Kind kind, LogFunction log, bool silent)
      : log_(std::move(log)),
        name_(kind.name),
        description_(kind.description),
        key_(kind.key),
        other_(kind.other),
        silent_(silent) {}
  virtual void deliver(const std::string& text, const Context& context) = 0;

  LogFunction log_;

 private:
  std::string_view name_, description_, key_, other_;
  bool silent_;
};

class ReplyActuator : public MessageActuator {
 public:
  explicit ReplyActuator(bool silent);

 protected:
  void deliver(const std::string& text, const Context& context) override;
};

class LogActuator : public MessageActuator {
 public:
  LogActuator(LogFunction log, bool silent);

 protected:
  void deliver(const std::string& text, const Context& context) override;
};

class SystemActuator : public MessageActuator {
 public:
  SystemActuator(LogFunction log, bool silent);

 protected:
  void deliver(const std::string& text, const Context& context) override;
};

}  // namespace warden::actuators
