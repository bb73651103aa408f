// What an approval grants, through a real daemon with the SQLite store: the enforcing `allow`
// facts of an approval-required decision are stored with its approval, shown to the approver
// (the protocol's approval object, `warden pending`) and bound into the digest the approver
// answers with; once approved the action runs with the capabilities both the approval and the
// rules in force allow — a rule change narrows what a person approved, never widens it. A
// monitor allow grants nothing.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "approvals/store.h"
#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "tests/cli/cli_process.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::cli::testing::run_warden;

namespace {

const char* kCommand = "echo built | tee built.txt";

// tee needs a person; build-pipelines lets the line run through a shell.
const std::string kTeeRules = R"CLP(
(defrule tee-needs-approval
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "tee"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule tee-needs-approval)
                    (reason "tee writes files"))))
)CLP";
const std::string kPipeAllow = R"CLP(
(defrule build-pipelines
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "tee"))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule build-pipelines)
                 (reason "a pipe into tee is how we build"))))
)CLP";
const std::string kMonitorPipeAllow = R"CLP(
(defrule build-pipelines-trial
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "tee"))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule build-pipelines-trial)
                 (reason "trying pipes out") (mode monitor))))
)CLP";

// A daemon whose `script` model proposes kCommand; rules `rules`.
Config capability_config(const TempDir& dir, const std::string& rules) {
  Config c = scripted_config(dir, kCommand);
  dir.write("rules/policy.clp", rules);
  return c;
}

struct Asked {
  ApprovalRef ref;     // hash: the action_hash
  std::string digest;  // the approval's digest
};

// A submit's run up to its approval-required event.
Asked ask_by_submit(Party& agent) {
  rapidjson::Document a = submit_until_approval(agent);
  return Asked{approval_ref(a), str(a, "digest")};
}

rapidjson::Document shown(Party& approver, const std::string& id) {
  rapidjson::Document p =
      payload_of(approver.call(make_request("s", "pending", "\"id\":" + json_string(id))));
  REQUIRE(p.HasMember("approvals"));
  REQUIRE(p["approvals"].Size() == 1);
  rapidjson::Document out;
  out.CopyFrom(p["approvals"][0], out.GetAllocator());
  return out;
}

std::string approve_with(Party& approver, const std::string& id, const std::string& digest) {
  return approver.call(make_request(
      "a", "approve", "\"id\":" + json_string(id) + ",\"digest\":" + json_string(digest)));
}

std::string reload(Party& admin) { return admin.call(make_request("r", "reload")); }

std::string file_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return s;
}

// The `approval` records of `event` in the audit log.
std::vector<std::string> approval_lines(const std::string& log, const std::string& event) {
  std::ifstream in(log);
  std::string line;
  std::vector<std::string> out;
  while (std::getline(in, line)) {
    if (line.find("\"kind\":\"approval\"") != std::string::npos &&
        line.find("\"event\":\"" + event + "\"") != std::string::npos) {
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("an approval grants the enforcing allows it was asked with: shown, bound, run",
          "[server][approvals][capabilities]") {
  TempDir dir;
  Config config = capability_config(dir, kTeeRules + kPipeAllow);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  const std::filesystem::path built = std::filesystem::path(config.workspace_root) / "built.txt";

  Asked asked = ask_by_submit(alice);
  REQUIRE(!asked.ref.id.empty());
  // The approval shows what approving grants, and its digest covers it.
  rapidjson::Document a = shown(bob, asked.ref.id);
  INFO(to_json_text(a));
  REQUIRE(a["grants"].IsArray());
  REQUIRE(a["grants"].Size() == 1);
  CHECK(str(a["grants"][0], "capability") == "shell-syntax");
  CHECK(str(a["grants"][0], "rule") == "build-pipelines");
  CHECK(str(a["grants"][0], "reason") == "a pipe into tee is how we build");
  const std::string digest = str(a, "digest");
  CHECK(digest == asked.digest);
  CHECK(digest != str(a, "action_hash"));
  CHECK(digest == approvals::answer_digest(
                      str(a, "action_hash"),
                      {{"shell-syntax", "build-pipelines", "a pipe into tee is how we build"}}));
  CHECK(str(a, "requester_token_id") == token_id(hash_token(t.alice)));

  SECTION("a digest without the grants, or with other grants, approves nothing") {
    std::string bare = approve_with(bob, asked.ref.id, str(a, "action_hash"));
    INFO(bare);
    CHECK(error_code(bare) == err::kApprovalDigest);
    std::string other = approve_with(
        bob, asked.ref.id,
        approvals::answer_digest(str(a, "action_hash"), {{"private-network", "build-pipelines",
                                                          "a pipe into tee is how we build"}}));
    CHECK(error_code(other) == err::kApprovalDigest);
    rapidjson::Document still = shown(bob, asked.ref.id);
    CHECK(str(still, "status") == "pending");
    CHECK(still["votes"].Size() == 0);
    CHECK_FALSE(std::filesystem::exists(built));
  }

  SECTION("approved with the digest shown: it runs through the shell, pipe and all") {
    std::string ok = approve_with(bob, asked.ref.id, digest);
    INFO(ok);
    REQUIRE(error_code(ok) == "");
    auto r = payload_of(ok);
    CHECK(str(r, "status") == "executed");
    CHECK(r["result"]["ok"].GetBool());
    REQUIRE(r["result"]["capabilities"].IsArray());
    REQUIRE(r["result"]["capabilities"].Size() == 1);
    CHECK(std::string(r["result"]["capabilities"][0].GetString()) == "shell-syntax");
    CHECK(file_text(built) == "built\n");
    // The audit log records what it granted with its creation, and what it ran with.
    const std::string log = config.state_dir + "/audit.jsonl";
    auto created = approval_lines(log, "created");
    REQUIRE(created.size() == 1);
    auto c = parse(created[0]);
    INFO(created[0]);
    REQUIRE(c["grants"].IsArray());
    CHECK(str(c["grants"][0], "capability") == "shell-syntax");
    CHECK(str(c["grants"][0], "rule") == "build-pipelines");
    CHECK(str(c, "digest") == digest);
    CHECK(str(c, "requester_token_id") == token_id(hash_token(t.alice)));
    auto executed = approval_lines(log, "executed");
    REQUIRE(executed.size() == 1);
    CHECK(executed[0].find("\"capabilities\":[\"shell-syntax\"]") != std::string::npos);
  }

  SECTION("warden pending says what approving grants, in words") {
    auto r = run_warden({"pending", "--addr", d.address(), "--token", t.bob});
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("if approved it may also:") != std::string::npos);
    CHECK(r.out.find("run its command line through /bin/sh") != std::string::npos);
    CHECK(r.out.find("(shell-syntax, rule build-pipelines: a pipe into tee is how we build)") !=
          std::string::npos);
    CHECK(r.out.find("digest " + digest) != std::string::npos);
    // Answered with that digest, without a terminal: it runs.
    auto approved = run_warden(
        {"approve", asked.ref.id, "--digest", digest, "--addr", d.address(), "--token", t.bob});
    INFO(approved.out << approved.err);
    CHECK(approved.code == 0);
    CHECK(file_text(built) == "built\n");
  }
}

TEST_CASE("a rule change narrows what an approval grants, never widens it",
          "[server][approvals][capabilities]") {
  TempDir dir;
  SECTION("the allow is gone when it is approved: run without a shell, so not run") {
    Config config = capability_config(dir, kTeeRules + kPipeAllow);
    RunningDaemon d(config);
    REQUIRE(d.ok());
    ApprovalTokens t;
    Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
    Asked asked = ask_by_submit(alice);
    dir.write("rules/policy.clp", kTeeRules);
    REQUIRE(error_code(reload(admin)) == "");
    std::string reply = approve_with(bob, asked.ref.id, asked.digest);
    INFO(reply);
    CHECK(error_code(reply) == err::kApprovalRefused);
    CHECK(reply.find("E_ACT_SHELL_SYNTAX") != std::string::npos);
    CHECK_FALSE(
        std::filesystem::exists(std::filesystem::path(config.workspace_root) / "built.txt"));
  }
  SECTION("an allow added after it was asked for is not granted by it") {
    Config config = capability_config(dir, kTeeRules);
    RunningDaemon d(config);
    REQUIRE(d.ok());
    ApprovalTokens t;
    Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
    Asked asked = ask_by_submit(alice);
    rapidjson::Document a = shown(bob, asked.ref.id);
    CHECK(a["grants"].Size() == 0);
    // Granting nothing, its digest is its action's, as before approvals had grants.
    CHECK(str(a, "digest") == str(a, "action_hash"));
    dir.write("rules/policy.clp", kTeeRules + kPipeAllow);
    REQUIRE(error_code(reload(admin)) == "");
    std::string reply = approve_with(bob, asked.ref.id, asked.ref.hash);
    INFO(reply);
    CHECK(error_code(reply) == err::kApprovalRefused);
    CHECK(reply.find("E_ACT_SHELL_SYNTAX") != std::string::npos);
    CHECK_FALSE(
        std::filesystem::exists(std::filesystem::path(config.workspace_root) / "built.txt"));
  }
}

TEST_CASE("a monitor allow grants nothing to an approval", "[server][approvals][capabilities]") {
  TempDir dir;
  Config config = capability_config(dir, kTeeRules + kMonitorPipeAllow);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  Asked asked = ask_by_submit(alice);
  rapidjson::Document a = shown(bob, asked.ref.id);
  CHECK(a["grants"].Size() == 0);
  CHECK(str(a, "digest") == str(a, "action_hash"));
  std::string reply = approve_with(bob, asked.ref.id, asked.digest);
  INFO(reply);
  CHECK(error_code(reply) == err::kApprovalRefused);
  CHECK(reply.find("E_ACT_SHELL_SYNTAX") != std::string::npos);
}

TEST_CASE("a decide's grant approves later identical requests with what both allow",
          "[server][approvals][capabilities][grants]") {
  TempDir dir;
  Config config = approvals_config(dir);
  ApprovalTokens t;
  auto decide_allows = [](Party& agent) {
    auto p = payload_of(agent.call(decide_request("d", shell_action(kCommand))));
    std::vector<std::string> out;
    if (p.HasMember("decision") && p["decision"].HasMember("allows")) {
      for (const auto& g : p["decision"]["allows"].GetArray()) {
        if (str(g, "mode") == "enforce") out.push_back(str(g, "capability"));
      }
    }
    return std::make_pair(p.HasMember("decision") ? str(p["decision"], "outcome") : "<none>", out);
  };
  auto ask = [](Party& agent) {
    auto p = payload_of(agent.call(decide_request("q", shell_action(kCommand))));
    REQUIRE(str(p["decision"], "outcome") == "approval-required");
    return Asked{approval_ref(p["approval"]), str(p["approval"], "digest")};
  };

  SECTION("granted with the shell, and still allowed: approve with the shell") {
    dir.write("rules/policy.clp", kTeeRules + kPipeAllow);
    RunningDaemon d(config);
    REQUIRE(d.ok());
    Party alice(d.address(), t.alice), bob(d.address(), t.bob);
    Asked asked = ask(alice);
    REQUIRE(error_code(approve_with(bob, asked.ref.id, asked.digest)) == "");
    auto [outcome, allows] = decide_allows(alice);
    CHECK(outcome == "approve");
    CHECK(allows == std::vector<std::string>{"shell-syntax"});
  }
  SECTION("granted without the shell; the rules allow it now: approved without it") {
    dir.write("rules/policy.clp", kTeeRules);
    RunningDaemon d(config);
    REQUIRE(d.ok());
    Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
    Asked asked = ask(alice);
    REQUIRE(error_code(approve_with(bob, asked.ref.id, asked.digest)) == "");
    dir.write("rules/policy.clp", kTeeRules + kPipeAllow);
    REQUIRE(error_code(reload(admin)) == "");
    auto [outcome, allows] = decide_allows(alice);
    CHECK(outcome == "approve");
    CHECK(allows.empty());
  }
  SECTION("granted with the shell; the rules no longer allow it: approved without it") {
    dir.write("rules/policy.clp", kTeeRules + kPipeAllow);
    RunningDaemon d(config);
    REQUIRE(d.ok());
    Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
    Asked asked = ask(alice);
    REQUIRE(error_code(approve_with(bob, asked.ref.id, asked.digest)) == "");
    dir.write("rules/policy.clp", kTeeRules);
    REQUIRE(error_code(reload(admin)) == "");
    auto [outcome, allows] = decide_allows(alice);
    CHECK(outcome == "approve");
    CHECK(allows.empty());
  }
}
