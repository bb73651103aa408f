// Approved submit actions run on threads of their own: approved actions that are still
// running (here: `cat` blocked on a FIFO the test holds open) hold no thread that lists,
// answers or decides approvals. Before, they ran on the four approval threads, so four long
// approved actions stalled every `pending`, `approve` and `deny` until one ended.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

constexpr int kLongActions = 6;  // more than the four approval threads

const char* kRunnerRules = R"CLP(
(defrule cat-needs-approval
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "cat"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule cat-needs-approval)
                    (reason "reading the gate needs a yes"))))
(defrule touch-needs-approval
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "touch"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule touch-needs-approval)
                    (reason "touch creates files"))))
)CLP";

Config runner_config(const TempDir& dir) {
  Config c = scripted_config(dir, "cat gate.fifo");
  dir.write("rules/policy.clp", kRunnerRules);
  return c;
}

}  // namespace

TEST_CASE("approved actions still running hold no approval thread",
          "[server][approvals][runners]") {
  TempDir dir;
  Config config = runner_config(dir);
  const std::string fifo = config.workspace_root + "/gate.fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Held open for writing (and reading, so the open does not block): every `cat` blocks
  // until the test closes it.
  int gate = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(gate >= 0);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party bob(d.address(), t.bob), carol(d.address(), t.carol), dave(d.address(), t.dave);

  std::vector<std::unique_ptr<Party>> agents;
  std::vector<ApprovalRef> refs;
  for (int i = 0; i < kLongActions; ++i) {
    agents.push_back(std::make_unique<Party>(d.address(), t.alice));
    refs.push_back(approval_ref(submit_until_approval(*agents.back(), "s" + std::to_string(i), "",
                                                      "run" + std::to_string(i))));
  }
  // Every approval is answered; none can finish while the gate is held.
  for (const ApprovalRef& r : refs) bob.send(approve_request(r));

  // The approval threads are free: each approval is shown (claimed, its action running), a
  // new approval is created and denied.
  for (const ApprovalRef& r : refs) {
    std::string shown = carol.call(make_request("l", "pending", "\"id\":" + json_string(r.id)));
    INFO(shown);
    REQUIRE(error_code(shown) == "");
    auto list = payload_of(shown);
    REQUIRE(list["approvals"].Size() == 1);
    CHECK(str(list["approvals"][0], "status") == "approved");
  }
  auto asked = payload_of(dave.call(decide_request(
      "d",
      R"({"target":"shell","action":"run","payload":{"command":"touch x"},"explanation":"x"})")));
  REQUIRE(str(asked["decision"], "outcome") == "approval-required");
  ApprovalRef touch = approval_ref(asked["approval"]);
  std::string denied = carol.call(
      make_request("n", "deny", "\"id\":" + json_string(touch.id) + ",\"note\":\"not now\""));
  INFO(denied);
  CHECK(str(payload_of(denied)["approval"], "status") == "denied");

  // The gate opens: every approved action ends, and each approval is answered executed.
  REQUIRE(::write(gate, "open\n", 5) == 5);
  ::close(gate);
  int executed = 0;
  for (int i = 0; i < kLongActions; ++i) {
    std::string reply = bob.read(60000ms);
    INFO(reply);
    if (str(payload_of(reply), "status") == "executed") ++executed;
  }
  CHECK(executed == kLongActions);
}
