// A step a person approved is part of its session: the session's later decisions see its
// effects (history facts) like those of any approved step.
#include <catch2/catch.hpp>

#include "approvals_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

// touch asks a person; cat is approved unless it reads what this session wrote.
const char* kSessionApprovalRules = R"CLP(
(defrule cat-ok
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "cat"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule cat-ok) (reason "reading is fine"))))
(defrule no-read-of-what-this-session-wrote
  (proposal (id ?id) (target shell))
  (effect (proposal ?id) (kind read) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t) (decision ?d))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-read-of-what-this-session-wrote)
                    (reason ?d))))
)CLP";

const char* kEffects = R"TOML(
[program.touch]
operands = ["write..."]
[program.cat]
operands = ["read..."]
)TOML";

}  // namespace

TEST_CASE("a step a person approved joins its session's history", "[approvals][session]") {
  TempDir dir;
  Config c = approvals_config(dir);
  dir.write("rules/session.clp", kSessionApprovalRules);
  dir.write("rules/effects.toml", kEffects);
  RunningDaemon d(c);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice);
  Party bob(d.address(), t.bob);

  // Nothing written yet: reading is approved.
  CHECK(outcome_of_decide(alice, shell_action("cat notes.txt")) == "approve");
  auto asked = payload_of(alice.call(decide_request("w", shell_action("touch notes.txt"))));
  REQUIRE(str(asked["decision"], "outcome") == "approval-required");
  ApprovalRef ref = approval_ref(asked["approval"]);
  REQUIRE(!ref.id.empty());
  std::string approved = bob.call(approve_request(ref));
  INFO(approved);
  REQUIRE(error_code(approved) == "");
  // The agent sends it again: approved by the person's grant, and now part of the session.
  CHECK(outcome_of_decide(alice, shell_action("touch notes.txt")) == "approve");
  CHECK(outcome_of_decide(alice, shell_action("cat notes.txt")) == "reject");
  // Another session of the same agent did not write it.
  CHECK(outcome_of_decide(alice, shell_action("cat notes.txt", "s2")) == "approve");
}
