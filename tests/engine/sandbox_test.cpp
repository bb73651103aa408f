// The rule sandbox: only allowlisted functions are callable, in the checker and in the CLIPS
// environment itself; indirection (sort, funcall) reaches nothing; rules carry no state from
// one decision to the next; rules that exhaust memory fail the decision instead of the host.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "engine/clips_env.h"
#include "engine/sandbox.h"
#include "tests/engine/engine_test_util.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

using namespace warden;
using warden::test::compile_text;
using warden::test::find_code;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

// A rule whose right-hand side is `rhs` (on line 4 of the file).
std::string rule_with(const std::string& rhs) {
  return "(defrule r\n  (proposal (id ?id))\n  =>\n  " + rhs + ")\n";
}

// Expects the checker to refuse `text` with `code` at `line`.
void expect_sandbox_refused(const std::string& text, const std::string& code, long line) {
  auto loaded = compile_text(text);
  INFO(text);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK_FALSE(loaded.policy);
  const Diagnostic* d = find_code(loaded.diagnostics, code);
  REQUIRE(d);
  CHECK(d->line == line);
}

// Loads constructs straight into a sandboxed environment (no checker: what the environment
// itself allows), asserts one shell proposal and runs the rules.
struct Unchecked {
  std::unique_ptr<ClipsEnv> env = std::make_unique<ClipsEnv>();
  std::string output;
  bool error = false;

  explicit Unchecked(const std::string& constructs) {
    Diagnostics ds;
    REQUIRE(env->load(constructs, "u.clp", 1, "", &ds));
    REQUIRE(env->reset());
  }
  void run() {
    void* e = env->get();
    REQUIRE(EnvAssertString(e, "(proposal (id \"p1\") (target shell))"));
    env->arm_deadline(std::chrono::seconds(5));
    EnvRun(e, 100);
    env->disarm_deadline();
    output = env->take_output();
    error = GetEvaluationError(e) || GetHaltExecution(e);
  }
  int count(const char* template_name) {
    int n = 0;
    void* t = EnvFindDeftemplate(env->get(), template_name);
    for (void* f = EnvGetNextFactInTemplate(env->get(), t, nullptr); f;
         f = EnvGetNextFactInTemplate(env->get(), t, f))
      ++n;
    return n;
  }
};

}  // namespace

TEST_CASE("every CLIPS function in a real environment is allowlisted or disabled", "[sandbox]") {
  ClipsEnv env;
  void* e = env.get();
  std::vector<std::string> names;
  for (FunctionDefinition* f = GetFunctionList(e); f; f = f->next)
    names.push_back(ValueToString(f->callFunctionName));
  REQUIRE(names.size() > 400);
  int disabled = 0;
  for (const auto& name : names) {
    if (sandbox::keep_enabled(name)) continue;
    INFO(name);
    env.clear_errors();
    DATA_OBJECT result;
    EnvFunctionCall(e, name.c_str(), "", &result);
    CHECK(GetEvaluationError(e));
    CHECK(GetHaltExecution(e));
    CHECK(env.take_output().find("[WARDEN2] function '" + name + "' is disabled") !=
          std::string::npos);
    ++disabled;
  }
  env.clear_errors();
  CHECK(disabled > 300);  // of the 428 functions, only the allowlist stays callable
  // Every allowlisted name exists in this CLIPS build and is not the disabled stub.
  for (const auto& f : sandbox::allowed_builtins()) {
    INFO(f.name);
    CHECK(sandbox::is_clips_builtin(f.name));
    CHECK(FindFunction(e, f.name) != nullptr);
    CHECK(std::string(FindFunction(e, f.name)->actualFunctionName) != "DisabledFunction");
  }
  for (const char* name :
       {"sort", "funcall", "retract", "undefrule", "assert-string", "constructs-to-c", "fetch",
        "active-make-instance", "make-instance", "send", "eval", "exit"})
    CHECK_FALSE(sandbox::keep_enabled(name));
}

TEST_CASE("indirect calls pass neither the checker nor the environment", "[sandbox]") {
  // Each of these passed the old checker.
  expect_sandbox_refused(rule_with("(sort retract ?id ?id)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(sort funcall undefrule r)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(sort funcall assert-string \"(decision (outcome approve))\")"),
                         code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(constructs-to-c \"/tmp/warden-c\" 7)"),
                         code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(fetch \"/dev/zero\")"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(active-make-instance of INITIAL-OBJECT)"),
                         code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(get-function-list)"), code::kForbiddenFunction, 4);

  SECTION("sort retract cannot remove another rule's reject") {
    Unchecked u(R"(
(defrule reject-all (declare (salience 10)) (proposal (id ?id))
  => (assert (decision (proposal ?id) (outcome reject) (rule reject-all))))
(defrule eraser (declare (salience 0)) ?d <- (decision (outcome reject))
  => (sort retract ?d ?d))
)");
    u.run();
    CHECK(u.error);
    CHECK(u.count("decision") == 1);
    CHECK(u.output.find("[WARDEN2] function 'sort'") != std::string::npos);
  }
  SECTION("sort funcall assert-string cannot inject an approve") {
    Unchecked u(R"CLP((defrule inject (proposal (id ?id))
  => (sort funcall assert-string "(decision (proposal \"p1\") (outcome approve) (rule x))"))
)CLP");
    u.run();
    CHECK(u.error);
    CHECK(u.count("decision") == 0);
  }
  SECTION("funcall and undefrule cannot delete a rule") {
    Unchecked u(
        "(defrule victim (proposal (id ?id)) =>)\n(defrule killer (proposal (id ?id)) => (funcall undefrule victim))\n");
    u.run();
    CHECK(u.error);
    CHECK(EnvFindDefrule(u.env->get(), "victim") != nullptr);
  }
  SECTION("constructs-to-c writes nothing") {
    auto dir =
        std::filesystem::temp_directory_path() / ("warden-sandbox-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    Unchecked u("(defrule c (proposal (id ?id)) => (constructs-to-c \"" + (dir / "x").string() +
                "\" 7))\n");
    u.run();
    CHECK(u.error);
    CHECK(std::filesystem::is_empty(dir));
    std::filesystem::remove_all(dir);
  }
  SECTION("fetch reads nothing") {
    auto file =
        std::filesystem::temp_directory_path() / ("warden-fetch-" + std::to_string(::getpid()));
    std::ofstream(file) << "data\n";
    Unchecked u("(defrule f (proposal (id ?id)) => (fetch \"" + file.string() + "\"))\n");
    u.run();
    CHECK(u.error);
    CHECK(u.output.find("[WARDEN2] function 'fetch'") != std::string::npos);
    std::filesystem::remove(file);
  }
  SECTION("make-instance creates no object") {
    Unchecked u(
        "(defrule m (proposal (id ?id)) => (active-make-instance of INITIAL-OBJECT) (make-instance of INITIAL-OBJECT))\n");
    u.run();
    CHECK(u.error);
    CHECK(EnvGetNextInstance(u.env->get(), nullptr) == nullptr);
  }
}

TEST_CASE("the checker splits names exactly where CLIPS does", "[sandbox][checker]") {
  // CLIPS reads "(funcall<x" as the call "funcall" with the argument "<x".
  expect_sandbox_refused(rule_with("(funcall<x)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(sort<x)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(system&x)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(system|x)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(exit~)"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(str-cat \"a\")(exit)"), code::kForbiddenFunction, 4);
  // A comment ends at a carriage return: the call after it is code.
  expect_sandbox_refused(rule_with("; note\r(sort retract ?id ?id)"), code::kForbiddenFunction, 4);
  // Control characters and invalid UTF-8 outside strings are refused, NUL everywhere.
  expect_sandbox_refused(rule_with("(str-cat \"a\"\v)"), code::kParse, 4);
  expect_sandbox_refused(rule_with(std::string("(str-cat \"a\0b\")", 15)), code::kParse, 4);
  expect_sandbox_refused(rule_with("(str-cat \xff)"), code::kParse, 4);
  // Odd but valid: UTF-8 symbols, '<' and '$' inside names, wildcards.
  auto ok = compile_text(
      "(defrule r (proposal (id ?id) (explanation ?e&:(< (str-length ?e) 5)))\n"
      "  =>\n  (bind ?caf\xc3\xa9 \"\xc3\xa9t\xc3\xa9\")\n  (bind ?x (create$ a<b $x c))\n"
      "  (assert (decision (proposal ?id) (outcome reject) (rule r))))\n");
  for (const auto& d : ok.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK(ok.policy);
}

TEST_CASE("names in data positions are not calls; calls in them are checked",
          "[sandbox][checker]") {
  // Templates, slots, switch cases and declare are data.
  auto ok = compile_text(R"(
(deffunction helper (?x) (switch ?x (case 1 then (+ ?x 1)) (default 0)))
(defrule r (declare (salience (+ 1 2)))
  ?p <- (proposal (id ?id) (depth ?d&:(>= (helper ?d) 0)))
  (not (decision (proposal ?id)))
  (test (eq ?id ?id))
  =>
  (loop-for-count (?i 1 2) do (bind ?n ?i))
  (foreach ?w (create$ a b) (bind ?n ?w))
  (assert (decision (proposal ?id) (outcome reject) (rule r) (reason (str-cat "x" ?id)))))
)");
  for (const auto& d : ok.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK(ok.policy);
  expect_sandbox_refused("(defrule r (proposal (id ?id&:(retract 1))) =>)\n",
                         code::kForbiddenFunction, 1);
  expect_sandbox_refused("(defrule r (declare (salience (random))) (proposal (id ?id)) =>)\n",
                         code::kForbiddenFunction, 1);
  expect_sandbox_refused(
      "(defrule r (proposal (id ?id))\n =>\n (assert (decision (proposal ?id) (reason (eval \"x\")))))\n",
      code::kForbiddenFunction, 3);
  expect_sandbox_refused("(defrule r (proposal (id ?id)) =>\n (switch 1 (case 1 then (halt))))\n",
                         code::kForbiddenFunction, 2);
  expect_sandbox_refused("(defglobal ?*x* = (time))\n", code::kForbiddenFunction, 1);
  expect_sandbox_refused("(deffunction f ()\n (gensym))\n", code::kForbiddenFunction, 2);
}

TEST_CASE("rules assert only decisions and rewrites", "[sandbox][checker]") {
  for (const char* t :
       {"proposal", "param", "shell-command", "path", "url", "pattern-hit", "signal", "mine"}) {
    INFO(t);
    expect_sandbox_refused(rule_with(std::string("(assert (") + t + " (proposal ?id)))"),
                           code::kForbiddenAssert, 4);
  }
}

TEST_CASE("deffunctions cannot recurse or take wildcard parameters", "[sandbox][checker]") {
  expect_sandbox_refused("(deffunction f (?n)\n  (f ?n))\n", code::kRecursion, 2);
  expect_sandbox_refused("(deffunction f (?a $?rest)\n  ?a)\n", code::kWildcardParameter, 1);
}

TEST_CASE("a rule set cannot carry state from one decision to the next", "[sandbox][state]") {
  // Object state: the rule set that flipped reject to approve after a few decisions is refused.
  expect_sandbox_refused(R"((defrule count (proposal (id ?id))
  =>
  (active-make-instance of INITIAL-OBJECT)))
)",
                         code::kForbiddenFunction, 3);

  // What a checked rule set can still leave behind (facts about other proposals, decisions
  // with constant ids, globals read at reset) is gone before the next decision.
  Engine engine(must_compile(R"(
(defglobal ?*seen* = (create$))
(defrule remember (declare (salience 10)) (proposal (id ?id))
  =>
  (assert (decision (proposal "carried") (outcome approve) (rule remember))))
(defrule flip (declare (salience 5)) (proposal (id ?id)) (decision (proposal "carried") (rule remember))
  (test (> (length$ ?*seen*) -1))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule flip))))
)"),
                test_options());
  std::vector<std::string> outcomes;
  for (int i = 0; i < 5; ++i) {
    DecideResult r = engine.decide(std::string(R"({"target":"shell","payload":{"command":"ls"}})"));
    REQUIRE(r.ok);
    outcomes.push_back(std::string(outcome_name(r.decision.outcome)) + "/" +
                       std::to_string(r.decision.rules.size()));
  }
  for (const auto& o : outcomes) CHECK(o == outcomes.front());
}

TEST_CASE("the environment reset restores globals and clears every fact", "[sandbox][state]") {
  ClipsEnv env;
  Diagnostics ds;
  REQUIRE(env.load("(defglobal ?*limit* = 3)", "g.clp", 1, "", &ds));
  REQUIRE(env.reset());
  DATA_OBJECT v;
  SetType(v, INTEGER);
  SetValue(v, EnvAddLong(env.get(), 99));
  REQUIRE(EnvSetDefglobalValue(env.get(), "limit", &v));  // as if a rule had changed it
  REQUIRE(EnvAssertString(env.get(), "(decision (proposal \"x\") (outcome approve) (rule r))"));
  REQUIRE(env.reset());
  REQUIRE(EnvGetDefglobalValue(env.get(), "limit", &v));
  CHECK(DOToLong(v) == 3);
  CHECK(EnvGetNextFactInTemplate(env.get(), EnvFindDeftemplate(env.get(), "decision"), nullptr) ==
        nullptr);
  CHECK(EnvGetNextInstance(env.get(), nullptr) == nullptr);
}

TEST_CASE("rules that exhaust memory fail the decision with E_MEMORY, not the host",
          "[sandbox][memory]") {
  std::string sequence = "(bind ?s \"0123456789abcdef\")";
  for (int i = 0; i < 40; ++i) sequence += "\n  (bind ?s (str-cat ?s ?s))";
  for (const std::string& rhs :
       {std::string("(bind ?s \"x\") (while TRUE do (bind ?s (str-cat ?s ?s)))"),
        std::string("(bind ?s x) (while TRUE do (bind ?s (sym-cat ?s ?s ?s)))"),
        std::string("(bind ?m (create$ a)) (while TRUE do (bind ?m (create$ ?m ?m)))"), sequence}) {
    INFO(rhs.substr(0, 80));
    Engine engine(must_compile(rule_with(rhs)), test_options());
    DecideResult r = engine.decide(std::string(R"({"target":"reply"})"));
    REQUIRE(r.ok);
    CHECK(r.decision.outcome == Outcome::Reject);
    CHECK(r.decision.error_code == "E_MEMORY");
    // The engine recovers: the next decision runs normally (and fails the same way).
    CHECK(engine.decide(std::string(R"({"target":"reply"})")).decision.error_code == "E_MEMORY");
  }
}

TEST_CASE("glob-match fails the decision when a glob cannot be compiled", "[sandbox][failclosed]") {
  // A glob of 2^16 '?', far over RE2's memory budget for one glob, built while deciding: as
  // a literal in the rule file it is parsed under the load deadline, which a sanitizer build
  // on a loaded machine can pass before the glob is ever compiled.
  Engine engine(
      must_compile(rule_with(
          "(bind ?g \"?\") (loop-for-count 16 (bind ?g (str-cat ?g ?g))) "
          "(if (glob-match ?g ?id) then (assert (decision (proposal ?id) (outcome approve) (rule r))))")),
      test_options());
  DecideResult r = engine.decide(std::string(R"({"target":"reply"})"));
  REQUIRE(r.ok);
  CHECK(r.decision.outcome == Outcome::Reject);
  CHECK(r.decision.error_code == "E_RUNTIME");
  CHECK(r.decision.reason.find("glob") != std::string::npos);
}

TEST_CASE("looks-like-secret never answers from a stale string", "[sandbox][secrets]") {
  // Each iteration builds a new string of the same length; CLIPS reuses the freed symbol's
  // memory, so a cache keyed by address would answer the second with the first's result.
  Engine engine(must_compile(R"(
(defrule scan (proposal (id ?id) (target reply))
  =>
  (bind ?hits 0)
  (foreach ?tail (create$ "iosfodnn7example" "IOSFODNN7EXAMPLE" "iosfodnn7example" "IOSFODNN7EXAMPLE")
    (if (looks-like-secret (str-cat "AKIA" ?tail)) then (bind ?hits (+ ?hits 1))))
  (if (= ?hits 2) then
    (assert (decision (proposal ?id) (outcome approve) (rule scan) (reason "two secrets seen")))
   else
    (assert (decision (proposal ?id) (outcome reject) (rule scan) (reason (str-cat "saw " ?hits))))))
)"),
                test_options());
  for (int i = 0; i < 3; ++i) {
    DecideResult r = engine.decide(std::string(R"({"target":"reply"})"));
    REQUIRE(r.ok);
    INFO(r.decision.reason);
    CHECK(r.decision.outcome == Outcome::Approve);
  }
}

TEST_CASE("rules call the set's deffunctions from any file; other names are refused",
          "[sandbox][checker]") {
  auto loaded = Policy::compile(
      {RuleSource{
           "a.clp",
           "(defrule r (proposal (id ?id&:(helper ?id))) =>\n (assert (decision (proposal ?id) (outcome reject) (rule r))))\n"},
       RuleSource{"b.clp", "(deffunction helper (?x) (stringp ?x))\n"}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  CHECK(loaded.policy);
  // A built-in not on the list is forbidden; a name nothing defines is unknown.
  expect_sandbox_refused(rule_with("(upcase (get-focus))"), code::kForbiddenFunction, 4);
  expect_sandbox_refused(rule_with("(upcase (no-such-helper))"), code::kUnknownFunction, 4);
  // Module-qualified names are not a way around the list.
  expect_sandbox_refused(rule_with("(MAIN::exit)"), code::kUnknownFunction, 4);
}

TEST_CASE("nesting through deffunction calls is bounded (CLIPS evaluates it by C recursion)",
          "[sandbox][checker]") {
  // f_i calls f_(i-1) inside `wrap` levels of (+ 0 …); the rule calls the last one.
  auto chain = [](int n, int wrap) {
    auto wrapped = [wrap](std::string e) {
      for (int k = 0; k < wrap; ++k) e = "(+ 0 " + e + ")";
      return e;
    };
    std::string text = "(deffunction f0 (?x) (+ ?x 1))\n";
    for (int i = 1; i <= n; ++i)
      text += "(deffunction f" + std::to_string(i) + " (?x) " +
              wrapped("(f" + std::to_string(i - 1) + " ?x)") + ")\n";
    text += "(defrule r (proposal (id ?id)) => (if (> " +
            wrapped("(f" + std::to_string(n) + " 1)") +
            " 0) then (assert (decision (proposal ?id) (outcome reject) (rule r)))))\n";
    return text;
  };
  auto ok = compile_text(chain(250, 0));  // f_i nests 2 + 4i levels: f250 is 1002 deep
  for (const auto& d : ok.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(ok.policy);
  Engine engine(ok.policy, test_options());
  CHECK(engine.decide(std::string(R"({"target":"reply"})")).decision.outcome == Outcome::Reject);
  // A chain four times over the limit: the first over is reported, once, and no deeper.
  for (auto [n, wrap, first] : {std::tuple{1024, 0, 256}, std::tuple{63, 120, 9}}) {
    INFO(n << " " << wrap);
    auto deep = compile_text(chain(n, wrap));
    CHECK_FALSE(deep.policy);
    const Diagnostic* d = find_code(deep.diagnostics, code::kRecursion);
    REQUIRE(d);
    CHECK(d->rule == "f" + std::to_string(first));  // where the nesting first goes over
    CHECK(d->line == first + 1);
    int reported = 0;
    for (const auto& x : deep.diagnostics) reported += x.code == code::kRecursion;
    CHECK(reported == 1);
  }
}

TEST_CASE("integer division overflow fails the decision instead of killing the process",
          "[sandbox][arithmetic]") {
  // The installed CLIPS computes LLONG_MIN / -1 with a hardware divide: SIGFPE.
  for (const char* op : {"div", "mod"}) {
    INFO(op);
    Engine engine(
        must_compile(rule_with(
            std::string("(bind ?q (") + op +
            " (- -9223372036854775807 1) -1))\n  (assert (decision (proposal ?id) (outcome approve) (rule r)))")),
        test_options());
    DecideResult r = engine.decide(std::string(R"({"target":"reply"})"));
    REQUIRE(r.ok);
    if (std::string(op) == "div") {
      CHECK(r.decision.outcome == Outcome::Reject);
      CHECK(r.decision.error_code == "E_RUNTIME");
    } else {
      CHECK(r.decision.outcome == Outcome::Approve);  // x mod -1 is 0
    }
  }
  // Ordinary results are CLIPS's.
  Engine engine(
      must_compile(rule_with(
          "(if (and (= (div 7 2) 3) (= (div 7.9 2) 3) (= (div 100 5 2) 10) (= (mod 7 2) 1) (= (mod -7 2) -1)\n"
          "         (= (mod 7.5 2) 1.5) (integerp (div 7.9 2)) (floatp (mod 7.5 2)))\n"
          "   then (assert (decision (proposal ?id) (outcome approve) (rule r))))")),
      test_options());
  DecideResult r = engine.decide(std::string(R"({"target":"reply"})"));
  REQUIRE(r.ok);
  CHECK(r.decision.outcome == Outcome::Approve);
  for (const char* expr : {"(div 1 0)", "(mod 1 0)", "(div 1e300 1)"}) {
    INFO(expr);
    Engine failing(must_compile(rule_with(std::string("(bind ?q ") + expr + ")")), test_options());
    CHECK(failing.decide(std::string(R"({"target":"reply"})")).decision.error_code == "E_RUNTIME");
  }
}

TEST_CASE("the environment itself refuses facts other than decisions and rewrites from rules",
          "[sandbox][state]") {
  // The checker refuses these asserts; loaded without it, the environment retracts the
  // forged fact and fails the decision before any other rule can see it.
  Unchecked u(R"(
(defrule forge (declare (salience 10)) (proposal (id ?id))
  => (assert (decision (proposal ?id) (outcome reject) (rule forge)) (proposal (id "forged") (target reply))))
(defrule fooled (proposal (id "forged"))
  => (assert (decision (proposal "forged") (outcome approve) (rule fooled))))
)");
  u.run();
  CHECK(u.error);
  CHECK(
      u.output.find(
          "[WARDEN5] rules may assert only decision, rewrite, allow, hint and approval facts, not 'proposal'") !=
      std::string::npos);
  CHECK(u.count("proposal") == 1);
  void* d = EnvFindDeftemplate(u.env->get(), "decision");
  for (void* f = EnvGetNextFactInTemplate(u.env->get(), d, nullptr); f;
       f = EnvGetNextFactInTemplate(u.env->get(), d, f)) {
    DATA_OBJECT rule;
    EnvGetFactSlot(u.env->get(), f, "rule", &rule);
    CHECK(std::string(DOToString(rule)) != "fooled");
  }
}
