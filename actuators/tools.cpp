#include "actuators/tools.h"

#include <ctime>
#include <stdexcept>

#include "actuators/action.h"
#include "bindings/digest.h"

namespace warden::actuators {

void ToolRegistry::add(Tool tool) {
  std::string name = tool.name;
  tools_[name] = std::move(tool);
}

const Tool* ToolRegistry::find(std::string_view name) const {
  auto it = tools_.find(name);
  return it == tools_.end() ? nullptr : &it->second;
}

std::vector<const Tool*> ToolRegistry::list() const {
  std::vector<const Tool*> out;
  for (const auto& [_, tool] : tools_) out.push_back(&tool);
  return out;
}

namespace {

Result ok(std::string output) {
  Result r;
  r.ok = true;
  r.output = std::move(output);
  return r;
}

Result sha256_of(std::string_view args_json) {
  ActionDoc args(args_json);
  if (!args.ok()) return failure(code::kBadAction, "args: " + args.error());
  const rapidjson::Value* text = ActionDoc::member(args.root(), "text");
  if (!text || !text->IsString())
    return failure(code::kBadAction, "args.text (a string) is missing");
  try {
    return ok(digest::sha256_hex(std::string_view(text->GetString(), text->GetStringLength())));
  } catch (const std::runtime_error&) {
    return failure(code::kFailed, "SHA-256 failed");
  }
}

}  // namespace

void add_builtin_tools(ToolRegistry& registry,
                       std::function<std::chrono::system_clock::time_point()> clock) {
  if (!clock) clock = [] { return std::chrono::system_clock::now(); };
  registry.add(Tool{"now", "The current date and time in UTC (ISO 8601).",
                    R"({"type":"object","properties":{}})",
                    [clock](std::string_view, const Context&) {
                      std::time_t t = std::chrono::system_clock::to_time_t(clock());
                      std::tm tm{};
                      ::gmtime_r(&t, &tm);
                      char buf[32];
                      std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
                      return ok(buf);
                    }});
  registry.add(
      Tool{"sha256", "The SHA-256 digest (hex) of a text.",
           R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})",
           [](std::string_view args, const Context&) { return sha256_of(args); }});
}

}  // namespace warden::actuators
