// The pipeline with the built-in actuators: real processes in a temporary workspace, the
// reply actuator's text as the requester's reply event, capabilities from the rules.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "actuators/builtin.h"
#include "actuators/tools.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::pipeline;
using namespace warden::pipeline::test;
using Kinds = std::vector<std::string>;
namespace fs = std::filesystem;

namespace {

struct Workspace {
  Workspace() {
    fs::create_directories(path / "victim");
    std::ofstream(path / "a.txt") << "alpha\n";
    std::ofstream(path / "b.txt") << "beta\n";
  }
  warden::testing::TempDir dir{"warden-pipeline-ws"};
  const fs::path& path = dir.path();
};

// A harness whose registry holds the built-in actuators, confined to the workspace.
void use_builtin(Harness& h, const Workspace& ws, actuators::ToolRegistry* tools) {
  h.registry = actuators::Registry();
  actuators::ActuatorsConfig config;
  config.shell.workspace = ws.path.string();
  config.shell.timeout = std::chrono::milliseconds(20000);
  config.file.root = ws.path.string();
  actuators::register_builtin(h.registry, config, tools, [](std::string_view) {});
  h.shell = nullptr;
  h.reply = nullptr;
  h.notes = nullptr;
}

}  // namespace

TEST_CASE(
    "built-in actuators: rm refused, ls run for real, its output fed back, the reply delivered") {
  Workspace ws;
  Harness h({shell_proposal("rm -rf victim"), shell_proposal("ls"),
             reply_proposal("You have a.txt and b.txt.")});
  use_builtin(h, ws, nullptr);
  RunSummary summary = h.run(Harness::user("clean up my workspace"));

  CHECK(summary.status == "done");
  CHECK(h.kinds() == Kinds{"decision:reason:reject", "decision:reason:approve",
                           "decision:last-mile:approve", "tool-output", "decision:reason:approve",
                           "decision:last-mile:approve", "reply", "final:done"});
  CHECK(fs::exists(ws.path / "victim"));  // the refused rm never ran
  rapidjson::Document out = parse_json(h.events_of("tool-output").at(0));
  CHECK(contains(string_at(out, "output"), "a.txt"));
  CHECK(contains(string_at(out, "output"), "b.txt"));
  CHECK(contains(string_at(out, "output"), "victim"));
  CHECK(out["exit_code"].GetInt() == 0);
  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 3);
  CHECK(contains(requests[2].messages.back().content, "b.txt"));
  CHECK(string_at(parse_json(h.events_of("reply").at(0)), "text") == "You have a.txt and b.txt.");
}

TEST_CASE("built-in shell: a pipe runs only when the last-mile decision granted shell-syntax") {
  SECTION("granted") {
    Workspace ws;
    Harness h({shell_proposal("ls | wc -l"), reply_proposal("counted")});
    use_builtin(h, ws, nullptr);
    RunSummary summary = h.run(Harness::user("count"));
    CHECK(summary.status == "done");
    rapidjson::Document out = parse_json(h.events_of("tool-output").at(0));
    CHECK(contains(string_at(out, "output"), "3"));
  }
  SECTION("not granted at the last mile") {
    Workspace ws;
    Harness h({shell_proposal("ls | wc -l"), reply_proposal("it needs a shell")});
    use_builtin(h, ws, nullptr);
    h.decider.set_last_mile_rules(R"CLP(
(defrule approve-all
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-all) (reason "ok"))))
)CLP");
    RunSummary summary = h.run(Harness::user("count"));
    CHECK(summary.status == "done");
    rapidjson::Document err = parse_json(h.events_of("tool-error").at(0));
    CHECK(string_at(err, "error_code") == "E_ACT_SHELL_SYNTAX");
    auto requests = h.provider->requests();
    REQUIRE(requests.size() == 2);
    CHECK(contains(requests[1].messages.back().content, "E_ACT_SHELL_SYNTAX"));
  }
}

TEST_CASE("catalog_from the built-in registry and tools") {
  Workspace ws;
  actuators::Registry registry;
  actuators::ToolRegistry tools;
  actuators::add_builtin_tools(tools);
  actuators::ActuatorsConfig config;
  config.shell.workspace = ws.path.string();
  config.file.root = ws.path.string();
  actuators::register_builtin(registry, config, &tools, [](std::string_view) {});
  reasoning::Catalog catalog = catalog_from(registry, &tools, "identity");
  std::vector<std::string> names;
  for (const auto& t : catalog.targets) {
    names.push_back(t.name);
    CHECK_FALSE(t.description.empty());
    CHECK(parse_json(t.parameters_schema_json).IsObject());
  }
  CHECK(names == std::vector<std::string>{"file", "http", "log", "reply", "shell", "system"});
  std::vector<std::string> tool_names;
  for (const auto& t : catalog.tools) tool_names.push_back(t.name);
  CHECK(tool_names == std::vector<std::string>{"now", "sha256"});
}
