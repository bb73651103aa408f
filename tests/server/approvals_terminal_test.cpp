// The approval flow from terminals, every part a real process: `warden serve` (one daemon
// with SQLite; two daemons sharing PostgreSQL), an agent's `warden submit --wait` that is told
// the token, an approver's `warden pending` and `warden approve TOKEN` in another terminal;
// the action runs in the workspace and the agent's terminal shows the result.
#include <catch2/catch.hpp>

#include <filesystem>
#include <regex>

#include "approvals_fixture.h"
#include "tests/cli/cli_process.h"
#include "tests/server/warden_child.h"
#include "tests/support/postgres_server.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::cli::testing::Child;
using warden::cli::testing::run_warden;

namespace {

warden::test::PostgresServer& terminal_postgres() {
  static warden::test::PostgresServer server;  // throws (the test fails) when it cannot start
  return server;
}

// A `warden serve` child over dir's rules and tokens, with its own state directory.
class Serve {
 public:
  Serve(const TempDir& dir, const std::string& name, const std::string& extra_toml) {
    const std::string script =
        dir.write("model.jsonl",
                  "{\"text\":" +
                      json_string("{\"target\":\"shell\",\"action\":\"run\",\"payload\":"
                                  "{\"command\":\"touch made.txt\"},\"explanation\":\"asked\"}") +
                      "}\n");
    dir.write("rules/policy.clp", kApprovalRules);
    const std::string tokens = dir.write("tokens", ApprovalTokens{}.file_text(), 0600);
    std::filesystem::create_directories(dir.path() / "workspace");
    std::filesystem::create_directories(dir.path() / "home");
    const std::string config = dir.write(
        name + ".toml",
        "[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
            json_string(script) + "\n[audit]\ndaemon_id = " + json_string(name) + "\n" + extra_toml,
        0600);
    child_ = std::make_unique<WardenChild>(std::vector<std::string>{
        "serve", "--config", config, "--listen", "127.0.0.1:0", "--tokens", tokens, "--rules",
        dir.str() + "/rules", "--state-dir", dir.str() + "/" + name, "--workspace",
        dir.str() + "/workspace", "--home", dir.str() + "/home", "--workers", "2"});
    INFO(child_->err());
    REQUIRE(child_->serving());
  }
  ~Serve() { child_->stop(); }
  const std::string& address() const { return child_->address(); }

 private:
  std::unique_ptr<WardenChild> child_;
};

// The agent's terminal: submit, wait for the approval; the approver's terminal: pending,
// approve. Returns the agent's output.
void flow(const TempDir& dir, const std::string& agent_daemon, const std::string& approver_daemon) {
  ApprovalTokens t;
  Child agent({"submit", "--wait", "60", "--addr", agent_daemon, "--token", t.alice, "--session",
               "s1", "make a file"});
  // The agent's terminal says how to get it approved: the approval's id.
  std::string id, token;
  for (int i = 0; i < 50 && id.empty(); ++i) {
    std::string line = agent.read_line();
    INFO(agent.out() << agent.err());
    REQUIRE_FALSE(agent.timed_out);
    std::smatch m;
    if (std::regex_search(line, m, std::regex("warden approve (apr_[0-9a-f]{24})"))) id = m[1];
    if (std::regex_search(line, m, std::regex("(wapr_[A-Za-z0-9_-]+)"))) token = m[1];
  }
  REQUIRE(!id.empty());
  CHECK_FALSE(std::filesystem::exists(dir.path() / "workspace" / "made.txt"));

  // The approver's terminal: the pending list shows it (the action as it will run and its
  // digest, never a token), then approve what was shown.
  auto listed = run_warden({"pending", "--addr", approver_daemon, "--token", t.bob});
  INFO(listed.out << listed.err);
  CHECK(listed.code == 0);
  CHECK(listed.out.find("touch made.txt") != std::string::npos);
  CHECK(listed.out.find("\"command\": \"touch made.txt\"") != std::string::npos);
  if (!token.empty()) CHECK(listed.out.find(token) == std::string::npos);
  std::smatch d;
  REQUIRE(std::regex_search(listed.out, d, std::regex("digest (sha256:[0-9a-f]{64})")));
  const std::string digest = d[1];
  // Without a terminal to ask on and without the digest, nothing is approved.
  auto unseen = run_warden({"approve", id, "--addr", approver_daemon, "--token", t.bob});
  CHECK(unseen.code == 2);
  CHECK(unseen.err.find("E_APPROVAL_UNSEEN") != std::string::npos);
  // A token is not an approval's id.
  if (!token.empty()) {
    auto by_token = run_warden(
        {"approve", token, "--digest", digest, "--addr", approver_daemon, "--token", t.bob});
    CHECK(by_token.code == 2);
  }
  CHECK_FALSE(std::filesystem::exists(dir.path() / "workspace" / "made.txt"));
  auto approved = run_warden({"approve", id, "--digest", digest, "--note", "go ahead", "--addr",
                              approver_daemon, "--token", t.bob});
  INFO(approved.out << approved.err);
  CHECK(approved.code == 0);
  CHECK(std::filesystem::exists(dir.path() / "workspace" / "made.txt"));

  // The agent's terminal shows the result; its run ends done.
  int code = agent.finish();
  INFO(agent.out() << agent.err());
  CHECK(code == 0);
  CHECK(agent.out().find("approved by bob: go ahead; it ran") != std::string::npos);
}

}  // namespace

TEST_CASE("terminals, SQLite: an agent submits, an approver approves, the action runs",
          "[server][approvals][terminal]") {
  TempDir dir;
  Serve daemon(dir, "daemon", "");
  flow(dir, daemon.address(), daemon.address());
}

TEST_CASE("terminals, PostgreSQL: submitted on one daemon, approved on another",
          "[server][approvals][terminal][postgres]") {
  TempDir dir;
  const std::string conninfo =
      terminal_postgres().create_database("terminals_" + std::to_string(::getpid()));
  const std::string store =
      "[approvals]\nstore = \"postgres\"\nconninfo = " + json_string(conninfo) + "\n";
  Serve a(dir, "daemon-a", store);
  Serve b(dir, "daemon-b", store);
  flow(dir, a.address(), b.address());
}

TEST_CASE("terminals: decide --wait is told how to get approved, then prints the answer",
          "[server][approvals][terminal]") {
  TempDir dir;
  Serve daemon(dir, "daemon", "");
  ApprovalTokens t;
  Child agent({"decide", "--wait", "60", "--format", "text", "--addr", daemon.address(), "--token",
               t.alice});
  agent.write(shell_action("touch decided.txt") + "\n");
  agent.close_stdin();
  INFO(agent.out() << agent.err());
  REQUIRE(agent.wait_stderr("approve with: warden approve "));
  std::smatch m;
  const std::string err = agent.err();
  REQUIRE(std::regex_search(err, m, std::regex("warden approve (apr_[0-9a-f]{24})")));
  const std::string id = m[1];
  auto shown =
      run_warden({"pending", "--format", "json", "--addr", daemon.address(), "--token", t.bob});
  REQUIRE(std::regex_search(shown.out, m, std::regex("\"action_hash\":\"(sha256:[0-9a-f]{64})\"")));
  auto approved =
      run_warden({"approve", id, "--digest", m[1], "--addr", daemon.address(), "--token", t.bob});
  INFO(approved.out << approved.err);
  CHECK(approved.code == 0);
  CHECK(agent.finish() == 0);  // approve
  CHECK(agent.out().find("approved for this session by bob") != std::string::npos);
}
