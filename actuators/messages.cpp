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

std::string ReplyActuator::description() const { return "Sends a message to the user."; }
std::string ReplyActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})";
}
Result ReplyActuator::act(std::string_view action_json, const Context& context) {
  std::string text;
  Result error;
  if (!message_of(ActionDoc(action_json), {"text", "message"}, &text, &error)) return error;
  if (context.notify) context.notify("reply", text);
  return done(std::move(text));
}

std::string LogActuator::description() const { return "Writes a line to the daemon's log."; }
std::string LogActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]})";
}
Result LogActuator::act(std::string_view action_json, const Context&) {
  std::string text;
  Result error;
  if (!message_of(ActionDoc(action_json), {"message", "text"}, &text, &error)) return error;
  if (log_) log_(text);
  return done(std::move(text));
}

std::string SystemActuator::description() const {
  return "Posts a system notice to the user and the daemon's log.";
}
std::string SystemActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]})";
}
Result SystemActuator::act(std::string_view action_json, const Context& context) {
  std::string text;
  Result error;
  if (!message_of(ActionDoc(action_json), {"message", "text"}, &text, &error)) return error;
  if (context.notify) context.notify("system", text);
  if (log_) log_("system: " + text);
  return done(std::move(text));
}

}  // namespace warden::actuators
