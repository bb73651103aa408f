#include "actuators/tool.h"

#include <exception>

#include "actuators/action.h"
#include "bindings/json.h"
#include "engine/json_writer.h"

namespace warden::actuators {

std::string ToolActuator::description() const {
  std::string out = "Calls a registered tool with arguments.";
  if (tools_)
    for (const Tool* t : tools_->list()) out += " " + t->name + ": " + t->description;
  return out;
}

std::string ToolActuator::payload_schema_json() const {
  std::string names;
  if (tools_)
    for (const Tool* t : tools_->list()) {
      if (!names.empty()) names += ",";
      append_json_string(names, t->name);
    }
  return R"({"type":"object","properties":{"tool":{"type":"string","enum":[)" + names +
         R"(]},"args":{"type":"object","description":"the tool's arguments"}},"required":["tool"]})";
}

Result ToolActuator::act(std::string_view action_json, const Context& context) {
  ActionDoc doc(action_json);
  if (!doc.ok()) return failure(code::kBadAction, doc.error());
  std::string error;
  std::optional<std::string> name = doc.text("tool", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  if (!name || name->empty()) return failure(code::kBadAction, "payload.tool is missing");
  const Tool* tool = tools_ ? tools_->find(*name) : nullptr;
  if (!tool || !tool->fn) return failure(code::kUnknownTool, "no tool named \"" + *name + "\"");
  std::string args = "{}";
  if (const rapidjson::Value* a = ActionDoc::member(doc.payload(), "args")) {
    if (!a->IsObject()) return failure(code::kBadAction, "payload.args is not an object");
    args = warden::json::to_text(*a);
  }
  Result r;
  try {
    r = tool->fn(args, context);
  } catch (const std::exception& e) {
    return failure(code::kFailed, "tool \"" + *name + "\" failed: " + e.what());
  } catch (...) {
    return failure(code::kFailed, "tool \"" + *name + "\" failed");
  }
  if (!r.ok && r.error_code.empty()) r.error_code = code::kFailed;
  r.details["tool"] = *name;
  return r;
}

}  // namespace warden::actuators
