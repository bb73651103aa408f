// Every decision and rewrite is credited to the rule that asserts it: `warden check` refuses a
// (rule …) slot that names another rule, is not a constant, or is missing, with its line.
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::compile_text;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

std::vector<Diagnostic> with_code(const Diagnostics& diagnostics, const std::string& code) {
  std::vector<Diagnostic> out;
  for (const auto& d : diagnostics)
    if (d.code == code) out.push_back(d);
  return out;
}

}  // namespace

TEST_CASE("a decision naming another rule is E_RULE_NAME at its line", "[loader][rule-name]") {
  auto loaded = compile_text(R"(
(defrule reject-rm
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule reject-rm))))
(defrule reject-curl
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject)
                    (rule reject-rm)
                    (reason "copied from the rule above"))))
)");
  CHECK_FALSE(loaded.policy);
  auto errors = with_code(loaded.diagnostics, "E_RULE_NAME");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 10);
  CHECK(errors[0].rule == "reject-curl");
  CHECK(errors[0].message.find("reject-rm") != std::string::npos);
}

TEST_CASE("a rewrite naming another rule, a variable rule name or none is E_RULE_NAME",
          "[loader][rule-name]") {
  auto loaded = compile_text(R"(
(defrule redact
  (param (proposal ?id) (key "payload.text") (value ?t))
  =>
  (assert (rewrite (proposal ?id) (key "payload.text") (value "x") (rule other-rule))))
(defrule by-variable
  (proposal (id ?id) (agent ?a))
  =>
  (bind ?who (sym-cat ?a))
  (assert (decision (proposal ?id) (outcome approve) (rule ?who))))
(defrule nameless
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve))))
(defrule second-of-two
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule second-of-two))
          (rewrite (proposal ?id) (key "payload.text") (value "y") (rule redact))))
)");
  CHECK_FALSE(loaded.policy);
  auto errors = with_code(loaded.diagnostics, "E_RULE_NAME");
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].line == 5);
  CHECK(errors[0].rule == "redact");
  CHECK(errors[1].line == 10);
  CHECK(errors[1].rule == "by-variable");
  CHECK(errors[2].line == 14);
  CHECK(errors[2].rule == "nameless");
  CHECK(errors[3].line == 19);
  CHECK(errors[3].rule == "second-of-two");
}

TEST_CASE("decisions may not be asserted from functions, where no rule name can be checked",
          "[loader][rule-name]") {
  auto loaded = compile_text(R"(
(deffunction reject-as (?id ?rule)
  (assert (decision (proposal ?id) (outcome reject) (rule ?rule))))
(defrule uses-it
  (proposal (id ?id))
  =>
  (reject-as ?id uses-it))
)");
  CHECK_FALSE(loaded.policy);
  auto errors = with_code(loaded.diagnostics, "E_RULE_NAME");
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 3);
}

TEST_CASE("decisions and rewrites credited to their own rule load and decide",
          "[loader][rule-name]") {
  Engine engine(must_compile(R"(
(defrule own-name
  (proposal (id ?id) (target message))
  =>
  (if TRUE then (assert (decision (proposal ?id) (outcome approve) (rule own-name) (reason "fine"))))
  (assert (rewrite (proposal ?id) (key "payload.text") (value "z") (rule "own-name"))))
)"),
                test_options());
  DecideResult r = engine.decide(R"({"target":"message","action":"send","payload":{"text":"a"}})");
  REQUIRE(r.ok);
  REQUIRE(r.decision.rules.size() == 1);
  CHECK(r.decision.rules[0].rule == "own-name");
  REQUIRE(r.decision.rewrites.size() == 1);
  CHECK(r.decision.rewrites[0].rule == "own-name");
}
