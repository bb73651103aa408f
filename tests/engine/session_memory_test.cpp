// Session memory: what approved decisions of a session did, kept per (principal, session)
// for a TTL under caps, and shown to later decisions of the session as `history` facts.
#include "engine/session_memory.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/case_runner.h"
#include "engine/rule_files.h"

#include "tests/engine/engine_test_util.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using warden::test::decide_ok;
using warden::test::fired;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

EffectRecord write_effect(const std::string& path, bool in_workspace = true) {
  EffectRecord e;
  e.kind = "write";
  e.object = "path";
  e.target = path;
  e.program = "tee";
  e.path_class = "none";
  e.in_workspace = in_workspace;
  return e;
}

EffectRecord read_effect(const std::string& path, const std::string& path_class = "credential") {
  EffectRecord e;
  e.kind = "read";
  e.object = "path";
  e.target = path;
  e.program = "cat";
  e.path_class = path_class;
  return e;
}

std::vector<std::string> targets(const std::vector<HistoryEntry>& entries) {
  std::vector<std::string> out;
  for (const auto& e : entries) out.push_back(e.effect.target);
  return out;
}

Decision approved(const std::string& id, std::vector<EffectRecord> effects) {
  Decision d;
  d.decision_id = id;
  d.outcome = Outcome::Approve;
  d.effects = std::move(effects);
  return d;
}

}  // namespace

TEST_CASE("session memory forgets entries once they are ttl_seconds old", "[session]") {
  SessionMemoryOptions o;
  o.ttl_seconds = 100;
  SessionMemory memory(o);
  memory.record("alice", "s1", "d1", 1000, {write_effect("/w/a")});
  memory.record("alice", "s1", "d2", 1050, {write_effect("/w/b")});

  CHECK(targets(memory.snapshot("alice", "s1", 1000)) == std::vector<std::string>{"/w/a", "/w/b"});
  CHECK(targets(memory.snapshot("alice", "s1", 1099)) == std::vector<std::string>{"/w/a", "/w/b"});
  // At exactly ttl seconds the first entry is gone, the second is still young.
  CHECK(targets(memory.snapshot("alice", "s1", 1100)) == std::vector<std::string>{"/w/b"});
  CHECK(targets(memory.snapshot("alice", "s1", 1149)) == std::vector<std::string>{"/w/b"});
  CHECK(memory.snapshot("alice", "s1", 1150).empty());
  // An emptied session is dropped, not kept as an empty shell.
  CHECK(memory.session_count() == 0);
  CHECK(memory.bytes() == 0);
}

TEST_CASE("session memory keeps each entry's decision id and time", "[session]") {
  SessionMemory memory;
  memory.record("alice", "s1", "dec-7", 500, {read_effect("/home/u/.ssh/id_rsa")});
  auto entries = memory.snapshot("alice", "s1", 510);
  REQUIRE(entries.size() == 1);
  CHECK(entries[0].decision_id == "dec-7");
  CHECK(entries[0].time == 500);
  CHECK(entries[0].effect.kind == "read");
  CHECK(entries[0].effect.path_class == "credential");
}

TEST_CASE("a session id is scoped by principal: no reading or poisoning across principals",
          "[session]") {
  SessionMemory memory;
  memory.record("alice", "shared", "d1", 100, {write_effect("/w/Makefile")});
  CHECK(memory.snapshot("mallory", "shared", 100).empty());
  memory.record("mallory", "shared", "d2", 100, {read_effect("/etc/shadow", "system")});
  CHECK(targets(memory.snapshot("alice", "shared", 100)) ==
        std::vector<std::string>{"/w/Makefile"});
  CHECK(targets(memory.snapshot("mallory", "shared", 100)) ==
        std::vector<std::string>{"/etc/shadow"});
  // The key is the pair, not a joined string: ("a", "bc") and ("ab", "c") are different.
  memory.record("a", "bc", "d3", 100, {write_effect("/w/x")});
  CHECK(memory.snapshot("ab", "c", 100).empty());
}

TEST_CASE("an empty session id is never recorded and has no history", "[session]") {
  SessionMemory memory;
  memory.record("alice", "", "d1", 100, {write_effect("/w/a")});
  CHECK(memory.session_count() == 0);
  CHECK(memory.snapshot("alice", "", 100).empty());
  CHECK_FALSE(memory.remember("alice", "", approved("d2", {write_effect("/w/b")}), 100));
  CHECK(memory.session_count() == 0);
}

TEST_CASE("only approved decisions without an engine error are remembered", "[session]") {
  SessionMemory memory;
  Decision rejected = approved("d1", {write_effect("/w/rejected")});
  rejected.outcome = Outcome::Reject;
  Decision waiting = approved("d2", {write_effect("/w/waiting")});
  waiting.outcome = Outcome::ApprovalRequired;
  Decision failed = approved("d3", {write_effect("/w/failed")});
  failed.error_code = "E_DEADLINE";  // cannot approve, but the record must not trust that
  CHECK_FALSE(memory.remember("alice", "s", rejected, 100));
  CHECK_FALSE(memory.remember("alice", "s", waiting, 100));
  CHECK_FALSE(memory.remember("alice", "s", failed, 100));
  CHECK(memory.snapshot("alice", "s", 100).empty());
  CHECK(memory.remember("alice", "s", approved("d4", {write_effect("/w/ok")}), 100));
  CHECK(targets(memory.snapshot("alice", "s", 100)) == std::vector<std::string>{"/w/ok"});
}

TEST_CASE("a session keeps at most max_entries, dropping the oldest", "[session]") {
  SessionMemoryOptions o;
  o.max_entries = 3;
  SessionMemory memory(o);
  for (int i = 0; i < 5; ++i)
    memory.record("alice", "s", "d" + std::to_string(i), 100 + i,
                  {write_effect("/w/" + std::to_string(i))});
  CHECK(targets(memory.snapshot("alice", "s", 110)) ==
        std::vector<std::string>{"/w/2", "/w/3", "/w/4"});
  // One decision with more effects than the cap keeps its last ones.
  std::vector<EffectRecord> many;
  for (int i = 0; i < 5; ++i) many.push_back(read_effect("/r/" + std::to_string(i)));
  memory.record("alice", "t", "d", 100, many);
  CHECK(targets(memory.snapshot("alice", "t", 100)) ==
        std::vector<std::string>{"/r/2", "/r/3", "/r/4"});
}

TEST_CASE("identical effects are kept once, the newest", "[session]") {
  SessionMemoryOptions o;
  o.max_entries = 4;
  SessionMemory memory(o);
  memory.record("alice", "s", "first", 100, {write_effect("/w/Makefile")});
  for (int i = 0; i < 1000; ++i)
    memory.record("alice", "s", "read" + std::to_string(i), 200 + i, {read_effect("/w/.env")});
  auto entries = memory.snapshot("alice", "s", 1200);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].effect.target ==
        "/w/Makefile");  // not pushed out by a thousand reads of one file
  CHECK(entries[1].effect.target == "/w/.env");
  CHECK(entries[1].decision_id == "read999");
  CHECK(entries[1].time == 1199);
  // A different kind, program or object on the same target is a different effect.
  EffectRecord by_other = read_effect("/w/.env");
  by_other.program = "grep";
  EffectRecord as_write = write_effect("/w/.env");
  memory.record("alice", "s", "more", 1300, {by_other, as_write});
  CHECK(memory.snapshot("alice", "s", 1300).size() == 4);
}

TEST_CASE("at most max_sessions are kept, the least recently used dropped first", "[session]") {
  SessionMemoryOptions o;
  o.max_sessions = 3;
  SessionMemory memory(o);
  memory.record("alice", "s1", "d", 100, {write_effect("/w/1")});
  memory.record("alice", "s2", "d", 100, {write_effect("/w/2")});
  memory.record("alice", "s3", "d", 100, {write_effect("/w/3")});
  CHECK_FALSE(memory.snapshot("alice", "s1", 100).empty());  // s1 is now the most recently used
  memory.record("alice", "s4", "d", 100, {write_effect("/w/4")});
  CHECK(memory.session_count() == 3);
  CHECK(memory.snapshot("alice", "s2", 100).empty());  // the least recently used went
  CHECK_FALSE(memory.snapshot("alice", "s1", 100).empty());
  CHECK_FALSE(memory.snapshot("alice", "s3", 100).empty());
  CHECK_FALSE(memory.snapshot("alice", "s4", 100).empty());
}

TEST_CASE("a principal opening sessions without end evicts its own sessions, not another's",
          "[session]") {
  SessionMemoryOptions o;
  o.max_sessions = 4;
  SessionMemory memory(o);
  memory.record("alice", "work", "d", 100, {write_effect("/w/Makefile")});
  for (int i = 0; i < 50; ++i)
    memory.record("mallory", "m" + std::to_string(i), "d", 101, {write_effect("/w/x")});
  CHECK(memory.session_count() == 4);
  CHECK(targets(memory.snapshot("alice", "work", 102)) == std::vector<std::string>{"/w/Makefile"});
  CHECK_FALSE(memory.snapshot("mallory", "m49", 102).empty());
  CHECK(memory.snapshot("mallory", "m0", 102).empty());
}

TEST_CASE("the byte budget drops whole sessions of the largest holder, then old entries",
          "[session]") {
  SessionMemoryOptions o;
  o.max_bytes = 16 * 1024;
  SessionMemory memory(o);
  memory.record("alice", "work", "d", 100, {write_effect("/w/Makefile")});
  const std::string big(2000, 'x');
  for (int i = 0; i < 20; ++i)
    memory.record("mallory", "m" + std::to_string(i), "d", 100, {write_effect("/w/" + big)});
  CHECK(memory.bytes() <= o.max_bytes);
  CHECK_FALSE(memory.snapshot("alice", "work", 100).empty());
  // One session alone over the budget keeps its newest entries.
  SessionMemory alone(o);
  for (int i = 0; i < 20; ++i)
    alone.record("bob", "s", "d" + std::to_string(i), 100,
                 {write_effect("/w/" + std::to_string(i) + big)});
  auto entries = alone.snapshot("bob", "s", 100);
  CHECK(alone.bytes() <= o.max_bytes);
  REQUIRE_FALSE(entries.empty());
  CHECK(entries.back().decision_id == "d19");
  CHECK(entries.size() < 20);
}

TEST_CASE("forget and clear drop sessions and their bytes", "[session]") {
  SessionMemory memory;
  memory.record("alice", "s1", "d", 100, {write_effect("/w/1")});
  memory.record("alice", "s2", "d", 100, {write_effect("/w/2")});
  memory.forget("alice", "s1");
  CHECK(memory.snapshot("alice", "s1", 100).empty());
  CHECK(memory.session_count() == 1);
  memory.clear();
  CHECK(memory.session_count() == 0);
  CHECK(memory.bytes() == 0);
}

TEST_CASE("session_key reads context.session and the principal the engine will see", "[session]") {
  const char* p = R"({"target":"reply","context":{"session":"abc","principal":"claimed"}})";
  SessionKey k = session_key(std::string_view(p), std::nullopt);
  CHECK(k.session == "abc");
  CHECK(k.principal == "claimed");
  k = session_key(std::string_view(p), std::optional<std::string>("alice"));
  CHECK(k.principal == "alice");  // the authenticated principal wins
  CHECK(session_key(std::string_view(R"({"target":"reply","context":{"session":7}})"), std::nullopt)
            .session.empty());
  CHECK(session_key(std::string_view(R"({"target":"reply"})"), std::nullopt).session.empty());
  CHECK(session_key(std::string_view("not json"), std::nullopt).session.empty());
}

TEST_CASE("session memory is shared safely between threads", "[session]") {
  SessionMemoryOptions o;
  o.max_sessions = 8;
  o.max_entries = 16;
  SessionMemory memory(o);
  std::vector<std::thread> threads;
  std::atomic<bool> over_cap{false};  // Catch assertions are not thread-safe: report after join
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&memory, &over_cap, t] {
      const std::string principal = "p" + std::to_string(t % 2);
      for (int i = 0; i < 2000; ++i) {
        const std::string session = "s" + std::to_string(i % 5);
        memory.record(principal, session, "d", 100 + i,
                      {write_effect("/w/" + std::to_string(i % 40))});
        auto entries = memory.snapshot(principal, session, 100 + i);
        if (entries.size() > 16) over_cap = true;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK_FALSE(over_cap);
  CHECK(memory.session_count() <= 8);
  CHECK(memory.session_count() >= 1);
}

// ---- history facts -----------------------------------------------------------

namespace {

const char* kHistoryRules = R"(
(defrule no-reply-after-a-write
  (proposal (id ?id) (target reply))
  (history (proposal ?id) (kind write) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-reply-after-a-write) (reason ?t))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok))))
(defrule fresh-credential-read
  (proposal (id ?id) (target http))
  (history (proposal ?id) (kind read) (class credential) (age ?a&:(< ?a 60)) (decision ?d))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule fresh-credential-read) (reason ?d))))
)";

const char* kReply = R"({"target":"reply","payload":{"text":"hi"},"context":{"session":"s"}})";
const char* kFetch =
    R"({"target":"http","action":"get","payload":{"url":"https://example.com/"},"context":{"session":"s"}})";

}  // namespace

TEST_CASE("history facts are visible to rules", "[session]") {
  auto policy = must_compile(kHistoryRules);
  Engine engine(policy, test_options());
  std::vector<HistoryEntry> history{{"d1", 0, read_effect("/w/README.md", "none")}};
  DecideRequest request;
  request.proposal_json = kReply;
  request.history = &history;
  CHECK(decide_ok(engine, request).outcome == Outcome::Approve);

  history.push_back({"d2", 0, write_effect("/w/Makefile")});
  Decision d = decide_ok(engine, request);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(fired(d, "no-reply-after-a-write"));
  CHECK(d.reason == "/w/Makefile");

  // Nothing carries over: the next decision without history is approved.
  CHECK(decide_ok(engine, kReply).outcome == Outcome::Approve);
}

TEST_CASE("history facts carry age from the engine clock and every slot", "[session]") {
  auto policy = must_compile(kHistoryRules);
  EngineOptions o = test_options();
  std::int64_t now = 10000;
  o.clock = [&now] { return now; };
  Engine engine(policy, o);
  std::vector<HistoryEntry> history{{"cred-read", 9950, read_effect("/home/user/.ssh/id_rsa")}};
  DecideRequest request;
  request.proposal_json = kFetch;
  request.history = &history;
  request.explain = true;
  Decision d = decide_ok(engine, request);
  CHECK(fired(d, "fresh-credential-read"));
  CHECK(d.reason == "cred-read");
  CHECK(d.facts_json.find("(age 50)") != std::string::npos);
  // facts_json is a JSON array of fact texts: their quotes are escaped.
  CHECK(d.facts_json.find(R"((target \"/home/user/.ssh/id_rsa\"))") != std::string::npos);
  CHECK(d.facts_json.find(R"((program \"cat\"))") != std::string::npos);
  CHECK(d.facts_json.find("(class credential)") != std::string::npos);
  now = 10060;  // a minute later the rule no longer counts it as fresh
  d = decide_ok(engine, request);
  CHECK_FALSE(fired(d, "fresh-credential-read"));
  CHECK(d.facts_json.find("(age 110)") != std::string::npos);
}

TEST_CASE(
    "history facts count against max_facts, asserted or not; only those a rule may see are asserted",
    "[session]") {
  auto policy = must_compile(kHistoryRules);
  EngineOptions o = test_options();
  o.max_facts = 20;
  Engine engine(policy, o);
  std::vector<HistoryEntry> history;
  for (int i = 0; i < 30; ++i) history.push_back({"d", 0, write_effect("/w/" + std::to_string(i))});
  DecideRequest request;
  request.proposal_json = kReply;
  request.history = &history;
  Decision d = decide_ok(engine, request);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(d.error_code == "E_INPUT_TOO_LARGE");
  // Reads of unclassified files: no history pattern of these rules can match one, so none is
  // asserted; the cap counts them all the same (a decision is the one every entry asserted
  // would make).
  history.clear();
  for (int i = 0; i < 30; ++i)
    history.push_back({"d", 0, read_effect("/w/" + std::to_string(i), "none")});
  d = decide_ok(engine, request);
  CHECK(d.error_code == "E_INPUT_TOO_LARGE");
  EngineOptions roomy = test_options();
  Engine unlimited(policy, roomy);
  d = decide_ok(unlimited, request);
  CHECK(d.outcome == Outcome::Approve);
  CHECK(d.history_asserted == 0);
  // Credential reads match fresh-credential-read's constants, but that rule needs an http
  // proposal: a reply sees none of them; an http proposal sees them all.
  history.clear();
  for (int i = 0; i < 30; ++i) history.push_back({"d", 0, read_effect("/w/" + std::to_string(i))});
  CHECK(decide_ok(unlimited, request).history_asserted == 0);
  request.proposal_json = kFetch;
  CHECK(decide_ok(unlimited, request).history_asserted == 30);
}

TEST_CASE("decide_in_session feeds the session's history and remembers approvals", "[session]") {
  auto policy = must_compile(kHistoryRules);
  EngineOptions o = test_options();
  std::int64_t now = 5000;
  o.clock = [&now] { return now; };
  Engine engine(policy, o);
  SessionMemory memory;
  // Effects of decisions come from the effects table; here they are recorded by hand.
  memory.record("alice", "s", "d1", 4990, {write_effect("/w/Makefile")});
  DecideRequest request;
  request.proposal_json = kReply;
  request.principal = "alice";
  SessionKey key = session_key(std::string_view(kReply), request.principal);
  DecideResult r = decide_in_session(engine, memory, request, key);
  REQUIRE(r.ok);
  CHECK(fired(r.decision, "no-reply-after-a-write"));
  // Another principal, same session id: no history, approved.
  request.principal = "bob";
  r = decide_in_session(engine, memory, request,
                        session_key(std::string_view(kReply), request.principal));
  REQUIRE(r.ok);
  CHECK(r.decision.outcome == Outcome::Approve);
  // After the TTL the write is forgotten.
  now = 4990 + 3600;
  request.principal = "alice";
  r = decide_in_session(engine, memory, request, key);
  REQUIRE(r.ok);
  CHECK(r.decision.outcome == Outcome::Approve);
}

// ---- rule test cases with a "history" -----------------------------------------

namespace {

// Cases whose history is decided through the session memory: file writes are approved and
// remembered (the effects table turns on effect facts), a read of a file the session wrote
// is rejected.
const char* kCaseRules = R"(
(defrule writes-ok (proposal (id ?id) (target file) (action write))
  => (assert (decision (proposal ?id) (outcome approve) (rule writes-ok))))
(defrule no-write-of-secrets (proposal (id ?id) (target file) (action write))
  (path (proposal ?id) (normalized "/home/user/project/secret"))
  => (assert (decision (proposal ?id) (outcome reject) (rule no-write-of-secrets))))
(defrule reads-ok (proposal (id ?id) (target file) (action read))
  => (assert (decision (proposal ?id) (outcome approve) (rule reads-ok))))
(defrule read-after-write (proposal (id ?id) (target file) (action read))
  (effect (proposal ?id) (kind read) (target ?t))
  (history (proposal ?id) (kind write) (target ?t))
  => (assert (decision (proposal ?id) (outcome reject) (rule read-after-write))))
)";

struct CaseDir {
  warden::testing::TempDir dir{"warden-session-cases"};
  const std::filesystem::path& path = dir.path();
  CaseDir() {
    std::ofstream(path / "rules.clp") << kCaseRules;
    std::ofstream(path / "effects.toml") << "[program.true]\noperands = []\n";
  }
};

std::string file_proposal(const std::string& action, const std::string& path,
                          const std::string& session) {
  return R"({"target":"file","action":")" + action + R"(","payload":{"path":")" + path +
         R"("},"context":{"session":")" + session + R"("}})";
}

}  // namespace

TEST_CASE("a case's history is decided first, in one session, fresh for each case",
          "[session][cases]") {
  CaseDir dir;
  LoadedPolicy loaded = load_policy({dir.path.string()});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  const std::string w = file_proposal("write", "notes.txt", "s");
  const std::string r = file_proposal("read", "notes.txt", "s");
  const std::string jsonl =
      R"({"name":"read after the session wrote it","history":[)" + w + R"(],"proposal":)" + r +
      R"(,"expect":"reject","rule":"read-after-write"})"
      "\n" +
      // A fresh memory per case: the write of the case before is not remembered here.
      R"({"name":"no history","proposal":)" + r +
      R"(,"expect":"approve","not_rule":"read-after-write"})"
      "\n" +
      R"({"name":"history of another session","history":[)" +
      file_proposal("write", "notes.txt", "other") + R"(],"proposal":)" + r +
      R"(,"expect":"approve"})"
      "\n" +
      // A rejected step did not happen: it leaves no history.
      R"({"name":"rejected write","history":[)" + file_proposal("write", "secret", "s") +
      R"(],"proposal":)" + file_proposal("read", "secret", "s") +
      R"(,"expect":"approve"})"
      "\n";
  Diagnostics diagnostics;
  auto cases = read_cases("history.jsonl", jsonl, &diagnostics);
  for (const auto& d : diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(diagnostics.empty());
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].history.size() == 1);
  CaseReport report = run_cases(loaded.policy, cases, test_options());
  for (const auto& res : report.results) {
    INFO(res.test->name << "\n" << res.failure);
    CHECK(res.passed);
  }
}

TEST_CASE("a case's remembered step is history as it is, whatever the rules would decide of it now",
          "[session][cases]") {
  CaseDir dir;
  LoadedPolicy loaded = load_policy({dir.path.string()});
  REQUIRE(loaded.policy);
  const std::string r = file_proposal("read", "secret", "s");
  const std::string write_secret =
      R"({"remembered":[{"kind":"write","object":"path","target":"/home/user/project/secret"}],"age":60})";
  const std::string jsonl =
      // The rules reject this write today (no-write-of-secrets), so as a proposal step it
      // would leave no history; remembered, it is in the session's memory all the same.
      R"({"name":"remembered write","history":[)" + write_secret + R"(],"proposal":)" + r +
      R"(,"expect":"reject","rule":"read-after-write"})"
      "\n" +
      R"({"name":"the same write as a proposal step","history":[)" +
      file_proposal("write", "secret", "s") + R"(],"proposal":)" + r +
      R"(,"expect":"approve","not_rule":"read-after-write"})"
      "\n" +
      // Older than the memory keeps (SessionMemory's ttl): not shown.
      R"({"name":"too old","history":[{"remembered":[{"kind":"write","object":"path","target":"/home/user/project/secret"}],"age":100000000}],"proposal":)" +
      r +
      R"(,"expect":"approve","not_rule":"read-after-write"})"
      "\n";
  Diagnostics diagnostics;
  auto cases = read_cases("remembered.jsonl", jsonl, &diagnostics);
  for (const auto& d : diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(diagnostics.empty());
  REQUIRE(cases.size() == 3);
  REQUIRE(cases[0].history.size() == 1);
  CHECK(cases[0].history[0].proposal_json.empty());
  CHECK(cases[0].history[0].age == 60);
  REQUIRE(cases[0].history[0].remembered.size() == 1);
  CHECK(cases[0].history[0].remembered[0].path_class == "none");  // the default
  CaseReport report = run_cases(loaded.policy, cases, test_options());
  for (const auto& res : report.results) {
    INFO(res.test->name << "\n" << res.failure);
    CHECK(res.passed);
  }
}

TEST_CASE("a malformed remembered step is E_CASE at its line, naming what is wrong",
          "[session][cases]") {
  const std::string proposal =
      R"(,"proposal":{"target":"reply","context":{"session":"s"}},"expect":"approve"})";
  const std::vector<std::pair<std::string, std::string>> bad = {
      {R"([{"remembered":[{"kind":"read","object":"path"}]}])", "needs kind, object and target"},
      {R"([{"remembered":[{"kind":"raed","object":"path","target":"/x"}]}])",
       "unknown effect kind \"raed\""},
      {R"([{"remembered":[{"kind":"read","object":"path","target":"/x","class":"Bad Class"}]}])",
       "class name"},
      {R"([{"remembered":[]}])", "holds no effect"},
      {R"([{"remembered":{"kind":"read"}}])", "must be an array of effect objects"},
      {R"([{"remembered":[{"kind":"read","object":"path","target":"/x"}],"age":-1}])",
       "whole number of seconds"},
      {R"([{"remembered":[{"kind":"read","object":"path","target":"/x"}],"target":"shell"}])",
       "only \"remembered\" and \"age\""},
  };
  std::string jsonl =
      R"({"name":"ok","history":[{"remembered":[{"kind":"read","object":"path","target":"/x"}]}])" +
      proposal + "\n";
  for (const auto& [history, why] : bad)
    jsonl += R"({"name":"bad","history":)" + history + proposal + "\n";
  Diagnostics diagnostics;
  auto cases = read_cases("c.jsonl", jsonl, &diagnostics);
  CHECK(cases.size() == 1);
  REQUIRE(diagnostics.size() == bad.size());
  for (std::size_t i = 0; i < bad.size(); ++i) {
    INFO(diagnostics[i].to_text());
    CHECK(diagnostics[i].code == "E_CASE");
    CHECK(diagnostics[i].line == static_cast<long>(i) + 2);
    CHECK(diagnostics[i].message.find(bad[i].second) != std::string::npos);
    CHECK(diagnostics[i].message.find("history[0]") != std::string::npos);
  }
}

TEST_CASE("a case's history must be proposals and needs a session, errors name the line",
          "[session][cases]") {
  Diagnostics diagnostics;
  auto cases = read_cases(
      "c.jsonl",
      R"({"name":"ok","history":[{"target":"reply","context":{"session":"s"}}],"proposal":{"target":"reply","context":{"session":"s"}},"expect":"approve"})"
      "\n"
      R"({"name":"not an array","history":{"target":"reply"},"proposal":{"target":"reply","context":{"session":"s"}},"expect":"approve"})"
      "\n"
      R"({"name":"not proposals","history":["x"],"proposal":{"target":"reply","context":{"session":"s"}},"expect":"approve"})"
      "\n"
      R"({"name":"no session","history":[{"target":"reply"}],"proposal":{"target":"reply"},"expect":"approve"})"
      "\n",
      &diagnostics);
  CHECK(cases.size() == 1);
  REQUIRE(diagnostics.size() == 3);
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    CHECK(diagnostics[i].code == "E_CASE");
    CHECK(diagnostics[i].line == static_cast<long>(i) + 2);
  }
  CHECK(diagnostics[0].message.find("must be an array of proposals and remembered steps") !=
        std::string::npos);
  CHECK(diagnostics[2].message.find("context.session") != std::string::npos);
}

TEST_CASE("an invalid proposal in a case's history fails the case and says which",
          "[session][cases]") {
  auto policy = must_compile(kHistoryRules);
  Diagnostics diagnostics;
  auto cases = read_cases(
      "c.jsonl",
      R"({"name":"bad step","history":[{"target":"reply"},{"no":"target"}],"proposal":{"target":"reply","context":{"session":"s"}},"expect":"approve"})"
      "\n",
      &diagnostics);
  REQUIRE(diagnostics.empty());
  REQUIRE(cases.size() == 1);
  CaseReport report = run_cases(policy, cases, test_options());
  REQUIRE(report.results.size() == 1);
  CHECK_FALSE(report.results[0].passed);
  CHECK(report.results[0].failure.find("history[1]") != std::string::npos);
  CHECK(report.results[0].failure.find("E_INPUT_SHAPE") != std::string::npos);
}
