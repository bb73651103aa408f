// Red-team tests of the audit log, verify, replay's decision cache and masking. Each test
// is a finding: it fails while the weakness it names is there, and passes once it is fixed.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

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
#include "tests/build_paths.h"
#include "tests/server/server_fixture.h"
#include "tests/server/warden_child.h"

namespace fs = std::filesystem;
using namespace warden;
using namespace warden::audit;
using warden::testing::TempDir;

namespace {

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
  RtRecorder(const std::vector<std::string>& rules, std::string path,
             SessionMemoryOptions memory = {})
      : path_(std::move(path)), memory_(memory) {
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
    append(
        "start",
        R"("version":"test","pid":1,"rules_digest":")" + loaded.policy->digest() +
            R"(","workspace_root":"/home/user/project","home":"/home/user","default_outcome":"approval-required","key_id":"none","every_records":1000,"every_seconds":60)" +
            // The daemon records its [session] settings in the start record (fix of
            // finding 7, audit/record.h start_fields): so does this recorder.
            R"(,"session":{"ttl_seconds":)" + std::to_string(memory.ttl_seconds) +
            R"(,"max_entries":)" + std::to_string(memory.max_entries) + R"(,"max_sessions":)" +
            std::to_string(memory.max_sessions) + R"(,"max_bytes":)" +
            std::to_string(memory.max_bytes) + "}");
  }

  std::uint64_t shell(const std::string& session, const std::string& command,
                      std::int64_t time_us) {
    return decide(
        session,
        R"({"target":"shell","action":"run","payload":{"command":")" + command +
            R"(","cwd":"/home/user/project"},"explanation":"the task","context":{"session":")" +
            session + R"("}})",
        time_us);
  }
  std::uint64_t write_file(const std::string& session, const std::string& path,
                           std::int64_t time_us) {
    return decide(session,
                  R"({"target":"file","action":"write","payload":{"path":")" + path +
                      R"(","content":"echo hi"},"explanation":"the task","context":{"session":")" +
                      session + R"("}})",
                  time_us);
  }

  std::uint64_t decide(const std::string& session, const std::string& proposal,
                       std::int64_t time_us) {
    now_ = time_us;
    DecideRequest req;
    req.proposal_json = proposal;
    req.principal = std::string("alice");
    req.groups = {"dev"};
    DecideResult r =
        decide_in_session(*engine_, memory_, req, session_key(proposal, req.principal));
    REQUIRE(r.ok);
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    in.groups = {"dev"};
    in.session = session;
    in.time_us = time_us;
    return append("decision", decision_fields(in, r.decision, nullptr));
  }

  // Records whatever the engine answers, a refused input as the daemon records it (a reject
  // with the error's code and message).
  std::uint64_t decide_any(const std::string& session, const std::string& proposal,
                           std::int64_t time_us) {
    now_ = time_us;
    DecideRequest req;
    req.proposal_json = proposal;
    req.principal = std::string("alice");
    req.groups = {"dev"};
    DecideResult r =
        decide_in_session(*engine_, memory_, req, session_key(proposal, req.principal));
    Decision d = r.decision;
    if (!r.ok) {
      d = Decision();
      d.decision_id = "refused-" + std::to_string(seq_ + 1);
      d.outcome = Outcome::Reject;
      d.error_code = r.error.code;
      d.reason = r.error.message;
    }
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    in.groups = {"dev"};
    in.session = session;
    in.time_us = time_us;
    return append("decision", decision_fields(in, d, nullptr));
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

std::int64_t rt_at(int minute, int second = 0) {
  return (1795046400LL + 11 * 3600 + minute * 60 + second) * 1000000LL;
}

ReplayReport rt_replay(const std::string& log, const std::vector<std::string>& rules, bool cache,
                       unsigned threads = 1) {
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

// "seq:new outcome" of every changed record, by seq.
std::vector<std::string> rt_changes(const ReplayReport& rep) {
  std::map<std::uint64_t, Outcome> by_seq;
  for (const auto& c : rep.changes) by_seq[c.seq] = c.new_outcome;
  std::vector<std::string> out;
  for (const auto& [seq, o] : by_seq)
    out.push_back(std::to_string(seq) + ":" + std::string(outcome_name(o)));
  return out;
}

// Replays under `rules` with the cache on and off; the reports must name the same changes.
void check_cache_faithful(const std::string& log, const std::string& rules_file) {
  ReplayReport uncached = rt_replay(log, {rules_file, kRtEffects, kRtPaths}, false);
  ReplayReport cached = rt_replay(log, {rules_file, kRtEffects, kRtPaths}, true);
  INFO("uncached changes: " << uncached.changes.size()
                            << ", cached changes: " << cached.changes.size()
                            << ", scan all_history=" << cached.inputs.all_history
                            << " uses_history=" << cached.inputs.uses_history);
  CHECK(rt_changes(cached) == rt_changes(uncached));
}

const char* kToken = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";

}  // namespace

// ---- replay's decision cache -----------------------------------------------------------

// The proposal fact's id is the engine's own decision counter (p1, p2, …), which rules can
// read like any slot. The cache key leaves it out, so a rule that reads it decides once for
// identical proposals; without the cache each record gets the engine's next id.
TEST_CASE("redteam: rules that read the proposal id (an engine counter) defeat the cache",
          "[redteam]") {
  TempDir dir{"warden-redteam"};
  const std::string log = dir / "audit.jsonl";
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

// ---- verify ----------------------------------------------------------------------------

// The cadence bounds (every_records, every_seconds) are read from any start record, signed or
// not. Someone who appends to the unsigned tail writes a start record of their own with
// every_records 0 and every_seconds 0, and then any number of forged records verify.
TEST_CASE("redteam: a forged start record in the unsigned tail lifts the checkpoint bounds",
          "[redteam]") {
  using namespace warden::audit::testing;
  TempDir dir{"warden-redteam"};
  TestKey key;
  key.write_public(dir / "audit.pub");
  std::string error;
  auto verify_key = VerifyKey::load(dir / "audit.pub", &error);
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
      b.record(
          "start",
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
TEST_CASE("redteam: a forged start record raising every_records hides an unsigned tail",
          "[redteam]") {
  using namespace warden::audit::testing;
  TempDir dir{"warden-redteam"};
  TestKey key;
  key.write_public(dir / "audit.pub");
  std::string error;
  auto verify_key = VerifyKey::load(dir / "audit.pub", &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();
  LogBuilder b(key, 100, 60);
  b.start();
  for (int i = 0; i < 10; ++i) b.decision();
  b.checkpoint();
  b.record(
      "start",
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
TEST_CASE("redteam: a secret in context.session reaches the record's session member unmasked",
          "[redteam]") {
  const Masker masker(std::string(32, 'm'));
  // DecisionInput holds a view: the text lives as long as the test.
  const std::string proposal =
      std::string(
          R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":")") +
      kToken + R"("}})";
  DecisionInput in;
  in.proposal_json = proposal;
  in.principal = "alice";
  in.session = kToken;
  Decision d;
  d.decision_id = "d1";
  d.outcome = Outcome::Approve;
  const std::string fields = decision_fields(in, d, &masker);
  CHECK(fields.find(kToken) == std::string::npos);
}

// A rewrite's key and a fired rule's name (STRING slots a rule may fill from the proposal,
// e.g. a param's key — a member name, which /input masks — or str-cat of a value) are
// written with no masking.
TEST_CASE("redteam: rewrite keys and rule names are written unmasked", "[redteam]") {
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
TEST_CASE("redteam: an escaped token in an unparseable proposal is stored recoverable",
          "[redteam-held]") {
  const Masker masker(std::string(32, 'm'));
  const std::string tail = std::string(kToken).substr(1);  // "hp_…"
  // Not JSON (the closing brace is missing): the engine answers E_INPUT, the record keeps the text.
  const std::string proposal =
      R"({"target":"shell","action":"run","payload":{"command":"echo \u0067)" + tail + R"("})";
  DecisionInput in;
  in.proposal_json = proposal;
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

// A whole log rewritten by someone without the signing key: every checkpoint dropped, the
// hashes recomputed, and a start record that names every_records 0 and every_seconds 0. The
// verifier holds the public key yet accepts a log that no signature covers at all.
TEST_CASE("redteam: a rewritten log with no checkpoint and zero bounds verifies with the key",
          "[redteam]") {
  using namespace warden::audit::testing;
  TempDir dir{"warden-redteam"};
  TestKey key;
  key.write_public(dir / "audit.pub");
  std::string error;
  auto verify_key = VerifyKey::load(dir / "audit.pub", &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();
  LogBuilder b(key, 0, 0);
  b.step_us = 10000000;  // 10 s per record: 2000 records over 5.5 hours
  b.start();
  for (int i = 0; i < 2000; ++i) b.decision();
  const std::string log = dir.write("audit.jsonl", b.text());
  VerifyReport r = verify_paths({log}, o);
  INFO("signed_through " << r.signed_through << ", unsigned_tail " << r.unsigned_tail);
  CHECK_FALSE(r.ok);
}

// The newest files of a rotated log deleted: what is left ends with a rotation checkpoint,
// which says another file follows. Verified on its own, the remaining file passes.
TEST_CASE("redteam: a log whose files after a rotation were deleted verifies", "[redteam]") {
  using namespace warden::audit::testing;
  TempDir dir{"warden-redteam"};
  TestKey key;
  key.write_public(dir / "audit.pub");
  std::string error;
  auto verify_key = VerifyKey::load(dir / "audit.pub", &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();
  LogBuilder b(key);
  b.start();
  for (int i = 0; i < 5; ++i) b.decision();
  const std::size_t at = b.rotate("audit.000000000001-000000000007.jsonl");
  for (int i = 0; i < 5; ++i) b.decision();  // the deleted part
  const std::string rotated = dir.write("audit.000000000001-000000000007.jsonl", b.text(0, at));
  VerifyReport r = verify_paths({rotated}, o);
  CHECK_FALSE(r.ok);
}

// Masking keeps only the prefixes of the formats the detector knows (ghp_, AKIA, sk-, xoxb-,
// …). A token of a format only the shipped pack's secrets-other-format-p knows (Stripe
// sk_live_, GitLab glpat-, npm_, hf_, AIza, SG., dop_v1_) that the detector still flags (high
// entropy) loses the letters of its prefix, so the shipped rule no longer fires on the
// recorded input and replay reports a change the rules never made.
TEST_CASE("redteam: masking changes the shipped pack's decision on a recorded proposal",
          "[redteam-held]") {
  const Masker masker(std::string(32, 'm'));
  LoadedPolicy loaded = load_policy({WARDEN_SOURCE_DIR "/rules"});
  REQUIRE(loaded.policy);
  EngineOptions eo;
  eo.workspace_root = "/home/user/project";
  eo.home = "/home/user";
  Engine engine(loaded.policy, eo);
  const std::vector<std::string> tokens = {
      "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Xq2",
      "rk_live_51H8zQ2eZvKYlo2C8dTq3mWx",
      "glpat-x8Kq2LmNp4RsT6vW9yZb",
      "npm_a8Kq2LmNp4RsT6vW9yZbC3dE5fG7hJ9kL1mN",
      "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
      "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
      "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",
      "dop_v1_4f9c2b7e1a8d3f6c0b5e9a2d7f1c4b8e3a6d9f2c5b8e1a4d7f0c3b6e9a2d5f8c",
      "postgres://admin:Zq8vK2mP9xL4tR7w@db.internal:5432/prod",
  };
  for (const auto& token : tokens) {
    const std::string proposal = R"({"target":"reply","action":"send","payload":{"text":"use )" +
                                 token +
                                 R"("},"explanation":"doing the task","context":{"session":"s1"}})";
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    Decision d;
    d.decision_id = "d1";
    const std::string fields = decision_fields(in, d, &masker);
    rapidjson::Document doc;
    const std::string obj = "{" + fields + "}";
    doc.Parse(obj.c_str());
    REQUIRE(!doc.HasParseError());
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc["input"].Accept(writer);
    const std::string recorded(buffer.GetString(), buffer.GetSize());
    DecideRequest live;
    live.proposal_json = proposal;
    live.principal = std::string("alice");
    DecideResult a = engine.decide(live);
    DecideRequest replayed;
    replayed.proposal_json = recorded;
    replayed.principal = std::string("alice");
    DecideResult b = engine.decide(replayed);
    REQUIRE(a.ok);
    REQUIRE(b.ok);
    INFO("token " << token << " recorded as " << recorded);
    CHECK(outcome_name(a.decision.outcome) == outcome_name(b.decision.outcome));
    // Held when this runs: the outcome is kept. The reason it is kept is the finding below.
  }
}

// "Secrets found by the rules are stored masked": the shipped pack finds a password in a URL
// (secrets-outbound-other-format asks a human for it), but the masker knows only
// secrets::find's formats, so the password reaches the file as it is. (The other formats of
// secrets-other-format-p listed here are masked: held.)
TEST_CASE("redteam: a password in a URL, found by the shipped rules, is stored unmasked",
          "[redteam]") {
  const Masker masker(std::string(32, 'm'));
  LoadedPolicy loaded = load_policy({WARDEN_SOURCE_DIR "/rules"});
  REQUIRE(loaded.policy);
  EngineOptions eo;
  eo.workspace_root = "/home/user/project";
  eo.home = "/home/user";
  Engine engine(loaded.policy, eo);
  const std::vector<std::string> tokens = {
      "sk_live_4eC39HqLyjWDarjtT1zdp7dc9Xq2",
      "glpat-x8Kq2LmNp4RsT6vW9yZb",
      "npm_a8Kq2LmNp4RsT6vW9yZbC3dE5fG7hJ9kL1mN",
      "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY",
      "postgres://admin:Zq8vK2mP9xL4tR7w@db.internal:5432/prod",
      "redis://default:hunter2hunter2@cache.internal:6379/0",
  };
  for (const auto& token : tokens) {
    const std::string proposal = R"({"target":"reply","action":"send","payload":{"text":"use )" +
                                 token +
                                 R"("},"explanation":"doing the task","context":{"session":"s1"}})";
    DecideRequest req;
    req.proposal_json = proposal;
    req.principal = std::string("alice");
    DecideResult r = engine.decide(req);
    REQUIRE(r.ok);
    bool found_by_rules = false;
    for (const auto& f : r.decision.rules)
      found_by_rules |= f.rule == "secrets-outbound-other-format";
    INFO("token " << token);
    REQUIRE(found_by_rules);
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    in.session = "s1";
    const std::string fields = decision_fields(in, r.decision, &masker);
    CHECK(fields.find(token) == std::string::npos);
  }
}

// ---- the daemon ----------------------------------------------------------------------------

namespace {

namespace st = warden::server::testing;

// `warden serve`'s arguments: DIR's rules and the test tokens, state in DIR/state, one worker.
std::vector<std::string> rt_serve_args(const st::TempDir& dir) {
  std::string tokens = dir.write("tokens", st::Tokens{}.file_text(), 0600);
  return {"serve",   "--listen",           "127.0.0.1:0", "--tokens",           tokens,
          "--rules", dir.str() + "/rules", "--state-dir", dir.str() + "/state", "--workers",
          "1"};
}

std::pair<std::string, std::string> rt_decide(warden::protocol::Client& client,
                                              const std::string& id, const std::string& proposal) {
  std::string error;
  REQUIRE(client.send_message(st::decide_request(id, proposal), &error));
  auto doc = st::parse(st::read_or_fail(client, std::chrono::milliseconds(20000)));
  REQUIRE(doc.IsObject());
  REQUIRE(doc["payload"].HasMember("decision"));
  const auto& d = doc["payload"]["decision"];
  std::string code = d.HasMember("error") ? d["error"].GetString() : "";
  return {d["outcome"].GetString(), code};
}

}  // namespace

// The worker remembers an approval's effects in the session memory when the engine approves,
// before the record is appended. When the append then fails, the client is told reject
// (E_AUDIT) and the log has no record, yet the session history keeps the "approved" write:
// the next decision of the session, answered and recorded normally, is decided on history
// that no record in the log explains (and that the client was told was rejected).
TEST_CASE(
    "redteam: a decision that failed closed on the audit log still enters the session history",
    "[redteam]") {
  st::TempDir dir;
  dir.write("rules/policy.clp", R"CLP(
(defrule rt-write
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule rt-write) (reason "writes"))))
(defrule rt-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule rt-shell) (reason "runs"))))
(defrule rt-after-write
  (proposal (id ?id) (target shell))
  (history (proposal ?id) (kind write))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-after-write) (reason "after a write"))))
)CLP");
  {
    std::ifstream e(kRtEffects, std::ios::binary), p(kRtPaths, std::ios::binary);
    std::stringstream es, ps;
    es << e.rdbuf();
    ps << p.rdbuf();
    dir.write("rules/effects.toml", es.str());
    dir.write("rules/paths.toml", ps.str());
  }
  // Writes past 96 KiB fail with EFBIG: past the approvals store's SQLite WAL (about 57 KiB
  // with its indexes) and WAL index.
  st::WardenChild serve(rt_serve_args(dir), 96 * 1024);
  REQUIRE(serve.serving());
  warden::protocol::Client agent;
  std::string error;
  REQUIRE(agent.connect(serve.address(), std::chrono::milliseconds(5000), &error));
  REQUIRE(agent.authenticate(st::Tokens{}.agent, std::chrono::milliseconds(5000), &error));
  const std::string shell =
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":"s1"}})";
  // Before: the session has no history, ls is approved and recorded.
  auto before = rt_decide(agent, "1", shell);
  REQUIRE(before.first == "approve");
  // A write whose record (its 128 KiB content) does not fit under the file size limit: the
  // engine approves, the append fails, the client gets reject E_AUDIT.
  const std::string big(128 * 1024, 'a');
  auto write = rt_decide(
      agent, "2",
      R"({"target":"file","action":"write","payload":{"path":"/tmp/rt-x.sh","content":")" + big +
          R"("},"context":{"session":"s1"}})");
  REQUIRE(write.first == "reject");
  REQUIRE(write.second == "E_AUDIT");
  // The log works again for small records: the next ls is recorded. Nothing the client
  // was approved or the log holds was a write, so it is decided as before.
  auto after = rt_decide(agent, "3", shell);
  INFO("after the failed write: " << after.first << " " << after.second);
  REQUIRE(after.second == "");
  CHECK(after.first == "approve");
}

// A defglobal's initial value is evaluated again at each reset, which the engine runs after
// every decision, by the engine's clock of that decision: `(defglobal ?*prev* = (now))` holds
// the previous decision's second. The cache key holds only the current second, so an engine
// state (which decision ran before, on which engine) leaks into the decision.
TEST_CASE("redteam: a defglobal initialised with (now) carries the previous decision's clock",
          "[redteam]") {
  TempDir dir{"warden-redteam"};
  const std::string log = dir / "audit.jsonl";
  const std::string base = dir.write("base/base.clp", kApproveAll);
  RtRecorder rec({base, kRtEffects, kRtPaths}, log);
  rec.shell("", "ls", rt_at(0));
  rec.shell("", "ls", rt_at(1));
  rec.shell("", "ls", rt_at(1, 0) + 500000);  // the same second as the one before
  const std::string rules = dir.write("prev/prev.clp", R"CLP(
(defglobal ?*prev* = (now))
(defrule rt-same-second
  (proposal (id ?id))
  (test (= ?*prev* (now)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-same-second) (reason "same second as the last"))))
)CLP");
  check_cache_faithful(log, rules);
}

// The daemon's session memory follows warden.toml ([session] ttl_seconds, max_entries); the
// log does not say which were in force, and replay always uses the defaults (1 h, 512). A
// daemon configured with a 60 s ttl forgot a write that replay still shows to the rules:
// replayed under the very rules it was recorded with, the log reports a change.
TEST_CASE("redteam: replay assumes the default session ttl, not the daemon's", "[redteam]") {
  TempDir dir{"warden-redteam"};
  const std::string log = dir / "audit.jsonl";
  const std::string rules = dir.write("rules/rules.clp", std::string(kApproveAll) + R"CLP(
(defrule rt-after-write
  (proposal (id ?id) (target shell))
  (history (proposal ?id) (kind write))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-after-write) (reason "after a write"))))
)CLP");
  SessionMemoryOptions daemon_memory;
  daemon_memory.ttl_seconds = 60;
  RtRecorder rec({rules, kRtEffects, kRtPaths}, log, daemon_memory);
  rec.write_file("s1", "/home/user/project/x.sh", rt_at(0));
  rec.shell("s1", "ls", rt_at(2));  // two minutes later: the daemon forgot the write
  for (bool cache : {false, true}) {
    ReplayReport rep = rt_replay(log, {rules, kRtEffects, kRtPaths}, cache);
    INFO("cache " << cache);
    CHECK(rt_changes(rep).empty());
  }
}

// Probes that held when written: the same rotated file present twice under two rotated
// names, and a checkpoint line copied from another log of the same key at the same seq.
TEST_CASE("redteam: a rotated file duplicated under another name, a checkpoint from another log",
          "[redteam-held]") {
  using namespace warden::audit::testing;
  TempDir dir{"warden-redteam"};
  TestKey key;
  key.write_public(dir / "audit.pub");
  std::string error;
  auto verify_key = VerifyKey::load(dir / "audit.pub", &error);
  REQUIRE(verify_key);
  VerifyOptions o;
  o.key = verify_key.get();
  LogBuilder b(key);
  b.start();
  for (int i = 0; i < 5; ++i) b.decision();
  const std::size_t at = b.rotate("audit.000000000001-000000000007.jsonl");
  for (int i = 0; i < 5; ++i) b.decision();
  b.stop();
  dir.write("a/audit.000000000001-000000000007.jsonl", b.text(0, at));
  dir.write("a/audit.000000000001-000000000008.jsonl", b.text(0, at));
  dir.write("a/audit.jsonl", b.text(at));
  CHECK_FALSE(verify_paths({dir / "a/audit.jsonl"}, o).ok);

  // Another log, same key, same length: its checkpoint at seq 7 replaces ours.
  LogBuilder other(key);
  other.daemon = "other-host";
  other.start();
  for (int i = 0; i < 5; ++i) other.decision({.principal = "mallory", .mask_field = {}});
  other.checkpoint();
  LogBuilder mine(key);
  mine.start();
  for (int i = 0; i < 5; ++i) mine.decision();
  mine.checkpoint();
  mine.decision();
  std::vector<std::string> lines = mine.lines;
  lines[6] = other.lines[6];
  std::string text;
  for (const auto& l : lines) text += l;
  CHECK_FALSE(verify_paths({dir.write("b/audit.jsonl", text)}, o).ok);
}

// A reload whose record cannot be appended still swaps the rules in (daemon.cpp appends the
// reload record after context_.policy.set and only logs the failure): the reply says ok, and
// from then on decisions run under rules no start or reload record announces.
TEST_CASE("redteam: a reload that cannot be recorded still takes effect", "[redteam]") {
  st::TempDir dir;
  dir.write("rules/policy.clp", kApproveAll);
  st::WardenChild serve(rt_serve_args(dir),
                        96 * 1024);  // above the approvals store's WAL and its 32 KiB index
  REQUIRE(serve.serving());
  warden::protocol::Client agent, admin;
  std::string error;
  REQUIRE(agent.connect(serve.address(), std::chrono::milliseconds(5000), &error));
  REQUIRE(agent.authenticate(st::Tokens{}.agent, std::chrono::milliseconds(5000), &error));
  REQUIRE(admin.connect(serve.address(), std::chrono::milliseconds(5000), &error));
  REQUIRE(admin.authenticate(st::Tokens{}.admin, std::chrono::milliseconds(5000), &error));
  // Fill the log up to its file size limit: small decisions until one cannot be written.
  bool failing = false;
  for (int i = 0; i < 800 && !failing; ++i)
    failing = rt_decide(agent, std::to_string(i), R"({"target":"reply","payload":{"text":"hi"}})")
                  .second == "E_AUDIT";
  REQUIRE(failing);
  dir.write("rules/policy.clp", R"CLP(
(defrule rt-none
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule rt-none) (reason "new rules"))))
)CLP");
  REQUIRE(admin.send_message(warden::protocol::make_request("r", "reload"), &error));
  const std::string reloaded = st::read_or_fail(admin, std::chrono::milliseconds(20000));
  INFO(reloaded);
  // The reload cannot be recorded: it must not be in force (an error reply, old rules kept).
  // (Fixer f4: the expectation was too strong for this input. The log refuses records that do
  // not fit under the size limit, not every record: a reload record (~300 bytes) can still
  // fit where the last decision record did not, and then the reload *is* recorded, durably,
  // before it takes effect, and may succeed. The property is "in force only if recorded":
  // an ok reply must have its reload record in the log; otherwise E_AUDIT with the old rules.
  // tests/server/audit_daemon_test.cpp "a reload the audit log cannot record fails and
  // changes nothing" makes the record not fit and checks the E_AUDIT side.)
  std::ifstream in(dir.str() + "/state/audit.jsonl", std::ios::binary);
  std::stringstream log;
  log << in.rdbuf();
  auto doc = st::parse(reloaded);
  REQUIRE(doc.IsObject());
  if (st::error_code(reloaded).empty()) {
    std::string digest = doc["payload"]["rules_digest"].GetString();
    CHECK(log.str().find("\"kind\":\"reload\"") != std::string::npos);
    CHECK(log.str().find("\"rules_digest\":\"" + digest + "\",\"previous_digest\"") !=
          std::string::npos);
  } else {
    CHECK(st::error_code(reloaded) == "E_AUDIT");
    CHECK(log.str().find("\"kind\":\"reload\"") == std::string::npos);
  }
}

// When no rule reads the session, the cache key leaves context.session's value out — but the
// value still decides whether the proposal is accepted at all: a NUL in it is refused
// (E_INPUT_SHAPE). Such a record shares its key with the same proposal in a normal session
// and replay with the cache reports a widening (reject → approve) the rules never made.
TEST_CASE("redteam: a session value the engine refuses shares the cache key of a valid one",
          "[redteam]") {
  TempDir dir{"warden-redteam"};
  const std::string log = dir / "audit.jsonl";
  const std::string base = dir.write("base/base.clp", kApproveAll);
  RtRecorder rec({base, kRtEffects, kRtPaths}, log);
  rec.decide_any(
      "s1",
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":"s1"}})",
      rt_at(0));
  const auto refused = rec.decide_any(
      std::string("s\0x", 3),
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"session":"s\u0000x"}})",
      rt_at(1));
  // Replayed under the rules it was recorded with: nothing changes.
  for (bool cache : {false, true}) {
    ReplayReport rep = rt_replay(log, {base, kRtEffects, kRtPaths}, cache);
    INFO("cache " << cache << ", the refused record is seq " << refused);
    CHECK(rt_changes(rep).empty());
  }
}
