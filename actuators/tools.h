// ToolRegistry: C++ functions the model may call through the `tool` actuator, each with a
// name, a description and a JSON Schema of its arguments (these also feed the model's
// catalog). Built at startup, then only read: concurrent find() and list() are safe; add()
// is not safe concurrently with anything.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actuators/actuator.h"

namespace warden::actuators {

struct Tool {
  std::string name;
  std::string description;
  std::string args_schema_json = "{\"type\":\"object\"}";
  // args_json: the approved payload.args object. Returns the result; may throw (the tool
  // actuator turns an exception into E_ACT_FAILED).
  std::function<Result(std::string_view args_json, const Context& context)> fn;
};

class ToolRegistry {
 public:
  // Replaces a tool of the same name.
  void add(Tool tool);
  const Tool* find(std::string_view name) const;
  std::vector<const Tool*> list() const;  // by name

 private:
  std::map<std::string, Tool, std::less<>> tools_;
};

// Harmless built-ins: `now` (the current UTC time, ISO 8601) and `sha256` (the hex SHA-256 of
// args.text). `clock` defaults to the system clock (tests inject one).
void add_builtin_tools(ToolRegistry& registry,
                       std::function<std::chrono::system_clock::time_point()> clock = {});

}  // namespace warden::actuators
