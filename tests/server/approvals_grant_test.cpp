// What an approval grants, through a real daemon with the SQLite store: a grant is bound to
// the whole request as the rules decided it (which tool asked, not only the action), and the
// strictest terms of all votes and of the approval itself hold (the shortest scope any
// approver asked for; never beyond the approval's own expiry).
#include <catch2/catch.hpp>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

// The fixture's rules, plus: file reads need a person; chown needs one within two minutes.
const std::string kGrantRules = std::string(kApprovalRules) + R"CLP(
(defrule reads-need-approval
  (proposal (id ?id) (target file) (action read))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule reads-need-approval)
                    (reason "reading here needs a person"))))
(defrule chown-quick
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "chown"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule chown-quick)
                    (reason "chown needs a quick yes")))
  (assert (approval (proposal ?id) (rule chown-quick) (expires-in 120))))
)CLP";

// A Claude Code file tool's proposal: Glob and Grep both read `path` with a `pattern`.
std::string file_tool(const std::string& tool, const std::string& use_id,
                      const std::string& agent = "claude-code") {
  return R"({"target":"file","action":"read","payload":{"action":"read","path":"/home/u","pattern":"id_*"},)"
         R"("explanation":"","context":{"agent":")" +
         agent + R"(","session":"s1","source":"hook","tool_use_id":")" + use_id + R"(","tool":")" +
         tool + R"("}})";
}

ApprovalRef ask_for(Party& agent, const std::string& proposal) {
  std::string reply = agent.call(decide_request("q", proposal));
  INFO(reply);
  auto p = payload_of(reply);
  REQUIRE(str(p["decision"], "outcome") == "approval-required");
  return approval_ref(p["approval"]);
}

}  // namespace

TEST_CASE("a grant is bound to the whole request: a Glob's grant is not a Grep's",
          "[server][approvals][grants]") {
  TempDir dir;
  Config config = approvals_config(dir);
  dir.write("rules/policy.clp", kGrantRules);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);

  SECTION("a scoped grant") {
    ApprovalRef glob = ask_for(alice, file_tool("Glob", "toolu_1"));
    std::string ok = bob.call(approve_request(glob, ",\"scope_minutes\":5"));
    INFO(ok);
    REQUIRE(error_code(ok) == "");
    // The same tool's identical request, another call: approved under the grant.
    CHECK(outcome_of_decide(alice, file_tool("Glob", "toolu_2")) == "approve");
    CHECK(outcome_of_decide(alice, file_tool("Glob", "toolu_3")) == "approve");
    // The identical action from another tool, or another agent: asks.
    CHECK(outcome_of_decide(alice, file_tool("Grep", "toolu_4")) == "approval-required");
    CHECK(outcome_of_decide(alice, file_tool("Glob", "toolu_5", "codex")) == "approval-required");
  }
  SECTION("a one-use grant") {
    ApprovalRef grep = ask_for(alice, file_tool("Grep", "toolu_1"));
    REQUIRE(error_code(bob.call(approve_request(grep))) == "");
    CHECK(outcome_of_decide(alice, file_tool("Glob", "toolu_2")) == "approval-required");
    CHECK(outcome_of_decide(alice, file_tool("Grep", "toolu_3")) == "approve");
  }
}

TEST_CASE("two approvers: the shortest scope any of them asked for holds",
          "[server][approvals][grants]") {
  TempDir dir;
  Config config = approvals_config(dir);
  dir.write("rules/policy.clp", kGrantRules);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), carol(d.address(), t.carol);

  SECTION("the first asks for 5 minutes, the second for 24 hours: 5 minutes") {
    ApprovalRef p = ask_for(alice, shell_action("chmod 600 a.txt"));
    REQUIRE(error_code(bob.call(approve_request(p, ",\"scope_minutes\":5"))) == "");
    std::string second = carol.call(approve_request(p, ",\"scope_minutes\":1440"));
    INFO(second);
    REQUIRE(error_code(second) == "");
    auto r = payload_of(second);
    const auto& grant = r["result"]["grant"];
    CHECK(grant["scope_minutes"].GetInt() == 5);
    CHECK(grant["uses"].GetInt() == 0);
    const std::int64_t claimed = r["approval"]["closed_ms"].GetInt64();
    CHECK(grant["expires_ms"].GetInt64() - claimed >= 5 * 60000);
    CHECK(grant["expires_ms"].GetInt64() - claimed < 1440 * 60000);
    CHECK(grant["expires_ms"].GetInt64() - claimed < 6 * 60000);
  }
  SECTION("the first asks for none: one use, whatever the second asks") {
    ApprovalRef p = ask_for(alice, shell_action("chmod 600 b.txt"));
    REQUIRE(error_code(bob.call(approve_request(p))) == "");
    std::string second = carol.call(approve_request(p, ",\"scope_minutes\":1440"));
    INFO(second);
    REQUIRE(error_code(second) == "");
    const auto shown = payload_of(second);  // outlives `grant`, a view into it
    const auto& grant = shown["result"]["grant"];
    CHECK(grant["uses"].GetInt() == 1);
    CHECK(grant["scope_minutes"].GetInt() == 0);
    CHECK(outcome_of_decide(alice, shell_action("chmod 600 b.txt")) == "approve");
    CHECK(outcome_of_decide(alice, shell_action("chmod 600 b.txt")) == "approval-required");
  }
}

TEST_CASE("a grant never outlives the approval's own expiry", "[server][approvals][grants]") {
  TempDir dir;
  Config config = approvals_config(dir);
  dir.write("rules/policy.clp", kGrantRules);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  // The rule gives the approval two minutes; the approver asks for a day.
  ApprovalRef p = ask_for(alice, shell_action("chown bob c.txt"));
  std::string ok = bob.call(approve_request(p, ",\"scope_minutes\":1440"));
  INFO(ok);
  REQUIRE(error_code(ok) == "");
  auto r = payload_of(ok);
  const std::int64_t approval_expires = r["approval"]["expires_ms"].GetInt64();
  CHECK(approval_expires - r["approval"]["created_ms"].GetInt64() == 120 * 1000);
  CHECK(r["result"]["grant"]["expires_ms"].GetInt64() == approval_expires);
  // A one-use grant too.
  ApprovalRef q = ask_for(alice, shell_action("chown bob d.txt"));
  auto one = payload_of(bob.call(approve_request(q)));
  CHECK(one["result"]["grant"]["expires_ms"].GetInt64() <=
        one["approval"]["expires_ms"].GetInt64());
}
