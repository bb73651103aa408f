// Rule errors in the rule author's words, at the line of the mistake: one case per kind of
// typical mistake, each checking the code, the line (and column), and the name suggested.
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::compile_text;

namespace {

// The one diagnostic with `code` that `text` gets; the set must not load when it is an error.
Diagnostic only(const std::string& text, const std::string& code) {
  auto loaded = compile_text(text, "team/rules.clp");
  INFO(text);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  std::vector<Diagnostic> found;
  for (const auto& d : loaded.diagnostics)
    if (d.code == code) found.push_back(d);
  REQUIRE(found.size() == 1);
  if (found.front().severity == Severity::Error) CHECK_FALSE(loaded.policy);
  CHECK(found.front().file == "team/rules.clp");
  return found.front();
}

bool says(const Diagnostic& d, const std::string& words) {
  INFO(d.message);
  return d.message.find(words) != std::string::npos;
}

// A rule of the shipped pack's shape, to break one line at a time.
const char* kRule = R"(; team rules
(defrule block-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule block-rm) (reason "no rm"))))

(defrule approve-replies
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-replies) (reason "replies"))))
)";

// kRule with `from` replaced by `to` (once).
std::string broken(const std::string& from, const std::string& to) {
  std::string text = kRule;
  const std::size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("the corpus rule itself loads cleanly", "[rule_errors]") {
  auto loaded = compile_text(kRule);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK(loaded.policy);
  CHECK(loaded.diagnostics.empty());
}

TEST_CASE("an unclosed parenthesis is reported where it opened, not where the construct began",
          "[rule_errors]") {
  // Line 3 lacks its `)`: the file ends inside the second rule, which the first swallowed.
  Diagnostic d = only(broken("(target shell))", "(target shell)"), code::kUnbalanced);
  CHECK(d.line == 3);
  CHECK(d.column == 3);
  CHECK(says(d, "`(proposal` opened on line 3 is never closed"));
  CHECK(d.rule == "block-rm");
  CHECK(says(d, "before line 4"));

  // The rule after an unclosed one is still checked: both mistakes at once.
  auto loaded = compile_text(broken("(reason \"no rm\"))))", "(reason \"no rm\")))") +
                             "(defrule c (proposal (id ?id)) => (no-such-function))\n");
  std::vector<std::pair<std::string, long>> got;
  for (const auto& d2 : loaded.diagnostics) got.emplace_back(d2.code, d2.line);
  CHECK(got == std::vector<std::pair<std::string, long>>{{code::kUnbalanced, 2},
                                                         {code::kUnknownFunction, 12}});
}

TEST_CASE("a `)` too many is reported at the line that closes the rule early", "[rule_errors]") {
  Diagnostic d = only(broken("(target shell))", "(target shell)))"), code::kUnbalanced);
  CHECK(d.line == 3);
  CHECK(says(d, "closes `(defrule block-rm` (opened on line 2)"));
  // A continuation line says which group the `)` closed too early.
  Diagnostic inner = only(
      "(defrule r\n  (effect (proposal ?id) (kind read))\n          (target ?p))\n  =>\n"
      "  (assert (decision (proposal ?id) (outcome reject) (rule r))))\n",
      code::kUnbalanced);
  CHECK(inner.line == 2);
  CHECK(inner.column == 37);
  // A stray one after a whole rule closes nothing, and the rule is still checked.
  auto extra = compile_text(std::string(kRule) + ")\n");
  REQUIRE(extra.diagnostics.size() == 1);
  CHECK(extra.diagnostics.front().code == code::kUnbalanced);
  CHECK(extra.diagnostics.front().line == 12);
}

TEST_CASE("a `(` left open before `=>` is reported at its line", "[rule_errors]") {
  // Balanced overall (one `)` too many at the end), so CLIPS alone saw only a syntax error later.
  Diagnostic d = only(broken("(program \"rm\"))\n", "(program \"rm\")\n"), code::kUnbalanced);
  CHECK(d.line == 4);
  CHECK(says(d, "`(shell-command` opened on line 4 is never closed"));
  // A pattern read as a slot of the one before it: the `)` missing on line 3.
  Diagnostic slot =
      only(broken("(target shell))\n  (shell-command (proposal ?id) (program \"rm\"))",
                  "(target shell)\n  (shell-command (proposal ?id) (program \"rm\")))"),
           code::kUnbalanced);
  CHECK(slot.line == 3);
  CHECK(says(slot, "`(proposal` opened on line 3 is not closed before `(shell-command` on line 4"));
}

TEST_CASE("a missing closing quote is reported where the string opened", "[rule_errors]") {
  // The string runs on into the next rule, where the next quote closes it.
  Diagnostic d = only(broken("(reason \"no rm\")", "(reason \"no rm)"), code::kUnbalanced);
  CHECK(d.line == 6);
  CHECK(d.column == 77);
  CHECK(says(d, "string opened on line 6"));
  // Even when a quote in a comment further on pairs the quotes up again.
  Diagnostic paired = only(
      broken("(reason \"no rm\")", "(reason \"no rm)") + ";; see \"the guide\n", code::kUnbalanced);
  CHECK(paired.line == 6);
  CHECK(says(paired, "string opened on line 6"));
  // The last string of a file.
  Diagnostic last = only(broken("(reason \"replies\")", "(reason \"replies)"), code::kUnbalanced);
  CHECK(last.line == 11);
}

TEST_CASE("a rule without `=>` is E_MISSING_ARROW at its first action", "[rule_errors]") {
  Diagnostic d = only(broken("  =>\n  (assert (decision (proposal ?id) (outcome reject)",
                             "  (assert (decision (proposal ?id) (outcome reject)"),
                      code::kMissingArrow);
  CHECK(d.line == 5);
  CHECK(d.rule == "block-rm");
  CHECK(says(d, "`(assert` on line 5 is an action"));
  Diagnostic bare = only("(defrule r\n  (proposal (id ?id)))\n", code::kMissingArrow);
  CHECK(bare.line == 2);
}

TEST_CASE("a misspelt construct keyword is E_PARSE with the keyword meant", "[rule_errors]") {
  Diagnostic d = only(broken("(defrule approve-replies", "(defrul approve-replies"), code::kParse);
  CHECK(d.line == 8);
  CHECK(d.column == 2);
  CHECK(says(d, "did you mean `defrule`?"));
}

TEST_CASE("a misspelt conditional element is E_UNKNOWN_TEMPLATE with the element meant",
          "[rule_errors]") {
  Diagnostic d = only(
      broken("  =>\n  (assert (decision (proposal ?id) (outcome reject)",
             "  (tset (eq ?id \"x\"))\n  =>\n  (assert (decision (proposal ?id) (outcome reject)"),
      code::kUnknownTemplate);
  CHECK(d.line == 5);
  CHECK(says(d, "did you mean `test`?"));
  // A function called as a condition, without test.
  Diagnostic call =
      only(broken("  =>\n  (assert (decision (proposal ?id) (outcome reject)",
                  "  (eq ?id \"x\")\n  =>\n  (assert (decision (proposal ?id) (outcome reject)"),
           code::kUnknownTemplate);
  CHECK(call.line == 5);
  CHECK(says(call, "(test (eq …))"));
}

TEST_CASE("an unknown function is reported with the function meant", "[rule_errors]") {
  Diagnostic d = only(broken("(program \"rm\")", "(program ?p&:(eq (str-lowr ?p) \"rm\"))"),
                      code::kUnknownFunction);
  CHECK(d.line == 4);
  CHECK(d.column == 51);
  CHECK(says(d, "did you mean `str-lower`?"));
  // The rule set's own deffunctions are names it may have meant.
  Diagnostic own = only(
      "(deffunction risky-program (?p) (eq ?p \"rm\"))\n(defrule r\n  (proposal (id ?id))\n  (test "
      "(risky-progam \"x\"))\n  =>)\n",
      code::kUnknownFunction);
  CHECK(own.line == 4);
  CHECK(says(own, "did you mean `risky-program`?"));
}

TEST_CASE("a pattern on an unknown template is E_UNKNOWN_TEMPLATE with the template meant",
          "[rule_errors]") {
  Diagnostic d =
      only(broken("(proposal (id ?id) (target shell))", "(proposl (id ?id) (target shell))"),
           code::kUnknownTemplate);
  CHECK(d.line == 3);
  CHECK(d.column == 4);
  CHECK(says(d, "unknown template `proposl` — did you mean `proposal`?"));
  // An ordered pattern CLIPS would have loaded silently, never to match.
  Diagnostic quiet = only(broken("(proposal (id ?id) (target shell))", "(shellcommand ?id)"),
                          code::kUnknownTemplate);
  CHECK(quiet.line == 3);
  CHECK(says(quiet, "did you mean `shell-command`?"));
}

TEST_CASE("a slot its template does not have is E_UNKNOWN_SLOT with the template's slots",
          "[rule_errors]") {
  Diagnostic d = only(broken("(program \"rm\")", "(programm \"rm\")"), code::kUnknownSlot);
  CHECK(d.line == 4);
  CHECK(d.column == 34);
  CHECK(says(d, "slot `programm` is not a slot of `shell-command` — did you mean `program`?"));
  CHECK(says(d, "its slots: proposal, index, program, argv"));
  // In an asserted fact too.
  Diagnostic asserted = only(broken("(reason \"no rm\")", "(reasn \"no rm\")"), code::kUnknownSlot);
  CHECK(asserted.line == 6);
  CHECK(says(asserted, "did you mean `reason`?"));
}

TEST_CASE("a variable the conditions never bind is E_UNBOUND_VARIABLE at its use",
          "[rule_errors]") {
  Diagnostic d = only(broken("(decision (proposal ?id) (outcome reject)",
                             "(decision (proposal ?pid) (outcome reject)"),
                      code::kUnboundVariable);
  CHECK(d.line == 6);
  CHECK(d.column == 31);
  CHECK(says(d, "`?pid`"));
  CHECK(says(d, "did you mean `?id`?"));
  // Bound only under not: the actions cannot see it.
  Diagnostic local = only(
      "(defrule r\n  (proposal (id ?id))\n  (not (shell-command (proposal ?id) (program ?p)))\n  "
      "=>\n"
      "  (assert (decision (proposal ?id) (outcome reject) (rule r) (reason ?p))))\n",
      code::kUnboundVariable);
  CHECK(local.line == 5);
  CHECK(says(local, "only inside `(not` on line 3"));
  // What the actions bind themselves is bound.
  CHECK(compile_text(
            "(defrule r (proposal (id ?id)) =>\n  (bind ?why \"x\")\n  (foreach ?w (create$ a) "
            "(bind ?n ?w-index))\n"
            "  (progn$ (?v (create$ a)) (bind ?m ?v-index))\n"
            "  (assert (decision (proposal ?id) (outcome reject) (rule r) (reason ?why))))\n")
            .policy);
}

TEST_CASE("a misspelt outcome is E_UNKNOWN_OUTCOME with the outcome meant", "[rule_errors]") {
  Diagnostic d = only(broken("(outcome reject)", "(outcome rejct)"), code::kUnknownOutcome);
  CHECK(d.line == 6);
  CHECK(d.column == 45);
  CHECK(says(d, "`rejct` is not an outcome — did you mean `reject`?"));
  // Matched in a pattern, too.
  Diagnostic matched = only("(defrule r\n  (decision (proposal ?id) (outcome aprove))\n  =>)\n",
                            code::kUnknownOutcome);
  CHECK(matched.line == 2);
  CHECK(says(matched, "did you mean `approve`?"));
}

TEST_CASE("a constant its slot cannot hold is E_SLOT_VALUE with what to write", "[rule_errors]") {
  Diagnostic quoted = only(broken("(program \"rm\")", "(program rm)"), code::kSlotValue);
  CHECK(quoted.line == 4);
  CHECK(says(quoted, "write `\"rm\"`"));
  Diagnostic symbol = only(broken("(target shell)", "(target \"shell\")"), code::kSlotValue);
  CHECK(symbol.line == 3);
  CHECK(says(symbol, "write `shell` without quotes"));
  Diagnostic allowed = only("(defrule r\n  (effect (proposal ?id)\n          (kind exce))\n  =>)\n",
                            code::kSlotValue);
  CHECK(allowed.line == 3);
  CHECK(says(allowed, "did you mean `exec`?"));
  Diagnostic two = only(broken("(program \"rm\")", "(program \"rm\" \"rmdir\")"), code::kSlotValue);
  CHECK(says(two, "`\"rm\"|\"rmdir\"`"));
  Diagnostic text = only(broken("(reason \"no rm\")", "(reason no rm)"), code::kSlotValue);
  CHECK(text.line == 6);
  CHECK(says(text, "(reason \"no rm\")"));
}

TEST_CASE(
    "a pattern constant no proposal can have is an E_DEAD_PATTERN warning; the rule still loads",
    "[rule_errors]") {
  Diagnostic d = only(broken("(target shell)", "(target shel)"), code::kDeadPattern);
  CHECK(d.severity == Severity::Warning);
  CHECK(d.line == 3);
  CHECK(d.column == 30);
  CHECK(d.rule == "block-rm");
  CHECK(says(d, "did you mean `shell`?"));
  auto loaded = compile_text(broken("(target shell)", "(target shel)"));
  CHECK(loaded.policy);  // a warning: `warden check --strict` fails on it
  Diagnostic host = only("(defrule r\n  (url (proposal ?id) (host \"Example.com\"))\n  =>)\n",
                         code::kDeadPattern);
  CHECK(host.line == 2);
  CHECK(says(host, "write `\"example.com\"`"));
  // Known targets and variables raise nothing.
  CHECK(compile_text("(defrule r (proposal (id ?id) (target ?t&mcp|tool|message)) =>)\n")
            .diagnostics.empty());
}

TEST_CASE("what only CLIPS finds is placed at the token it stopped at", "[rule_errors]") {
  Diagnostic d = only(
      broken("  =>\n  (assert (decision (proposal ?id) (outcome reject)",
             "  (test eq ?id \"x\")\n  =>\n  (assert (decision (proposal ?id) (outcome reject)"),
      code::kParse);
  CHECK(d.line == 5);
  CHECK(d.column == 9);
  CHECK(says(d, "CLIPS stopped at `eq`"));
}
