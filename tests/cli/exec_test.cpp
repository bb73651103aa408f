// `warden exec` as a real process against a real `warden serve` child (--decision) and
// in-process (--rules): what it refuses, each with its code and exit 125, and an approved
// command running confined (the real kernel envelope of actuators/confine.h), reached the
// way Claude Code reaches it: the hook's updatedInput run by bash.
#include <fcntl.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "protocol/client.h"
#include "protocol/json_text.h"
#include "tests/agents/serve_child.h"
#include "tests/build_paths.h"

using namespace warden;
using warden::agents::testing::ServeChild;
using warden::cli::testing::Child;
using warden::cli::testing::kWarden;
using warden::server::testing::TempDir;

namespace {

// A deliberately wrong rule set: every shell command is approved, except the markers below.
// The confinement alone must then hold.
const char* kExecRules = R"CLIPS(
(defrule exec-test-approve-all
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule exec-test-approve-all)
                    (reason "everything goes"))))

(defrule exec-test-forbidden
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(str-index "forbidden" ?c)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule exec-test-forbidden)
                    (reason "forbidden marker"))))

(defrule exec-test-needs-approval
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(str-index "needs-approval" ?c)))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule exec-test-needs-approval)
                    (reason "a person must look"))))
)CLIPS";

struct ExecRan {
  int code = -1;
  std::string out, err;
};

// Runs ARGV (argv[0] a path) in CWD with stdout and stderr captured.
ExecRan run_in(const std::string& cwd, std::vector<std::string> argv) {
  TempDir io;
  const std::string out = (io.path() / "out").string(), err = (io.path() / "err").string();
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int n = ::open("/dev/null", O_RDONLY);
    ::dup2(n, 0);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> v;
    for (auto& a : argv) v.push_back(a.data());
    v.push_back(nullptr);
    ::execv(v[0], v.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ExecRan r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = io.read("out");
  r.err = io.read("err");
  return r;
}

std::vector<std::string> with(std::vector<std::string> head, const std::vector<std::string>& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

// A daemon with the exec rules, its workspace, and decisions asked for through the protocol.
struct World {
  TempDir dir;
  std::string workspace, rules;
  std::unique_ptr<ServeChild> serve;

  World() {
    workspace = (dir.path() / "ws").string();
    std::filesystem::create_directories(workspace);
    rules = dir.write("rules/exec_test.clp", kExecRules, 0644);
    rules = (dir.path() / "rules").string();
    serve =
        std::make_unique<ServeChild>(dir, std::vector<std::string>{rules},
                                     std::vector<std::string>{"--workspace", workspace, "--home",
                                                              (dir.path() / "home").string()});
  }

  // Decides a shell command (cwd: the workspace); returns {outcome, decision_id}.
  std::pair<std::string, std::string> decide(const std::string& command) {
    protocol::Client client;
    std::string error;
    REQUIRE(client.connect(serve->address(), std::chrono::seconds(10), &error));
    REQUIRE(client.authenticate(server::testing::Tokens{}.agent, std::chrono::seconds(10), &error));
    std::string proposal = R"({"target":"shell","action":"run","payload":{"command":)" +
                           protocol::json_string(command) + R"(,"cwd":)" +
                           protocol::json_string(workspace) +
                           R"(},"context":{"agent":"exec-test"}})";
    REQUIRE(client.send_message(protocol::make_request("1", "decide", "\"proposal\":" + proposal),
                                &error));
    std::string reply;
    REQUIRE(client.read_message(&reply, std::chrono::seconds(10)) ==
            protocol::Client::ReadStatus::Ok);
    rapidjson::Document d;
    d.Parse(reply.c_str());
    INFO(reply);
    REQUIRE(d.IsObject());
    if (!d["payload"]["ok"].GetBool()) return {"error", d["payload"]["error"]["code"].GetString()};
    const auto& decision = d["payload"]["decision"];
    return {decision["outcome"].GetString(), decision["decision_id"].GetString()};
  }

  std::vector<std::string> exec(const std::string& id) const {
    return {kWarden,      "exec", "--addr", serve->address(), "--token-file", serve->token_file(),
            "--decision", id};
  }
};

void require_refused(const ExecRan& r, const std::string& code) {
  INFO("exit " << r.code << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 125);
  CHECK(r.err.find("warden exec: " + code + ":") != std::string::npos);
}

}  // namespace

TEST_CASE("exec: an unknown decision runs nothing", "[cli][exec]") {
  World w;
  ExecRan r = run_in(w.workspace, with(w.exec("no-such-decision"), {"--", "touch", "made"}));
  require_refused(r, "E_EXEC_UNKNOWN");
  CHECK_FALSE(std::filesystem::exists(w.workspace + "/made"));
}

TEST_CASE("exec: a rejected or approval-required decision runs nothing", "[cli][exec]") {
  World w;
  auto [rejected, rid] = w.decide("touch forbidden");
  REQUIRE(rejected == "reject");
  require_refused(run_in(w.workspace, with(w.exec(rid), {"--", "touch", "forbidden"})),
                  "E_EXEC_NOT_APPROVED");
  require_refused(run_in(w.workspace, w.exec(rid)), "E_EXEC_NOT_APPROVED");
  auto [pending, pid] = w.decide("touch needs-approval");
  REQUIRE(pending == "approval-required");
  require_refused(run_in(w.workspace, with(w.exec(pid), {"--", "touch", "needs-approval"})),
                  "E_EXEC_NOT_APPROVED");
  CHECK_FALSE(std::filesystem::exists(w.workspace + "/forbidden"));
  CHECK_FALSE(std::filesystem::exists(w.workspace + "/needs-approval"));
}

TEST_CASE("exec: another command than the decided one is refused; the decided one runs once",
          "[cli][exec]") {
  World w;
  auto [outcome, id] = w.decide("touch decided");
  REQUIRE(outcome == "approve");
  // Not the decided words: refused, and the decision is not used up by it.
  require_refused(run_in(w.workspace, with(w.exec(id), {"--", "touch", "other"})),
                  "E_EXEC_MISMATCH");
  require_refused(
      run_in(w.workspace, with(w.exec(id), {"--", "bash", "-c", "touch decided; touch other"})),
      "E_EXEC_MISMATCH");
  require_refused(run_in(w.workspace, with(w.exec(id), {"--", "touch", "decided "})),
                  "E_EXEC_MISMATCH");
  CHECK_FALSE(std::filesystem::exists(w.workspace + "/other"));
  // The decided command, as an argv that bash reads as the same line.
  ExecRan ok = run_in(w.workspace, with(w.exec(id), {"--", "touch", "decided"}));
  INFO("stderr: " << ok.err);
  CHECK(ok.code == 0);
  CHECK(std::filesystem::exists(w.workspace + "/decided"));
  // Once only.
  require_refused(run_in(w.workspace, with(w.exec(id), {"--", "touch", "decided"})), "E_EXEC_USED");
}

TEST_CASE("exec: a decided command that holds a NUL byte never runs cut short", "[cli][exec]") {
  World w;
  auto [outcome, id] = w.decide(std::string("touch nul-a\0; touch nul-b", 26));
  if (outcome == "error") {
    // The daemon refuses such a proposal outright (its code in place of an id): no decision
    // exists that an exec could run.
    CHECK(id.rfind("E_INPUT_", 0) == 0);
  } else {
    require_refused(run_in(w.workspace, w.exec(id)),
                    outcome == "approve" ? "E_EXEC_COMMAND" : "E_EXEC_NOT_APPROVED");
  }
  CHECK_FALSE(std::filesystem::exists(w.workspace + "/nul-a"));
}

TEST_CASE("exec: in-process, only an approved command runs", "[cli][exec]") {
  TempDir dir;
  const std::string ws = (dir.path() / "ws").string();
  std::filesystem::create_directories(ws);
  dir.write("rules/exec_test.clp", kExecRules, 0644);
  const std::vector<std::string> exec = {
      kWarden, "exec", "--rules", (dir.path() / "rules").string(), "--workspace", ws};
  require_refused(run_in(ws, with(exec, {"--", "touch", "forbidden"})), "E_EXEC_NOT_APPROVED");
  require_refused(run_in(ws, with(exec, {"--", "bash", "-c", "touch needs-approval"})),
                  "E_EXEC_NOT_APPROVED");
  require_refused(run_in(ws, with(exec, {"--", "printf", "\xff\xfe"})), "E_EXEC_COMMAND");
  require_refused(run_in(ws, {kWarden, "exec", "--", "true"}), "E_EXEC_COMMAND");
  CHECK_FALSE(std::filesystem::exists(ws + "/forbidden"));
  ExecRan ok = run_in(ws, with(exec, {"--", "bash", "-c", "echo hello > greeting"}));
  INFO("stderr: " << ok.err);
  CHECK(ok.code == 0);
  std::ifstream in(ws + "/greeting");
  std::string text;
  std::getline(in, text);
  CHECK(text == "hello");
}

TEST_CASE("exec: an approved command runs confined to its decision", "[cli][exec][confine]") {
  World w;
  // What the wrong rules approve, the kernel refuses: a write outside the workspace, a read
  // of the daemon's token file, a process left behind.
  const std::string outside = (w.dir.path() / "outside.txt").string();
  const std::string line = "echo inside > inside.txt; echo outside > " + outside + "; cat " +
                           w.serve->token_file() + " > leaked.txt; echo status=$?";
  auto [outcome, id] = w.decide(line);
  REQUIRE(outcome == "approve");
  ExecRan r = run_in(w.workspace, w.exec(id));
  INFO("exit " << r.code << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 0);
  CHECK(std::filesystem::exists(w.workspace + "/inside.txt"));
  CHECK_FALSE(std::filesystem::exists(outside));
  CHECK(r.out.find("status=1") != std::string::npos);  // cat could not read the token
  std::ifstream leaked(w.workspace + "/leaked.txt");
  std::stringstream text;
  text << leaked.rdbuf();
  CHECK(text.str().find(server::testing::Tokens{}.agent) == std::string::npos);
}

TEST_CASE("exec: the hook's updatedInput, run by bash as Claude Code runs it, runs confined",
          "[cli][exec][confine]") {
  World w;
  const std::string outside = (w.dir.path() / "outside-hook.txt").string();
  const std::string command = "echo \"it's\" $(echo inside) > 'in side.txt'\necho x > " + outside;
  std::string input =
      R"({"hook_event_name":"PreToolUse","tool_name":"Bash","session_id":"s1","cwd":)" +
      protocol::json_string(w.workspace) + R"(,"tool_input":{"command":)" +
      protocol::json_string(command) + R"(,"description":"d"}})";
  Child hook(
      {"hook", "claude-code", "--addr", w.serve->address(), "--token-file", w.serve->token_file()});
  hook.write(input);
  REQUIRE(hook.finish() == 0);
  rapidjson::Document d;
  d.Parse(hook.out().c_str());
  INFO(hook.out());
  REQUIRE(d.IsObject());
  const auto& h = d["hookSpecificOutput"];
  REQUIRE(std::string(h["permissionDecision"].GetString()) == "allow");
  const std::string rewritten = h["updatedInput"]["command"].GetString();
  CHECK(rewritten.find(" exec ") != std::string::npos);
  CHECK(rewritten.find("--decision") != std::string::npos);
  ExecRan r = run_in(w.workspace, {"/bin/bash", "-c", rewritten});
  INFO("exit " << r.code << "\nstdout: " << r.out << "\nstderr: " << r.err);
  std::ifstream in(w.workspace + "/in side.txt");
  std::string text;
  std::getline(in, text);
  CHECK(text == "it's inside");
  // The write outside the workspace is refused, or lands in the sandbox's private /tmp (the
  // test's directory is under /tmp): either way the host's file system never sees it.
  CHECK_FALSE(std::filesystem::exists(outside));
  // Run again (Claude retrying the same tool call): the decision was used.
  ExecRan again = run_in(w.workspace, {"/bin/bash", "-c", rewritten});
  require_refused(again, "E_EXEC_USED");
}
