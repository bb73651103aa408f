// verify, query and parse_decision on logs written by the daemon's own Writer (audit/writer.h)
// with decision records from decision_fields (audit/record.h): checkpoints by count, rotation
// by size, resume after close, and tampering in a rotated file.
#include <catch2/catch.hpp>

#include "audit/query.h"
#include "audit/reader.h"
#include "audit/record.h"
#include "audit/verify.h"
#include "audit/writer.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::audit;
using warden::server::testing::TempDir;

namespace {

struct WrittenLog {
  TempDir dir;
  std::string live, priv, pub;
  std::shared_ptr<const SigningKey> key;
  std::unique_ptr<VerifyKey> verify_key;
  std::int64_t clock = 1795400000000000;

  WrittenLog() {
    live = dir.str() + "/audit.jsonl";
    priv = dir.str() + "/signing.pem";
    pub = dir.str() + "/signing.pem.pub";
    std::string error;
    REQUIRE(generate_key(priv, pub, &error));
    key = SigningKey::load(priv, &error);
    REQUIRE(key);
    verify_key = VerifyKey::load(pub, &error);
    REQUIRE(verify_key);
  }

  std::unique_ptr<Writer> open() {
    WriterOptions o;
    o.path = live;
    o.daemon_id = "host-1";
    o.durability = Durability::Write;
    o.rotate_bytes = 6000;
    o.rotate_age = std::chrono::seconds(0);
    o.checkpoint_records = 5;
    o.checkpoint_age = std::chrono::seconds(60);
    o.key = key;
    o.start_fields =
        "\"version\":\"test\",\"pid\":1,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
        "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
        key->key_id() + "\",\"every_records\":5,\"every_seconds\":60";
    o.clock_us = [this] { return clock; };
    std::string error;
    auto w = Writer::open(o, &error);
    INFO(error);
    REQUIRE(w);
    return w;
  }

  void decide(Writer& w, int i) {
    clock += 1000000;
    Decision d;
    d.decision_id = "d" + std::to_string(i);
    d.outcome = i % 3 == 0 ? Outcome::ApprovalRequired : Outcome::Approve;
    d.reason = "because";
    d.rules = {{.rule = "rule-" + std::to_string(i % 3),
                .outcome = d.outcome,
                .reason = "because",
                .monitor = false,
                .overlay = {},
                .asserted_reason = {}}};
    d.rules_digest = "sha256:aa";
    d.effects = {{"exec", "program", "ls", "ls", "none", false, "", "argv", false}};
    const std::string proposal = R"({"target":"shell","action":"run","payload":{"command":"ls )" +
                                 std::to_string(i) + R"("}})";
    DecisionInput in{
        proposal, i % 2 ? "agent-x" : "agent-y", {"dev"}, "s" + std::to_string(i / 10), clock};
    AppendResult r = w.append_wait("decision", clock, decision_fields(in, d, nullptr));
    REQUIRE(r.ok);
  }

  VerifyReport verify(bool require_signed_tail = false) const {
    VerifyOptions o;
    o.key = verify_key.get();
    o.require_signed_tail = require_signed_tail;
    return verify_paths({live}, o);
  }
};

}  // namespace

TEST_CASE("a log written by the Writer verifies across rotations and a restart") {
  WrittenLog log;
  {
    auto w = log.open();
    for (int i = 0; i < 30; ++i) log.decide(*w, i);
    w->close();
  }
  {
    auto w = log.open();  // resumes the chain
    for (int i = 30; i < 40; ++i) log.decide(*w, i);
    w->close();
  }
  VerifyReport r = log.verify(true);  // closed gracefully: no unsigned tail
  INFO(report_to_json(r));
  CHECK(r.ok);
  CHECK(r.files >= 3);
  CHECK(r.first_seq == 1);
  CHECK(r.records == r.last_seq);
  CHECK(r.signed_through == r.last_seq);
  CHECK(r.unsigned_tail == 0);

  // parse_decision and query read what decision_fields wrote.
  LogSet set;
  std::string error;
  REQUIRE(LogSet::open(expand_log_paths({log.live}), &set, &error));
  QueryFilter f;
  f.principal = "agent-x";
  f.outcome = Outcome::ApprovalRequired;
  std::vector<std::string> summaries;
  run_query(set, f, [&](const QueryRow& row) { summaries.push_back(row.summary); });
  // i odd and i % 3 == 0: 3, 9, 15, 21, 27, 33, 39
  CHECK(summaries == std::vector<std::string>{"shell run: ls 3", "shell run: ls 9",
                                              "shell run: ls 15", "shell run: ls 21",
                                              "shell run: ls 27", "shell run: ls 33",
                                              "shell run: ls 39"});
  std::uint64_t decisions = 0;
  set.for_each_line([&](const LogLine& line) {
    DecisionRecord d;
    std::string why;
    if (!parse_decision(line.text, &d, &why)) return;
    ++decisions;
    CHECK(d.proposal_json.find("\"command\":\"ls ") != std::string::npos);
    REQUIRE(d.effects.size() == 1);
    CHECK(d.effects[0].program == "ls");
    CHECK(d.daemon == "host-1");
  });
  CHECK(decisions == 40);
}

TEST_CASE("tampering with a Writer's rotated file is found in that file") {
  WrittenLog log;
  {
    auto w = log.open();
    for (int i = 0; i < 30; ++i) log.decide(*w, i);
    w->close();
  }
  std::vector<std::string> files = log_files(log.live);
  REQUIRE(files.size() >= 2);
  // Line 3 of the first rotated file: change one byte of the command.
  std::string first = files[0];
  std::string name = first.substr(first.rfind('/') + 1);
  std::string text = log.dir.read(name);
  std::size_t line_start = 0;
  for (int i = 0; i < 2; ++i) line_start = text.find('\n', line_start) + 1;
  std::size_t at = text.find("\"command\":\"ls ", line_start);
  REQUIRE(at != std::string::npos);
  text[at + 14] = text[at + 14] == '9' ? '8' : '9';
  log.dir.write(name, text);
  VerifyReport r = log.verify();
  INFO(report_to_json(r));
  REQUIRE(r.findings_total == 1);
  CHECK(r.first_bad()->kind == FindingKind::Edited);
  CHECK(r.first_bad()->file == first);
  CHECK(r.first_bad()->line == 3);
  CHECK(r.first_bad()->seq == 3);
}
