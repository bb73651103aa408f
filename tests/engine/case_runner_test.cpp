// Rule test cases (`warden test`): an engine error passes only a case that names it, coverage
// counts only decisions made without error, and cases carry the authenticated caller.
#include <rapidjson/document.h>

#include <algorithm>

#include "engine/case_runner.h"
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

// `crash` asserts its reject and then fails at run time; `chain` loops to the run limit.
const char* kRules = R"(
(defrule crash (proposal (id ?id) (target tool) (action crash))
  => (assert (decision (proposal ?id) (outcome reject) (rule crash) (reason "about to fail")))
     (/ 1 (- 1 1)))
(defrule chain (proposal (id ?id) (target tool) (action chain))
  => (assert (decision (proposal ?id) (outcome reject) (rule chain) (reason "start"))))
(defrule grow (decision (proposal ?id) (rule chain|grow) (reason ?r&:(< (str-length ?r) 100000)))
  => (assert (decision (proposal ?id) (outcome reject) (rule grow) (reason (str-cat ?r "x")))))
(defrule fine (proposal (id ?id) (target reply))
  => (assert (decision (proposal ?id) (outcome approve) (rule fine))))
(defrule admins-may (proposal (id ?id) (target tool) (action admin) (principal "alice") (groups $? "admins" $?))
  => (assert (decision (proposal ?id) (outcome approve) (rule admins-may))))
)";

std::vector<RuleCase> cases_from(const std::string& jsonl) {
  Diagnostics diagnostics;
  auto cases = read_cases("cases.jsonl", jsonl, &diagnostics);
  for (const auto& d : diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(diagnostics.empty());
  return cases;
}

CaseReport run(const std::string& jsonl) {
  static std::vector<RuleCase> keep;  // results point into the cases
  keep = cases_from(jsonl);
  EngineOptions o = test_options();
  o.run_limit = 50;
  return run_cases(must_compile(kRules), keep, o);
}

bool covered(const CaseReport& report, const std::string& rule) {
  return std::find(report.uncovered_rules.begin(), report.uncovered_rules.end(), rule) ==
         report.uncovered_rules.end();
}

}  // namespace

TEST_CASE("a case expecting reject fails when the engine failed instead of deciding",
          "[cases][failclosed]") {
  CaseReport report = run(
      R"({"name":"runtime error","proposal":{"target":"tool","action":"crash"},"expect":"reject","rule":"crash"})"
      "\n"
      R"({"name":"run limit","proposal":{"target":"tool","action":"chain"},"expect":"reject"})"
      "\n");
  REQUIRE(report.results.size() == 2);
  CHECK_FALSE(report.results[0].passed);
  CHECK(report.results[0].failure.find("E_RUNTIME") != std::string::npos);
  CHECK_FALSE(report.results[1].passed);
  CHECK(report.results[1].failure.find("E_RUN_LIMIT") != std::string::npos);
  CHECK(report.failed == 2);
  CHECK(report.passed == 0);
}

TEST_CASE("expect_error passes only the named engine error", "[cases][failclosed]") {
  CaseReport report = run(
      R"({"name":"named","proposal":{"target":"tool","action":"crash"},"expect_error":"E_RUNTIME"})"
      "\n"
      R"({"name":"named, with reject","proposal":{"target":"tool","action":"chain"},"expect":"reject","expect_error":"E_RUN_LIMIT"})"
      "\n"
      R"({"name":"another error","proposal":{"target":"tool","action":"crash"},"expect_error":"E_DEADLINE"})"
      "\n"
      R"({"name":"no error at all","proposal":{"target":"reply"},"expect_error":"E_RUNTIME"})"
      "\n"
      R"({"name":"input error","proposal":["not","an","object"],"expect_error":"E_INPUT_SHAPE"})"
      "\n"
      R"({"name":"input error unexpected","proposal":["x"],"expect":"reject"})"
      "\n");
  REQUIRE(report.results.size() == 6);
  CHECK(report.results[0].passed);
  CHECK(report.results[1].passed);
  CHECK_FALSE(report.results[2].passed);
  CHECK(report.results[2].failure.find("E_RUNTIME") != std::string::npos);
  CHECK_FALSE(report.results[3].passed);
  CHECK(report.results[3].failure.find("without error") != std::string::npos);
  CHECK(report.results[4].passed);
  CHECK_FALSE(report.results[5].passed);
  CHECK(report.results[5].failure.find("E_INPUT_SHAPE") != std::string::npos);
}

TEST_CASE("a rule that fires only on the way to an engine error is not covered",
          "[cases][coverage]") {
  CaseReport report = run(
      R"({"name":"crash","proposal":{"target":"tool","action":"crash"},"expect_error":"E_RUNTIME"})"
      "\n"
      R"({"name":"chain","proposal":{"target":"tool","action":"chain"},"expect_error":"E_RUN_LIMIT"})"
      "\n"
      R"({"name":"reply","proposal":{"target":"reply"},"expect":"approve","rule":"fine"})"
      "\n");
  CHECK(report.failed == 0);
  CHECK_FALSE(covered(report, "crash"));
  CHECK_FALSE(covered(report, "chain"));
  CHECK_FALSE(covered(report, "grow"));
  CHECK(covered(report, "fine"));
}

TEST_CASE("cases pass principal and groups as the authenticated caller", "[cases]") {
  CaseReport report = run(
      R"({"name":"admin","proposal":{"target":"tool","action":"admin"},"principal":"alice","groups":["dev","admins"],"expect":"approve","rule":"admins-may"})"
      "\n"
      R"({"name":"not in the group","proposal":{"target":"tool","action":"admin"},"principal":"alice","groups":["dev"],"expect":"approval-required","not_rule":"admins-may"})"
      "\n"
      R"({"name":"groups in context are not the caller's","proposal":{"target":"tool","action":"admin","context":{"principal":"alice","groups":["admins"]}},"expect":"approval-required"})"
      "\n");
  REQUIRE(report.results.size() == 3);
  for (const auto& r : report.results) {
    INFO(r.test->name << "\n" << r.failure);
    CHECK(r.passed);
  }
  CHECK(covered(report, "admins-may"));
}

TEST_CASE("case files refuse unknown fields and contradictory expectations with their line",
          "[cases]") {
  Diagnostics diagnostics;
  auto cases = read_cases(
      "c.jsonl",
      R"({"name":"ok","proposal":{"target":"reply"},"expect":"approve"})"
      "\n"
      R"({"name":"typo","proposal":{"target":"reply"},"expect":"reject","expect_eror":"E_RUNTIME"})"
      "\n"
      R"({"name":"contradiction","proposal":{"target":"reply"},"expect":"approve","expect_error":"E_RUNTIME"})"
      "\n"
      R"({"name":"groups","proposal":{"target":"reply"},"expect":"approve","groups":"admins"})"
      "\n"
      R"({"name":"principal","proposal":{"target":"reply"},"expect":"approve","principal":7})"
      "\n",
      &diagnostics);
  CHECK(cases.size() == 1);
  REQUIRE(diagnostics.size() == 4);
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    CHECK(diagnostics[i].code == "E_CASE");
    CHECK(diagnostics[i].line == static_cast<long>(i) + 2);
  }
  CHECK(diagnostics[0].message.find("expect_eror") != std::string::npos);
}

TEST_CASE("a case's strings are read whole: a NUL does not cut \"expect\" short", "[cases]") {
  Diagnostics diagnostics;
  auto cases =
      read_cases("c.jsonl",
                 R"({"name":"nul","proposal":{"target":"reply"},"expect":"approve\u0000reject"})"
                 "\n",
                 &diagnostics);
  CHECK(cases.empty());
  REQUIRE(diagnostics.size() == 1);
  CHECK(diagnostics[0].code == "E_CASE");
  CHECK(diagnostics[0].message.find("no valid \"expect\"") != std::string::npos);
}

namespace {

// Reports the decision's time, and the age of the session's earlier step, as its reason.
const char* kClockRules = R"CLP(
(defrule clock
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule clock)
                    (reason (str-cat (now) " " (local-weekday "Europe/Berlin") " " (local-hour "Europe/Berlin"))))))
(defrule write (proposal (id ?id) (target file))
  => (assert (decision (proposal ?id) (outcome approve) (rule write))))
(defrule aged
  (proposal (id ?id) (target tool))
  (history (proposal ?id) (age ?a))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule aged) (reason (str-cat "age " ?a " at " (now))))))
)CLP";

}  // namespace

TEST_CASE("a case's now is its decision's time; without one the time is fixed", "[cases][time]") {
  static std::vector<RuleCase> cases;
  cases = cases_from(
      R"({"name":"spring","proposal":{"target":"reply"},"now":"2026-03-29T01:30:00+01:00","expect":"approve"})"
      "\n"
      R"({"name":"after the change","proposal":{"target":"reply"},"now":"2026-03-29T03:30:00+02:00","expect":"approve"})"
      "\n"
      R"({"name":"no now","proposal":{"target":"reply"},"expect":"approve"})"
      "\n"
      R"({"name":"history","now":"2026-03-30T08:00:00Z","history":[{"target":"file","action":"write","payload":{"path":"a"},"context":{"session":"s"}}],"proposal":{"target":"tool","payload":{"tool":"x"},"context":{"session":"s"}},"expect":"approve","rule":"aged"})"
      "\n");
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].now == 1774744200);
  CHECK(cases[2].now == kDefaultCaseTime);
  // An effects table, so that the file write has an effect the session remembers.
  auto loaded =
      Policy::compile({RuleSource{"t.clp", kClockRules},
                       RuleSource{"effects.toml", "[program.ls]\noperands = [\"read...\"]\n"}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  CaseReport report = run_cases(loaded.policy, cases, test_options());
  REQUIRE(report.results.size() == 4);
  auto reason = [&](std::size_t i) {
    INFO(report.results[i].failure);
    REQUIRE(report.results[i].passed);
    rapidjson::Document d;
    d.Parse(report.results[i].decision_json.c_str());
    return std::string(d["reason"].GetString());
  };
  CHECK(reason(0) == "1774744200 sun 1");
  CHECK(reason(1) == "1774747800 sun 3");
  CHECK(reason(2) == "1767225600 thu 1");     // 2026-01-01T00:00:00Z, whenever the case runs
  CHECK(reason(3) == "age 0 at 1774857600");  // the history was decided at the case's time
}

TEST_CASE("a malformed now is E_CASE at the case's file and line", "[cases][time]") {
  Diagnostics diagnostics;
  auto cases = read_cases(
      "team/time.jsonl",
      R"({"name":"ok","proposal":{"target":"reply"},"now":"2026-03-29T01:30:00Z","expect":"approve"})"
      "\n"
      R"({"name":"no offset","proposal":{"target":"reply"},"now":"2026-03-29T01:30:00","expect":"approve"})"
      "\n"
      "\n"
      R"({"name":"no such day","proposal":{"target":"reply"},"now":"2026-02-30T01:30:00Z","expect":"approve"})"
      "\n"
      R"({"name":"a number","proposal":{"target":"reply"},"now":1774744200,"expect":"approve"})"
      "\n",
      &diagnostics);
  CHECK(cases.size() == 1);
  REQUIRE(diagnostics.size() == 3);
  for (const auto& d : diagnostics) {
    CHECK(d.code == "E_CASE");
    CHECK(d.file == "team/time.jsonl");
  }
  CHECK(diagnostics[0].line == 2);
  CHECK(
      diagnostics[0].to_text() ==
      "team/time.jsonl:2: error E_CASE: test case 'no offset': \"now\" is not a time: no offset: add Z or +HH:MM "
      "(RFC 3339 with an offset, such as 2026-03-29T01:30:00+01:00 or 2026-03-29T00:30:00Z)");
  CHECK(diagnostics[1].line == 4);
  CHECK(diagnostics[1].message.find("no such date") != std::string::npos);
  CHECK(diagnostics[2].line == 5);
  CHECK(diagnostics[2].message == "test case field \"now\" must be a string");
}
