// Deciding: combination, default outcome, monitor mode, rewrites, failing closed, and input
// that tries to break out of its strings.
#include <rapidjson/document.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "engine/clips_env.h"
#include "engine/policy_impl.h"
#include "tests/engine/engine_test_util.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

using namespace warden;
using warden::test::decide_ok;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document d;
  d.Parse(json.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

const char* kCombination = R"(
(defrule say-approve (proposal (id ?id) (target tool))
  => (assert (decision (proposal ?id) (outcome approve) (rule say-approve) (reason "fine"))))
(defrule say-ask (proposal (id ?id) (target tool) (action ask))
  => (assert (decision (proposal ?id) (outcome approval-required) (rule say-ask) (reason "ask a human"))))
(defrule say-reject (proposal (id ?id) (target tool) (action bad))
  => (assert (decision (proposal ?id) (outcome reject) (rule say-reject) (reason "bad action"))))
(defrule watch-only (proposal (id ?id) (target tool) (action watched))
  => (assert (decision (proposal ?id) (outcome reject) (rule watch-only) (reason "would reject") (mode monitor))))
)";

}  // namespace

TEST_CASE("reject beats approval-required beats approve; all fired rules are reported",
          "[decide]") {
  Engine engine(must_compile(kCombination), test_options());
  Decision a = decide_ok(engine, R"({"target":"tool","action":"run"})");
  CHECK(a.outcome == Outcome::Approve);
  CHECK(a.reason == "fine");
  REQUIRE(a.rules.size() == 1);

  Decision b = decide_ok(engine, R"({"target":"tool","action":"ask"})");
  CHECK(b.outcome == Outcome::ApprovalRequired);
  CHECK(b.reason == "ask a human");
  CHECK(b.rules.size() == 2);

  Decision c = decide_ok(engine, R"({"target":"tool","action":"bad"})");
  CHECK(c.outcome == Outcome::Reject);
  CHECK(c.reason == "bad action");
  CHECK(c.rules.size() == 2);
  CHECK(c.rules_digest == engine.policy().digest());
  CHECK(c.decision_id.size() == 32);
}

TEST_CASE("no decision applies the default outcome", "[decide]") {
  auto policy = must_compile(kCombination);
  Engine engine(policy, test_options());
  Decision d = decide_ok(engine, R"({"target":"message","payload":{"text":"hi"}})");
  CHECK(d.outcome == Outcome::ApprovalRequired);
  CHECK(d.defaulted);
  CHECK(d.rules.empty());
  EngineOptions o = test_options();
  o.default_outcome = Outcome::Reject;
  Engine strict(policy, o);
  CHECK(decide_ok(strict, R"({"target":"message"})").outcome == Outcome::Reject);
}

TEST_CASE("monitor decisions are reported but never applied", "[decide]") {
  Engine engine(must_compile(kCombination), test_options());
  Decision d = decide_ok(engine, R"({"target":"tool","action":"watched"})");
  CHECK(d.outcome == Outcome::Approve);  // say-approve applies; watch-only only reports
  REQUIRE(d.rules.size() == 2);
  bool saw_monitor = false;
  for (const auto& r : d.rules)
    saw_monitor |= (r.rule == "watch-only" && r.monitor && r.outcome == Outcome::Reject);
  CHECK(saw_monitor);
  std::string json = decision_to_json(d);
  CHECK(json.find("\"mode\":\"monitor\"") != std::string::npos);
}

TEST_CASE("decisions are independent: facts are cleaned up between proposals", "[decide]") {
  Engine engine(must_compile(kCombination), test_options());
  for (int i = 0; i < 200; ++i) {
    CHECK(decide_ok(engine, R"({"target":"tool","action":"bad"})").outcome == Outcome::Reject);
    Decision ok = decide_ok(engine, R"({"target":"tool","action":"run"})");
    CHECK(ok.outcome == Outcome::Approve);
    CHECK(ok.rules.size() == 1);
  }
}

TEST_CASE("strings with quotes, parentheses and backslashes reach rules verbatim",
          "[decide][hostile]") {
  Engine engine(must_compile(R"(
(defrule exact (param (proposal ?id) (key "payload.text") (value "a\") (target \"evil\" C:\\temp\\new"))
  => (assert (decision (proposal ?id) (outcome reject) (rule exact) (reason "matched verbatim"))))
(defrule evil-target (proposal (id ?id) (target evil))
  => (assert (decision (proposal ?id) (outcome approve) (rule evil-target))))
)"),
                test_options());
  Decision d = decide_ok(
      engine, R"({"target":"message","payload":{"text":"a\") (target \"evil\" C:\\temp\\new"}})");
  CHECK(d.outcome == Outcome::Reject);
  REQUIRE(d.rules.size() == 1);
  CHECK(d.rules[0].rule == "exact");
}

TEST_CASE("target, action and source are names, lowercased for rules and in the action",
          "[decide]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  Decision d = decide_ok(engine, R"({"target":"SHELL","payload":{"command":"ls"}})");
  CHECK(d.outcome == Outcome::Reject);
  CHECK(parse(d.action_json)["target"].GetString() == std::string("shell"));
  for (const char* bad :
       {R"({"target":"she ll"})", R"J({"target":"(x)"})J", R"({"target":""})", R"({"target":5})",
        R"({"payload":{}})", R"({"target":"shell","action":"a\"b"})",
        R"({"target":"shell","payload":"x"})",
        R"({"target":"shell","context":{"source":"a b"}})"}) {
    DecideResult r = engine.decide(std::string(bad));
    INFO(bad);
    CHECK_FALSE(r.ok);
    CHECK(r.error.code == code::kInputShape);
  }
}

TEST_CASE("hostile input is an input error, never a crash", "[decide][hostile]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  CHECK(engine.decide(std::string("{\"target\":\"reply\",\"payload\":{\"text\":\"\xff\xfe\"}}"))
            .error.code == code::kInputJson);
  CHECK(engine.decide(std::string("{\"target\":\"reply\"")).error.code == code::kInputJson);
  CHECK(engine.decide(std::string("[1,2]")).error.code == code::kInputShape);
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"text":"a\u0000b"}})"))
            .error.code == code::kInputShape);
  std::string deep = "{\"target\":\"reply\",\"payload\":";
  for (int i = 0; i < 1000; ++i) deep += "[";
  for (int i = 0; i < 1000; ++i) deep += "]";
  deep += "}";
  CHECK(engine.decide(deep).error.code == code::kInputTooLarge);
  std::string huge =
      "{\"target\":\"reply\",\"payload\":{\"text\":\"" + std::string(2 << 20, 'a') + "\"}}";
  CHECK(engine.decide(huge).error.code == code::kInputTooLarge);
  // Still healthy afterwards.
  CHECK(engine.decide(std::string(R"({"target":"reply"})")).decision.outcome == Outcome::Approve);
}

TEST_CASE("a 1 MB string value is decided", "[decide][hostile]") {
  Engine engine(must_compile(R"(
(defrule long-text (param (proposal ?id) (key "payload.text") (value ?v&:(> (str-length ?v) 900000)))
  => (assert (decision (proposal ?id) (outcome reject) (rule long-text) (reason "too long"))))
)"),
                test_options());
  std::string big =
      "{\"target\":\"message\",\"payload\":{\"text\":\"" + std::string(1000000, 'x') + "\"}}";
  CHECK(decide_ok(engine, big).outcome == Outcome::Reject);
}

TEST_CASE("a runtime error in a rule fails closed, names the cause, and does not stick",
          "[decide][failclosed]") {
  Engine engine(must_compile(R"(
(defrule divide (proposal (id ?id) (target tool) (action divide))
  => (assert (decision (proposal ?id) (outcome approve) (rule divide) (reason (str-cat (/ 1 (- 1 1)))))))
(defrule bad-regex (param (proposal ?id) (key "payload.pattern") (value ?p&:(regex-match ?p "x")))
  => (assert (decision (proposal ?id) (outcome approve) (rule bad-regex))))
(defrule fine (proposal (id ?id) (target reply))
  => (assert (decision (proposal ?id) (outcome approve) (rule fine))))
)"),
                test_options());
  Decision d = decide_ok(engine, R"({"target":"tool","action":"divide"})");
  CHECK(d.outcome == Outcome::Reject);
  CHECK(d.error_code == "E_RUNTIME");
  Decision r = decide_ok(engine, R"({"target":"tool","payload":{"pattern":"(unclosed"}})");
  CHECK(r.outcome == Outcome::Reject);
  CHECK(r.error_code == "E_RUNTIME");
  CHECK(r.reason.find("regex") != std::string::npos);
  // The halt flag is cleared: the next decision runs normally.
  Decision ok = decide_ok(engine, R"({"target":"reply"})");
  CHECK(ok.outcome == Outcome::Approve);
  CHECK(ok.error_code.empty());
}

TEST_CASE("an endless rule chain hits the run limit; an endless loop hits the deadline",
          "[decide][failclosed]") {
  auto policy = must_compile(R"(
(defrule chain (proposal (id ?id) (target tool) (action chain))
  => (assert (decision (proposal ?id) (outcome approve) (rule chain) (reason "start"))))
(defrule grow (decision (proposal ?id) (rule chain|grow) (reason ?r&:(< (str-length ?r) 100000)))
  => (assert (decision (proposal ?id) (outcome approve) (rule grow) (reason (str-cat ?r "x")))))
(defrule spin (proposal (id ?id) (target tool) (action spin))
  => (while TRUE do (+ 1 1)))
(defrule fine (proposal (id ?id) (target reply))
  => (assert (decision (proposal ?id) (outcome approve) (rule fine))))
)");
  EngineOptions o = test_options();
  o.run_limit = 50;
  o.deadline = std::chrono::milliseconds(50);
  Engine engine(policy, o);
  Decision chain = decide_ok(engine, R"({"target":"tool","action":"chain"})");
  CHECK(chain.outcome == Outcome::Reject);
  CHECK(chain.error_code == "E_RUN_LIMIT");
  Decision spin = decide_ok(engine, R"({"target":"tool","action":"spin"})");
  CHECK(spin.outcome == Outcome::Reject);
  CHECK(spin.error_code == "E_DEADLINE");
  Decision after = decide_ok(engine, R"({"target":"reply"})");
  INFO(after.reason);
  CHECK(after.outcome == Outcome::Approve);
}

TEST_CASE("rewrites change the approved action and name their rule", "[decide][rewrite]") {
  Engine engine(must_compile(R"(
(defrule redact (param (proposal ?id) (key "payload.text") (value ?t&:(str-contains ?t "secret")))
  => (assert (rewrite (proposal ?id) (key "payload.text") (value "[removed]") (rule redact) (reason "no secrets")))
     (assert (decision (proposal ?id) (outcome approve) (rule redact) (reason "redacted"))))
(defrule try-target (proposal (id ?id) (target message))
  => (assert (rewrite (proposal ?id) (key "target") (value "shell") (rule try-target))))
)"),
                test_options());
  Decision d =
      decide_ok(engine, R"({"target":"message","payload":{"text":"my secret","to":"bob"}})");
  CHECK(d.outcome == Outcome::Approve);
  auto action = parse(d.action_json);
  CHECK(action["payload"]["text"].GetString() == std::string("[removed]"));
  CHECK(action["payload"]["to"].GetString() == std::string("bob"));
  CHECK(action["target"].GetString() == std::string("message"));  // only payload fields can change
  REQUIRE(d.rewrites.size() == 2);
  bool applied = false, refused = false;
  for (const auto& w : d.rewrites) {
    if (w.rule == "redact") applied = w.applied;
    if (w.rule == "try-target") refused = !w.applied;
  }
  CHECK(applied);
  CHECK(refused);
  std::string json = decision_to_json(d);
  CHECK(json.find("\"rewrites\"") != std::string::npos);
  CHECK(json.find("my secret") ==
        std::string::npos);  // the old value never leaks into the decision
}

TEST_CASE("param facts cover every leaf with dotted keys and JSON types", "[decide][facts]") {
  Engine engine(must_compile(R"(
(defrule types
  (param (proposal ?id) (key "payload.args.1") (value 42))
  (param (proposal ?id) (key "payload.flag") (value TRUE))
  (param (proposal ?id) (key "payload.none") (value nil))
  (param (proposal ?id) (key "payload.nested.deep") (value "x"))
  (param (proposal ?id) (key "payload.ratio") (value 0.5))
  (proposal (id ?id) (agent "coder-1") (principal "alice") (source cli) (session "s1"))
  => (assert (decision (proposal ?id) (outcome approve) (rule types))))
)"),
                test_options());
  Decision d = decide_ok(
      engine,
      R"({"target":"tool","payload":{"args":["a",42],"flag":true,"none":null,"nested":{"deep":"x"},"ratio":0.5},
    "context":{"agent":"coder-1","principal":"alice","source":"CLI","session":"s1"}})");
  CHECK(d.outcome == Outcome::Approve);
  CHECK(d.rules.size() == 1);
}

TEST_CASE("indexed patterns become pattern-hit facts only for what matched", "[decide][patterns]") {
  Engine engine(must_compile(R"(
(defrule p-regex (pattern-hit (proposal ?id) (key "payload.command") (kind regex) (pattern "curl\\s+\\S*internal\\.corp"))
  => (assert (decision (proposal ?id) (outcome reject) (rule p-regex))))
(defrule p-sub (pattern-hit (proposal ?id) (kind substring) (pattern "tok123"))
  => (assert (decision (proposal ?id) (outcome reject) (rule p-sub))))
(defrule p-prefix (pattern-hit (proposal ?id) (key "payload.path") (kind path-within) (pattern "/etc/secret"))
  => (assert (decision (proposal ?id) (outcome reject) (rule p-prefix))))
(defrule p-glob (pattern-hit (proposal ?id) (key "payload.name") (kind glob) (pattern "*.pem"))
  => (assert (decision (proposal ?id) (outcome reject) (rule p-glob))))
)"),
                test_options());
  CHECK(decide_ok(engine,
                  R"({"target":"tool","payload":{"command":"curl  http://x.internal.corp/"}})")
            .rules.at(0)
            .rule == "p-regex");
  CHECK(decide_ok(engine, R"({"target":"tool","payload":{"anything":"a tok123 b"}})")
            .rules.at(0)
            .rule == "p-sub");
  CHECK(decide_ok(engine, R"({"target":"file","payload":{"path":"/etc/x/../secret/key"}})")
            .rules.at(0)
            .rule == "p-prefix");
  CHECK(
      decide_ok(engine, R"({"target":"file","payload":{"path":"/etc/secretive"}})").rules.empty());
  CHECK(
      decide_ok(engine, R"({"target":"tool","payload":{"name":"server.pem"}})").rules.at(0).rule ==
      "p-glob");
  CHECK(
      decide_ok(engine, R"({"target":"tool","payload":{"name":"dir/server.pem"}})").rules.empty());
  CHECK(decide_ok(engine, R"({"target":"tool","payload":{"command":"curl http://example.com"}})")
            .rules.empty());
}

TEST_CASE("explain lists the facts the rules saw", "[decide][explain]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  DecideRequest req;
  std::string json = R"({"target":"reply","payload":{"text":"hi"}})";
  req.proposal_json = json;
  req.explain = true;
  DecideResult r = engine.decide(req);
  REQUIRE(r.ok);
  std::string out = decision_to_json(r.decision, true);
  CHECK(out.find("\"facts\":[") != std::string::npos);
  CHECK(out.find("payload.text") != std::string::npos);
}

TEST_CASE("the decision JSON has the SPEC fields", "[decide]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  DecideRequest req;
  std::string json = R"({"target":"reply","payload":{"text":"hi"}})";
  req.proposal_json = json;
  req.decision_id = "d-1";
  DecideResult r = engine.decide(req);
  REQUIRE(r.ok);
  auto doc = parse(decision_to_json(r.decision));
  CHECK(doc["decision_id"].GetString() == std::string("d-1"));
  CHECK(doc["outcome"].GetString() == std::string("approve"));
  CHECK(doc["rules"].IsArray());
  CHECK(doc["rules"][0]["rule"].GetString() == std::string("approve-reply"));
  CHECK(doc["rules"][0]["mode"].GetString() == std::string("enforce"));
  CHECK(doc["action"]["payload"]["text"].GetString() == std::string("hi"));
  CHECK(std::string(doc["rules_digest"].GetString()).rfind("sha256:", 0) == 0);
  CHECK(doc["elapsed_us"].IsInt64());
}

TEST_CASE("the clock binding uses the injected clock", "[decide]") {
  EngineOptions o = test_options();
  o.clock = [] { return std::int64_t{1700000000}; };
  Engine engine(must_compile(R"(
(defrule clock (proposal (id ?id)) (test (= (now) 1700000000))
  => (assert (decision (proposal ?id) (outcome approve) (rule clock))))
)"),
                o);
  CHECK(decide_ok(engine, R"({"target":"reply"})").outcome == Outcome::Approve);
}

TEST_CASE("engines on separate threads decide independently", "[decide][threads]") {
  auto policy = must_compile(kCombination);
  std::atomic<int> wrong{0};
  std::mutex mutex;
  std::string first_wrong;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&] {
      Engine engine(policy, test_options());
      for (int i = 0; i < 500; ++i) {
        auto r = engine.decide(
            std::string(i % 2 ? R"({"target":"tool","action":"bad"})" : R"({"target":"tool"})"));
        if (!r.ok || r.decision.outcome != (i % 2 ? Outcome::Reject : Outcome::Approve)) {
          std::lock_guard<std::mutex> lock(mutex);
          if (!wrong++)
            first_wrong =
                r.ok ? r.decision.reason + " " + r.decision.error_code : r.error.to_text();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  INFO(first_wrong);
  CHECK(wrong == 0);
}

TEST_CASE("printout from a rule is captured and is not mistaken for an error", "[decide]") {
  Engine engine(must_compile(R"(
(defrule chatty (proposal (id ?id) (target reply))
  => (printout t "[note] replying" crlf)
     (assert (decision (proposal ?id) (outcome approve) (rule chatty))))
)"),
                test_options());
  Decision d = decide_ok(engine, R"({"target":"reply"})");
  CHECK(d.outcome == Outcome::Approve);
  CHECK(d.error_code.empty());
}

TEST_CASE("a lone surrogate escape is an input error, not invalid UTF-8 in a fact",
          "[decide][hostile]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"text":"a\udc3ab"}})"))
            .error.code == code::kInputJson);
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"\ud800":"x"}})")).error.code ==
        code::kInputJson);
  // A proper pair is fine.
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"text":"\ud83d\ude00"}})")).ok);
}

TEST_CASE("duplicate keys are refused: rules and actuators must see the same value",
          "[decide][hostile]") {
  Engine engine(must_compile(warden::test::kSimpleRules), test_options());
  CHECK(engine.decide(std::string(R"({"target":"reply","target":"shell"})")).error.code ==
        code::kInputShape);
  CHECK(engine
            .decide(std::string(
                R"({"target":"shell","payload":{"command":"ls","command":"rm -rf /"}})"))
            .error.code == code::kInputShape);
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"a":{"b":1,"b":2}}})"))
            .error.code == code::kInputShape);
  CHECK(engine.decide(std::string(R"({"target":"reply","payload":{"a":{"b":1},"c":{"b":2}}})")).ok);
}

// ---- a decision depends only on the policy and its request ----------------------------------

// The proposal fact's id is readable by rules: it must not count decisions, or a decision
// would depend on which engine made it and how many it made before (the daemon's workers
// and replay's cache would disagree).
TEST_CASE("two engines with different histories decide one request identically, facts included",
          "[decide]") {
  auto policy = must_compile(std::string(warden::test::kSimpleRules) + R"(
(defrule by-id
  (proposal (id ?id&:(neq ?id "p")))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule by-id) (reason (str-cat "id " ?id)))))
(defrule echo-id
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule echo-id) (reason (str-cat "id=" ?id)))))
)");
  EngineOptions o = test_options();
  o.clock = [] { return std::int64_t{1800000000}; };
  Engine fresh(policy, o), used(policy, o);
  for (int i = 0; i < 7; ++i) decide_ok(used, R"({"target":"reply","payload":{"text":"warm up"}})");
  DecideRequest req;
  req.proposal_json =
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":"s1"}})";
  req.decision_id = "d-1";
  req.explain = true;
  Decision a = decide_ok(fresh, req), b = decide_ok(used, req);
  CHECK(a.outcome == b.outcome);
  CHECK(a.reason == b.reason);
  CHECK(a.facts_json == b.facts_json);
  CHECK_FALSE(a.facts_json.empty());
  REQUIRE(a.rules.size() == b.rules.size());
  for (std::size_t i = 0; i < a.rules.size(); ++i) {
    CHECK(a.rules[i].rule == b.rules[i].rule);
    CHECK(a.rules[i].reason == b.rules[i].reason);
  }
  CHECK_FALSE(warden::test::fired(a, "by-id"));
  // And the same engine decides it the same way again.
  Decision c = decide_ok(used, req);
  CHECK(c.facts_json == a.facts_json);
  CHECK(c.reason == a.reason);
}

// Globals are evaluated for each decision with its own clock when an initial value may read
// it; a decision never sees the clock of the one before, nor of the engine's load.
TEST_CASE("a defglobal that reads the clock holds this decision's second", "[decide]") {
  auto policy = must_compile(R"(
(defglobal ?*start* = (now))
(defrule same-second
  (proposal (id ?id))
  (test (= ?*start* (now)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule same-second) (reason "global is this second"))))
)");
  std::int64_t now = 1800000000;
  EngineOptions o = test_options();
  o.clock = [&now] { return now; };
  o.default_outcome = Outcome::Approve;
  Engine engine(policy, o);
  for (std::int64_t t : {1800000000LL, 1800000001LL, 1800000001LL, 1700000000LL}) {
    now = t;
    Decision d = decide_ok(engine, R"({"target":"reply","payload":{"text":"hi"}})");
    INFO("clock " << t);
    CHECK(d.outcome == Outcome::Reject);
    CHECK(warden::test::fired(d, "same-second"));
  }
}

// Constant globals are evaluated once, at load: no environment resets them after each decision,
// the first engine's (the environment the rules were compiled in) included.
TEST_CASE("every engine's reset leaves constant globals alone, the first one's too", "[decide]") {
  auto policy = must_compile(R"(
(defglobal ?*limit* = 3)
(defrule r (proposal (id ?id)) => (assert (decision (proposal ?id) (outcome approve) (rule r) (reason "ok"))))
)");
  auto spare = policy_impl(*policy).take_spare();  // what the first Engine would take
  REQUIRE(spare);
  CHECK(EnvGetResetGlobals(spare->get()) == FALSE);
  auto loaded = std::make_unique<ClipsEnv>();
  policy_impl(*policy).load_into(*loaded);  // what every later Engine gets
  CHECK(EnvGetResetGlobals(loaded->get()) == FALSE);
}

// A rule that could change a global would carry state from one decision to the next: the
// checker refuses every `bind ?*x*`, however it is spelled.
TEST_CASE("a rule cannot change a global, so none carries state across decisions", "[decide]") {
  for (const char* rhs : {"(bind ?*count* (+ ?*count* 1))", "( bind   ?*count* 2)",
                          "(bind ?*MAIN::count* 3)", "(progn (bind ?*count* 4))"}) {
    std::string text =
        std::string("(defglobal ?*count* = 0)\n(defrule r (proposal (id ?id)) => ") + rhs + ")\n";
    auto loaded = warden::test::compile_text(text);
    INFO(rhs);
    CHECK_FALSE(loaded.policy);
  }
  // And a global the rules only read is the same for every decision.
  auto policy = must_compile(R"(
(defglobal ?*limit* = 3)
(defrule at-limit
  (proposal (id ?id) (depth ?d&:(>= ?d ?*limit*)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule at-limit) (reason "deep"))))
)");
  Engine engine(policy, test_options());
  DecideRequest deep;
  deep.proposal_json = R"({"target":"reply","payload":{"text":"hi"}})";
  deep.depth = 5;
  for (int i = 0; i < 3; ++i) CHECK(decide_ok(engine, deep).outcome == Outcome::Reject);
}
