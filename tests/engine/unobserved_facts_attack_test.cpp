// Red team: a decision with explain and one without see the same facts. The engine once
// left out the facts of templates no rule's pattern names (asserting them only for explain,
// which lists them); each case here decides one request both ways and compares them
// (facts_json and elapsed_us cleared).
//
//  - fact-index: a fact address bound by a pattern prints as <Fact-N>; N counts every fact
//    asserted before it. printout is allowed, and a line of the capture that starts "[ABC1]"
//    is a runtime error whose reason quotes it, so leaving facts out changed the reason; with
//    the capture's 64 KiB cap it changed the outcome too (the error line fits after
//    "<Fact-8>" and not after "<Fact-11>").
//  - memory-budget: the 64 MiB rule memory budget is armed before the facts are asserted and
//    counts their memory; a rule set near the budget goes over it with every fact asserted
//    (reject, E_MEMORY) and stayed under it with facts left out (approve).
#include <rapidjson/document.h>

#include <string>
#include <vector>

#include "engine/rule_files.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/history_test_util.h"

using namespace warden;

namespace unobserved_attack {

std::shared_ptr<const Policy> policy_with(const std::string& rules) {
  auto loaded = Policy::compile({{"effects.toml", warden::test::shipped("effects.toml")},
                                 {"paths.toml", warden::test::shipped("paths.toml")},
                                 {"t.clp", rules}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

struct Both {
  std::string plain, explained;
  Decision plain_decision, explained_decision;
};

// Each decision on its own fresh engine (the memory budget is relative to what the
// environment held before the decision).
Both decide_both(const std::string& rules, const std::string& json) {
  auto policy = policy_with(rules);
  Engine engine(policy, warden::test::test_options());
  Engine other(policy, warden::test::test_options());
  DecideRequest plain;
  plain.proposal_json = json;
  plain.decision_id = "same";
  DecideRequest explained = plain;
  explained.explain = true;
  Decision a = warden::test::decide_ok(engine, plain);
  Decision b = warden::test::decide_ok(other, explained);
  b.facts_json.clear();
  a.elapsed_us = b.elapsed_us = 0;
  return {decision_to_json(a), decision_to_json(b), a, b};
}

std::string shell(const std::string& command) {
  return R"({"target":"shell","action":"run","payload":{"command":")" + command +
         R"(","cwd":"/home/user/project"},"explanation":"x","context":{"agent":"a","session":"s1"}})";
}

}  // namespace unobserved_attack

using namespace unobserved_attack;

TEST_CASE("red team fact-index: a printed fact address is the same with explain and without",
          "[unobserved-facts][redteam]") {
  const std::string rules = R"(
(defrule show-index
  ?f <- (effect (proposal ?id) (kind read) (target "/etc/passwd"))
  =>
  (printout t "[SHOW1] " ?f crlf)
  (assert (decision (proposal ?id) (outcome reject) (rule show-index) (reason "x")))))";
  Both d = decide_both(rules, unobserved_attack::shell("cat a b c d e f g /etc/passwd"));
  INFO("plain " << d.plain_decision.reason << "\nexplained " << d.explained_decision.reason);
  CHECK(d.plain == d.explained);
}

TEST_CASE("red team fact-index: explain does not move an outcome through a printed fact index",
          "[unobserved-facts][redteam]") {
  // 65521 bytes, then the address, then an error id at the start of a line: 8 bytes of
  // "<Fact-8>" leave room for the whole id within the 64 KiB capture, 9 of "<Fact-11>" do not.
  const std::string rules = R"(
(defrule show-index
  ?f <- (effect (proposal ?id) (kind read) (target "/etc/passwd"))
  =>
  (bind ?k "x")
  (loop-for-count 10 (bind ?k (str-cat ?k ?k)))
  (loop-for-count 63 (printout t ?k))
  (printout t (sub-string 1 1009 ?k) ?f crlf "[ERR1]")
  (assert (decision (proposal ?id) (outcome approve) (rule show-index) (reason "passwd is fine")))))";
  Both d = decide_both(rules, unobserved_attack::shell("cat a b c d e f g /etc/passwd"));
  INFO("plain " << outcome_name(d.plain_decision.outcome) << "\nexplained "
                << outcome_name(d.explained_decision.outcome));
  CHECK(d.plain_decision.outcome == d.explained_decision.outcome);
}

namespace unobserved_attack {

std::string memory_rules(long extra) {
  const long a = extra > 8388608 ? 8388608 : (extra < 1 ? 1 : extra);
  const long b = extra - a < 1 ? 1 : extra - a;
  return R"(
(defrule mem-edge
  (effect (proposal ?id) (kind read) (target "/etc/passwd"))
  =>
  (bind ?a "xxxxxxxx")
  (loop-for-count 20 (bind ?a (str-cat ?a ?a)))
  (bind ?b1 (str-cat "1" ?a))
  (bind ?b2 (str-cat "2" ?a))
  (bind ?b3 (str-cat "3" ?a))
  (bind ?b4 (str-cat "4" ?a))
  (bind ?b5 (str-cat "5" ?a))
  (bind ?c (str-cat "c" (sub-string 1 )" +
         std::to_string(a) + R"( ?a) (sub-string 1 )" + std::to_string(b) +
         R"( ?a)))
  (assert (decision (proposal ?id) (outcome approve) (rule mem-edge) (reason "passwd is fine")))))";
}

}  // namespace unobserved_attack

TEST_CASE(
    "red team memory-budget: explain and a plain decision count the same facts against the rule memory budget",
    "[unobserved-facts][redteam]") {
  std::string command = "cat";
  for (int i = 0; i < 300; ++i) command += " a" + std::to_string(i);
  command += " /etc/passwd";
  const std::string json = unobserved_attack::shell(command);
  // The largest extra allocation the explained decision approves; one byte more goes over
  // the budget.
  auto explained_approves = [&](long extra) {
    Engine engine(policy_with(memory_rules(extra)), warden::test::test_options());
    DecideRequest r;
    r.proposal_json = json;
    r.explain = true;
    return warden::test::decide_ok(engine, r).outcome == Outcome::Approve;
  };
  long lo = 1, hi = 16 << 20;
  REQUIRE(explained_approves(lo));
  REQUIRE_FALSE(explained_approves(hi));
  while (hi - lo > 1) {
    const long mid = lo + (hi - lo) / 2;
    (explained_approves(mid) ? lo : hi) = mid;
  }
  Both d = decide_both(memory_rules(hi), json);
  INFO("extra " << hi << "\nplain " << d.plain_decision.reason << "\nexplained "
                << d.explained_decision.reason);
  CHECK(d.plain_decision.outcome == d.explained_decision.outcome);
  CHECK(d.plain == d.explained);
}
