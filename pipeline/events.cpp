#include "pipeline/events.h"

#include <rapidjson/document.h>

#include "bindings/json.h"
#include "engine/decision_json.h"
#include "engine/json_writer.h"

namespace warden::pipeline::events {
namespace {

// Embeds a JSON object text produced by the engine; anything that does not parse as an
// object (an engine input error leaves the action empty) is written as null.
void append_object(std::string& out, std::string_view json) {
  rapidjson::Document doc;
  if (json.empty() || warden::json::parse(json, &doc, warden::json::Limits::any_depth()) ||
      !doc.IsObject()) {
    out += "null";
    return;
  }
  out += json;
}

void member(std::string& out, std::string_view name, std::string_view value) {
  out += ',';
  append_json_string(out, name);
  out += ':';
  append_json_string(out, value);
}

}  // namespace

std::string decision(const Decision& d, std::string_view stage, int attempt) {
  std::string out = "{\"event\":\"decision\"";
  member(out, "stage", stage);
  out += ",\"attempt\":" + std::to_string(attempt);
  const decision_json::Strings& s = decision_json::plain_strings();
  decision_json::decision_id(out, d, s);
  decision_json::outcome(out, d.outcome);
  decision_json::reason(out, d, s);
  if (!d.error_code.empty()) decision_json::error_code(out, d, s);
  decision_json::rules(out, d, s, decision_json::kOverlay);
  decision_json::name(out, "action");
  append_object(out, d.action_json);
  out += '}';
  return out;
}

std::string approval_required(const Decision& d) {
  std::string out = "{\"event\":\"approval-required\"";
  const decision_json::Strings& s = decision_json::plain_strings();
  decision_json::decision_id(out, d, s);
  decision_json::reason(out, d, s);
  decision_json::rules(out, d, s, decision_json::kOverlay);
  decision_json::name(out, "action");
  append_object(out, d.action_json);
  out += '}';
  return out;
}

std::string reply(std::string_view text) { return notice("reply", text); }

std::string notice(std::string_view kind, std::string_view text) {
  std::string out = "{\"event\":";
  append_json_string(out, kind);
  member(out, "text", text);
  out += '}';
  return out;
}

std::string tool_result(std::string_view target, std::string_view decision_id,
                        const actuators::Result& result) {
  std::string out = result.ok ? "{\"event\":\"tool-output\"" : "{\"event\":\"tool-error\"";
  member(out, "target", target);
  member(out, "decision_id", decision_id);
  if (result.ok) {
    member(out, "output", result.output);
    out += ",\"exit_code\":" + std::to_string(result.exit_code);
    out += ",\"truncated\":";
    out += result.truncated ? "true" : "false";
  } else {
    member(out, "error_code", result.error_code);
    member(out, "error", result.error);
    if (!result.output.empty()) member(out, "output", result.output);
  }
  out += '}';
  return out;
}

std::string dropped(std::string_view reason) {
  std::string out = "{\"event\":\"dropped\"";
  member(out, "reason", reason);
  out += '}';
  return out;
}

std::string error(std::string_view code, std::string_view message) {
  std::string out = "{\"event\":\"error\"";
  member(out, "code", code);
  member(out, "message", message);
  out += '}';
  return out;
}

std::string final_event(std::string_view status, int cycles) {
  std::string out = "{\"event\":\"final\"";
  member(out, "status", status);
  out += ",\"cycles\":" + std::to_string(cycles);
  out += '}';
  return out;
}

}  // namespace warden::pipeline::events
