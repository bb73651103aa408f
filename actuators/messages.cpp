#include "actuators/messages.h"

#include "actuators/action.h"

namespace warden::actuators {
namespace {

// payload.<first name found> as text; an error Result when missing or not a string.
bool message_of(const ActionDoc& doc, std::initializer_list<std::string_view> names,
                std::string* text, Result* error) {
  if (!doc.ok()) {
    *error = failure(code::kBadAction, doc.error());
    return false;
  }
  for (auto name : names) {
    std::string why;
    std::optional<std::string> v = doc.text(name, &why);
    if (!why.empty()) {
      *error = failure(code::kBadAction, why);
      return false;
    }
    if (v) {
      *text = std::move(*v);
      return true;
    }
  }
  *error = failure(code::kBadAction, "payload." + std::string(*names.begin()) + " is missing");
  return false;
}

Result done(std::string text) {
  Result r;
  r.ok = true;
  r.output = std::move(text);
  return r;
}

}  // namespace

std::string MessageActuator::payload_schema_json() const {
  const std::string key(key_);
  return R"({"type":"object","properties":{")" + key + R"(":{"type":"string"}},"required":[")" +
         key + R"("]})";
}
Result MessageActuator::act(std::string_view action_json, const Context& context) {
  std::string text;
  Result error;
  if (!message_of(ActionDoc(action_json), {key_, other_}, &text, &error)) return error;
  deliver(text, context);
  return done(std::move(text));
}

ReplyActuator::ReplyActuator(bool silent)
    : MessageActuator({"reply", "Sends a message to the user.", "text", "message"}, nullptr,
                      silent) {}
void ReplyActuator::deliver(const std::string& text, const Context& context) {
  if (context.notify) context.notify("reply", text);
}

LogActuator::LogActuator(LogFunction log, bool silent)
    : MessageActuator({"log", "Writes a line to the daemon's log.", "message", "text"},
                      std::move(log), silent) {}
void LogActuator::deliver(const std::string& text, const Context&) {
  if (log_) log_(text);
}

SystemActuator::SystemActuator(LogFunction log, bool silent)
    : MessageActuator(
          {"system", "Posts a system notice to the user and the daemon's log.", "message", "text"},
          std::move(log), silent) {}
void SystemActuator::deliver(const std::string& text, const Context& context) {
  if (context.notify) context.notify("system", text);
  if (log_) log_("system: " + text);
}

}  // namespace warden::actuators
