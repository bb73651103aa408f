// Loading rules: every problem is a diagnostic with a stable code and the right line, all
// are reported at once, and a set with any error is never loaded.
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::compile_text;
using warden::test::find_code;

TEST_CASE("a clean rule set compiles with a digest and rule names", "[loader]") {
  auto loaded = compile_text(warden::test::kSimpleRules);
  REQUIRE(loaded.policy);
  CHECK(loaded.diagnostics.empty());
  CHECK(loaded.policy->rule_count() == 2);
  CHECK(loaded.policy->digest().rfind("sha256:", 0) == 0);
  CHECK(loaded.policy->digest().size() == 7 + 64);
  auto other = compile_text(std::string(warden::test::kSimpleRules) + " ; changed\n");
  CHECK(other.policy->digest() != loaded.policy->digest());
}

TEST_CASE("syntax error reports E_PARSE with file and line", "[loader]") {
  auto loaded = compile_text(
      "(defrule ok (proposal (id ?id)) => )\n\n(defrule broken\n  (proposal (id ?id)\n  =>\n  (assert (decision (proposal ?id))))\n",
      "rules/x.clp");
  CHECK_FALSE(loaded.policy);
  REQUIRE(!loaded.diagnostics.empty());
  const Diagnostic& d = loaded.diagnostics.front();
  CHECK(d.file == "rules/x.clp");
  CHECK((d.code == code::kParse || d.code == code::kUnbalanced));
  CHECK(d.line >= 3);
  CHECK(d.line <= 6);
}

TEST_CASE("unbalanced parentheses report E_UNBALANCED at the opening line", "[loader]") {
  auto loaded = compile_text(
      "(defrule a (proposal (id ?id)) => )\n\n(defrule b\n  (proposal (id ?id))\n  =>\n", "u.clp");
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code::kUnbalanced);
  REQUIRE(d);
  CHECK(d->line == 3);
  auto str = compile_text("(defrule a\n (proposal (explanation \"open string)) => )\n");
  REQUIRE(find_code(str.diagnostics, code::kUnbalanced));
  CHECK(find_code(str.diagnostics, code::kUnbalanced)->line == 2);
}

TEST_CASE("unknown function is E_UNKNOWN_FUNCTION at its line", "[loader]") {
  auto loaded = compile_text(
      "; header\n(defrule a\n  (proposal (id ?id))\n  =>\n  (no-such-function ?id))\n");
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code::kUnknownFunction);
  REQUIRE(d);
  CHECK(d->line == 5);
  CHECK(d->rule == "a");
}

TEST_CASE("forbidden functions are refused with their line, including in deffunctions and globals",
          "[loader]") {
  for (const char* fn :
       {"exit",          "system",   "eval",   "build",           "load",
        "open",          "readline", "seed",   "funcall",         "assert-string",
        "retract",       "sort",     "fetch",  "constructs-to-c", "active-make-instance",
        "make-instance", "send",     "format", "explode$",        "string-to-field",
        "check-syntax"}) {
    std::string text =
        "(defrule a\n  (proposal (id ?id))\n  =>\n  (" + std::string(fn) + " \"x\"))\n";
    auto loaded = compile_text(text);
    INFO(fn);
    CHECK_FALSE(loaded.policy);
    const Diagnostic* d = find_code(loaded.diagnostics, code::kForbiddenFunction);
    REQUIRE(d);
    CHECK(d->line == 4);
  }
  auto global = compile_text("(defglobal ?*x* = (system \"touch /tmp/warden-pwned\"))\n");
  CHECK_FALSE(global.policy);
  REQUIRE(find_code(global.diagnostics, code::kForbiddenFunction));
  auto fn = compile_text("(deffunction f ()\n  (exit))\n");
  REQUIRE(find_code(fn.diagnostics, code::kForbiddenFunction));
  CHECK(find_code(fn.diagnostics, code::kForbiddenFunction)->line == 2);
}

TEST_CASE("rule files cannot define templates, facts or modules", "[loader]") {
  for (const char* c : {"deftemplate", "deffacts", "defmodule", "defclass", "definstances",
                        "defgeneric", "defmethod", "defmessage-handler"}) {
    auto loaded = compile_text(std::string("\n(") + c + " foo (slot x))\n");
    INFO(c);
    CHECK_FALSE(loaded.policy);
    const Diagnostic* d = find_code(loaded.diagnostics, code::kForbiddenConstruct);
    REQUIRE(d);
    CHECK(d->line == 2);
  }
}

TEST_CASE("duplicate rule names across files are reported with both places", "[loader]") {
  auto loaded =
      Policy::compile({RuleSource{"a.clp", "(defrule same (proposal (id ?id)) => )\n"},
                       RuleSource{"b.clp", "\n\n(defrule same (proposal (id ?id)) => )\n"}});
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code::kDuplicateRule);
  REQUIRE(d);
  CHECK(d->file == "b.clp");
  CHECK(d->line == 3);
  CHECK(d->message.find("a.clp:1") != std::string::npos);
}

TEST_CASE("duplicates far apart in a large file are each reported at their own line", "[loader]") {
  // 2000 rules of 4 lines each: rule 3 is defined again as rule 1990, function f-7 again at
  // the end; every other name is unique. Each duplicate names the first definition's line.
  std::string text = "(deffunction f-7 (?x) ?x)\n";
  auto rule = [](const std::string& name) {
    return "(defrule " + name +
           "\n  (proposal (id ?id))\n  =>\n  (assert (decision (proposal ?id) (rule " + name +
           "))))\n";
  };
  for (int i = 0; i < 2000; ++i) text += rule(i == 1990 ? "r-3" : "r-" + std::to_string(i));
  text += "(deffunction f-7 (?y) ?y)\n";
  auto loaded = compile_text(text);
  CHECK_FALSE(loaded.policy);
  std::vector<const Diagnostic*> rules, functions;
  for (const auto& d : loaded.diagnostics) {
    if (d.code == code::kDuplicateRule) rules.push_back(&d);
    if (d.code == code::kDuplicateFunction) functions.push_back(&d);
  }
  REQUIRE(rules.size() == 1);
  CHECK(rules[0]->line == 2 + 4 * 1990);
  CHECK(rules[0]->rule == "r-3");
  CHECK(rules[0]->message.find("t.clp:" + std::to_string(2 + 4 * 3)) != std::string::npos);
  REQUIRE(functions.size() == 1);
  CHECK(functions[0]->line == 2 + 4 * 2000);
  CHECK(functions[0]->message.find("t.clp:1") != std::string::npos);
}

TEST_CASE("binding a global at run time is E_GLOBAL_MUTATION", "[loader]") {
  auto loaded = compile_text(
      "(defglobal ?*n* = 0)\n(defrule a (proposal (id ?id))\n =>\n (bind ?*n* (+ ?*n* 1)))\n");
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code::kGlobalMutation);
  REQUIRE(d);
  CHECK(d->line == 4);
}

TEST_CASE("a constant regex RE2 cannot compile is E_BAD_REGEX", "[loader]") {
  auto loaded =
      compile_text("(defrule a\n (param (value ?v&:(regex-match \"(unclosed\" ?v)))\n =>)\n");
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code::kBadRegex);
  REQUIRE(d);
  CHECK(d->line == 2);
}

TEST_CASE("pattern-hit needs constant kind and pattern", "[loader]") {
  auto loaded =
      compile_text("(defrule a\n (pattern-hit (proposal ?id) (kind regex) (pattern ?p))\n =>)\n");
  CHECK_FALSE(loaded.policy);
  REQUIRE(find_code(loaded.diagnostics, code::kBadPattern));
  CHECK(find_code(loaded.diagnostics, code::kBadPattern)->line == 2);
}

TEST_CASE("all errors are collected at once, and a good construct never half-loads", "[loader]") {
  auto loaded = Policy::compile(
      {RuleSource{
           "a.clp",
           "(defrule good (proposal (id ?id)) => )\n(defrule bad1 (proposal (id ?id)) => (exit))\n"},
       RuleSource{"b.clp", "(deftemplate t (slot x))\n(defrule bad2 (proposal) => (nope))\n"}});
  CHECK_FALSE(loaded.policy);
  CHECK(loaded.diagnostics.size() >= 3);
  CHECK(find_code(loaded.diagnostics, code::kForbiddenFunction));
  CHECK(find_code(loaded.diagnostics, code::kForbiddenConstruct));
  CHECK(find_code(loaded.diagnostics, code::kUnknownFunction));
}

TEST_CASE("text outside a construct and an empty set are errors", "[loader]") {
  auto stray = compile_text("hello\n(defrule a (proposal (id ?id)) => )\n");
  CHECK_FALSE(stray.policy);
  REQUIRE(find_code(stray.diagnostics, code::kParse));
  CHECK(find_code(stray.diagnostics, code::kParse)->line == 1);
  CHECK(find_code(Policy::compile({}).diagnostics, code::kNoRules));
}

TEST_CASE("diagnostics print as file:line: error CODE: message and as JSON", "[loader]") {
  Diagnostic d{code::kParse, Severity::Error, "rules/shell.clp", 42, "r", "bad \"thing\""};
  CHECK(d.to_text() == "rules/shell.clp:42: error E_PARSE: in rule 'r': bad \"thing\"");
  CHECK(
      d.to_json() ==
      R"({"code":"E_PARSE","severity":"error","file":"rules/shell.clp","line":42,"rule":"r","message":"bad \"thing\""})");
}

TEST_CASE("an invalid outcome symbol is refused at load, at its line", "[loader]") {
  auto loaded = compile_text(
      "(defrule a (proposal (id ?id))\n =>\n (assert (decision (proposal ?id) (outcome maybe) (rule a))))\n");
  CHECK_FALSE(loaded.policy);
  REQUIRE(!loaded.diagnostics.empty());
  CHECK(loaded.diagnostics.front().code == code::kUnknownOutcome);
  CHECK(loaded.diagnostics.front().line == 3);
}

TEST_CASE("hostile rule files: deep nesting and endless globals are refused, not fatal",
          "[loader][hostile]") {
  std::string deep = "(defrule a (proposal (id ?id)) (test ";
  for (int i = 0; i < 100000; ++i) deep += "(+ 1 ";
  for (int i = 0; i < 100000; ++i) deep += ")";
  deep += ") =>)\n";
  auto nested = compile_text(deep);
  CHECK_FALSE(nested.policy);
  REQUIRE(find_code(nested.diagnostics, code::kParse));

  auto spin = compile_text(
      "(deffunction forever () (while TRUE do (+ 1 1)))\n(defglobal ?*x* = (forever))\n");
  CHECK_FALSE(spin.policy);
  REQUIRE(!spin.diagnostics.empty());
  CHECK(spin.diagnostics.front().code == code::kCompile);
}
