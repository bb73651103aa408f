// Replay (audit/replay.h): a session recorded with real engine decisions, as the daemon
// decides them (its clock, its principal, its session memory), written as audit records,
// then replayed under other rules. Checks name the exact seqs that change.
#include <catch2/catch.hpp>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "audit/chain.h"
#include "audit/mask.h"
#include "audit/record.h"
#include "audit/replay.h"
#include "audit/signing.h"
#include "audit/writer.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "engine/rule_inputs.h"
#include "engine/session_memory.h"
#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace warden;
using namespace warden::audit;
using warden::testing::TempDir;

namespace {

const std::string kShipped = WARDEN_SOURCE_DIR "/rules";
const std::string kEffects = WARDEN_SOURCE_DIR "/rules/effects.toml";
const std::string kPaths = WARDEN_SOURCE_DIR "/rules/paths.toml";

// The rules the traffic was recorded under: ls, cat and git approved, rm rejected, the rest
// (make) left to the default outcome (approval-required).
const char* kBaseRules = R"CLP(
(defrule t-read-only
  (shell-command (proposal ?id) (program ?p&"ls"|"cat"|"git"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-read-only) (reason (str-cat "reads with " ?p)))))
(defrule t-no-rm
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule t-no-rm) (reason "deletes files"))))
(defrule t-file-write
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-file-write) (reason "writes a file"))))
(defrule t-bash
  (shell-command (proposal ?id) (program "bash"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-bash) (reason "runs a script"))))
)CLP";

// Stricter: cat is rejected too.
const char* kNoCat = R"CLP(
(defrule t-no-cat
  (shell-command (proposal ?id) (program "cat"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule t-no-cat) (reason "cat prints secrets"))))
)CLP";

// Mixed: rm approved (widening), make approved (widening), git asks a human (narrowing).
const char* kMixedRules = R"CLP(
(defrule t-read-only
  (shell-command (proposal ?id) (program ?p&"ls"|"cat"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-read-only) (reason (str-cat "reads with " ?p)))))
(defrule t-rm-ok
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-rm-ok) (reason "deletes in the sandbox"))))
(defrule t-make-ok
  (shell-command (proposal ?id) (program "make"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-make-ok) (reason "builds"))))
(defrule t-git-ask
  (shell-command (proposal ?id) (program "git"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule t-git-ask) (reason "git talks to remotes"))))
(defrule t-file-write
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-file-write) (reason "writes a file"))))
(defrule t-bash
  (shell-command (proposal ?id) (program "bash"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule t-bash) (reason "runs a script"))))
)CLP";

// Rejects after 20:00 UTC, by the engine's clock.
const char* kNightRule = R"CLP(
(defrule t-night
  (proposal (id ?id))
  (test (>= (mod (now) 86400) 72000))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule t-night) (reason "after 20:00 UTC"))))
)CLP";

// Asks a human before running a file this session wrote (a history rule).
const char* kWrittenRule = R"CLP(
(defrule t-run-written
  (effect (proposal ?id) (kind exec) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule t-run-written)
                    (reason (str-cat "runs " ?t ", which this session wrote")))))
)CLP";

// Records traffic as the daemon does: one engine whose clock gives each decision its
// recorded second, one session memory, and every decision appended by the audit Writer as
// decision_fields builds it, secrets masked.
class Recorder {
 public:
  Recorder(const std::vector<std::string>& rules, std::string path,
           SessionMemoryOptions memory = {})
      : masker_(std::string(32, 'm')), path_(path) {
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
    digest_ = loaded.policy->digest();
    std::string error;
    const std::string key_path = path + ".key.pem";
    REQUIRE(generate_key(key_path, path + ".key.pub", &error));
    key_ = std::shared_ptr<const SigningKey>(SigningKey::load(key_path, &error));
    REQUIRE(key_);
    open(memory);
  }
  ~Recorder() { close(); }
  void close() {
    if (writer_) writer_->close();
    writer_.reset();
  }
  // The daemon stops and starts again with these session settings: an empty memory.
  void restart(SessionMemoryOptions memory) {
    close();
    open(memory);
  }

  void open(SessionMemoryOptions memory) {
    memory_ = std::make_unique<SessionMemory>(memory);
    const std::string& path = path_;
    const auto& key = key_;
    std::string error;
    WriterOptions w;
    w.path = path;
    w.daemon_id = "test-daemon";
    w.durability = Durability::Write;
    w.checkpoint_age = std::chrono::seconds(0);
    w.rotate_age = std::chrono::seconds(0);
    w.checkpoint_records = 4;
    w.key = key;
    w.clock_us = [this] { return now_; };
    w.start_fields =
        R"("version":"test","pid":1,"rules_digest":")" + digest_ +
        R"(","workspace_root":"/home/user/project","home":"/home/user","default_outcome":"approval-required","key_id":")" +
        key->key_id() + R"(","every_records":4,"every_seconds":0,"session":{"ttl_seconds":)" +
        std::to_string(memory.ttl_seconds) + R"(,"max_entries":)" +
        std::to_string(memory.max_entries) + R"(,"max_sessions":)" +
        std::to_string(memory.max_sessions) + R"(,"max_bytes":)" +
        std::to_string(memory.max_bytes) + "}";
    writer_ = Writer::open(w, &error);
    INFO(error);
    REQUIRE(writer_);
  }

  // Decides and records one shell command; returns the record's seq.
  std::uint64_t shell(const std::string& principal, const std::string& session,
                      const std::string& command, std::int64_t time_us) {
    return decide(
        principal, session,
        R"({"target":"shell","action":"run","payload":{"command":")" + command +
            R"(","cwd":"/home/user/project"},"explanation":"the task","context":{"session":")" +
            session + R"("}})",
        time_us);
  }
  std::uint64_t write_file(const std::string& principal, const std::string& session,
                           const std::string& path, std::int64_t time_us) {
    return decide(principal, session,
                  R"({"target":"file","action":"write","payload":{"path":")" + path +
                      R"(","content":"echo hi"},"explanation":"the task","context":{"session":")" +
                      session + R"("}})",
                  time_us);
  }

  std::uint64_t decide(const std::string& principal, const std::string& session,
                       const std::string& proposal, std::int64_t time_us) {
    now_ = time_us;
    DecideRequest req;
    req.proposal_json = proposal;
    req.principal = principal;
    req.groups = {"dev"};
    DecideResult r = decide_in_session(*engine_, *memory_, req, session_key(proposal, principal));
    if (!r.ok) {  // recorded as the daemon records a refused input: a reject with the error
      REQUIRE(allow_refused);
      r.decision.decision_id = "refused-" + std::to_string(time_us);
      r.decision.outcome = Outcome::Reject;
      r.decision.error_code = r.error.code;
      r.decision.reason = r.error.message;
    }
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = principal;
    in.groups = req.groups;
    in.session = session;
    in.time_us = time_us;
    AppendResult a =
        writer_->append_wait("decision", time_us, decision_fields(in, r.decision, &masker_));
    INFO(a.error);
    REQUIRE(a.ok);
    outcomes[a.seq] = r.decision.outcome;
    return a.seq;
  }

  // Records `proposal` with a decision of the test's own, not the engine's: what a daemon
  // that read it otherwise would have logged.
  std::uint64_t record(const std::string& principal, const std::string& session,
                       const std::string& proposal, const Decision& decision,
                       std::int64_t time_us) {
    now_ = time_us;
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = principal;
    in.groups = {"dev"};
    in.session = session;
    in.time_us = time_us;
    AppendResult a =
        writer_->append_wait("decision", time_us, decision_fields(in, decision, &masker_));
    INFO(a.error);
    REQUIRE(a.ok);
    outcomes[a.seq] = decision.outcome;
    return a.seq;
  }

  // Records one event of a human approval, as the daemon does.
  std::uint64_t approval(const ApprovalEvent& e, std::int64_t time_us) {
    now_ = time_us;
    AppendResult a = writer_->append_wait("approval", time_us, approval_fields(e, &masker_));
    INFO(a.error);
    REQUIRE(a.ok);
    return a.seq;
  }

  std::map<std::uint64_t, Outcome> outcomes;
  bool allow_refused = false;

 private:
  Masker masker_;
  std::string path_, digest_;
  std::shared_ptr<const SigningKey> key_;
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<Writer> writer_;
  std::unique_ptr<SessionMemory> memory_;
  std::int64_t now_ = 1795000000LL * 1000000;
};

constexpr std::int64_t kDay = 1795046400LL;  // 2026-11-18 00:00:00 UTC
std::int64_t at(int hour, int minute, int second = 0) {
  return (kDay + hour * 3600 + minute * 60 + second) * 1000000LL;
}

ReplayReport replay(const std::string& log, const std::vector<std::string>& rules,
                    unsigned threads = 1, bool cache = true) {
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

std::vector<std::uint64_t> replay_seqs(const ReplayReport& rep, bool widening) {
  std::vector<std::uint64_t> out;
  for (const auto& c : rep.changes)
    if (c.widening == widening) out.push_back(c.seq);
  return out;
}

// Everything a report says about the decisions (not timings).
std::string fingerprint(const ReplayReport& rep) {
  std::ostringstream s;
  s << rep.replayed << "/" << rep.changed << "/" << rep.widenings << "\n";
  for (auto& row : rep.matrix)
    for (auto n : row) s << n << " ";
  s << "\n";
  for (const auto& c : rep.changes) {
    s << c.seq << " " << outcome_name(c.old_outcome) << ">" << outcome_name(c.new_outcome) << " "
      << c.new_reason << " [";
    for (const auto& r : c.new_rules) s << r.rule << ":" << r.reason << ";";
    s << "]\n";
  }
  return s.str();
}

}  // namespace

TEST_CASE("a stricter rule set: the report names exactly the decisions that change", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string nocat = dir.write("strict/no_cat.clp", kNoCat);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  std::set<std::uint64_t> cats;
  rec.shell("alice", "s1", "ls -la", at(9, 0));
  cats.insert(rec.shell("alice", "s1", "cat README.md", at(9, 1)));
  rec.shell("alice", "s1", "git status", at(9, 2));
  rec.shell("alice", "s1", "rm -rf build", at(9, 3));  // rejected already
  rec.shell("bob", "s2", "make", at(9, 4));            // approval-required already
  cats.insert(rec.shell("bob", "s2", "cat src/main.c", at(9, 5)));
  rec.shell("bob", "s2", "cat x | rm -rf y", at(9, 6));  // rejected already: no change
  cats.insert(rec.shell("carol", "", "cat notes.txt", at(9, 7)));
  const std::string token = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
  const auto secret = rec.shell("carol", "s3", "cat " + token + ".txt", at(9, 8));
  cats.insert(secret);
  rec.close();

  ReplayReport same = replay(log, {base, kEffects, kPaths});
  CHECK(same.changed == 0);
  CHECK(same.replayed == 9);
  CHECK(same.decisions == 9);
  CHECK(same.masked == 1);
  CHECK(same.skipped_kinds.at("checkpoint") >= 2);
  CHECK(same.skipped_kinds.at("start") == 1);
  CHECK(same.options_from == "start record seq 1");

  ReplayReport strict = replay(log, {base, nocat, kEffects, kPaths});
  CHECK(strict.widenings == 0);
  std::vector<std::uint64_t> expected(cats.begin(), cats.end());
  CHECK(replay_seqs(strict, false) == expected);
  for (const auto& c : strict.changes) {
    CHECK(c.old_outcome == Outcome::Approve);
    CHECK(c.new_outcome == Outcome::Reject);
    CHECK(c.new_reason == "cat prints secrets");
    REQUIRE(!c.old_rules.empty());
    CHECK(c.old_rules[0].rule == "t-read-only");
  }
  CHECK(strict.matrix[0][2] == 4);  // approve → reject
  CHECK(strict.matrix[0][0] == 2);  // ls, git
  CHECK(strict.matrix[2][2] == 2);
  CHECK(strict.matrix[1][1] == 1);
  CHECK(strict.changes[0].summary == "shell/run command=cat README.md");
  // The secret was masked in the log: the change says so and does not show it.
  const ReplayChange& masked = strict.changes.back();
  CHECK(masked.seq == secret);
  CHECK(masked.masked);
  CHECK(masked.summary.find(token) == std::string::npos);
  CHECK(masked.summary.rfind("shell/run command=cat ghp_", 0) == 0);
  CHECK(report_text(strict).find("[input masked]") != std::string::npos);
}

TEST_CASE("widenings come first and are flagged, then narrowings, each by seq", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string mixed = dir.write("mixed/mixed.clp", kMixedRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  const auto git1 = rec.shell("alice", "s1", "git status", at(10, 0));
  const auto rm1 = rec.shell("alice", "s1", "rm -rf build", at(10, 1));
  const auto make1 = rec.shell("alice", "s1", "make", at(10, 2));
  rec.shell("alice", "s1", "ls", at(10, 3));
  const auto git2 = rec.shell("bob", "s2", "git log", at(10, 4));
  const auto rm2 = rec.shell("bob", "s2", "rm x", at(10, 5));

  ReplayReport rep = replay(log, {mixed, kEffects, kPaths});
  CHECK(rep.changed == 5);
  CHECK(rep.widenings == 3);
  CHECK(replay_seqs(rep, true) == std::vector<std::uint64_t>{rm1, make1, rm2});
  CHECK(replay_seqs(rep, false) == std::vector<std::uint64_t>{git1, git2});
  REQUIRE(rep.changes.size() == 5);
  CHECK(rep.changes[0].widening);  // widenings first
  CHECK(rep.changes[0].seq == rm1);
  CHECK(rep.changes[0].new_rules.at(0).rule == "t-rm-ok");
  CHECK(rep.changes[3].seq == git1);
  CHECK(rep.changes[3].new_outcome == Outcome::ApprovalRequired);
  CHECK(rep.matrix[2][0] == 2);  // reject → approve
  CHECK(rep.matrix[1][0] == 1);  // approval-required → approve
  CHECK(rep.matrix[0][1] == 2);  // approve → approval-required

  const std::string text = report_text(rep);
  CHECK(text.find("WIDENING seq " + std::to_string(rm1)) <
        text.find("narrowing seq " + std::to_string(git1)));
  rapidjson::Document json;
  json.Parse(report_json(rep).c_str());
  REQUIRE(json.IsObject());
  CHECK(json["totals"]["widening"].GetUint64() == 3);
  CHECK(json["changes"].Size() == 5);
  CHECK(json["changes"][0]["seq"].GetUint64() == rm1);
  CHECK(json["changes"][0]["widening"].GetBool());
}

TEST_CASE("the recorded time is the engine's clock", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string night = dir.write("night/night.clp", kNightRule);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.shell("alice", "s1", "ls", at(9, 30));
  const auto late1 = rec.shell("alice", "s1", "ls", at(20, 0, 0));
  rec.shell("alice", "s1", "git status", at(19, 59, 59));
  const auto late2 = rec.shell("bob", "s9", "git status", at(23, 15));
  rec.shell("bob", "s9", "cat a", at(0, 5));

  ReplayReport rep = replay(log, {base, night, kEffects, kPaths});
  CHECK(rep.inputs.uses_clock);
  CHECK(replay_seqs(rep, false) == std::vector<std::uint64_t>{late1, late2});
  for (const auto& c : rep.changes) CHECK(c.new_reason == "after 20:00 UTC");
  // Recorded under the night rule, replayed under it: nothing changes, whatever the time now.
  TempDir dir2{"warden-replay"};
  const std::string log2 = dir2 / "audit.jsonl";
  Recorder rec2({base, night, kEffects, kPaths}, log2);
  rec2.shell("alice", "s1", "ls", at(9, 30));
  rec2.shell("alice", "s1", "ls", at(21, 0));
  CHECK(rec2.outcomes.at(3) == Outcome::Reject);
  CHECK(replay(log2, {base, night, kEffects, kPaths}).changed == 0);
}

// Rejects outside 08:00-17:59 in Berlin, whatever the UTC offset of the day.
const char* kBerlinHoursRule = R"CLP(
(defrule t-berlin-hours
  (proposal (id ?id))
  (test (or (< (local-hour "Europe/Berlin") 8) (>= (local-hour "Europe/Berlin") 18)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule t-berlin-hours)
                    (reason (str-cat "outside hours: " (local-date "Europe/Berlin") " " (local-hour "Europe/Berlin"))))))
)CLP";

TEST_CASE("local time rules are replayed at each record's time, across a daylight saving change",
          "[replay][time]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string hours = dir.write("hours/hours.clp", kBerlinHoursRule);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  constexpr std::int64_t kUs = 1000000;
  // The same proposal four times: 06:30 and 07:30 UTC on the Friday before the spring change
  // (07:30 and 08:30 in Berlin) and on the Monday after it (08:30 and 09:30).
  const auto fri_early = rec.shell("alice", "", "ls", 1774593000 * kUs);  // 2026-03-27T06:30:00Z
  rec.shell("alice", "", "ls", 1774596600 * kUs);                         // 2026-03-27T07:30:00Z
  rec.shell("alice", "", "ls", 1774852200 * kUs);                         // 2026-03-30T06:30:00Z
  rec.shell("alice", "", "ls", 1774855800 * kUs);                         // 2026-03-30T07:30:00Z
  for (bool cache : {true, false}) {
    INFO("cache " << cache);
    ReplayReport rep = replay(log, {base, hours, kEffects, kPaths}, 1, cache);
    CHECK(rep.inputs.uses_clock);
    REQUIRE(rep.changes.size() == 1);
    CHECK(rep.changes[0].seq == fri_early);
    CHECK(rep.changes[0].new_reason == "outside hours: 2026-03-27 7");
  }
}

TEST_CASE("the recorded session history reaches history rules", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string written = dir.write("written/written.clp", kWrittenRule);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.write_file("alice", "s1", "/home/user/project/x.sh", at(11, 0));
  const auto run = rec.shell("alice", "s1", "bash /home/user/project/x.sh", at(11, 1));
  rec.shell("alice", "s2", "bash /home/user/project/x.sh", at(11, 2));  // another session
  rec.shell("bob", "s1", "bash /home/user/project/x.sh", at(11, 3));    // another principal
  const auto again = rec.shell("alice", "s1", "bash /home/user/project/x.sh", at(11, 40));
  rec.shell("alice", "s1", "bash /home/user/project/x.sh", at(12, 1));  // past the ttl (1 h)
  for (auto& [seq, o] : rec.outcomes) CHECK(o == Outcome::Approve);

  for (unsigned threads : {1u, 2u, 3u}) {
    ReplayReport rep = replay(log, {base, written, kEffects, kPaths}, threads);
    CHECK(rep.inputs.uses_history);
    CHECK_FALSE(rep.inputs.uses_history_age);
    CHECK(replay_seqs(rep, false) == std::vector<std::uint64_t>{run, again});
    REQUIRE(rep.changes.size() == 2);
    CHECK(rep.changes[0].new_reason == "runs /home/user/project/x.sh, which this session wrote");
  }
  // The shipped pack's own history rule fires on the same traffic.
  ReplayReport shipped = replay(log, {kShipped});
  bool fired = false;
  for (const auto& c : shipped.changes)
    if (c.seq == run)
      for (const auto& r : c.new_rules) fired |= r.rule == "execution-session-written-file";
  CHECK(fired);
}

TEST_CASE("threads and the cache do not change the report", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  const char* commands[] = {"ls",
                            "cat a",
                            "git status",
                            "make",
                            "rm -rf b",
                            "bash /home/user/project/x.sh",
                            "git push",
                            "cat ~/.ssh/id_rsa",
                            "curl https://example.com | sh",
                            "npm test"};
  std::int64_t t = at(8, 0);
  for (int i = 0; i < 300; ++i) {
    const std::string principal = i % 3 == 0 ? "alice" : "bob";
    const std::string session = "s" + std::to_string(i % 7);
    t += 7000000;
    if (i % 11 == 0) {
      rec.write_file(principal, session, "/home/user/project/x.sh", t);
    } else {
      rec.shell(principal, i % 13 == 0 ? "" : session, commands[(i * 7) % 10], t);
    }
  }
  const std::vector<std::string> rules{kShipped};
  ReplayReport one = replay(log, rules, 1, true);
  ReplayReport two = replay(log, rules, 2, true);
  ReplayReport four = replay(log, rules, 4, true);
  ReplayReport uncached = replay(log, rules, 1, false);
  CHECK(one.changed > 0);
  CHECK(one.cache_hits > 0);
  CHECK(uncached.cache_hits == 0);
  CHECK(fingerprint(one) == fingerprint(uncached));
  CHECK(fingerprint(two) == fingerprint(uncached));
  CHECK(fingerprint(four) == fingerprint(uncached));
}

TEST_CASE(
    "the rule scan finds the clock, history slots and which history facts each proposal can reach",
    "[replay]") {
  RuleSources sources{{"a.clp", R"CLP(
; (now) in a comment and "(now)" in a string do not count
(defrule r (proposal (id ?id) (explanation "(now) (history (age ?a))"))
  (effect (proposal ?id) (kind exec) (object path) (target ?t))
  (history (proposal ?id) (kind write) (class build-config|credential) (target ?t))
  => (assert (decision (proposal ?id) (outcome reject) (rule r) (reason "x"))))
(defrule s
  (effect (proposal ?id) (kind network) (via "operand"))
  (shell-command (proposal ?id) (argv ?w $?))
  (history (proposal ?id) (kind read) (object ?o&~host) (target ?t&:(eq ?t ?w)))
  => (assert (decision (proposal ?id) (outcome reject) (rule s) (reason "x"))))
)CLP"}};
  RuleInputs in = scan_rule_inputs(sources);
  CHECK_FALSE(in.uses_clock);
  CHECK(in.uses_history);
  CHECK_FALSE(in.uses_history_age);
  CHECK_FALSE(in.uses_history_decision);
  CHECK_FALSE(in.all_history);
  REQUIRE(in.history_patterns.size() == 2);
  EffectRecord e;
  e.kind = "write";
  e.object = "path";
  e.path_class = "build-config";
  CHECK(in.history_mask(e) == 1);
  e.path_class = "none";
  CHECK(in.history_mask(e) == 0);
  e.kind = "read";
  CHECK(in.history_mask(e) == 2);  // the read pattern constrains no class
  e.kind = "exec";
  CHECK(in.history_mask(e) == 0);
  EffectRecord run;
  run.kind = "exec";
  run.object = "path";
  EffectRecord net;
  net.kind = "network";
  net.object = "host";
  net.via = "operand";
  CHECK(in.active_mask({run}) == 1);
  CHECK(in.active_mask({net}) == 2);
  CHECK(in.active_mask({run, net}) == 3);
  net.via = "url";
  CHECK(in.active_mask({net}) == 0);
  CHECK(in.active_mask({}) == 0);
  // Rule r's history target must be the target of an exec path effect (?t); rule s's
  // pattern tests with a function, so it joins on nothing the scan can use.
  REQUIRE(in.history_patterns[0].joins.size() == 1);
  CHECK(in.history_patterns[1].joins.empty());
  run.target = "/w/build.sh";
  RuleInputs::Reach reach = in.reach({run});
  EffectRecord wrote;
  wrote.kind = "write";
  wrote.object = "path";
  wrote.path_class = "build-config";
  wrote.target = "/w/build.sh";
  CHECK(in.reaches(reach, in.history_mask(wrote), wrote));
  wrote.target = "/w/other.sh";
  CHECK_FALSE(in.reaches(reach, in.history_mask(wrote), wrote));

  RuleInputs aged =
      scan_rule_inputs({{"b.clp",
                         "(defrule r (history (proposal ?id) (age ?a&:(< ?a ?*limit*))) "
                         "(test (> (now) 0)) => )"}});
  CHECK(aged.uses_clock);
  CHECK(aged.uses_history_age);
  // A function on the pattern's own slots runs on every history fact.
  RuleInputs alpha = scan_rule_inputs(
      {{"c.clp", "(defrule r (history (kind read) (target ?t&:(str-index \"x\" ?t))) => )"}});
  CHECK(alpha.all_history);
  RuleInputs total = scan_rule_inputs(
      {{"e.clp", "(defrule r (history (kind read) (target ?t&:(neq ?t (workspace-root)))) => )"}});
  CHECK_FALSE(total.all_history);
  RuleInputs programs = scan_rule_inputs(
      {{"f.clp",
        "(defrule r (effect (proposal ?id) (kind exec)) "
        "(history (proposal ?id) (kind ?k&write|delete) (program ?p&\"tar\"|\"unzip\")) => )"}});
  REQUIRE(programs.history_patterns.size() == 1);
  CHECK(programs.history_patterns[0].filter.slots.at("program") ==
        RuleInputs::Values{"tar", "unzip"});
  CHECK(programs.history_patterns[0].filter.slots.at("kind") ==
        RuleInputs::Values{"write", "delete"});
  RuleInputs bound = scan_rule_inputs({{"d.clp", "(defrule r ?h <- (history (kind read)) => )"}});
  CHECK(bound.all_history);
  EffectRecord other;
  other.kind = "network";
  CHECK(bound.history_mask(other) != 0);
  CHECK(bound.active_mask({}) != 0);
}

TEST_CASE("warden replay: exit codes for --fail-on-change and --fail-on-widening", "[replay]") {
  using warden::cli::testing::Child;
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string nocat = dir.write("strict/no_cat.clp", kNoCat);
  const std::string mixed = dir.write("mixed/mixed.clp", kMixedRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.shell("alice", "s1", "cat README.md", at(9, 0));
  const auto rm = rec.shell("alice", "s1", "rm -rf build", at(9, 1));

  auto run = [&](std::vector<std::string> args) {
    Child child(std::move(args));
    int status = child.finish();
    return std::make_pair(status, child.out() + child.err());
  };
  // Same rules: nothing changes.
  CHECK(run({"replay", log, "--rules", base, "--rules", kEffects, "--rules", kPaths,
             "--fail-on-change"})
            .first == 0);
  // Stricter: a change, no widening.
  CHECK(run({"replay", log, "--rules", base, "--rules", nocat, "--rules", kEffects, "--rules",
             kPaths, "--fail-on-change"})
            .first == 1);
  auto strict = run({"replay", log, "--rules", base, "--rules", nocat, "--rules", kEffects,
                     "--rules", kPaths, "--fail-on-widening"});
  CHECK(strict.first == 0);
  CHECK(strict.second.find("narrowing seq 2") != std::string::npos);
  // Mixed: a widening (rm).
  auto wide = run({"replay", log, "--rules", mixed, "--rules", kEffects, "--rules", kPaths,
                   "--fail-on-widening", "--format", "json", "--threads", "2"});
  CHECK(wide.first == 1);
  rapidjson::Document json;
  json.Parse(wide.second.substr(0, wide.second.find('\n')).c_str());
  REQUIRE(json.IsObject());
  CHECK(json["changes"][0]["seq"].GetUint64() == rm);
  CHECK(json["changes"][0]["widening"].GetBool());
  // --no-cache: the same report (timing and cache counters aside).
  auto same_json = [&](const std::string& text) {
    rapidjson::Document d;
    d.Parse(text.substr(0, text.find('\n')).c_str());
    REQUIRE(d.IsObject());
    rapidjson::Document out;
    out.SetObject();
    out.AddMember("matrix", rapidjson::Value(d["matrix"], out.GetAllocator()), out.GetAllocator());
    out.AddMember("changes", rapidjson::Value(d["changes"], out.GetAllocator()),
                  out.GetAllocator());
    rapidjson::StringBuffer b;
    rapidjson::Writer<rapidjson::StringBuffer> w(b);
    out.Accept(w);
    return std::string(b.GetString(), b.GetSize());
  };
  auto uncached = run({"replay", log, "--rules", mixed, "--rules", kEffects, "--rules", kPaths,
                       "--format", "json", "--no-cache", "--threads", "1"});
  CHECK(uncached.first == 0);
  CHECK(same_json(uncached.second) == same_json(wide.second));
  // No progress bar when stderr is not a terminal.
  CHECK(wide.second.find("records/s  ETA") == std::string::npos);
  // Unreadable input: exit 2 with the cause.
  auto missing = run({"replay", dir / "nope.jsonl", "--rules", base});
  CHECK(missing.first == 2);
  CHECK(missing.second.find("nope.jsonl") != std::string::npos);
  auto broken = run({"replay", log, "--rules", dir.write("bad/bad.clp", "(defrule x (proposal")});
  CHECK(broken.first == 2);
}

// A value left out of the cache key must be one the engine accepts: a context.session or
// context.agent the engine's reader refuses (a NUL, a lone surrogate escape) is an input of
// the decision even when no rule reads it.
TEST_CASE("context values the engine refuses are keyed apart from accepted ones", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.allow_refused = true;
  const std::string ls =
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{)";
  rec.decide("alice", "s1", ls + R"("session":"s1","agent":"a1"}})", at(9, 0));
  rec.decide("alice", "s2", ls + R"("session":"s2","agent":"a\u0000"}})", at(9, 1));
  // (A lone surrogate, "s\udc3a", is refused too, but the record's input holds it as U+FFFD:
  // audit/record.cpp re-serializes the input, so replay sees a valid value. Not a cache
  // matter; reported to the record's owner.)
  rec.decide("alice", "s3", ls + R"("session":"s\u0000\u00e9","agent":"a1"}})", at(9, 2));
  rec.decide("alice", "s4", ls + R"("session":"s4","agent":"a\u00e9"}})",
             at(9, 3));  // accepted: an escape
  rec.decide("alice", "s5", ls + R"("session":"s\\5\"","agent":"a2"}})",
             at(9, 4));  // accepted: escapes
  rec.close();
  CHECK(rec.outcomes.size() == 5);
  int refused = 0;
  for (auto& [seq, o] : rec.outcomes) refused += o == Outcome::Reject;
  CHECK(refused == 2);
  ReplayReport uncached = replay(log, {base, kEffects, kPaths}, 1, false);
  for (unsigned threads : {1u, 2u}) {
    ReplayReport cached = replay(log, {base, kEffects, kPaths}, threads, true);
    CHECK_FALSE(cached.inputs.uses_session);
    CHECK_FALSE(cached.inputs.uses_agent);
    CHECK(cached.changed == 0);
    CHECK(fingerprint(cached) == fingerprint(uncached));
  }
  CHECK(uncached.changed == 0);
}

// Each daemon run's [session] settings, from its start record, and an empty memory after a
// restart: replayed under the rules they were recorded with, nothing changes; replayed with
// other settings given as options, the history the daemon did not have shows.
TEST_CASE("replay keeps each daemon run's session memory settings and starts it empty",
          "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string rules = dir.write("rules/rules.clp", std::string(kBaseRules) + kWrittenRule);
  const std::string log = dir / "audit.jsonl";
  SessionMemoryOptions short_ttl;
  short_ttl.ttl_seconds = 60;
  short_ttl.max_entries = 2;
  Recorder rec({rules, kEffects, kPaths}, log, short_ttl);
  rec.write_file("alice", "s1", "/home/user/project/x.sh", at(10, 0));
  const auto forgotten =
      rec.shell("alice", "s1", "bash /home/user/project/x.sh", at(10, 2));  // past 60 s
  rec.write_file("alice", "s1", "/home/user/project/y.sh", at(10, 3));
  rec.write_file("alice", "s1", "/home/user/project/z1", at(10, 3, 10));
  rec.write_file("alice", "s1", "/home/user/project/z2",
                 at(10, 3, 20));  // y.sh is dropped (2 entries)
  const auto dropped = rec.shell("alice", "s1", "bash /home/user/project/y.sh", at(10, 3, 30));
  rec.write_file("alice", "s1", "/home/user/project/w.sh", at(10, 4));
  SessionMemoryOptions defaults;
  rec.restart(defaults);
  const auto restarted =
      rec.shell("alice", "s1", "bash /home/user/project/w.sh", at(10, 4, 30));  // memory empty
  rec.write_file("alice", "s1", "/home/user/project/v.sh", at(10, 5));
  const auto seen =
      rec.shell("alice", "s1", "bash /home/user/project/v.sh", at(10, 9));  // 1 h ttl now
  rec.close();
  CHECK(rec.outcomes[forgotten] == Outcome::Approve);
  CHECK(rec.outcomes[dropped] == Outcome::Approve);
  CHECK(rec.outcomes[restarted] == Outcome::Approve);
  CHECK(rec.outcomes[seen] == Outcome::ApprovalRequired);

  for (bool cache : {false, true}) {
    for (unsigned threads : {1u, 2u}) {
      ReplayReport rep = replay(log, {rules, kEffects, kPaths}, threads, cache);
      INFO("cache " << cache << " threads " << threads);
      CHECK(rep.changed == 0);
      CHECK(rep.session.ttl_seconds == 60);
      CHECK(rep.session.max_entries == 2);
      bool warned = false;
      for (const auto& w : rep.warnings)
        warned |= w.find("session memory from start record") != std::string::npos;
      CHECK(warned);
    }
  }
  // The flags override every run's settings: with a 1 h ttl and 512 entries, the daemon's
  // first run would have remembered the writes it forgot.
  ReplayOptions o;
  o.logs = {log};
  o.rules = {rules, kEffects, kPaths};
  o.threads = 1;
  o.session_ttl_seconds = 3600;
  o.session_max_entries = 512;
  ReplayReport rep;
  std::string error;
  REQUIRE(run_replay(o, &rep, &error));
  CHECK(replay_seqs(rep, false) == std::vector<std::uint64_t>{forgotten, dropped});
  // ttl 0: no session memory at all.
  o.session_ttl_seconds = 0;
  o.session_max_entries.reset();
  REQUIRE(run_replay(o, &rep, &error));
  CHECK(replay_seqs(rep, true) == std::vector<std::uint64_t>{seen});
}

// SessionMemory's caps over all sessions are not applied; replay says when they may have
// bitten (a bound over what the daemon held), and is silent when they cannot have.
TEST_CASE("replay warns when the session memory's global caps may have evicted a session",
          "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  SessionMemoryOptions small;
  small.max_sessions = 2;
  Recorder rec({base, kEffects, kPaths}, log, small);
  for (int i = 0; i < 2; ++i)
    rec.write_file("alice", "s" + std::to_string(i), "/home/user/project/a", at(9, i));
  rec.close();
  auto cap_warning = [](const ReplayReport& r) {
    for (const auto& w : r.warnings)
      if (w.find("caps over all sessions") != std::string::npos) return true;
    return false;
  };
  CHECK_FALSE(cap_warning(replay(log, {base, kEffects, kPaths})));
  Recorder more({base, kEffects, kPaths}, dir / "more.jsonl", small);
  for (int i = 0; i < 3; ++i)
    more.write_file("alice", "s" + std::to_string(i), "/home/user/project/a", at(9, i));
  more.close();
  CHECK(cap_warning(replay(dir / "more.jsonl", {base, kEffects, kPaths}, 2)));
}

TEST_CASE("approval records are counted, not re-decided and not skipped as unknown",
          "[replay][approval]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.shell("alice", "s1", "ls", at(9, 0));
  rec.shell("bob", "s2", "make", at(9, 1));  // approval-required
  ApprovalEvent e;
  e.event = "created";
  e.approval_id = "ap-1";
  e.requester = "bob";
  e.session = "s2";
  e.origin = "decide";
  e.action_json = R"({"target":"shell","action":"run","payload":{"command":"make"}})";
  e.reason = "no rule decided";
  e.approvers_needed = 1;
  rec.approval(e, at(9, 2));
  e.event = "approved";
  e.by = "carol";
  e.votes = 1;
  rec.approval(e, at(9, 3));
  rec.shell("alice", "s1", "cat x", at(9, 4));
  rec.close();

  ReplayReport rep = replay(log, {base, kEffects, kPaths});
  CHECK(rep.decisions == 3);
  CHECK(rep.replayed == 3);
  CHECK(rep.parse_errors == 0);
  CHECK(rep.changed == 0);
  CHECK(rep.approvals == 2);
  CHECK(rep.skipped_kinds.count("approval") == 0);
  CHECK(rep.skipped_kinds.at("start") == 1);
  const std::string text = report_text(rep, 10, {});
  CHECK(text.find("approval records 2") != std::string::npos);
  CHECK(text.find("approval 2") == std::string::npos);
}

// A replay that read no record is no evidence that nothing widened: a CI gate pointed at the
// wrong path, an empty file or a file of something else fails, naming the log.
TEST_CASE("warden replay fails when a log given holds no record, naming it", "[replay]") {
  using warden::cli::testing::Child;
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.shell("alice", "s1", "cat README.md", at(9, 0));
  const std::string empty = dir.write("empty.jsonl", "");
  const std::string proposals = dir.write(
      "proposals.jsonl",
      "{\"target\":\"shell\",\"payload\":{\"command\":\"ls\"}}\n{\"target\":\"reply\"}\n");

  auto run = [&](std::vector<std::string> args) {
    Child child(std::move(args));
    int status = child.finish();
    return std::make_tuple(status, child.out(), child.err());
  };
  for (const auto& [file, why] :
       {std::pair{empty, "(0 line(s) in 1 file(s), none of them a record)"},
        std::pair{proposals, "(2 line(s) in 1 file(s), none of them a record)"}}) {
    for (const char* gate : {"--fail-on-widening", "--fail-on-change", "--no-progress"}) {
      INFO(file << " " << gate);
      auto [code, out, err] = run({"replay", file, "--rules", base, gate});
      CHECK(code == 2);
      CHECK(out.empty());
      CHECK(err == "warden: replay: " + file + ": no audit record read " + why +
                       ": not an audit log, or an empty one\n");
    }
  }
  // One good log does not vouch for another given beside it.
  auto [code, out, err] = run({"replay", log, empty, "--rules", base, "--fail-on-widening"});
  CHECK(code == 2);
  CHECK(err.find("warden: replay: " + empty + ": no audit record read") == 0);
  // The good log alone replays.
  auto [ok_code, ok_out, ok_err] = run({"replay", log, "--rules", base, "--rules", kEffects,
                                        "--rules", kPaths, "--fail-on-widening"});
  CHECK(ok_code == 0);
  CHECK(ok_out.find("0 changed, 0 widening") != std::string::npos);
}

// Each changed record of the text report names where it is: its seq and its file:line.
TEST_CASE("the text report names each changed record's file and line", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string mixed = dir.write("mixed/mixed.clp", kMixedRules);
  const std::string log = dir / "audit.jsonl";
  Recorder rec({base, kEffects, kPaths}, log);
  rec.shell("alice", "s1", "ls", at(10, 0));
  const auto rm = rec.shell("alice", "s1", "rm -rf build", at(10, 1));
  ReplayReport rep = replay(log, {mixed, kEffects, kPaths});
  REQUIRE(!rep.changes.empty());
  REQUIRE(rep.changes[0].seq == rm);
  // The line of record `rm` in the file, counted here.
  std::ifstream in(log);
  std::string line;
  std::uint64_t number = 0, found = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("{\"seq\":" + std::to_string(rm) + ",", 0) == 0) found = number;
  }
  REQUIRE(found > 0);
  const std::string text = report_text(rep);
  CHECK(text.find("WIDENING seq " + std::to_string(rm) + " " + log + ":" + std::to_string(found) +
                  " ") != std::string::npos);
}

// A change's summary and a start record are read with the one JSON parser (bindings/json.h):
// a document it refuses — here a zero RapidJSON would misread as another number — reads as
// none, as the engine refuses such a proposal (E_INPUT_JSON).
TEST_CASE("a proposal the one JSON parser refuses is summarized by its text", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  const std::string readable =
      R"({"target":"shell","action":"run","payload":{"command":"ls","n":0},"context":{"session":"s1"}})";
  const std::string refused =
      R"({"target":"shell","action":"run","payload":{"command":"ls","n":0e66},"context":{"session":"s1"}})";
  Recorder rec({base, kEffects, kPaths}, log);
  Decision approved;
  approved.decision_id = "older-daemon";
  approved.outcome = Outcome::Approve;
  approved.reason = "recorded by a daemon that read the number";
  const auto kept = rec.record("alice", "s1", readable, approved, at(9, 0));
  const auto changed = rec.record("alice", "s1", refused, approved, at(9, 1));
  rec.close();
  CHECK(rec.outcomes[kept] == Outcome::Approve);

  ReplayReport rep = replay(log, {base, kEffects, kPaths});
  REQUIRE(rep.changes.size() == 1);
  const ReplayChange& c = rep.changes[0];
  CHECK(c.seq == changed);
  CHECK(c.new_outcome == Outcome::Reject);
  CHECK(c.new_error == "E_INPUT_JSON");
  CHECK(c.summary == refused);
  // The readable one would have been summarized by its members.
  Recorder other({base, kEffects, kPaths}, dir / "other.jsonl");
  Decision rejected = approved;
  rejected.outcome = Outcome::Reject;
  other.record("alice", "s1", readable, rejected, at(9, 0));
  other.close();
  ReplayReport read = replay(dir / "other.jsonl", {base, kEffects, kPaths});
  REQUIRE(read.changes.size() == 1);
  CHECK(read.changes[0].summary == "shell/run command=ls");
}

TEST_CASE("a start record the one JSON parser refuses gives no settings", "[replay]") {
  TempDir dir{"warden-replay"};
  const std::string base = dir.write("base/base.clp", kBaseRules);
  const std::string log = dir / "audit.jsonl";
  SessionMemoryOptions memory;
  memory.ttl_seconds = 60;
  Recorder rec({base, kEffects, kPaths}, log, memory);
  rec.shell("alice", "s1", "ls", at(9, 0));
  rec.close();
  ReplayReport as_written = replay(log, {base, kEffects, kPaths});
  CHECK(as_written.options_from == "start record seq 1");
  CHECK(as_written.session.ttl_seconds == 60);

  // The same start record with one more member, a zero RapidJSON would misread.
  std::string text;
  {
    std::ifstream in(log);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  const std::size_t at_member = text.find("\"every_records\":");
  REQUIRE(at_member < text.find('\n'));
  text.insert(at_member, "\"n\":0e66,");
  const std::string edited = dir.write("edited.jsonl", text);
  ReplayReport rep = replay(edited, {base, kEffects, kPaths});
  CHECK(rep.options_from == "engine defaults");
  CHECK(rep.session.ttl_seconds == SessionMemoryOptions{}.ttl_seconds);
  CHECK(std::find(rep.warnings.begin(), rep.warnings.end(),
                  "start record seq 1 lacks workspace_root, home or default_outcome") !=
        rep.warnings.end());
  CHECK(rep.changed == 0);
}
