// Tests for `allow` and `hint` facts: capabilities rules grant an approved action's actuator
// (shell-syntax, private-network) and text they contribute to the model's next prompt.
#include <catch2/catch.hpp>

#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"

namespace warden {
namespace {

const char* const kGrantRules = R"(
(defrule approve-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-shell) (reason "ok"))))
(defrule pipes-allowed
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "sort"))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule pipes-allowed) (reason "sort pipelines"))))
(defrule private-watch
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "curl"))
  =>
  (assert (allow (proposal ?id) (capability private-network) (rule private-watch) (mode monitor))))
(defrule reject-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule reject-rm)))
  (assert (hint (proposal ?id) (rule reject-rm) (text "use git clean -n to preview")))
  (assert (decision (proposal ?id) (outcome reject) (rule reject-rm) (reason "no rm"))))
)";

std::string grants_shell(const std::string& command) {
  return R"({"target":"shell","action":"run","payload":{"command":")" + command + R"("}})";
}

}  // namespace

TEST_CASE("an enforcing allow of an approved decision grants its capability", "[grants]") {
  Engine engine(test::must_compile(kGrantRules), test::test_options());
  Decision d = test::decide_ok(engine, grants_shell("cat a | sort"));
  REQUIRE(d.outcome == Outcome::Approve);
  REQUIRE(d.allows.size() == 1);
  CHECK(d.allows[0].rule == "pipes-allowed");
  CHECK(d.allows[0].capability == "shell-syntax");
  CHECK(d.allows[0].reason == "sort pipelines");
  CHECK(granted_capabilities(d) == std::vector<std::string>{"shell-syntax"});
  CHECK(decision_to_json(d).find(
            R"("allows":[{"rule":"pipes-allowed","capability":"shell-syntax")") !=
        std::string::npos);
}

TEST_CASE("a monitor allow is reported and grants nothing", "[grants]") {
  Engine engine(test::must_compile(kGrantRules), test::test_options());
  Decision d = test::decide_ok(engine, grants_shell("curl http://10.0.0.1/"));
  REQUIRE(d.outcome == Outcome::Approve);
  REQUIRE(d.allows.size() == 1);
  CHECK(d.allows[0].monitor);
  CHECK(granted_capabilities(d).empty());
}

TEST_CASE("a rejected decision grants nothing and carries its hints", "[grants]") {
  Engine engine(test::must_compile(kGrantRules), test::test_options());
  Decision d = test::decide_ok(engine, grants_shell("rm -rf build"));
  REQUIRE(d.outcome == Outcome::Reject);
  CHECK(d.allows.size() == 1);
  CHECK(granted_capabilities(d).empty());
  REQUIRE(d.hints.size() == 1);
  CHECK(d.hints[0].rule == "reject-rm");
  CHECK(d.hints[0].text == "use git clean -n to preview");
  // Nothing of one decision reaches the next.
  Decision next = test::decide_ok(engine, grants_shell("ls"));
  CHECK(next.allows.empty());
  CHECK(next.hints.empty());
}

TEST_CASE("an allow must credit its own rule and may not come from a function", "[grants]") {
  auto loaded = test::compile_text(R"(
(defrule a
  (proposal (id ?id))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule b))))
(deffunction grant (?id)
  (assert (allow (proposal ?id) (capability private-network) (rule grant))))
)");
  REQUIRE_FALSE(loaded.policy);
  int name_errors = 0;
  for (const auto& d : loaded.diagnostics) {
    if (d.code == "E_RULE_NAME") ++name_errors;
  }
  CHECK(name_errors == 2);
}

TEST_CASE("an unknown capability is refused when the rules load", "[grants]") {
  auto loaded = test::compile_text(R"(
(defrule a
  (proposal (id ?id))
  =>
  (assert (allow (proposal ?id) (capability root-shell) (rule a))))
)");
  REQUIRE_FALSE(loaded.policy);
  REQUIRE_FALSE(loaded.diagnostics.empty());
  CHECK(loaded.diagnostics[0].line == 5);
}
}  // namespace warden
