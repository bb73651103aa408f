// An approver answers what they have seen: through a real daemon with the SQLite store, an
// approve names the approval's id and the digest of the action the approver was shown; the
// digest of another approval's action approves nothing (the swap: an agent holding two
// approvals shows a person the harmless one), and the requester's token never approves.
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "tests/cli/cli_process.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

ApprovalRef digest_ask(Party& agent, const std::string& command, const std::string& id) {
  std::string reply = agent.call(decide_request(id, shell_action(command)));
  INFO(reply);
  auto p = payload_of(reply);
  REQUIRE(str(p["decision"], "outcome") == "approval-required");
  ApprovalRef out = approval_ref(p["approval"]);
  REQUIRE(out.id.rfind("apr_", 0) == 0);
  REQUIRE(out.hash.rfind("sha256:", 0) == 0);
  return out;
}

// What `warden approve ID` shows an approver: the one approval, by its id.
rapidjson::Document digest_shown(Party& approver, const std::string& id) {
  std::string reply = approver.call(make_request("s", "pending", "\"id\":" + json_string(id)));
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto p = payload_of(reply);
  REQUIRE(p["approvals"].Size() == 1);
  rapidjson::Document out;
  out.CopyFrom(p["approvals"][0], out.GetAllocator());
  return out;
}

// `warden ARGS` on a pseudo-terminal: waits for `prompt`, types `answer` and a newline, then
// reads until the child exits. Returns the exit status and everything it printed.
struct TerminalRun {
  int code = -1;
  std::string out;
  bool saw_prompt = false;
};
TerminalRun on_terminal(std::vector<std::string> args, const std::string& prompt,
                        const std::string& answer) {
  warden::cli::testing::require_binary();
  TerminalRun run;
  int master = -1;
  const pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(warden::cli::testing::kWarden.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(warden::cli::testing::kWarden.c_str(), argv.data());
    ::_exit(127);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{master, POLLIN, 0};
    if (::poll(&p, 1, 200) <= 0) continue;
    const ssize_t n = ::read(master, buffer, sizeof buffer);
    if (n <= 0) break;  // EIO: the child closed the terminal
    run.out.append(buffer, static_cast<std::size_t>(n));
    if (!run.saw_prompt && run.out.find(prompt) != std::string::npos) {
      run.saw_prompt = true;
      const std::string line = answer + "\n";
      REQUIRE(::write(master, line.data(), line.size()) == static_cast<ssize_t>(line.size()));
    }
  }
  ::close(master);
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

}  // namespace

TEST_CASE("warden approve ID on a terminal shows the action and its digest, then asks",
          "[server][approvals][digest][terminal]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice);
  ApprovalRef p = digest_ask(alice, "touch asked.txt", "1");
  const std::vector<std::string> args{"approve", p.id, "--addr", d.address(), "--token", t.bob};
  // "no": nothing is approved.
  TerminalRun no = on_terminal(args, "type yes to approve: ", "no");
  INFO(no.out);
  REQUIRE(no.saw_prompt);
  CHECK(no.code == 1);
  CHECK(no.out.find("\"command\": \"touch asked.txt\"") != std::string::npos);
  CHECK(no.out.find("digest " + p.hash) != std::string::npos);
  CHECK(no.out.find("requested by alice") != std::string::npos);
  CHECK(no.out.find("touch-needs-approval") != std::string::npos);
  CHECK(no.out.find("not approved") != std::string::npos);
  CHECK(outcome_of_decide(alice, shell_action("touch asked.txt")) == "approval-required");
  // "yes": approved, bound to the digest shown.
  TerminalRun yes = on_terminal(args, "type yes to approve: ", "yes");
  INFO(yes.out);
  REQUIRE(yes.saw_prompt);
  CHECK(yes.code == 0);
  CHECK(yes.out.find("approved " + p.id) != std::string::npos);
  CHECK(outcome_of_decide(alice, shell_action("touch asked.txt")) == "approve");
}

TEST_CASE("approve: the digest of another approval's action approves nothing (the swap)",
          "[server][approvals][digest]") {
  TempDir dir;
  RunningDaemon d(approvals_config(dir));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), carol(d.address(), t.carol);
  // The agent is shown the ids, tokens and digests of both approvals.
  ApprovalRef preview = digest_ask(alice, "touch docs-preview.txt", "1");
  ApprovalRef drop = digest_ask(alice, "touch drop-database.txt", "2");
  REQUIRE(preview.hash != drop.hash);

  // bob looks at the preview: its action as it will run, and its digest.
  auto seen = digest_shown(bob, preview.id);
  CHECK(str(seen["action"]["payload"], "command") == "touch docs-preview.txt");
  CHECK(str(seen, "action_hash") == preview.hash);
  CHECK(seen["history"].IsArray());
  CHECK_FALSE(seen.HasMember("token"));

  // Handed the other id, bob's answer (bound to what he saw) approves nothing.
  std::string swapped = bob.call(approve_request(ApprovalRef{drop.id, "", preview.hash}));
  INFO(swapped);
  CHECK(error_code(swapped) == err::kApprovalDigest);
  auto after = digest_shown(bob, drop.id);
  CHECK(str(after, "status") == "pending");
  CHECK(after["votes"].Size() == 0);
  CHECK(outcome_of_decide(alice, shell_action("touch drop-database.txt")) == "approval-required");

  // Nor does the requester's token, alone or with a digest.
  CHECK(error_code(bob.call(make_request(
            "a", "approve", "\"token\":" + json_string(drop.token)))) == err::kBadRequest);
  CHECK(error_code(bob.call(make_request("a", "approve",
                                         "\"token\":" + json_string(drop.token) + ",\"digest\":" +
                                             json_string(drop.hash)))) == err::kBadRequest);
  CHECK(error_code(bob.call(approve_request(ApprovalRef{drop.token, "", drop.hash}))) ==
        err::kApprovalNotFound);
  CHECK(str(digest_shown(carol, drop.id), "status") == "pending");

  // What bob saw is approved by its id and its digest.
  std::string ok = bob.call(approve_request(preview));
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  CHECK(str(payload_of(ok), "status") == "granted");
  CHECK(outcome_of_decide(alice, shell_action("touch docs-preview.txt")) == "approve");
  CHECK(outcome_of_decide(alice, shell_action("touch drop-database.txt")) == "approval-required");

  // pending by id: an unknown id, and a closed approval is still shown (with its state).
  CHECK(error_code(bob.call(make_request(
            "s", "pending", "\"id\":\"apr_000000000000000000000000\""))) == err::kApprovalNotFound);
  CHECK(str(digest_shown(bob, preview.id), "status") == "executed");
  CHECK(error_code(bob.call(
            make_request("s", "pending", "\"id\":" + json_string(drop.id) + ",\"watch\":true"))) ==
        err::kBadRequest);
}

TEST_CASE("pending shows an approval with its session's recent history",
          "[server][approvals][digest]") {
  TempDir dir;
  Config config = approvals_config(dir);
  dir.write("rules/policy.clp", std::string(kApprovalRules) + R"CLP(
(defrule writes-ok
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule writes-ok) (reason "writing is fine"))))
)CLP");
  // Any effects table turns on effect facts (file proposals need no program entry).
  dir.write("rules/effects.toml", "[program.true]\noperands = []\n");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  // An approved step first (a read the session memory keeps), then one that asks.
  REQUIRE(outcome_of_decide(alice,
                            R"({"target":"file","action":"write","payload":{"path":"notes.txt",)"
                            R"("content":"x"},"context":{"session":"s1"}})") == "approve");
  ApprovalRef p = digest_ask(alice, "touch after-ls.txt", "1");
  auto seen = digest_shown(bob, p.id);
  INFO(to_json_text(seen));
  REQUIRE(seen["history"].IsArray());
  REQUIRE(seen["history"].Size() >= 1);
  bool saw_write = false;
  for (const auto& h : seen["history"].GetArray()) {
    saw_write = saw_write || (str(h, "kind") == "write" &&
                              str(h, "target").find("notes.txt") != std::string::npos);
  }
  CHECK(saw_write);
  // The listing shows the same.
  auto list = payload_of(bob.call(make_request("l", "pending")));
  REQUIRE(list["approvals"].Size() == 1);
  CHECK(list["approvals"][0]["history"].Size() == seen["history"].Size());
}
