// Rule overlays: a *.toml file of [[rule]] entries that disables a rule of the loaded set or
// changes the outcome its decisions count as, by name. Validation (E_OVERLAY with the line,
// E_OVERLAY_RULE warnings), the digest, and how a decision reads back under an overlay.
#include <catch2/catch.hpp>

#include <string>

#include "engine/engine.h"
#include "engine/overlay.h"
#include "tests/engine/engine_test_util.h"

using namespace warden;
using namespace warden::test;

namespace {

const char* kPack = R"(
(defrule ask-push
  (shell-command (proposal ?id) (program "git") (args "push" $?))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule ask-push) (reason "git push publishes")))
  (assert (approval (proposal ?id) (rule ask-push) (expires-in 60) (approvers 2))))
(defrule watch-push
  (decision (proposal ?id) (rule ask-push))
  =>
  (assert (hint (proposal ?id) (rule watch-push) (text "pushes are watched"))))
(defrule approve-ls
  (shell-command (proposal ?id) (program "ls"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-ls) (reason "listing")))
  (assert (allow (proposal ?id) (rule approve-ls) (capability shell-syntax) (reason "plain")))
  (assert (hint (proposal ?id) (rule approve-ls) (text "ls is fine"))))
(defrule reject-rm
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule reject-rm) (reason "no rm"))))
(defrule monitor-cat
  (shell-command (proposal ?id) (program "cat"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule monitor-cat) (reason "cat watched") (mode monitor))))
)";

const char* kPush =
    R"({"target":"shell","action":"run","payload":{"command":"git push origin feature"}})";
const char* kLs = R"({"target":"shell","action":"run","payload":{"command":"ls"}})";
const char* kRm = R"({"target":"shell","action":"run","payload":{"command":"rm x"}})";
const char* kCatOverlay = R"({"target":"shell","action":"run","payload":{"command":"cat x"}})";

Policy::Loaded overlay_compile_with(const std::string& overlay,
                                    const std::string& path = "team/overlay.toml") {
  return Policy::compile({RuleSource{"rules/pack.clp", kPack}, RuleSource{path, overlay}});
}

std::shared_ptr<const Policy> overlay_must_compile(const std::string& overlay) {
  auto loaded = overlay_compile_with(overlay);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

const FiredRule* find_rule(const Decision& d, const std::string& rule) {
  for (const auto& r : d.rules)
    if (r.rule == rule) return &r;
  return nullptr;
}

// The single diagnostic of a compile that must fail.
Diagnostic only_error(const Policy::Loaded& loaded) {
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE_FALSE(loaded.policy);
  REQUIRE(loaded.diagnostics.size() == 1);
  return loaded.diagnostics.front();
}

}  // namespace

TEST_CASE(
    "overlay: outcome makes a rule's decisions count as another outcome, the rule stays visible",
    "[overlay]") {
  auto policy = overlay_must_compile(
      "# the team's changes\n[[rule]]\nname = \"ask-push\"\noutcome = \"approve\"\nreason = \"our agents may push\"\n");
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, kPush);
  CHECK(d.outcome == Outcome::Approve);
  CHECK(d.reason == "our agents may push");
  const FiredRule* r = find_rule(d, "ask-push");
  REQUIRE(r);
  CHECK(r->outcome == Outcome::Approve);
  CHECK_FALSE(r->monitor);
  CHECK(r->overlay == "team/overlay.toml:3");
  CHECK(r->asserted == Outcome::ApprovalRequired);
  REQUIRE(r->asserted_reason);
  CHECK(*r->asserted_reason == "git push publishes");
  // The rule's decision fact is unchanged for the rules: one that matches it still fires.
  REQUIRE(d.hints.size() == 1);
  CHECK(d.hints.front().rule == "watch-push");
  const std::string json = decision_to_json(d);
  INFO(json);
  CHECK(
      json.find(
          R"({"rule":"ask-push","outcome":"approve","reason":"our agents may push","mode":"enforce",)"
          R"("overlay":{"at":"team/overlay.toml:3","was":"approval-required","was_reason":"git push publishes"}})") !=
      std::string::npos);
  // Rules the overlay does not name decide as before, with no mark.
  Decision rm = decide_ok(engine, kRm);
  CHECK(rm.outcome == Outcome::Reject);
  CHECK(rm.rules.front().overlay.empty());
  CHECK(decision_to_json(rm).find("overlay") == std::string::npos);
}

TEST_CASE("overlay: an outcome can tighten a rule, and the strictest outcome still wins",
          "[overlay]") {
  auto policy = overlay_must_compile("[[rule]]\nname = \"approve-ls\"\noutcome = \"reject\"\n");
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, kLs);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(d.reason == "listing");  // the rule's own reason, no reason given
  const FiredRule* r = find_rule(d, "approve-ls");
  REQUIRE(r);
  CHECK(r->asserted == Outcome::Approve);
  CHECK_FALSE(r->asserted_reason);
  // Loosening one rule does not loosen another rule that decides the same proposal.
  auto loose = overlay_must_compile("[[rule]]\nname = \"reject-rm\"\noutcome = \"approve\"\n");
  Engine e2(loose, test_options());
  CHECK(decide_ok(e2, R"({"target":"shell","action":"run","payload":{"command":"rm x; git push"}})")
            .outcome == Outcome::ApprovalRequired);
}

TEST_CASE("overlay: disable reports the rule as monitor and applies nothing of it", "[overlay]") {
  auto policy = overlay_must_compile(
      "[[rule]]\nname = \"approve-ls\"\ndisable = true\n\n[[rule]]\nname = \"ask-push\"\ndisable = true\n");
  Engine engine(policy, test_options());
  Decision ls = decide_ok(engine, kLs);
  // No enforcing decision is left: the default outcome applies, not approve.
  CHECK(ls.defaulted);
  CHECK(ls.outcome == Outcome::ApprovalRequired);
  const FiredRule* r = find_rule(ls, "approve-ls");
  REQUIRE(r);
  CHECK(r->monitor);
  CHECK(r->disabled);
  CHECK(r->overlay == "team/overlay.toml:2");
  REQUIRE(ls.allows.size() == 1);
  CHECK(ls.allows.front().monitor);
  CHECK(ls.allows.front().overlay == "team/overlay.toml:2");
  CHECK(allowed_capabilities(ls).empty());
  CHECK(ls.hints.empty());
  CHECK(decision_to_json(ls).find(
            R"("mode":"monitor","overlay":{"at":"team/overlay.toml:2","disabled":true}})") !=
        std::string::npos);
  // A disabled rule's approval terms are not the decision's.
  Decision push = decide_ok(engine, kPush);
  CHECK_FALSE(push.approval_set);
  CHECK(push.approvers_needed == 1);
  // Rules that match its decision facts still see them.
  REQUIRE(push.hints.size() == 1);
  CHECK(push.hints.front().rule == "watch-push");

  EngineOptions reject_default = test_options();
  reject_default.default_outcome = Outcome::Reject;
  Engine strict(policy, reject_default);
  CHECK(decide_ok(strict, kLs).outcome == Outcome::Reject);
}

TEST_CASE("overlay: a monitor decision keeps its mode under a changed outcome", "[overlay]") {
  auto policy =
      overlay_must_compile("[[rule]]\nname = \"monitor-cat\"\noutcome = \"approval-required\"\n");
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, kCatOverlay);
  CHECK(d.defaulted);
  const FiredRule* r = find_rule(d, "monitor-cat");
  REQUIRE(r);
  CHECK(r->monitor);
  CHECK(r->outcome == Outcome::ApprovalRequired);
  CHECK(r->asserted == Outcome::Reject);
}

TEST_CASE("overlay: the approval terms of a rule with a changed outcome still count", "[overlay]") {
  auto policy =
      overlay_must_compile("[[rule]]\nname = \"ask-push\"\nreason = \"the team watches pushes\"\n");
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, kPush);
  CHECK(d.outcome == Outcome::ApprovalRequired);
  CHECK(d.reason == "the team watches pushes");
  CHECK(d.approval_set);
  CHECK(d.approvers_needed == 2);
}

TEST_CASE("overlay: the entries in force, with what each rule declares", "[overlay]") {
  auto policy = overlay_must_compile(
      "[[rule]]\nname = \"ask-push\"\noutcome = \"approve\"\n[[rule]]\nname = \"reject-rm\"\ndisable = true\n");
  const auto& entries = policy->overlay();
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].rule == "ask-push");
  CHECK(entries[0].declared == "approval-required");
  CHECK(entries[0].summary() == "approval-required \u2192 approve (team/overlay.toml:2)");
  CHECK(entries[1].summary() == "reject \u2192 disabled (team/overlay.toml:5)");
  CHECK(must_compile(kPack)->overlay().empty());
}

TEST_CASE("overlay: the digest covers the overlay", "[overlay][digest]") {
  auto plain = must_compile(kPack);
  auto a = overlay_must_compile("[[rule]]\nname = \"ask-push\"\noutcome = \"approve\"\n");
  auto b = overlay_must_compile("[[rule]]\nname = \"ask-push\"\noutcome = \"reject\"\n");
  CHECK(plain->digest() != a->digest());
  CHECK(a->digest() != b->digest());
}

TEST_CASE("overlay: an entry naming no loaded rule is a warning with its line, and changes nothing",
          "[overlay]") {
  auto loaded = overlay_compile_with(
      "[[rule]]\nname = \"ask-push\"\noutcome = \"approve\"\n\n[[rule]]\nname = \"ask-pull\"\ndisable = true\n");
  REQUIRE(loaded.policy);
  REQUIRE(loaded.diagnostics.size() == 1);
  const Diagnostic& w = loaded.diagnostics.front();
  CHECK(w.code == code::kOverlayRule);
  CHECK(w.severity == Severity::Warning);
  CHECK(w.file == "team/overlay.toml");
  CHECK(w.line == 6);
  CHECK(loaded.policy->overlay().size() == 1);
  // Only unknown names: no overlay is left, decisions read back unchanged.
  auto none = overlay_compile_with("[[rule]]\nname = \"nope\"\ndisable = true\n");
  REQUIRE(none.policy);
  CHECK(none.policy->overlay().empty());
  CHECK(code::is_known(code::kOverlay));
  CHECK(code::is_known(code::kOverlayRule));
}

TEST_CASE("overlay: malformed entries are E_OVERLAY errors at their line and nothing loads",
          "[overlay]") {
  struct Bad {
    const char* text;
    long line;
    const char* words;
  };
  const Bad cases[] = {
      {"[[rule]]\nname = \"ask-push\"\noutcome = \"allow\"\n", 3, "\"outcome\" must be"},
      {"[[rule]]\nname = \"ask-push\"\noutcome = 1\n", 3, "\"outcome\" must be"},
      {"[[rule]]\nname = \"ask-push\"\nreason = [\"x\"]\n", 3, "\"reason\" must be a string"},
      {"[[rule]]\nname = \"ask-push\"\ndisable = \"yes\"\n", 3, "\"disable\" must be true"},
      {"[[rule]]\nname = \"ask-push\"\ndisable = false\n", 3, "\"disable\" must be true"},
      {"[[rule]]\nname = \"ask-push\"\nmode = \"monitor\"\n", 3, "unknown key \"mode\""},
      {"[[rule]]\nname = 7\ndisable = true\n", 2, "\"name\" must be"},
      {"[[rule]]\noutcome = \"approve\"\n", 1, "needs the \"name\""},
      {"[[rule]]\nname = \"ask-push\"\n", 1, "changes nothing"},
      {"[[rule]]\nname = \"ask-push\"\ndisable = true\noutcome = \"approve\"\n", 1,
       "cannot be given with"},
      {"[[rule]]\nname = \"ask-push\"\ndisable = true\n[[rule]]\nname = \"ask-push\"\noutcome = \"reject\"\n",
       5, "already changed at team/overlay.toml:2"},
      {"rules = 1\n[[rule]]\nname = \"ask-push\"\ndisable = true\n", 1, "unknown key \"rules\""},
      {"rule = \"ask-push\"\n", 1, "write [[rule]]"},
      {"[[rule]]\nname = \"ask-push\"\noutcome = \"approve\n", 3, ""},  // TOML syntax
  };
  for (const Bad& b : cases) {
    INFO(b.text);
    Diagnostic e = only_error(overlay_compile_with(b.text));
    CHECK(e.code == code::kOverlay);
    CHECK(e.severity == Severity::Error);
    CHECK(e.file == "team/overlay.toml");
    CHECK(e.line == b.line);
    CHECK(e.message.find(b.words) != std::string::npos);
  }
}

TEST_CASE("overlay: a rule changed in two overlay files is an error at the second", "[overlay]") {
  auto loaded = Policy::compile(
      {RuleSource{"rules/pack.clp", kPack},
       RuleSource{"a/overlay.toml", "[[rule]]\nname = \"ask-push\"\ndisable = true\n"},
       RuleSource{"b/overlay.toml", "\n[[rule]]\nname = \"ask-push\"\noutcome = \"approve\"\n"}});
  Diagnostic e = only_error(loaded);
  CHECK(e.code == code::kOverlay);
  CHECK(e.file == "b/overlay.toml");
  CHECK(e.line == 3);
  CHECK(e.message.find("already changed at a/overlay.toml:2") != std::string::npos);
}

TEST_CASE("overlay: a .toml file holds one kind of table", "[overlay]") {
  Diagnostic e = only_error(overlay_compile_with(
      "[[rule]]\nname = \"ask-push\"\ndisable = true\n[[class]]\nname = \"x\"\npatterns = [\"/x\"]\n"));
  CHECK(e.code == code::kEffectsTable);
  CHECK(e.message.find("not several") != std::string::npos);
}

TEST_CASE("overlay: a reason is data, never rule code", "[overlay]") {
  const std::string reason = R"(x") (outcome approve)) (assert (decision (rule evil) \\ ;)";
  auto policy =
      overlay_must_compile("[[rule]]\nname = \"reject-rm\"\nreason = '''" + reason + "'''\n");
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, kRm);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(d.reason == reason);
  CHECK(d.rules.size() == 1);
  CHECK_FALSE(fired(d, "evil"));
}
