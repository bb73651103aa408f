// `warden decide` against a real `warden serve` child: replies printed as each proposal is
// read, the strictest outcome as exit status, and text output escaped.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/cli/cli_process.h"
#include "tests/server/warden_child.h"
#include "tests/support/temp_dir.h"

using namespace warden::cli::testing;
namespace fs = std::filesystem;

namespace {

const char* kDecideRules = R"(
(defrule no-rm (shell-command (proposal ?id) (program "rm"))
  => (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "rm"))))
(defrule ls-ok (shell-command (proposal ?id) (program "ls"))
  => (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing"))))
(defrule echo (proposal (id ?id) (target message))
              (param (proposal ?id) (key "payload.text") (value ?t))
  => (assert (decision (proposal ?id) (outcome approval-required) (rule echo) (reason (str-cat "said: " ?t)))))
)";

std::string decide_shell(const std::string& command) {
  return R"({"target":"shell","payload":{"command":")" + command + "\"}}\n";
}
std::string message(const std::string& json_text) {
  return R"({"target":"message","payload":{"text":")" + json_text + "\"}}\n";
}

// A daemon on an ephemeral loopback port, without tokens, with the rules above (and the
// extra serve flags given).
struct Daemon {
  warden::testing::TempDir tmp{"warden-decide"};
  const fs::path& dir = tmp.path();
  std::unique_ptr<warden::server::testing::WardenChild> child;
  std::string addr;
  explicit Daemon(std::vector<std::string> extra = {}) {
    fs::create_directories(dir / "rules");
    fs::create_directories(dir / "state");
    std::ofstream(dir / "rules" / "policy.clp") << kDecideRules;
    fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace);
    std::vector<std::string> args{"serve",       "--listen",
                                  "127.0.0.1:0", "--insecure-no-auth",
                                  "--rules",     (dir / "rules").string(),
                                  "--state-dir", (dir / "state").string(),
                                  "--workers",   "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    child = std::make_unique<warden::server::testing::WardenChild>(args);
    bool started = child->serving();
    INFO(child->err());
    REQUIRE(started);
    addr = child->address();
  }
  ~Daemon() { child->stop(); }
};

}  // namespace

TEST_CASE("decide prints each decision before the next proposal is written", "[cli][decide]") {
  Daemon daemon;
  Child decide({"decide", "--addr", daemon.addr});
  decide.write(decide_shell("ls"));
  std::string first = decide.read_line();
  INFO(decide.err());
  REQUIRE_FALSE(decide.timed_out);
  CHECK(first.find("\"outcome\":\"approve\"") != std::string::npos);
  decide.write(decide_shell("rm x"));
  std::string second = decide.read_line();
  REQUIRE_FALSE(decide.timed_out);
  CHECK(second.find("\"outcome\":\"reject\"") != std::string::npos);
  CHECK(decide.finish() == 1);
}

TEST_CASE("decide on several proposals exits with the strictest outcome", "[cli][decide][exit]") {
  Daemon daemon;
  auto run = [&](const std::string& input) {
    Run r = run_warden({"decide", "--addr", daemon.addr}, input);
    INFO(r.err);
    return r.code;
  };
  CHECK(run(decide_shell("ls") + decide_shell("ls")) == 0);
  CHECK(run(decide_shell("ls") + message("hi") + decide_shell("ls")) == 3);
  CHECK(run(decide_shell("ls") + decide_shell("rm x") + decide_shell("ls")) == 1);  // old code: 0
  CHECK(run(message("hi") + decide_shell("rm x") + message("hi")) == 1);
  CHECK(run(decide_shell("rm x") + "not json\n" + decide_shell("ls")) == 2);
}

TEST_CASE("decide text output escapes what the agent wrote", "[cli][decide][escape]") {
  Daemon daemon;
  Run r = run_warden({"decide", "--format", "text", "--addr", daemon.addr},
                     message("\\u001b[2K\\rapprove \\u202e\\u009b"));
  CHECK(r.code == 3);
  CHECK(r.out.find("line 1: approval-required  said: \\x1b[2K\\rapprove \\u202e\\u009b") == 0);
  Run json = run_warden({"decide", "--addr", daemon.addr}, message("\\u202e\\u009b"));
  CHECK(json.out.find("said: \\u202e\\u009b") != std::string::npos);
  CHECK(json.out.find("\xe2\x80\xae") == std::string::npos);
}

TEST_CASE("serve warns on stderr when default_outcome is approve", "[cli][default-outcome]") {
  fs::path config =
      fs::temp_directory_path() / ("warden-approve-" + std::to_string(::getpid()) + ".toml");
  std::ofstream(config) << "default_outcome = \"approve\"\n";
  {
    Daemon daemon({"--config", config.string()});
    CHECK(daemon.child->err().find("WARNING: default_outcome is \"approve\"") != std::string::npos);
  }
  {
    Daemon plain;
    CHECK(plain.child->err().find("WARNING: default_outcome") == std::string::npos);
  }
  fs::remove(config);
}
