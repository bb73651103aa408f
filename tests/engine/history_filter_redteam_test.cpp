// Red team: the history filter (engine/history_filter.h) claims that every decision is byte for
// byte the decision made with every history entry asserted (`explain`, which disables the
// filter). Each case decides one request twice, filtered and with explain, and compares the
// decisions' JSON (facts_json and elapsed_us cleared).
//
// The first cases FAIL on the code they were written against; each names its class of bug:
//  - join-disjunction: `?t|"x"` (a variable referenced with an alternative) is taken for a
//    join, as if the slot had to equal ?t;
//  - dropped-entry-predicate: CLIPS evaluates a pattern's `:` predicates on every fact of the
//    template that reaches them, also on entries the filter drops; a predicate that fails
//    there (division by zero) fails the explained decision closed, the filtered one approves;
//  - nul-in-history-string: an entry's string with a NUL byte is compared whole by the filter,
//    cut at the NUL by CLIPS;
//  - fact-cap: max_facts counts history facts, so the filter decides where explain is refused.
// The last cases pass: they guard the filter (random rules, the shipped pack with crafted
// histories, the index cache across snapshots, malformed entries).
#include "engine/history_filter.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/rule_files.h"
#include "engine/session_memory.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/history_test_util.h"

using namespace warden;
using warden::test::decide_ok;
using warden::test::effect;
using warden::test::shipped;
using warden::test::test_options;

namespace {

constexpr std::int64_t kNow = 10000;

std::shared_ptr<const Policy> policy_of(const std::string& rules) {
  auto loaded = Policy::compile({{"effects.toml", shipped("effects.toml")},
                                 {"paths.toml", shipped("paths.toml")},
                                 {"t.clp", rules}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

EngineOptions options() {
  EngineOptions o = test_options();
  o.clock = [] { return kNow; };
  return o;
}

using Both = warden::test::FilteredAndAll;

// The decision with the filter, and with every entry asserted (explain).
Both decide_both(Engine& engine, const std::string& json,
                 const std::vector<HistoryEntry>& history) {
  return warden::test::decide_filtered_and_all(engine, json, history);
}

// One decision of a random rule set, filtered and with every entry: counts it when the two
// differ (and fails, naming the rules and the proposal) and when its reply holds hints.
void tally(const Both& b, const std::string& rules, const std::string& json, int* differing,
           int* hinted) {
  *hinted += b.all.find("\"hints\"") != std::string::npos;
  if (b.filtered != b.all) {
    ++*differing;
    INFO(rules << "\n" << json);
    CHECK(b.filtered == b.all);
  }
}

Both decide_both(const std::string& rules, const std::string& json,
                 const std::vector<HistoryEntry>& history, EngineOptions o = options()) {
  Engine engine(policy_of(rules), o);
  return decide_both(engine, json, history);
}

// `cat /home/user/project/a`: one effect, (effect (kind read) (object path) (target "/home/user/project/a")).
const char* kCatRules =
    R"({"target":"shell","payload":{"command":"cat /home/user/project/a","cwd":"/home/user/project"}})";
const char* kRedteamReply = R"({"target":"reply","payload":{"text":"hi"}})";

const char* kApprove = R"(
(defrule approve-all
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-all) (reason "ok")))))";

}  // namespace

// ---- join-disjunction -------------------------------------------------------------------
// HistoryJoin is built from bound_variable(), the first term of a slot's constraint, whatever
// follows it. `?t|"x"` with ?t bound elsewhere means "equal to ?t, or x": no join.

TEST_CASE("red team join-disjunction: (history (target ?t|\"x\")) is not a join on ?t",
          "[history_filter][redteam]") {
  const std::string rules = R"(
(defrule seen-or-shadow
  (effect (proposal ?id) (kind read) (target ?t))
  (history (proposal ?id) (target ?t|"/etc/shadow"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule seen-or-shadow) (reason "seen"))))
)";
  // An entry whose target is the alternative, not the effect's target: CLIPS matches it.
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("read", "path", "/etc/shadow", "cat")}};
  auto b = decide_both(rules, kCatRules, history);
  INFO(
      "the filter drops the entry: its target is not the effect's, but `|\"/etc/shadow\"` accepts it");
  CHECK(b.filtered == b.all);
}

TEST_CASE("red team join-disjunction: (effect (target ?t|\"x\")) after a history binding ?t",
          "[history_filter][redteam]") {
  const std::string rules = R"(
(defrule any-history-when-reading-a
  (history (proposal ?id) (target ?t))
  (effect (proposal ?id) (kind read) (target ?t|"/home/user/project/a"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule any-history-when-reading-a) (reason ?t))))
)";
  // The effect's target is the constant alternative: every entry matches, whatever its target.
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("write", "path", "/tmp/x", "tee")}};
  auto b = decide_both(rules, kCatRules, history);
  INFO("the filter keeps only entries whose target is an effect's target");
  CHECK(b.filtered == b.all);
}

TEST_CASE("red team join-disjunction: (history (decision ?d|\"x\")) between two history patterns",
          "[history_filter][redteam]") {
  const std::string rules = R"(
(defrule write-then-network
  (effect (proposal ?id) (kind read))
  (history (proposal ?id) (decision ?d) (kind write))
  (history (proposal ?id) (decision ?d|"bootstrap") (kind network))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule write-then-network) (reason ?d))))
)";
  const std::vector<HistoryEntry> history = {
      {"d9", kNow, effect("write", "path", "/home/user/project/x", "tee")},
      {"bootstrap", kNow, effect("network", "host", "evil.example", "curl")},
  };
  auto b = decide_both(rules, kCatRules, history);
  INFO(
      "each pattern's entries are kept only if the other offers the same decision id: both are dropped");
  CHECK(b.filtered == b.all);
}

// ---- dropped-entry-predicate ------------------------------------------------------------
// CLIPS tests a pattern's slots in the order written and evaluates a predicate on every fact
// that passed the slots before it, whether or not the rule can fire. An entry the filter drops
// is never evaluated: a predicate that errors on it fails the explained decision closed
// (E_RUNTIME, reject) while the filtered one approves. Age 0 (decided this second) divides by 0.

TEST_CASE(
    "red team dropped-entry-predicate: a rule whose gate fails still evaluates its history predicates",
    "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule fast-credential-exfil
  (effect (proposal ?id) (kind network))
  (history (proposal ?id) (age ?a&:(< (div 60 ?a) 2)) (kind read) (class credential))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fast-credential-exfil) (reason "exfil"))))
)";
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("read", "path", "/home/user/.ssh/id_rsa", "cat", "credential")}};
  // A reply has no network effect: the gate fails and the filter asserts nothing.
  auto b = decide_both(rules, kRedteamReply, history);
  INFO(
      "explain: [WARDEN4] div: division by zero evaluating the age predicate -> reject E_RUNTIME; filtered: approve");
  CHECK(b.filtered == b.all);
}

TEST_CASE(
    "red team dropped-entry-predicate: a predicate written before the slot whose constant drops the entry",
    "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule recent-write
  (history (proposal ?id) (age ?a&:(< (div 60 ?a) 2)) (kind write))
  =>
  (assert (hint (proposal ?id) (rule recent-write) (text "recent write"))))
)";
  // A read: (kind write) drops it, but CLIPS evaluates the age predicate first.
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("read", "path", "/home/user/project/a", "cat")}};
  auto b = decide_both(rules, kCatRules, history);
  INFO("explain: division by zero on the read entry -> reject E_RUNTIME; filtered: approve");
  CHECK(b.filtered == b.all);
}

TEST_CASE(
    "red team dropped-entry-predicate: an entry a join drops is evaluated by the pattern's predicate",
    "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule reread-recent
  (effect (proposal ?id) (kind read) (target ?t))
  (history (proposal ?id) (age ?a&:(< (div 60 ?a) 2)) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule reread-recent) (reason ?t))))
)";
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("write", "path", "/elsewhere", "tee")}};
  auto b = decide_both(rules, kCatRules, history);
  INFO(
      "explain: division by zero -> reject E_RUNTIME; filtered (target /elsewhere joins no effect): approve");
  CHECK(b.filtered == b.all);
}

// ---- nul-in-history-string --------------------------------------------------------------
// history_values() hands the filter the entry's whole std::string; FactWriter::put_string
// interns it with EnvAddSymbol(c_str()), which stops at the first NUL. (Proposals with NUL
// are refused by the reader, so only a history from elsewhere holds one.)

TEST_CASE(
    "red team nul-in-history-string: a constant matches the string CLIPS sees, not the entry's",
    "[history_filter][redteam]") {
  const std::string rules = R"(
(defrule wrote-a
  (effect (proposal ?id) (kind read))
  (history (proposal ?id) (target "/home/user/project/a"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule wrote-a) (reason "seen"))))
)";
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("write", "path", std::string("/home/user/project/a\0.bak", 25), "tee")}};
  auto b = decide_both(rules, kCatRules, history);
  INFO(
      "CLIPS's target is \"/home/user/project/a\"; the filter compares \"/home/user/project/a\\0.bak\"");
  CHECK(b.filtered == b.all);
}

TEST_CASE("red team nul-in-history-string: a join compares the fact's value with the uncut entry",
          "[history_filter][redteam]") {
  const std::string rules = R"(
(defrule read-what-was-written
  (effect (proposal ?id) (kind read) (target ?t))
  (history (proposal ?id) (kind write) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule read-what-was-written) (reason ?t))))
)";
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("write", "path", std::string("/home/user/project/a\0.bak", 25), "tee")}};
  auto b = decide_both(rules, kCatRules, history);
  CHECK(b.filtered == b.all);
}

// ---- fact-cap ---------------------------------------------------------------------------
// FactWriter::finish counts every asserted fact against max_facts, history facts included:
// with every entry asserted the proposal is refused (E_INPUT_TOO_LARGE), with the filter it
// is decided.

TEST_CASE(
    "red team fact-cap: max_facts counts the history entries explain asserts and the filter drops",
    "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule network-after-credential
  (effect (proposal ?id) (kind network))
  (history (proposal ?id) (kind read) (class credential))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule network-after-credential) (reason "exfil"))))
)";
  std::vector<HistoryEntry> history;
  for (int i = 0; i < 30; ++i)
    history.push_back({"d" + std::to_string(i), kNow,
                       effect("write", "path", "/home/user/project/f" + std::to_string(i), "tee")});
  EngineOptions o = options();
  o.max_facts = 20;  // a reply needs a few facts; 30 entries do not fit
  auto b = decide_both(rules, kRedteamReply, history, o);
  INFO("explain: reject E_INPUT_TOO_LARGE (more than 20 facts); filtered: approve");
  CHECK(b.filtered == b.all);
}

// ---- guards (pass) ----------------------------------------------------------------------

namespace {

struct Gen {
  std::mt19937 r;
  explicit Gen(unsigned seed) : r(seed) {}
  std::size_t n(std::size_t k) { return r() % k; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[n(v.size())];
  }
};

const std::vector<std::string> kKinds = {"write", "read", "network", "exec", "unknown", "delete"};
const std::vector<std::string> kObjects = {"path", "host", "none", "program"};
const std::vector<std::string> kClassNames = {"none", "credential", "build-config"};
const std::vector<std::string> kTargets = {"/home/user/project/a", "/home/user/project/b", "",
                                           "example.com", "/etc/passwd"};
const std::vector<std::string> kPrograms = {"tar", "git", "", "cat", "curl"};
const std::vector<std::string> kDecisions = {"d1", "d2", "d3"};

// One slot's constraint: constants, alternatives, exclusions, precedence mixes, variables
// (joins: ?js*/?jy* are shared across slots and patterns), never `?v|x` (join-disjunction).
std::string constraint(Gen& g, const std::vector<std::string>& pool, bool str,
                       const std::string& slot, std::vector<std::string>* vars) {
  auto c = [&](const std::string& v) { return str ? "\"" + v + "\"" : v; };
  auto var = [&](const std::string& v) {
    vars->push_back(v);
    return v;
  };
  const std::string own = "?v" + slot + std::to_string(g.n(2));
  switch (g.n(12)) {
    case 0:
      return c(g.pick(pool));
    case 1:
      return c(g.pick(pool)) + "|" + c(g.pick(pool));
    case 2:
      return "~" + c(g.pick(pool));
    case 3:
      return "~" + c(g.pick(pool)) + "&~" + c(g.pick(pool));
    case 4:
      return var(own);
    case 5:
      return var(own) + "&" + c(g.pick(pool)) + "|" + c(g.pick(pool));
    case 6:
      return var(own) + "&~" + c(g.pick(pool));
    case 7:
      return c(g.pick(pool)) + "|~" + c(g.pick(pool));
    case 8:
      return "~" + c(g.pick(pool)) + "|" + c(g.pick(pool));
    case 9:
      return c(g.pick(pool)) + "&~" + c(g.pick(pool)) + "|" + c(g.pick(pool));
    case 10:
      return var("?j" + std::string(str ? "s" : "y") + std::to_string(g.n(2)));
    default:
      return "?";
  }
}

std::string random_history_pattern(Gen& g, std::vector<std::string>* vars) {
  std::string p = "(history (proposal ?id)";
  auto slot = [&](const char* name, const std::vector<std::string>& pool, bool str) {
    if (g.n(3) == 0) return;
    std::string c = constraint(g, pool, str, name, vars);
    if (c != "?") p += std::string(" (") + name + " " + c + ")";
  };
  slot("kind", kKinds, false);
  slot("object", kObjects, false);
  slot("class", kClassNames, false);
  slot("target", kTargets, true);
  slot("program", kPrograms, true);
  slot("decision", kDecisions, true);
  if (g.n(4) == 0) p += std::string(" (in-workspace ") + (g.n(2) ? "TRUE" : "FALSE") + ")";
  return p + ")";
}

std::string random_rule(Gen& g, int i) {
  const std::string name = "r" + std::to_string(i);
  std::string lhs;
  switch (g.n(5)) {
    case 0:
      lhs += "(effect (proposal ?id) (kind " + g.pick(kKinds) + ") (target ?js0))\n";
      break;
    case 1:
      lhs += "(effect (proposal ?id) (target ?js" + std::to_string(g.n(2)) + ") (program ?js1))\n";
      break;
    case 2:
      lhs += std::string("(proposal (id ?id) (target ") + (g.n(2) ? "shell" : "file") + "))\n";
      break;
    case 3:
      lhs += "(or (effect (proposal ?id) (kind write)) (effect (proposal ?id) (kind read)))\n";
      break;
    default:
      lhs += "(proposal (id ?id))\n";
      break;
  }
  std::vector<std::string> shown;
  for (int k = 0, patterns = 1 + static_cast<int>(g.n(2)); k < patterns; ++k) {
    std::vector<std::string> vars;
    const std::string p = random_history_pattern(g, &vars);
    switch (g.n(5)) {
      case 0:
        lhs += "(not " + p + ")\n";
        break;
      case 1:
        lhs += "(exists " + p + ")\n";
        break;
      default:
        lhs += p + "\n";
        shown.insert(shown.end(), vars.begin(), vars.end());
        break;
    }
  }
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  std::string text = "(str-cat \"" + name + "\"";
  for (const auto& v : shown) text += " \" \" " + v;
  return "(defrule " + name + "\n" + lhs + "=>\n(assert (hint (proposal ?id) (rule " + name +
         ") (text " + text + ")))))\n";
}

}  // namespace

TEST_CASE("red team guard: random constraint forms, gates and joins decide as with every entry",
          "[history_filter][redteam]") {
  Gen g(20261130);
  const std::vector<std::string> proposals = {
      kCatRules,
      R"({"target":"shell","payload":{"command":"tar xf /home/user/project/b","cwd":"/home/user/project"}})",
      R"({"target":"http","action":"get","payload":{"url":"https://example.com/x"}})",
      R"({"target":"file","action":"write","payload":{"path":"/home/user/project/a","content":"x"}})",
  };
  int differing = 0, hinted = 0, compiled = 0;
  for (int it = 0; it < 60; ++it) {
    std::string rules;
    for (int i = 0, n = 1 + static_cast<int>(g.n(4)); i < n; ++i) rules += random_rule(g, i);
    auto loaded = Policy::compile({{"effects.toml", shipped("effects.toml")},
                                   {"paths.toml", shipped("paths.toml")},
                                   {"t.clp", rules}});
    if (!loaded.policy) continue;  // CLIPS refuses some (a duplicate constant, an unmatchable slot)
    ++compiled;
    Engine engine(loaded.policy, options());
    for (int h = 0; h < 12; ++h) {
      std::vector<HistoryEntry> history;
      for (std::size_t k = 0, m = g.n(7); k < m; ++k)
        history.push_back({g.pick(kDecisions), kNow - 10,
                           effect(g.pick(kKinds), g.pick(kObjects), g.pick(kTargets),
                                  g.pick(kPrograms), g.pick(kClassNames), g.n(2) == 0)});
      for (const auto& json : proposals) {
        tally(decide_both(engine, json, history), rules, json, &differing, &hinted);
      }
    }
  }
  CHECK(differing == 0);
  CHECK(compiled > 40);
  CHECK(hinted > 500);
}

TEST_CASE("red team guard: the shipped pack with crafted histories decides as with every entry",
          "[history_filter][redteam]") {
  LoadedPolicy loaded = load_policy({WARDEN_SOURCE_DIR "/rules"});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  Engine engine(loaded.policy, options());
  std::vector<std::string> proposals;
  for (const auto& file : std::filesystem::directory_iterator(WARDEN_SOURCE_DIR "/rules")) {
    if (file.path().extension() != ".jsonl") continue;
    std::ifstream in(file.path());
    for (std::string line; std::getline(in, line);) {
      rapidjson::Document d;
      d.Parse(line.c_str());
      if (d.HasParseError() || !d.IsObject() || !d.HasMember("proposal")) continue;
      rapidjson::StringBuffer buffer;
      rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
      d["proposal"].Accept(writer);
      proposals.push_back(buffer.GetString());
    }
  }
  std::sort(proposals.begin(), proposals.end());
  REQUIRE(proposals.size() > 500);
  // Histories are made of the effects the pack's own proposals have, and a few odd entries.
  std::vector<EffectRecord> pool;
  for (const auto& p : proposals) {
    DecideResult r = engine.decide(p);
    if (r.ok) pool.insert(pool.end(), r.decision.effects.begin(), r.decision.effects.end());
  }
  pool.push_back(effect("bogus", "weird", "/home/user/project", "tar", "Bad_Class", true));
  pool.push_back(effect("write", "path", "/home/user/project", "tar", "none", true));
  pool.push_back(effect("write", "path", "/home/user/project", "git", "none", true));
  pool.push_back(effect("network", "host", "", "curl", "none", false));
  Gen g(7);
  const std::vector<HistoryEntry> none;
  int differing = 0, history_mattered = 0;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < proposals.size(); ++i) {
      std::vector<HistoryEntry> history;
      for (std::size_t k = 0, m = 1 + g.n(12); k < m; ++k) {
        // Half from anywhere, half from the effects of proposals near this one (the same topic).
        const std::size_t near =
            std::min(pool.size() - 1, i * pool.size() / proposals.size() + g.n(20));
        history.push_back({"d" + std::to_string(g.n(4)), kNow - static_cast<std::int64_t>(g.n(100)),
                           pool[g.n(2) ? g.n(pool.size()) : near]});
      }
      auto b = decide_both(engine, proposals[i], history);
      history_mattered += b.all != decide_both(engine, proposals[i], none).all;
      if (b.filtered != b.all) {
        ++differing;
        INFO(proposals[i]);
        CHECK(b.filtered == b.all);
      }
    }
  }
  CHECK(differing == 0);
  CHECK(history_mattered > 50);
}

TEST_CASE("red team guard: one engine's index cache across sessions and a growing session",
          "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule runs-what-was-written
  (effect (proposal ?id) (kind exec) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule runs-what-was-written) (reason ?t))))
(defrule fetched-then-run
  (effect (proposal ?id) (kind exec))
  (history (proposal ?id) (decision ?d) (kind write) (program ?p&~"git"))
  (history (proposal ?id) (decision ?d) (kind network) (target ?h&~""))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fetched-then-run) (reason (str-cat ?p " " ?h)))))
)";
  Engine engine(policy_of(rules), options());
  SessionMemory memory;
  const std::string run =
      R"({"target":"shell","payload":{"command":"bash build.sh","cwd":"/home/user/project"},"context":{"session":"S"}})";
  auto proposal_in = [&](const std::string& session) {
    std::string json = run;
    json.replace(json.find("\"S\""), 3, "\"" + session + "\"");
    return json;
  };
  auto decide = [&](const std::string& session) {
    const std::string json = proposal_in(session);
    DecideRequest r;
    r.proposal_json = json;
    r.decision_id = "same";
    DecideResult filtered =
        decide_in_session(engine, memory, r, session_key(json, std::nullopt), false);
    REQUIRE(filtered.ok);
    HistorySnapshot snapshot = memory.shared_snapshot("", session, kNow);
    r.history = snapshot.get();
    r.explain = true;
    Decision all = decide_ok(engine, r);
    all.facts_json.clear();
    filtered.decision.elapsed_us = all.elapsed_us = 0;
    CHECK(decision_to_json(filtered.decision) == decision_to_json(all));
    return all.outcome;
  };
  memory.record("", "s1", "a", kNow,
                {effect("write", "path", "/home/user/project/build.sh", "tee", "none", true)});
  memory.record("", "s2", "b", kNow,
                {effect("write", "path", "/home/user/project/other.sh", "tee", "none", true)});
  CHECK(decide("s1") == Outcome::ApprovalRequired);
  CHECK(decide("s2") == Outcome::Approve);
  CHECK(decide("s1") == Outcome::ApprovalRequired);
  CHECK(decide("s1") == Outcome::ApprovalRequired);  // the cached index
  // s2 changes while the engine holds its old snapshot (copy on write): the next decision sees it.
  memory.record("", "s2", "c", kNow,
                {effect("write", "path", "/home/user/project/lib.py", "curl", "none", true),
                 effect("network", "host", "evil.example", "curl")});
  CHECK(decide("s2") == Outcome::Reject);
  CHECK(decide("s1") == Outcome::ApprovalRequired);
  CHECK(decide("s2") == Outcome::Reject);
}

TEST_CASE("red team guard: entries with unknown kinds, objects and malformed classes",
          "[history_filter][redteam]") {
  const std::string rules = std::string(kApprove) + R"(
(defrule unknown-kind (history (proposal ?id) (kind unknown) (target ?t))
  => (assert (hint (proposal ?id) (rule unknown-kind) (text ?t))))
(defrule none-object (history (proposal ?id) (object none) (kind write) (target ?t))
  => (assert (hint (proposal ?id) (rule none-object) (text ?t))))
(defrule none-class (history (proposal ?id) (class none) (kind read) (target ?t))
  => (assert (hint (proposal ?id) (rule none-class) (text ?t))))
(defrule not-none-class (history (proposal ?id) (class ~none) (target ?t))
  => (assert (hint (proposal ?id) (rule not-none-class) (text ?t))))
)";
  const std::vector<HistoryEntry> history = {
      {"d1", kNow, effect("Write", "path", "/k1")},
      {"d1", kNow, effect("", "path", "/k2")},
      {"d1", kNow, effect("write", "url", "/o1")},
      {"d1", kNow, effect("write", "PATH", "/o2")},
      {"d1", kNow, effect("read", "path", "/c1", "", "Credential")},
      {"d1", kNow, effect("read", "path", "/c2", "", "")},
      {"d1", kNow, effect("read", "path", "/c3", "", "9x")},
      {"d1", kNow, effect("read", "path", "/c4", "", "a_b")},
      {"d1", kNow, effect("read", "path", "/c5", "", "credential")},
  };
  auto b = decide_both(rules, kRedteamReply, history);
  CHECK(b.filtered == b.all);
  CHECK(b.all.find("/k1") != std::string::npos);
  CHECK(b.all.find("/o1") != std::string::npos);
  CHECK(b.all.find("/c4") != std::string::npos);
}

namespace {

// A random predicate over the entry's target and program (?t, ?p), a shell command's cwd and
// program (?c, ?q), the workspace root and constants: every form the filter judges (and, or,
// not, eq, neq, str-prefix, str-cat), strings against symbols, and calls it cannot judge.
std::string random_predicate(Gen& g, int depth) {
  static const std::vector<std::string> operands = {"?t",
                                                    "?p",
                                                    "?c",
                                                    "?q",
                                                    "(workspace-root)",
                                                    "\"/home/user/project\"",
                                                    "\"/home/user/project/a\"",
                                                    "\"tar\"",
                                                    "tar",
                                                    "(str-cat ?t \"/\")",
                                                    "(str-cat ?c \"/\")",
                                                    "(str-cat \"/home/user/\" \"project\")",
                                                    "(str-cat ?t)",
                                                    "(str-cat (workspace-root) \"/a\")",
                                                    "(sym-cat ?p)",
                                                    "\"\""};
  auto operand = [&] { return g.pick(operands); };
  switch (depth > 2 ? 3 + g.n(4) : g.n(7)) {
    case 0:
      return "(or " + random_predicate(g, depth + 1) + " " + random_predicate(g, depth + 1) + ")";
    case 1:
      return "(and " + random_predicate(g, depth + 1) + " " + random_predicate(g, depth + 1) + ")";
    case 2:
      return "(not " + random_predicate(g, depth + 1) + ")";
    case 3:
      return "(eq " + operand() + " " + operand() + (g.n(3) == 0 ? " " + operand() : "") + ")";
    case 4:
      return "(neq " + operand() + " " + operand() + (g.n(3) == 0 ? " " + operand() : "") + ")";
    case 5:
      return "(str-prefix " + operand() + " " + operand() + ")";
    default:
      return "(str-index \"a\" " + operand() + ")";  // a call the filter does not judge
  }
}

}  // namespace

TEST_CASE("red team guard: random slot predicates decide as with every entry",
          "[history_filter][redteam]") {
  Gen g(20261201);
  const std::vector<std::string> commands = {
      "git status",           "cd a && git log", "cd a/b && tar xf x", "cd /tmp && cat x",
      "cd ../projectx && ls", "ls; cd a; make",  "./a/run.sh"};
  const std::vector<std::string> targets = {"/home/user/project",
                                            "/home/user/project/a",
                                            "/home/user/project/a/b",
                                            "/home/user/projectx",
                                            "/tmp",
                                            "",
                                            "/",
                                            "tar",
                                            "/home/user/project/a/"};
  const std::vector<std::string> programs = {"tar", "git", "", "ls"};
  int differing = 0, hinted = 0, compiled = 0;
  int kept_out = 0;  // decisions that asserted fewer entries than the history holds
  for (int it = 0; it < 80; ++it) {
    std::string rules;
    for (int i = 0, n = 1 + static_cast<int>(g.n(3)); i < n; ++i) {
      const std::string name = "r" + std::to_string(i);
      const std::string slot = g.n(3) == 0 ? "program ?p&:" : "target ?t&:";
      const std::string other = slot[0] == 'p' ? "(target ?t)" : "(program ?p)";
      rules += "(defrule " + name +
               "\n  (shell-command (proposal ?id) (cwd ?c) (program ?q))\n"
               "  (history (proposal ?id) (kind write) " +
               other + " (" + slot + random_predicate(g, 0) +
               (g.n(2) ? "&:" + random_predicate(g, 1) : "") +
               "))\n  =>\n  (assert (hint (proposal ?id) (rule " + name +
               ") (text (str-cat ?t \" \" ?p \" \" ?c)))))\n";
    }
    auto loaded = Policy::compile({{"effects.toml", shipped("effects.toml")},
                                   {"paths.toml", shipped("paths.toml")},
                                   {"t.clp", rules}});
    for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
    if (!loaded.policy) continue;  // CLIPS refuses a predicate whose types it can tell wrong
    ++compiled;
    Engine engine(loaded.policy, options());
    for (int h = 0; h < 6; ++h) {
      std::vector<HistoryEntry> history;
      for (std::size_t k = 0, m = 1 + g.n(8); k < m; ++k)
        history.push_back(
            {"d1", kNow - 10,
             effect("write", "path", g.pick(targets), g.pick(programs), "none", g.n(2) == 0)});
      for (const auto& command : commands) {
        const std::string json = R"({"target":"shell","payload":{"command":")" + command +
                                 R"(","cwd":"/home/user/project"}})";
        tally(decide_both(engine, json, history), rules, json, &differing, &hinted);
        DecideRequest r;
        r.proposal_json = json;
        r.history = &history;
        kept_out += decide_ok(engine, r).history_asserted < history.size();
      }
    }
  }
  CHECK(differing == 0);
  CHECK(compiled > 60);
  CHECK(hinted > 300);
  CHECK(kept_out > 500);  // the predicates kept entries out, often
}
