// An approved submit action that cannot run (it needs a shell the rules did not grant:
// E_ACT_SHELL_SYNTAX) is not reported as "approved; it ran": through a real daemon with the
// `script` model provider, the approver's reply is E_APPROVAL_REFUSED naming the actuator's
// code, `warden approve` exits non-zero, the approval is closed refused with that result,
// and the waiting agent hears it was not run.
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "tests/cli/cli_process.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::cli::testing::run_warden;

namespace {}  // namespace

TEST_CASE("an approved action that cannot run is reported as not run, with its code",
          "[server][approvals][dispatch]") {
  TempDir dir;
  // Two commands joined by `;` need a shell; no rule granted one.
  Config config = scripted_config(dir, "touch one.txt; touch two.txt");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  const std::filesystem::path one = std::filesystem::path(config.workspace_root) / "one.txt";

  SECTION("the protocol, and the agent waiting") {
    ApprovalRef p = approval_ref(submit_until_approval(alice, "s1", ",\"wait_s\":60"));
    std::string reply = bob.call(approve_request(p));
    INFO(reply);
    CHECK(error_code(reply) == err::kApprovalRefused);
    CHECK(reply.find("E_ACT_SHELL_SYNTAX") != std::string::npos);
    CHECK(reply.find("it ran") == std::string::npos);
    const auto doc = parse(reply);  // outlives `error`, a view into it
    auto error = doc["payload"]["error"].GetObject();
    CHECK(str(error["approval"], "status") == "refused");
    CHECK(str(error["result"], "error_code") == "E_ACT_SHELL_SYNTAX");
    CHECK_FALSE(std::filesystem::exists(one));
    // The agent hears it was not run, and its run ends rejected.
    auto result = parse(alice.read());
    INFO(to_json_text(result));
    CHECK(str(result["payload"], "event") == "approval-result");
    CHECK(str(result["payload"], "status") == "refused");
    CHECK(str(result["payload"]["result"], "error_code") == "E_ACT_SHELL_SYNTAX");
    std::string last;
    for (;;) {
      last = alice.read();
      if (str(parse(last), "type") == "response") break;
    }
    CHECK(str(payload_of(last), "status") == "rejected");
    // Closed: it cannot be approved again.
    CHECK(error_code(bob.call(approve_request(p))) == err::kApprovalClosed);
  }
  SECTION("warden approve exits non-zero and says why") {
    ApprovalRef p = approval_ref(submit_until_approval(alice));
    auto r =
        run_warden({"approve", p.id, "--digest", p.hash, "--addr", d.address(), "--token", t.bob});
    INFO(r.out << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find("E_APPROVAL_REFUSED") != std::string::npos);
    CHECK(r.err.find("E_ACT_SHELL_SYNTAX") != std::string::npos);
    CHECK(r.out.find("it ran") == std::string::npos);
    CHECK_FALSE(std::filesystem::exists(one));
  }
}
