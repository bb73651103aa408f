// audit verify: each kind of tampering reported at the right seq, file and line, on logs
// written line by line (log_builder.h) and then altered as an attacker would.
#include "audit/verify.h"

#include <catch2/catch.hpp>
#include <cstdlib>

#include "audit/chain.h"
#include "tests/audit/log_builder.h"
#include "tests/support/temp_dir.h"

using namespace warden::audit;
using warden::audit::testing::DecisionSpec;
using warden::audit::testing::LogBuilder;
using warden::audit::testing::sha256;
using warden::audit::testing::TestKey;
using warden::server::testing::TempDir;

namespace {

// start, then `decisions` decision records with a checkpoint after every 10 records.
void add_records(LogBuilder& b, int decisions, int* since_checkpoint) {
  for (int i = 0; i < decisions; ++i) {
    DecisionSpec d;
    d.command = "echo " + std::to_string(b.seq() + 1);
    b.decision(d);
    if (++*since_checkpoint == 10) {
      b.checkpoint();
      *since_checkpoint = 0;
    }
  }
}

struct Fixture {
  TempDir dir;
  TestKey key;
  std::unique_ptr<VerifyKey> verify_key;
  LogBuilder b{key, 10, 60};
  int since = 0;

  Fixture() {
    key.write_public(dir.str() + "/audit.pub");
    std::string error;
    verify_key = VerifyKey::load(dir.str() + "/audit.pub", &error);
    REQUIRE(verify_key);
    b.start();
    since = 1;
  }
  VerifyReport verify(const std::vector<std::string>& paths,
                      bool require_signed_tail = false) const {
    VerifyOptions o;
    o.key = verify_key.get();
    o.threads = 2;
    o.require_signed_tail = require_signed_tail;
    return verify_paths(paths, o);
  }
  std::string live() const { return dir.str() + "/audit.jsonl"; }
};

// Replaces the first `from` in `line` by `to`.
std::string replace(std::string line, const std::string& from, const std::string& to) {
  std::size_t at = line.find(from);
  REQUIRE(at != std::string::npos);
  return line.replace(at, from.size(), to);
}

// Recomputes a line's hash after an edit, as an attacker would.
std::string rehash(const std::string& line) {
  std::string body = line.substr(0, line.size() - 1);  // no '\n'
  std::string sealed = body.substr(0, body.size() - 75);
  return sealed + ",\"hash\":\"" + sha256(sealed) + "\"}\n";
}

void require_one(const VerifyReport& r, FindingKind kind, std::uint64_t seq,
                 const std::string& file, std::uint64_t line) {
  INFO(report_to_json(r));
  CHECK_FALSE(r.ok);
  REQUIRE(r.findings_total == 1);
  const Finding* f = r.first_bad();
  REQUIRE(f);
  CHECK(finding_kind_name(f->kind) == finding_kind_name(kind));
  CHECK(f->seq == seq);
  CHECK(f->file == file);
  CHECK(f->line == line);
}

}  // namespace

TEST_CASE("an intact log verifies, with its counts") {
  Fixture f;
  add_records(f.b, 24, &f.since);  // start 1, checkpoints at seq 11 and 22, decisions to 27
  f.b.stop();                      // stop 28, checkpoint 29
  f.b.decision();                  // 30: an unsigned tail of one
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  INFO(report_to_json(r));
  CHECK(r.ok);
  CHECK(r.findings_total == 0);
  CHECK(r.files == 1);
  CHECK(r.records == 30);
  CHECK(r.checkpoints == 3);
  CHECK(r.first_seq == 1);
  CHECK(r.last_seq == 30);
  CHECK(r.signed_through == 29);
  CHECK(r.unsigned_tail == 1);
  CHECK(r.key_id == f.key.id());

  // --require-signed-tail makes that one unsigned record a failure.
  VerifyReport strict = f.verify({f.live()}, true);
  require_one(strict, FindingKind::MissingCheckpoint, 30, f.live(), 30);
}

TEST_CASE("an edited field is reported at its seq and line") {
  Fixture f;
  add_records(f.b, 15, &f.since);
  f.b.lines[6] = replace(f.b.lines[6], "echo 7", "echo X");  // seq 7
  f.dir.write("audit.jsonl", f.b.text());
  require_one(f.verify({f.live()}), FindingKind::Edited, 7, f.live(), 7);
}

TEST_CASE("an edit with its hash recomputed is reported at the edited record") {
  Fixture f;
  add_records(f.b, 15, &f.since);
  f.b.lines[6] = rehash(replace(f.b.lines[6], "\"outcome\":\"approve\"", "\"outcome\":\"reject\""));
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  // The chain breaks at seq 8's prev; the checkpoint at 11 still signs the original chain head.
  INFO(report_to_json(r));
  REQUIRE(r.findings_total == 1);
  CHECK(r.first_bad()->kind == FindingKind::Edited);
  CHECK(r.first_bad()->seq == 7);
  CHECK(r.first_bad()->line == 7);
  CHECK(r.first_bad()->message.find("hash recomputed") != std::string::npos);
}

TEST_CASE("a deleted line is reported with the missing seq") {
  Fixture f;
  add_records(f.b, 15, &f.since);
  f.b.lines.erase(f.b.lines.begin() + 4);  // seq 5
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  require_one(r, FindingKind::Deleted, 5, f.live(), 5);  // where seq 5 should be: now seq 6's line
  CHECK(r.first_bad()->message.find("seq 5 is missing") != std::string::npos);

  // Deleting the first lines: the log no longer begins at seq 1.
  Fixture g;
  add_records(g.b, 5, &g.since);
  g.b.lines.erase(g.b.lines.begin(), g.b.lines.begin() + 2);
  g.dir.write("audit.jsonl", g.b.text());
  require_one(g.verify({g.live()}), FindingKind::Deleted, 1, g.live(), 1);
  // --partial: older files archived; the log may begin later.
  VerifyOptions partial;
  partial.key = g.verify_key.get();
  partial.partial = true;
  VerifyReport p = verify_paths({g.live()}, partial);
  CHECK(p.ok);
  CHECK(p.first_seq == 3);
}

TEST_CASE("two swapped lines are one reordering") {
  Fixture f;
  add_records(f.b, 15, &f.since);
  std::swap(f.b.lines[4], f.b.lines[5]);  // seqs 5 and 6
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  require_one(r, FindingKind::Reordered, 6, f.live(), 5);
  CHECK(r.first_bad()->message.find("before seq 5") != std::string::npos);
}

TEST_CASE("a torn last line is reported") {
  Fixture f;
  add_records(f.b, 5, &f.since);
  std::string text = f.b.text();
  text.resize(text.size() - 30);
  f.dir.write("audit.jsonl", text);
  require_one(f.verify({f.live()}), FindingKind::Torn, 6, f.live(), 6);

  // A complete line missing only its '\n' is torn too.
  Fixture g;
  add_records(g.b, 5, &g.since);
  std::string whole = g.b.text();
  whole.pop_back();
  g.dir.write("audit.jsonl", whole);
  require_one(g.verify({g.live()}), FindingKind::Torn, 6, g.live(), 6);
}

TEST_CASE("a malformed line is reported once, the chain picks up after it") {
  Fixture f;
  add_records(f.b, 8, &f.since);
  f.b.lines[3] = "{\"seq\":4,\"garbage\n";
  f.dir.write("audit.jsonl", f.b.text());
  require_one(f.verify({f.live()}), FindingKind::Malformed, 4, f.live(), 4);
}

namespace {

// Three files, 1..12, 13..25 and 26..31; each rotated file ends with its rotate checkpoint.
struct Rotated : Fixture {
  std::string a, b2, live_file;
  std::vector<std::string> parts;
  Rotated() {
    add_records(b, 9, &since);  // decisions 2..10, checkpoint 11
    std::size_t second =
        b.rotate("audit.000000000001-000000000012.jsonl");  // checkpoint 12, rotate 13
    since = 1;
    add_records(b, 10, &since);  // decisions 14..22, checkpoint 23, decision 24
    std::size_t third =
        b.rotate("audit.000000000013-000000000025.jsonl");  // checkpoint 25, rotate 26
    since = 1;
    add_records(b, 5, &since);  // decisions 27..31
    parts = {b.text(0, second), b.text(second, third), b.text(third)};
  }
  void write(bool first = true, bool middle = true, bool last = true) {
    if (first) a = dir.write("audit.000000000001-000000000012.jsonl", parts[0]);
    if (middle) b2 = dir.write("audit.000000000013-000000000025.jsonl", parts[1]);
    if (last) live_file = dir.write("audit.jsonl", parts[2]);
  }
};

}  // namespace

TEST_CASE("rotation keeps the chain: the live file brings its rotated siblings") {
  Rotated r;
  r.write();
  VerifyReport report = r.verify({r.live()});
  INFO(report_to_json(report));
  CHECK(report.ok);
  CHECK(report.files == 3);
  CHECK(report.first_seq == 1);
  CHECK(report.last_seq == r.b.seq());

  // Named explicitly and out of order: still ordered by seq, still verifies.
  VerifyReport shuffled = r.verify({r.live_file, r.b2, r.a});
  INFO(report_to_json(shuffled));
  CHECK(shuffled.ok);
  CHECK(shuffled.files == 3);
}

TEST_CASE("a rotated file that lost its tail is truncated") {
  Rotated r;
  // The middle file loses its last 3 lines (seqs 23..25: the rotate checkpoint among them).
  std::string& middle = r.parts[1];
  for (int i = 0; i < 3; ++i) middle.resize(middle.rfind('\n', middle.size() - 2) + 1);
  r.write();
  VerifyReport report = r.verify({r.live()});
  // The middle file now ends at line 10, seq 22: seq 23 would have been line 11.
  require_one(report, FindingKind::Truncated, 23, r.b2, 11);
  CHECK(report.first_bad()->message.find("seqs 23..25") != std::string::npos);
}

TEST_CASE("a rotated file missing in the middle is deleted seqs, named by the next file") {
  Rotated r;
  r.write(true, false, true);
  VerifyReport report = r.verify({r.live()});
  require_one(report, FindingKind::Deleted, 13, r.live_file, 1);
  CHECK(report.first_bad()->message.find("seqs 13..25") != std::string::npos);
  CHECK(report.first_bad()->message.find("audit.000000000013-000000000025.jsonl") !=
        std::string::npos);
}

TEST_CASE("a whole-file rewrite with recomputed hashes is caught by the signatures") {
  Fixture f;
  add_records(f.b, 25, &f.since);
  f.b.stop();

  SECTION("checkpoints re-signed with another key") {
    TestKey attacker;
    LogBuilder forged(attacker, 10, 60);
    forged.start();
    int since = 1;
    add_records(forged, 25, &since);
    forged.stop();
    f.dir.write("audit.jsonl", forged.text());
    VerifyReport r = f.verify({f.live()});
    INFO(report_to_json(r));
    CHECK_FALSE(r.ok);
    REQUIRE(r.first_bad());
    CHECK(r.first_bad()->kind == FindingKind::BadSignature);
    CHECK(r.first_bad()->seq == 11);
    CHECK(r.first_bad()->line == 11);
    CHECK(r.findings_total == 3);  // every checkpoint: 11, 22, 30 (stop), and nothing else
    for (const auto& finding : r.findings) CHECK(finding.kind == FindingKind::BadSignature);
    CHECK(r.signed_through == 0);

    // A log signed with successive keys verifies with both (the attacker's key stands in for
    // the daemon's next key here).
    attacker.write_public(f.dir.str() + "/next.pub");
    std::string error;
    auto next = VerifyKey::load(f.dir.str() + "/next.pub", &error);
    REQUIRE(next);
    VerifyOptions both;
    both.key = f.verify_key.get();
    both.other_keys = {next.get()};
    VerifyReport b = verify_paths({f.live()}, both);
    CHECK(b.ok);
    CHECK(b.key_id == f.key.id() + "," + attacker.id());

    // The chain alone cannot tell: that is what the signatures are for.
    VerifyOptions chain_only;
    VerifyReport c = verify_paths({f.live()}, chain_only);
    CHECK(c.ok);
    CHECK(c.chain_only);
  }

  SECTION("a checkpoint's signature copied from the original log does not fit the new chain") {
    std::string original_checkpoint = f.b.lines[10];
    f.b.lines[5] = rehash(replace(f.b.lines[5], "echo 6", "echo Z"));
    // Recompute the chain after the edit, keeping the original (now wrong) signature.
    std::string prev;
    for (std::size_t i = 0; i < f.b.lines.size(); ++i) {
      std::string& line = f.b.lines[i];
      if (i > 5)
        line = rehash(line.substr(0, line.find("\"prev\":\"") + 8) + prev +
                      line.substr(line.find("\"prev\":\"") + 72));
      prev = line.substr(line.size() - 67, 64);
    }
    f.dir.write("audit.jsonl", f.b.text());
    VerifyReport r = f.verify({f.live()});
    INFO(report_to_json(r));
    REQUIRE(r.first_bad());
    CHECK(r.first_bad()->kind == FindingKind::BadSignature);
    CHECK(r.first_bad()->seq == 11);
  }

  SECTION("checkpoints dropped") {
    LogBuilder forged(f.key, 10, 60);  // even with no key at all, the count gives it away
    forged.start();
    for (int i = 0; i < 25; ++i) forged.decision();
    f.dir.write("audit.jsonl", forged.text());
    VerifyReport r = f.verify({f.live()});
    // 13 records since the start (bound 10, slack 2): reported at seq 13.
    require_one(r, FindingKind::MissingCheckpoint, 13, f.live(), 13);
  }
}

TEST_CASE("more record time than every_seconds (plus one interval) without a checkpoint") {
  Fixture f;
  f.b.step_us = 50 * 1000000LL;  // 50 s a record, bound 60 s + 60 s grace
  add_records(f.b, 5, &f.since);
  f.dir.write("audit.jsonl", f.b.text());
  // seq 1 at t, seq 4 at t+150 s (first past 120 s), seq 5 the second: reported there.
  require_one(f.verify({f.live()}), FindingKind::MissingCheckpoint, 5, f.live(), 5);
}

TEST_CASE("an unreadable file is a finding of its own") {
  TempDir dir;
  VerifyReport r = verify_paths({dir.str() + "/missing.jsonl"}, {});
  REQUIRE(r.first_bad());
  CHECK(r.first_bad()->kind == FindingKind::Unreadable);
  CHECK(r.first_bad()->file == dir.str() + "/missing.jsonl");
  CHECK_FALSE(r.ok);
}

TEST_CASE("the JSON report") {
  Fixture f;
  add_records(f.b, 5, &f.since);
  f.b.lines[2] = replace(f.b.lines[2], "echo 3", "echo 9");
  f.dir.write("audit.jsonl", f.b.text());
  std::string json = report_to_json(f.verify({f.live()}));
  CHECK(json.find("\"ok\":false") != std::string::npos);
  CHECK(json.find("\"first_bad\":{\"kind\":\"edited\",\"seq\":3,\"file\":\"" + f.live() +
                  "\",\"line\":3") != std::string::npos);
}

TEST_CASE("a duplicated line is reordered; a file split by hand lacks its rotation checkpoint") {
  Fixture f;
  add_records(f.b, 8, &f.since);
  f.b.lines.insert(f.b.lines.begin() + 5, f.b.lines[4]);  // seq 5 twice
  f.dir.write("audit.jsonl", f.b.text());
  require_one(f.verify({f.live()}), FindingKind::Reordered, 5, f.live(), 6);

  Fixture g;
  add_records(g.b, 8, &g.since);
  const std::string first = g.dir.write("audit.000000000001-000000000004.jsonl", g.b.text(0, 4));
  const std::string live = g.dir.write("audit.jsonl", g.b.text(4));
  VerifyReport r = g.verify({live});
  require_one(r, FindingKind::MissingCheckpoint, 4, first, 4);
}

TEST_CASE("findings at the edges of the hashing threads' pieces are the same as anywhere") {
  Fixture f;
  while (f.b.text().size() < (9u << 20))
    add_records(f.b, 1000, &f.since);  // more than two pieces of 4 MiB
  const std::string original = f.b.text();
  // The line that holds byte 4 MiB ends the first piece: tamper with it and its neighbours.
  std::size_t line =
      static_cast<std::size_t>(std::count(original.begin(), original.begin() + (4 << 20), '\n'));
  for (std::size_t at : {line - 1, line, line + 1, line + 2}) {
    for (int threads : {1, 2, 3}) {
      LogBuilder copy = f.b;
      copy.lines[at] = rehash(replace(copy.lines[at], "test-host", "test-hosx"));
      f.dir.write("audit.jsonl", copy.text());
      VerifyOptions o;
      o.key = f.verify_key.get();
      o.threads = static_cast<unsigned>(threads);
      VerifyReport r = verify_paths({f.live()}, o);
      INFO("line index " << at << ", " << threads << " threads: " << report_to_json(r));
      REQUIRE(r.findings_total == 1);
      CHECK(r.first_bad()->kind == FindingKind::Edited);
      CHECK(r.first_bad()->line == at + 1);
      CHECK(r.first_bad()->seq == at + 1);
    }
  }
  f.dir.write("audit.jsonl", original);
  CHECK(f.verify({f.live()}).ok);
}

TEST_CASE("a daemon killed before its checkpoint and started hours later") {
  Fixture f;  // start at seq 1; checkpoints every 10 records or 60 s
  for (int i = 0; i < 5; ++i) f.b.decision();  // 2..6 unsigned, then kill -9
  f.b.time_us += 3LL * 3600 * 1000000;         // three hours later
  f.b.start();                                 // seq 7: the next run; the writer's count goes on
  for (int i = 0; i < 3; ++i) f.b.decision();  // 8..10
  f.b.checkpoint();                            // seq 11 signs everything before it
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  INFO(report_to_json(r));
  CHECK(r.ok);
  CHECK(r.signed_through == 11);
  CHECK(r.unsigned_tail == 0);

  // Without that checkpoint, the tail spans both runs.
  f.b.lines.pop_back();
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport tail = f.verify({f.live()});
  CHECK(tail.ok);
  CHECK(tail.unsigned_tail == 10);

  // A start does not reset the record count: a rewrite cannot hide missing checkpoints
  // behind fake restarts.
  Fixture g;
  for (int i = 0; i < 5; ++i) g.b.decision();  // 2..6
  g.b.start();                                 // 7
  for (int i = 0; i < 8; ++i) g.b.decision();  // 8..15: 15 records, no checkpoint
  g.dir.write("audit.jsonl", g.b.text());
  require_one(g.verify({g.live()}), FindingKind::MissingCheckpoint, 13, g.live(), 13);
}

namespace {

// A start record with the given bounds (LogBuilder::start() writes its constructor's).
void start_with(LogBuilder& b, const TestKey& key, std::uint64_t every_records,
                std::uint64_t every_seconds) {
  b.record(
      "start",
      "\"version\":\"0.1.0\",\"pid\":43,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
      "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
          key.id() + "\",\"every_records\":" + std::to_string(every_records) +
          ",\"every_seconds\":" + std::to_string(every_seconds));
}

VerifyReport verify_with(const Fixture& f, VerifyOptions o) {
  o.key = f.verify_key.get();
  o.threads = 2;
  return verify_paths({f.live()}, o);
}

}  // namespace

TEST_CASE("bounds from unsigned records may lower the signed ones, never raise or disable them") {
  // The signed bound is 10 (the checkpoint at seq 11); a start in the tail says otherwise.
  for (std::uint64_t forged : {std::uint64_t{0}, std::uint64_t{1000}, std::uint64_t{1000000000}}) {
    Fixture f;
    add_records(f.b, 9, &f.since);           // 2..10, checkpoint 11
    start_with(f.b, f.key, forged, forged);  // 12, unsigned
    for (int i = 0; i < 20; ++i) f.b.decision();
    f.dir.write("audit.jsonl", f.b.text());
    INFO("the tail's start says every_records " << forged);
    // 13 records after the checkpoint (bound 10 + slack 2): seq 24.
    require_one(f.verify({f.live()}), FindingKind::MissingCheckpoint, 24, f.live(), 24);
  }
  // A lower bound in the tail is taken: the daemon that wrote that start counts to it.
  Fixture low;
  add_records(low.b, 9, &low.since);
  start_with(low.b, low.key, 3, 60);  // 12: bound 3 + slack 2
  for (int i = 0; i < 20; ++i) low.b.decision();
  low.dir.write("audit.jsonl", low.b.text());
  require_one(low.verify({low.live()}), FindingKind::MissingCheckpoint, 17, low.live(), 17);

  // A start a later valid checkpoint covers is signed: its larger bound holds before it.
  Fixture raised;
  add_records(raised.b, 9, &raised.since);
  start_with(raised.b, raised.key, 30, 60);          // 12
  for (int i = 0; i < 25; ++i) raised.b.decision();  // 13..37: 26 records
  raised.b.checkpoint();                             // 38
  raised.dir.write("audit.jsonl", raised.b.text());
  VerifyReport r = raised.verify({raised.live()});
  INFO(report_to_json(r));
  CHECK(r.ok);
  // Without that checkpoint the same start is unsigned, and the signed bound (10) holds.
  raised.b.lines.pop_back();
  raised.dir.write("audit.jsonl", raised.b.text());
  require_one(raised.verify({raised.live()}), FindingKind::MissingCheckpoint, 24, raised.live(),
              24);
}

TEST_CASE(
    "records no signature covers are bounded by --max-unsigned when nothing signed bounds them") {
  Fixture f;
  {
    LogBuilder b(f.key, 0, 0);  // a log with no checkpoint at all, its start saying "no bounds"
    b.start();
    for (int i = 0; i < 50; ++i) b.decision();  // 2..51
    f.dir.write("audit.jsonl", b.text());
  }
  VerifyOptions o;
  CHECK(verify_with(f, o).ok);  // 51 records: under the default ceiling
  o.max_unsigned = 40;
  VerifyReport r = verify_with(f, o);
  require_one(r, FindingKind::MissingCheckpoint, 41, f.live(), 41);
  CHECK(r.first_bad()->message.find("--max-unsigned") != std::string::npos);
  // The default ceiling: a log nobody signed does not verify with a key past it.
  {
    LogBuilder b(f.key, 0, 0);
    b.start();
    for (std::uint64_t i = 1; i < kDefaultMaxUnsigned + 5; ++i) b.decision();
    f.dir.write("audit.jsonl", b.text());
  }
  require_one(verify_with(f, {}), FindingKind::MissingCheckpoint, kDefaultMaxUnsigned + 1, f.live(),
              kDefaultMaxUnsigned + 1);

  // A signed every_records of 0 turns the count off where signatures cover the records, not in
  // the unsigned tail after them.
  LogBuilder b(f.key, 0, 0);
  b.start();
  for (int i = 0; i < 50; ++i) b.decision();  // 2..51, signed by the checkpoint at 52
  b.checkpoint();
  for (int i = 0; i < 50; ++i) b.decision();  // 53..102, unsigned
  f.dir.write("audit.jsonl", b.text());
  require_one(verify_with(f, o), FindingKind::MissingCheckpoint, 93, f.live(), 93);
}

TEST_CASE("the daemon id changes only at a start record") {
  Fixture f;
  add_records(f.b, 9, &f.since);  // checkpoint at 11
  f.b.daemon = "other-host";
  for (int i = 0; i < 3; ++i) f.b.decision();  // 12..14: another daemon's records spliced in
  f.dir.write("audit.jsonl", f.b.text());
  VerifyReport r = f.verify({f.live()});
  require_one(r, FindingKind::Edited, 12, f.live(), 12);
  CHECK(r.first_bad()->message.find("other-host") != std::string::npos);

  Fixture g;
  add_records(g.b, 9, &g.since);
  g.b.daemon = "other-host";
  g.b.start();  // 12: the other daemon starts on this log
  for (int i = 0; i < 3; ++i) g.b.decision();
  g.b.checkpoint();
  g.dir.write("audit.jsonl", g.b.text());
  VerifyReport ok = g.verify({g.live()});
  INFO(report_to_json(ok));
  CHECK(ok.ok);
}

TEST_CASE("the daemon id is checked after a line that is not a record too") {
  for (bool other : {false, true}) {
    Fixture f;
    add_records(f.b, 9, &f.since);  // checkpoint at 11
    if (other) f.b.daemon = "other-host";
    for (int i = 0; i < 3; ++i) f.b.decision();                  // 12..14
    f.b.lines.insert(f.b.lines.begin() + 11, "not a record\n");  // line 12
    f.dir.write("audit.jsonl", f.b.text());
    VerifyReport r = f.verify({f.live()});
    INFO(report_to_json(r));
    REQUIRE(r.findings_total == (other ? 2u : 1u));
    CHECK(r.findings[0].kind == FindingKind::Malformed);
    if (other) {
      CHECK(r.findings[1].kind == FindingKind::Edited);
      CHECK(r.findings[1].seq == 12);
      CHECK(r.findings[1].line == 13);
    }
  }
}

TEST_CASE("a log ending with a rotation checkpoint continues in a file not given") {
  Fixture f;
  add_records(f.b, 9, &f.since);                                               // checkpoint at 11
  const std::size_t at = f.b.rotate("audit.000000000001-000000000012.jsonl");  // 12; rotate 13
  const std::string rotated = f.dir.write("audit.000000000001-000000000012.jsonl", f.b.text(0, at));
  VerifyOptions o;
  o.key = f.verify_key.get();
  VerifyReport r = verify_paths({rotated}, o);
  require_one(r, FindingKind::Truncated, 13, rotated, 13);
  o.partial = true;  // a slice on purpose
  CHECK(verify_paths({rotated}, o).ok);
  // With the live file, the log goes on.
  f.b.decision();
  f.dir.write("audit.jsonl", f.b.text(at));
  o.partial = false;
  CHECK(verify_paths({f.live()}, o).ok);
}

TEST_CASE("--require-closed: a stopped daemon's log ends with its stop checkpoint") {
  Fixture f;
  add_records(f.b, 9, &f.since);  // ends at the interval checkpoint 11: cut there
  f.dir.write("audit.jsonl", f.b.text());
  VerifyOptions o;
  CHECK(verify_with(f, o).ok);  // a running daemon's log may end anywhere
  o.require_closed = true;
  require_one(verify_with(f, o), FindingKind::Truncated, 12, f.live(), 12);

  f.b.stop();  // 12, checkpoint 13 (reason stop)
  f.dir.write("audit.jsonl", f.b.text());
  CHECK(verify_with(f, o).ok);

  f.b.decision();  // 14: after the stop, unsigned
  f.dir.write("audit.jsonl", f.b.text());
  require_one(verify_with(f, o), FindingKind::MissingCheckpoint, 14, f.live(), 14);
}

// Not run by default: writes the log the verify benchmark reads (docs/AUDIT.md, "Performance").
//   WARDEN_AUDIT_BENCH_LOG=/tmp/bench/audit.jsonl build/tests/audit_tests "[.bench]"
//   warden audit verify /tmp/bench/audit.jsonl --key /tmp/bench/audit.jsonl.pub
TEST_CASE("write a large signed log for the verify benchmark", "[.bench]") {
  const char* path = std::getenv("WARDEN_AUDIT_BENCH_LOG");
  REQUIRE(path);
  const char* count = std::getenv("WARDEN_AUDIT_BENCH_RECORDS");
  const long records = count ? std::atol(count) : 1000000;
  TestKey key;
  key.write_public(std::string(path) + ".pub");
  LogBuilder b(key, 1000, 60);
  std::FILE* out = std::fopen(path, "w");
  REQUIRE(out);
  b.start();
  const char* commands[] = {
      "git status --porcelain", "npm test -- --watch=false", "rm -rf build/ && cmake -S . -B build",
      "curl -fsSL https://registry.npmjs.org/left-pad", "cat ~/.ssh/id_ed25519"};
  const char* outcomes[] = {"approve", "approve", "approval-required", "approve", "reject"};
  int since = 1;
  for (long i = 1; i < records; ++i) {
    DecisionSpec d;
    d.principal = "agent-" + std::to_string(i % 7);
    d.session = "sess-" + std::to_string(i / 100);
    d.command = commands[i % 5];
    d.outcome = outcomes[i % 5];
    d.rule = std::string("shell-") + (i % 5 == 4 ? "secrets" : "workspace-build");
    b.decision(d);
    if (++since == 1000) {
      b.checkpoint();
      ++i;
      since = 0;
    }
    if (b.lines.size() >= 10000) {
      std::string text = b.text();
      std::fwrite(text.data(), 1, text.size(), out);
      b.lines.clear();
    }
  }
  std::string text = b.text();
  std::fwrite(text.data(), 1, text.size(), out);
  std::fclose(out);
}
