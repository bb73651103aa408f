// `warden dry-run --session FILE`: earlier proposals of the session decided first, their
// approved effects the history the input is decided with (as the daemon's session memory).
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using warden::testing::TempDir;

namespace {

struct SessionRun {
  int code;
  std::string out;
  std::string err;
};

// Runs `warden ARGS` with stdin from `input`, capturing stdout and stderr.
SessionRun session_run_cli(const TempDir& dir, const std::string& args, const std::string& input) {
  warden::cli::testing::require_binary();
  std::string in = dir.write("stdin", input);
  std::string err = (dir.path() / "stderr").string();
  std::string cmd =
      std::string(WARDEN_BINARY_DIR) + "/cli/warden " + args + " < " + in + " 2>" + err;
  SessionRun r{-1, "", ""};
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err);
  std::stringstream s;
  s << e.rdbuf();
  r.err = s.str();
  return r;
}

const char* kSessionRules = R"(
(defrule writes-ok (proposal (id ?id) (target file) (action write))
  => (assert (decision (proposal ?id) (outcome approve) (rule writes-ok))))
(defrule reads-ok (proposal (id ?id) (target file) (action read))
  => (assert (decision (proposal ?id) (outcome approve) (rule reads-ok))))
(defrule read-after-write (proposal (id ?id) (target file) (action read))
  (effect (proposal ?id) (kind read) (target ?t))
  (history (proposal ?id) (kind write) (target ?t))
  => (assert (decision (proposal ?id) (outcome reject) (rule read-after-write))))
)";

const char* kWrite =
    R"({"target":"file","action":"write","payload":{"path":"/w/Makefile"},"context":{"session":"s"}})";
const char* kRead =
    R"({"target":"file","action":"read","payload":{"path":"/w/Makefile"},"context":{"session":"s"}})";

std::string rules_dir(const TempDir& dir) {
  fs::create_directories(dir.path() / "rules");
  dir.write("rules/rules.clp", kSessionRules);
  dir.write("rules/effects.toml", "[program.true]\noperands = []\n");
  return (dir.path() / "rules").string();
}

}  // namespace

TEST_CASE("dry-run --session decides the input with the session's history", "[cli][session]") {
  TempDir dir{"warden-cli-session"};
  const std::string rules = rules_dir(dir);
  const std::string flags = "dry-run --workspace /w --rules " + rules;
  // Without a history the read is approved.
  SessionRun plain = session_run_cli(dir, flags + " -", kRead);
  INFO(plain.out << plain.err);
  CHECK(plain.code == 0);

  const std::string session = dir.write("session.jsonl", std::string(kWrite) + "\n");
  SessionRun r = session_run_cli(dir, flags + " --session " + session + " -", kRead);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.out.find("read-after-write") != std::string::npos);
  // The session file's decisions are not printed: one line, the input's.
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);

  // --explain shows the history facts the rules saw.
  SessionRun explained =
      session_run_cli(dir, flags + " --explain --session " + session + " -", kRead);
  CHECK(explained.out.find("(history ") != std::string::npos);
  CHECK(explained.out.find("(target \\\"/w/Makefile\\\")") != std::string::npos);

  // Another session id in the input has no history.
  std::string other = kRead;
  other.replace(other.find("\"s\""), 3, "\"t\"");
  CHECK(session_run_cli(dir, flags + " --session " + session + " -", other).code == 0);
}

TEST_CASE("dry-run --session: approved input proposals join the history", "[cli][session]") {
  TempDir dir{"warden-cli-session"};
  const std::string rules = rules_dir(dir);
  const std::string empty = dir.write("empty.jsonl", "");
  SessionRun r =
      session_run_cli(dir, "dry-run --workspace /w --rules " + rules + " --session " + empty + " -",
                      std::string(kRead) + "\n" + kWrite + "\n" + kRead + "\n");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> outcomes;
  // The decision's outcome is its first "outcome" member (the rules' come after it).
  const std::string key = "\"outcome\":\"";
  while (std::getline(lines, line)) {
    std::size_t at = line.find(key);
    REQUIRE(at != std::string::npos);
    at += key.size();
    outcomes.push_back(line.substr(at, line.find('"', at) - at));
  }
  CHECK(outcomes == std::vector<std::string>{"approve", "approve", "reject"});
  // Without --session each proposal stands alone.
  SessionRun alone = session_run_cli(dir, "dry-run --workspace /w --rules " + rules + " -",
                                     std::string(kRead) + "\n" + kWrite + "\n" + kRead + "\n");
  CHECK(alone.code == 0);
}

TEST_CASE("dry-run --session: an unreadable file or a bad line is a usage error naming it",
          "[cli][session]") {
  TempDir dir{"warden-cli-session"};
  const std::string rules = rules_dir(dir);
  const std::string bad = dir.write("bad.jsonl", std::string(kWrite) + "\n{\"no\":\"target\"}\n");
  SessionRun r = session_run_cli(
      dir, "dry-run --workspace /w --rules " + rules + " --session " + bad + " -", kRead);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.find(bad + ":2:") != std::string::npos);
  CHECK(r.err.find("E_INPUT_SHAPE") != std::string::npos);
  SessionRun missing = session_run_cli(
      dir, "dry-run --rules " + rules + " --session " + (dir.path() / "nope").string() + " -",
      kRead);
  CHECK(missing.code == 2);
  CHECK(missing.err.find("cannot read") != std::string::npos);
}
