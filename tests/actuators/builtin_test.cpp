// Tests for register_builtin, the silent actuators (reply, log, system), the tool actuator
// and the built-in tools. Run with: actuators_tests "[builtin]".
#include "actuators/builtin.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "actuators/action.h"
#include "actuators/tool.h"

using namespace warden::actuators;

TEST_CASE("register_builtin adds every built-in with a catalog entry", "[builtin]") {
  Registry registry;
  ToolRegistry tools;
  add_builtin_tools(tools);
  register_builtin(registry, ActuatorsConfig{}, &tools, nullptr);
  CHECK(registry.names() ==
        std::vector<std::string>{"file", "http", "log", "reply", "shell", "system", "tool"});
  for (const auto& name : registry.names()) {
    INFO(name);
    Actuator* a = registry.find(name);
    REQUIRE(a);
    CHECK(a->name() == name);
    CHECK_FALSE(a->description().empty());
    rapidjson::Document schema;
    schema.Parse(a->payload_schema_json().c_str());
    REQUIRE_FALSE(schema.HasParseError());
    CHECK(schema.IsObject());
    CHECK(std::string(schema["type"].GetString()) == "object");
    const bool expect_silent = name == "reply" || name == "log" || name == "system";
    CHECK(a->silent() == expect_silent);
  }
  CHECK(registry.find("tool")->payload_schema_json().find("\"sha256\"") != std::string::npos);
  CHECK(registry.find("tool")->description().find("now") != std::string::npos);
}

TEST_CASE("register_builtin: ActuatorsConfig::silent decides which actuators are silent",
          "[builtin]") {
  Registry registry;
  ActuatorsConfig config;
  config.silent = {"http"};
  register_builtin(registry, config, nullptr, nullptr);
  CHECK(registry.find("http")->silent());
  CHECK_FALSE(registry.find("reply")->silent());
}

TEST_CASE("reply, log and system reach the requester and the log", "[builtin]") {
  std::vector<std::string> logged;
  std::vector<std::pair<std::string, std::string>> notified;
  Registry registry;
  register_builtin(registry, ActuatorsConfig{}, nullptr,
                   [&](std::string_view line) { logged.emplace_back(line); });
  Context context;
  context.notify = [&](std::string_view kind, std::string_view text) {
    notified.emplace_back(kind, text);
  };

  Result reply =
      registry.find("reply")->act(R"({"target":"reply","payload":{"text":"hello"}})", context);
  REQUIRE(reply.ok);
  Result log =
      registry.find("log")->act(R"({"target":"log","payload":{"message":"noted"}})", context);
  REQUIRE(log.ok);
  Result system = registry.find("system")->act(
      R"({"target":"system","payload":{"message":"restarting"}})", context);
  REQUIRE(system.ok);
  CHECK(notified == std::vector<std::pair<std::string, std::string>>{{"reply", "hello"},
                                                                     {"system", "restarting"}});
  CHECK(logged == std::vector<std::string>{"noted", "system: restarting"});

  CHECK(registry.find("reply")->act(R"({"target":"reply","payload":{}})", context).error_code ==
        "E_ACT_BAD_ACTION");
  CHECK(registry.find("reply")
            ->act(R"({"target":"reply","payload":{"text":5}})", context)
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(registry.find("reply")
            ->act(R"({"target":"reply","payload":{"text":"a","TEXT":"b"}})", context)
            .error_code == "E_ACT_BAD_ACTION");
  Result no_connection =
      registry.find("reply")->act(R"({"target":"reply","payload":{"text":"x"}})", Context{});
  CHECK(no_connection.ok);
  CHECK(notified.size() == 2);
}

TEST_CASE("tool runs a registered tool with the approved arguments", "[builtin]") {
  ToolRegistry tools;
  add_builtin_tools(tools, [] {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1700000000));
  });
  std::string seen_args;
  tools.add(Tool{"echo", "Echoes its arguments.", "{\"type\":\"object\"}",
                 [&](std::string_view args, const Context&) {
                   seen_args = std::string(args);
                   Result r;
                   r.ok = true;
                   r.output = "echoed";
                   return r;
                 }});
  tools.add(Tool{"broken", "Throws.", "{\"type\":\"object\"}",
                 [](std::string_view, const Context&) -> Result {
                   throw std::runtime_error("disk on fire");
                 }});
  Registry registry;
  register_builtin(registry, ActuatorsConfig{}, &tools, nullptr);
  Actuator* tool = registry.find("tool");

  Result now =
      tool->act(R"({"target":"tool","action":"call","payload":{"tool":"now"}})", Context{});
  REQUIRE(now.ok);
  CHECK(now.output == "2023-11-14T22:13:20Z");
  Result sha = tool->act(
      R"({"target":"tool","action":"call","payload":{"tool":"sha256","args":{"text":"abc"}}})",
      Context{});
  REQUIRE(sha.ok);
  CHECK(sha.output == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Result echo =
      tool->act(R"({"target":"tool","payload":{"tool":"echo","args":{"a":[1,"b"]}}})", Context{});
  REQUIRE(echo.ok);
  CHECK(seen_args == R"({"a":[1,"b"]})");
  CHECK(echo.details["tool"] == "echo");

  CHECK(tool->act(R"({"target":"tool","payload":{"tool":"sha256","args":{}}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
  CHECK(tool->act(R"({"target":"tool","payload":{"tool":"rm"}})", Context{}).error_code ==
        "E_ACT_UNKNOWN_TOOL");
  CHECK(tool->act(R"({"target":"tool","payload":{"tool":"echo","args":[1]}})", Context{})
            .error_code == "E_ACT_BAD_ACTION");
  Result broken = tool->act(R"({"target":"tool","payload":{"tool":"broken"}})", Context{});
  CHECK(broken.error_code == "E_ACT_FAILED");
  CHECK(broken.error.find("disk on fire") != std::string::npos);

  ToolActuator none(nullptr, false);
  CHECK(none.act(R"({"target":"tool","payload":{"tool":"now"}})", Context{}).error_code ==
        "E_ACT_UNKNOWN_TOOL");
}

// ActionDoc reads the decided action with the shared JSON parser (bindings/json.h): what it
// refuses, every actuator refuses with the reason in words.
TEST_CASE("ActionDoc refuses a NUL after the action and a misread zero", "[builtin]") {
  using namespace std::string_literals;
  CHECK(ActionDoc(R"({"target":"shell","payload":{"command":"ls"}})").ok());
  const ActionDoc nul("{\"target\":\"shell\",\"payload\":{\"command\":\"ls\"}}\0rm -rf /"s);
  CHECK_FALSE(nul.ok());
  CHECK(nul.error() == "the action is not JSON: NUL byte");
  // The daemon's own text: its bytes read as they were written (json::parse_stored).
  CHECK(ActionDoc("{\"target\":\"shell\",\"payload\":{\"command\":\"\xff\"}}").ok());
  const ActionDoc zero(R"({"target":"shell","payload":{"timeout":0e66}})");
  CHECK(zero.error() == "the action is not JSON: Number too big to be stored in double.");
  // As before: a syntax error in RapidJSON's words, and the ambiguity walk's own depth.
  CHECK(ActionDoc("{").error() == "the action is not JSON: Missing a name for object member.");
  CHECK(ActionDoc("{\"a\":" + std::string(70, '[') + std::string(70, ']') + "}").error() ==
        "ambiguous action: nested too deep");
}
