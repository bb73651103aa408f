// Red-team tests of the audit log, verify, replay's decision cache and masking. Each test
// is a finding: it fails while the weakness it names is there, and passes once it is fixed.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "audit/chain.h"
#include "audit/mask.h"
#include "audit/reader.h"
#include "audit/record.h"
#include "audit/replay.h"
#include "audit/verify.h"
#include "bindings/secrets.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"
#include "tests/audit/log_builder.h"

namespace fs = std::filesystem;
using namespace warden;
using namespace warden::audit;

namespace {

class RtDir {
 public:
  RtDir() {
    std::string pattern = (fs::temp_directory_path() / "warden-redteam-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~RtDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

const std::string kRtEffects = WARDEN_SOURCE_DIR "/rules/effects.toml";
const std::string kRtPaths = WARDEN_SOURCE_DIR "/rules/paths.toml";

// Everything approved: the traffic is recorded under this, so every approval with effects
// becomes session history.
const char* kApproveAll = R"CLP(
(defrule rt-all
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule rt-all) (reason "ok"))))
)CLP";

// Records traffic as the daemon does (its clock, its session memory) with the product's own
// decision_fields, sealed into a chained log.
class RtRecorder {
 public:
  RtRecorder(const std::vector<std::string>& rules, std::string path) : path_(std::move(path)) {
    LoadedPolicy loaded = load_policy(rules);
    INFO((loaded.diagnostics.empty() ? "" : loaded.diagnostics[0].to_text()));
    REQUIRE(loaded.policy);
    EngineOptions o;
    o.workspace_root = "/home/user/project";
    o.home = "/home/user";
    o.default_outcome = Outcome::ApprovalRequired;
    o.deadline = std::chrono::seconds(2);
    o.clock = [this] { return now_ / 1000000; };
    engine_ = std::make_unique<Engine>(loaded.policy, o);
    append("start", R"("version":"test","pid":1,"rules_digest":")" + loaded.policy->digest() +
                        R"(","workspace_root":"/home/user/project","home":"/home/user","default_outcome":"approval-required","key_id":"none","every_records":1000,"every_seconds":60)");
  }

  std::uint64_t shell(const std::string& session, const std::string& command, std::int64_t time_us) {
    return decide(session,
                  R"({"target":"shell","action":"run","payload":{"command":")" + command +
                      R"(","cwd":"/home/user/project"},"explanation":"the task","context":{"session":")" + session +
                      R"("}})",
                  time_us);
  }
  std::uint64_t write_file(const std::string& session, const std::string& path, std::int64_t time_us) {
    return decide(session,
                  R"({"target":"file","action":"write","payload":{"path":")" + path +
                      R"(","content":"echo hi"},"explanation":"the task","context":{"session":")" + session +
                      R"("}})",
                  time_us);
  }

  std::uint64_t decide(const std::string& session, const std::string& proposal, std::int64_t time_us) {
    now_ = time_us;
    DecideRequest req;
    req.proposal_json = proposal;
    req.principal = std::string("alice");
    req.groups = {"dev"};
    DecideResult r = decide_in_session(*engine_, memory_, req, session_key(proposal, req.principal));
    REQUIRE(r.ok);
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    in.groups = {"dev"};
    in.session = session;
    in.time_us = time_us;
    return append("decision", decision_fields(in, r.decision, nullptr));
  }

  std::uint64_t append(const std::string& kind, const std::string& fields) {
    Envelope e;
    e.seq = ++seq_;
    e.prev = prev_;
    e.kind = kind;
    e.time_us = now_;
    e.daemon = "rt-daemon";
    std::string line = seal(e, fields, &prev_);
    std::ofstream(path_, std::ios::binary | std::ios::app) << line;
    return seq_;
  }

 private:
  std::string path_;
  std::unique_ptr<Engine> engine_;
  SessionMemory memory_;
  std::int64_t now_ = 1795046400LL * 1000000;
  std::uint64_t seq_ = 0;
  std::string prev_ = std::string(kGenesis);
};

std::int64_t rt_at(int minute, int second = 0) { return (1795046400LL + 11 * 3600 + minute * 60 + second) * 1000000LL; }

ReplayReport rt_replay(const std::string& log, const std::vector<std::string>& rules, bool cache, unsigned threads = 1) {
  ReplayOptions o;
  o.logs = {log};
  o.rules = rules;
  o.threads = threads;
  o.cache = cache;
  ReplayReport rep;
  std::string error;
  std::vector<std::string> diagnostics;
  bool ok = run_replay(o, &rep, &error, &diagnostics);
  INFO(error << (diagnostics.empty() ? "" : "\n" + diagnostics[0]));
  REQUIRE(ok);
  return rep;
}

// seq → new outcome of every changed record.
std::map<std::uint64_t, Outcome> rt_changes(const ReplayReport& rep) {
  std::map<std::uint64_t, Outcome> out;
  for (const auto& c : rep.changes) out[c.seq] = c.new_outcome;
  return out;
}

// Replays under `rules` with the cache on and off; the reports must name the same changes.
void check_cache_faithful(const std::string& log, const std::string& rules_file) {
  ReplayReport uncached = rt_replay(log, {rules_file, kRtEffects, kRtPaths}, false);
  ReplayReport cached = rt_replay(log, {rules_file, kRtEffects, kRtPaths}, true);
  INFO("uncached changes: " << uncached.changes.size() << ", cached changes: " << cached.changes.size()
                            << ", scan all_history=" << cached.inputs.all_history
                            << " uses_history=" << cached.inputs.uses_history);
  CHECK(rt_changes(cached) == rt_changes(uncached));
}

const char* kToken = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";

}  // namespace

// ---- replay's decision cache -----------------------------------------------------------

// A history pattern whose template is written module-qualified (MAIN::history) is the same
// pattern to CLIPS, but the scan only knows the head "history": it concludes the rules read
// no history, and the cache answers every record with its no-history decision.
TEST_CASE("redteam: a module-qualified history pattern escapes the rule scan", "[redteam]") {
  RtDir dir;
  const std::string log = dir.path("audit.jsonl");
  const std::string base = dir.write("base/base.clp", kApproveAll);
  RtRecorder rec({base, kRtEffects, kRtPaths}, log);
  rec.write_file("s1", "/home/user/project/x.sh", rt_at(0));
  const auto run = rec.shell("s1", "bash /home/user/project/x.sh", rt_at(1));
  const std::string rules = dir.write("strict/strict.clp", R"CLP(
(defrule rt-after-write
  (proposal (id ?id))
  (MAIN::history (kind write))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-after-write) (reason "wrote before"))))
)CLP");
  ReplayReport uncached = rt_replay(log, {rules, kRtEffects, kRtPaths}, false);
  // The rule is real: without the cache the run after the write is rejected.
  REQUIRE(rt_changes(uncached).count(run) == 1);
  check_cache_faithful(log, rules);
}

// The proposal fact's id is the engine's own decision counter (p1, p2, …), which rules can
// read like any slot. The cache key leaves it out, so a rule that reads it decides once for
// identical proposals; without the cache each record gets the engine's next id.
TEST_CASE("redteam: rules that read the proposal id (an engine counter) defeat the cache", "[redteam]") {
  RtDir dir;
  const std::string log = dir.path("audit.jsonl");
  const std::string base = dir.write("base/base.clp", kApproveAll);
  RtRecorder rec({base, kRtEffects, kRtPaths}, log);
  rec.shell("", "ls", rt_at(0));
  rec.shell("", "ls", rt_at(1));
  rec.shell("", "ls", rt_at(2));
  const std::string rules = dir.write("ids/ids.clp", R"CLP(
(defrule rt-second
  (proposal (id "p2"))
  =>
  (assert (decision (proposal "p2") (outcome reject) (rule rt-second) (reason "the second"))))
)CLP");
  check_cache_faithful(log, rules);
}

// `?f<-(history)` written without spaces: CLIPS reads `?f`, `<-`, `(history)` but the scan
// sees one atom `?f<-` and never hears of the fact address. The fact's printed form
// <Fact-N> then tells a rule how many facts came before it — history facts the cache left out.
TEST_CASE("redteam: a fact address bound without spaces (?p<-) escapes the scan", "[redteam]") {
  RtDir dir;
  const std::string log = dir.path("audit.jsonl");
  const std::string base = dir.write("base/base.clp", kApproveAll);
  RtRecorder rec({base, kRtEffects, kRtPaths}, log);
  rec.write_file("s1", "/home/user/project/a.txt", rt_at(0));
  rec.write_file("s1", "/home/user/project/b.txt", rt_at(1));
  rec.shell("s1", "ls", rt_at(2));
  rec.shell("s2", "ls", rt_at(3));
  // Rejects when the proposal fact's index is not the one it has with no history at all.
  const std::string probe_rules = dir.write("probe/probe.clp", R"CLP(
(defrule rt-index
  ?p<-(proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-index) (reason (str-cat ?p)))))
)CLP");
  ReplayReport seen = rt_replay(log, {probe_rules, kRtEffects, kRtPaths}, false);
  std::set<std::string> reasons;
  for (const auto& c : seen.changes) reasons.insert(c.new_reason);
  INFO("fact addresses the rule printed: " << reasons.size());
  // A rule that reads the index: approve only when it is the smallest seen (no history).
  REQUIRE_FALSE(reasons.empty());
  const std::string lowest = *reasons.begin();
  const std::string rules = dir.write("addr/addr.clp", std::string(R"CLP(
(defrule rt-index
  ?p<-(proposal (id ?id))
  (history (kind exec))
  (test (neq (str-cat ?p) ")CLP") + lowest + R"CLP("))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-index) (reason (str-cat ?p)))))
)CLP");
  check_cache_faithful(log, rules);
}

// ---- verify ----------------------------------------------------------------------------

// The cadence bounds (every_records, every_seconds) are read from any start record, signed or
// not. Someone who appends to the unsigned tail writes a start record of their own with
// every_records 0 and every_seconds 0, and then any number of forged records verify.
TEST_CASE("redteam: a forged start record in the unsigned tail lifts the checkpoint bounds", "[redteam]") {
  using namespace warden::audit::testing;
  RtDir dir;
  TestKey key;
  key.write_public(dir.path("audit.pub"));
  std::string error;
  auto verify_key = VerifyKey::load(dir.path("audit.pub"), &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();

  auto build = [&](bool forged_start) {
    LogBuilder b(key, 100, 60);
    b.step_us = 1000;
    b.start();
    for (int i = 0; i < 10; ++i) b.decision();
    b.checkpoint();
    // The attacker's part: nothing after the checkpoint is signed.
    if (forged_start)
      b.record("start",
               "\"version\":\"0.1.0\",\"pid\":43,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
               "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
                   key.id() + "\",\"every_records\":0,\"every_seconds\":0");
    for (int i = 0; i < 5000; ++i) b.decision();
    return b.text();
  };
  // Without the forged start, 5000 unsigned records are over the log's bound of 100.
  const std::string plain = dir.write("plain/audit.jsonl", build(false));
  VerifyReport r1 = verify_paths({plain}, o);
  REQUIRE_FALSE(r1.ok);
  REQUIRE(r1.first_bad()->kind == FindingKind::MissingCheckpoint);
  // With it, the same 5000 records must still be over the bound.
  const std::string forged = dir.write("forged/audit.jsonl", build(true));
  VerifyReport r2 = verify_paths({forged}, o);
  CHECK_FALSE(r2.ok);
}

// A forged start record can also raise the bounds (every_records 10^9) instead of zeroing.
TEST_CASE("redteam: a forged start record raising every_records hides an unsigned tail", "[redteam]") {
  using namespace warden::audit::testing;
  RtDir dir;
  TestKey key;
  key.write_public(dir.path("audit.pub"));
  std::string error;
  auto verify_key = VerifyKey::load(dir.path("audit.pub"), &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();
  LogBuilder b(key, 100, 60);
  b.start();
  for (int i = 0; i < 10; ++i) b.decision();
  b.checkpoint();
  b.record("start",
           "\"version\":\"0.1.0\",\"pid\":43,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
           "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
               key.id() + "\",\"every_records\":1000000000,\"every_seconds\":1000000000");
  for (int i = 0; i < 3000; ++i) b.decision();
  const std::string log = dir.write("audit.jsonl", b.text());
  VerifyReport r = verify_paths({log}, o);
  CHECK_FALSE(r.ok);
}

// ---- masking -----------------------------------------------------------------------------

// The record's `session` member is the proposal's context.session, the agent's own text: a
// token there reaches the file unmasked even though the same text in /input is masked.
TEST_CASE("redteam: a secret in context.session reaches the record's session member unmasked", "[redteam]") {
  const Masker masker(std::string(32, 'm'));
  DecisionInput in;
  in.proposal_json = std::string(R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":")") +
                     kToken + R"("}})";
  in.principal = "alice";
  in.session = kToken;
  Decision d;
  d.decision_id = "d1";
  d.outcome = Outcome::Approve;
  const std::string fields = decision_fields(in, d, &masker);
  CHECK(fields.find(kToken) == std::string::npos);
}

// A rewrite's key, an effect's `via` and a fired rule's name (STRING slots rules may fill
// from the proposal with str-cat) are written with no masking.
TEST_CASE("redteam: rewrite keys, effect via and rule names are written unmasked", "[redteam]") {
  const Masker masker(std::string(32, 'm'));
  DecisionInput in;
  in.proposal_json = R"({"target":"shell","action":"run","payload":{"command":"ls"}})";
  in.principal = "alice";
  Decision d;
  d.decision_id = "d1";
  d.outcome = Outcome::Approve;
  SECTION("rewrite key") {
    Rewrite w;
    w.rule = "r";
    w.key = std::string("payload.") + kToken;
    w.old_value = "a";
    w.new_value = "b";
    d.rewrites.push_back(w);
  }
  SECTION("effect via") {
    EffectRecord e;
    e.kind = "exec";
    e.object = "program";
    e.target = "ls";
    e.program = "ls";
    e.via = kToken;
    d.effects.push_back(e);
  }
  SECTION("fired rule name") {
    FiredRule r;
    r.rule = std::string("leak-") + kToken;
    r.outcome = Outcome::Approve;
    d.rules.push_back(r);
  }
  const std::string fields = decision_fields(in, d, &masker);
  CHECK(fields.find(kToken) == std::string::npos);
}

// A proposal that is not valid JSON is recorded as its raw text in a JSON string. The
// detector runs on that raw text, so a token written with a JSON escape (\u0067hp_…) is not
// found, and the file holds the token behind one escape anyone can undo.
TEST_CASE("redteam: an escaped token in an unparseable proposal is stored recoverable", "[redteam]") {
  const Masker masker(std::string(32, 'm'));
  const std::string tail = std::string(kToken).substr(1);  // "hp_…"
  DecisionInput in;
  // Not JSON (the closing brace is missing): the engine answers E_INPUT, the record keeps the text.
  in.proposal_json = R"({"target":"shell","action":"run","payload":{"command":"echo \u0067)" + tail + R"("})";
  in.principal = "alice";
  Decision d;
  d.decision_id = "d1";
  d.outcome = Outcome::Reject;
  d.error_code = "E_INPUT";
  d.reason = "the proposal is not valid JSON";
  const std::string fields = decision_fields(in, d, &masker);
  // Decode the record as a reader would and unescape the stored input once more.
  rapidjson::Document doc;
  const std::string obj = "{" + fields + "}";
  doc.Parse(obj.c_str());
  REQUIRE(!doc.HasParseError());
  REQUIRE(doc["input"].IsString());
  std::string stored = doc["input"].GetString();
  std::string unescaped;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    if (stored.compare(i, 6, "\\u0067") == 0) {
      unescaped += 'g';
      i += 5;
    } else {
      unescaped += stored[i];
    }
  }
  CHECK(unescaped.find(kToken) == std::string::npos);
}
