// Decisions never approve touching Warden's own files, wherever they are: a real daemon
// with the shipped rules and its state directory outside the agent's home (as
// /var/lib/warden is) rejects reading its signing key, its approvals database, copying its
// token file and archiving the directory above its state, by the rule pack's own-files
// rules; everyday work in the workspace is still approved.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "protocol/json_text.h"
#include "server/errors.h"
#include "server/own_files.h"
#include "server_fixture.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

struct Answer {
  std::string outcome;
  std::vector<std::string> rules;
  std::string reply;
};

Answer decide_shell(Client& agent, const std::string& command) {
  std::string proposal = R"({"target":"shell","action":"run","payload":{"command":)";
  append_json_string(proposal, command);
  proposal += R"(,"cwd":"/home/user/project"},"explanation":"doing the task",)"
              R"("context":{"session":"s1"}})";
  std::string error;
  REQUIRE(agent.send_message(decide_request("d", proposal), &error));
  Answer a;
  a.reply = read_or_fail(agent, 20000ms);
  auto doc = parse(a.reply);
  REQUIRE(doc.IsObject());
  const auto& decision = doc["payload"]["decision"];
  REQUIRE(decision.IsObject());
  a.outcome = decision["outcome"].GetString();
  for (const auto& r : decision["rules"].GetArray()) a.rules.push_back(r["rule"].GetString());
  return a;
}

bool fired(const Answer& a, const std::string& rule) {
  for (const auto& r : a.rules)
    if (r == rule) return true;
  return false;
}

}  // namespace

TEST_CASE("the daemon's own files are rejected in every decision, wherever they are",
          "[server][files][own]") {
  TempDir dir;
  Config config = test_config(dir);
  config.rules = {WARDEN_SOURCE_DIR "/rules"};
  config.workspace_root = "/home/user/project";
  config.home = "/home/user";
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client agent;
  connect_agent(agent, d);
  const std::string state = (dir.path() / "state").string();
  REQUIRE(state.rfind("/home/user", 0) != 0);  // outside the agent's home

  struct Case {
    std::string command, rule;
  };
  const std::vector<Case> rejected = {
      {"cat " + state + "/audit-signing.pem", "own-files-touched"},
      {"sqlite3 " + state + "/state.db .dump", "own-files-touched"},
      {"cp " + config.tokens + " /home/user/project/t", "own-files-touched"},
      {"base64 < " + state + "/audit-mask.key", "own-files-touched"},
      {"cat " + (dir.path() / "st*").string() + "/audit*", "own-files-touched"},
      {"tar czf x.tgz " + state + "/..", "own-files-directory"},
  };
  for (const Case& c : rejected) {
    INFO(c.command);
    Answer a = decide_shell(agent, c.command);
    INFO(a.reply);
    CHECK(a.outcome == "reject");
    CHECK(fired(a, c.rule));
  }
  for (const char* everyday : {"cat README.md", "ls -la", "grep -rn TODO src"}) {
    INFO(everyday);
    Answer a = decide_shell(agent, everyday);
    INFO(a.reply);
    CHECK(a.outcome == "approve");
  }
}

TEST_CASE("own_paths lists every file the daemon trusts", "[server][files][own]") {
  TempDir dir;
  Config config = test_config(dir);
  config.source = dir.write("warden.toml", "");
  config.tls.key = "/etc/warden/tls.key";
  REQUIRE(resolve_state_paths(&config).empty());
  std::vector<std::string> paths = own_paths(config);
  auto has = [&](const std::string& p) {
    return std::find(paths.begin(), paths.end(), p) != paths.end();
  };
  CHECK(has(config.tokens));
  CHECK(has(config.source));
  CHECK(has(config.rules[0]));
  CHECK(has(config.state_dir));
  CHECK(has(config.state_db));
  CHECK(has(config.audit_log));
  CHECK(has(config.audit.signing_key));
  CHECK(has("/etc/warden/tls.key"));
  CHECK(has(config.state_dir + "/warden.sock"));
  CHECK(has(own_binary_path()));
}

TEST_CASE("warden dry-run --config decides with the daemon's own files", "[server][files][own]") {
  TempDir dir;
  const std::string config =
      dir.write("warden.toml",
                "state_dir = \"/var/lib/warden-test\"\ntokens = \"/etc/warden-test/tokens\"\n");
  const std::string proposals = dir.write(
      "p.jsonl",
      R"({"target":"shell","action":"run","payload":{"command":"cat /var/lib/warden-test/audit-signing.pem","cwd":"/home/user/project"},"explanation":"x"})"
      "\n"
      R"({"target":"shell","action":"run","payload":{"command":"cat README.md","cwd":"/home/user/project"},"explanation":"x"})"
      "\n");
  auto run = [&](const std::string& flags) {
    const std::string out = (dir.path() / "out").string();
    // A deadline a sanitizer build on a loaded machine keeps to: this is not its test.
    const std::string command = "timeout 120 '" WARDEN_BINARY_DIR
                                "/cli/warden' dry-run --deadline-ms 60000 " +
                                flags + " '" + proposals + "' >'" + out + "' 2>/dev/null";
    // The exit code says what was decided (non-zero when something is rejected).
    const int status = std::system(command.c_str());
    INFO("exit status " << status);
    std::ifstream in(out);
    std::vector<std::string> outcomes;
    for (std::string line; std::getline(in, line);) {
      auto doc = parse(line);
      REQUIRE(doc.IsObject());
      outcomes.push_back(doc["outcome"].GetString());
    }
    return outcomes;
  };
  CHECK(run("--config '" + config + "'") == std::vector<std::string>{"reject", "approve"});
  CHECK(run("--own-path /var/lib/warden-test") == std::vector<std::string>{"reject", "approve"});
  // Without them the engine cannot know the daemon's files.
  CHECK(run("") != std::vector<std::string>{"reject", "approve"});
}
