// `warden audit verify|query|show|keygen` as the auditor runs them: the real binary, real log
// files, exit codes and output formats.
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <chrono>

#include "audit/chain.h"
#include "audit/signing.h"
#include "tests/audit/log_builder.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

using warden::audit::testing::DecisionSpec;
using warden::audit::testing::LogBuilder;
using warden::audit::testing::TestKey;
using warden::cli::testing::run_warden;
using warden::server::testing::TempDir;

namespace {

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Two rotated files and the live file; records from 30 hours ago to now, one every 10 minutes.
struct AuditLog {
  TempDir dir;
  TestKey key;
  LogBuilder b{key, 10, 3600};
  std::string live, pub;

  AuditLog() {
    b.step_us = 10LL * 60 * 1000000;
    b.time_us = now_us() - 30LL * 3600 * 1000000;
    pub = dir.str() + "/audit.pub";
    key.write_public(pub);
    b.start();
    auto some = [&](int n) {
      for (int i = 0; i < n; ++i) {
        DecisionSpec d;
        d.principal = i % 2 ? "agent-x" : "agent-y";
        d.command = i % 3 == 0 ? "rm -rf build" : "ls";
        d.outcome = i % 3 == 0 ? "approval-required" : "approve";
        d.rule = i % 3 == 0 ? "shell-rm" : "shell-safe";
        b.decision(d);
      }
      b.checkpoint();
    };
    some(8);
    std::size_t second = b.rotate("audit.000000000001-000000000011.jsonl");
    some(8);
    std::size_t third = b.rotate("audit.000000000012-000000000022.jsonl");
    for (int i = 0; i < 4; ++i) some(8);  // up to now
    dir.write("audit.000000000001-000000000011.jsonl", b.text(0, second));
    dir.write("audit.000000000012-000000000022.jsonl", b.text(second, third));
    live = dir.write("audit.jsonl", b.text(third));
  }
};

}  // namespace

TEST_CASE("audit verify needs --key or --chain-only") {
  AuditLog log;
  auto r = run_warden({"audit", "verify", log.live});
  CHECK(r.code == 2);
  CHECK(r.err.find("--key") != std::string::npos);
  CHECK(r.err.find("--chain-only") != std::string::npos);
  CHECK(run_warden({"audit", "verify", log.live, "--key", log.pub, "--chain-only"}).code == 2);
}

TEST_CASE(
    "audit verify: 0 for an intact rotated log, 1 for a tampered one, 2 for an unreadable one") {
  AuditLog log;
  auto ok = run_warden({"audit", "verify", log.live, "--key", log.pub});
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("3 files") != std::string::npos);
  CHECK(ok.out.find("OK: the log verifies") != std::string::npos);
  CHECK(ok.out.find(log.key.id()) != std::string::npos);

  // --key before LOG takes one value; --key may repeat (a log signed with successive keys).
  TestKey other;
  other.write_public(log.dir.str() + "/other.pub");
  auto two = run_warden(
      {"audit", "verify", "--key", log.dir.str() + "/other.pub", "--key", log.pub, log.live});
  INFO(two.out << two.err);
  CHECK(two.code == 0);
  CHECK(two.out.find(other.id() + "," + log.key.id()) != std::string::npos);
  auto other_only =
      run_warden({"audit", "verify", "--key", log.dir.str() + "/other.pub", log.live});
  CHECK(other_only.code == 1);
  CHECK(other_only.out.find("bad-signature") != std::string::npos);

  auto chain = run_warden({"audit", "verify", log.live, "--chain-only"});
  CHECK(chain.code == 0);
  CHECK(chain.out.find("not checked") != std::string::npos);

  // Edit a decision in the live file.
  std::string text = log.dir.read("audit.jsonl");
  std::size_t at = text.find("\"outcome\":\"approval-required\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 29, "\"outcome\":\"approve\"          ");
  log.dir.write("audit.jsonl", text);
  const std::uint64_t line =
      static_cast<std::uint64_t>(std::count(text.begin(), text.begin() + at, '\n')) + 1;

  auto bad = run_warden({"audit", "verify", log.live, "--key", log.pub, "--format", "json"});
  INFO(bad.out << bad.err);
  CHECK(bad.code == 1);
  rapidjson::Document doc;
  doc.Parse(bad.out.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  CHECK_FALSE(doc["ok"].GetBool());
  CHECK(doc["files"].GetUint64() == 3);
  CHECK(std::string(doc["first_bad"]["kind"].GetString()) == "edited");
  CHECK(std::string(doc["first_bad"]["file"].GetString()) == log.live);
  CHECK(doc["first_bad"]["line"].GetUint64() == line);
  CHECK(doc["first_bad"]["seq"].GetUint64() == 22 + line);  // the live file begins at seq 23

  auto text_report = run_warden({"audit", "verify", log.live, "--key", log.pub});
  CHECK(text_report.code == 1);
  CHECK(text_report.out.find("FAILED: 1 problem") != std::string::npos);
  CHECK(text_report.out.find("edited") != std::string::npos);

  auto missing = run_warden({"audit", "verify", log.dir.str() + "/nope.jsonl", "--chain-only"});
  CHECK(missing.code == 2);
  CHECK(missing.err.find("nope.jsonl") != std::string::npos);

  auto wrong_key = run_warden({"audit", "verify", log.live, "--key", log.dir.str() + "/no.pub"});
  CHECK(wrong_key.code == 2);
  CHECK(wrong_key.err.find("no.pub") != std::string::npos);
}

TEST_CASE("audit query: what did agent X do yesterday, and which of it needed a human") {
  AuditLog log;
  auto r = run_warden({"audit", "query", log.live, "--principal", "agent-x", "--since", "24h",
                       "--outcome", "approval-required", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  std::size_t rows = 0;
  const std::int64_t since = now_us() - 24LL * 3600 * 1000000 - 60LL * 1000000;
  for (std::size_t at = 0, nl; (nl = r.out.find('\n', at)) != std::string::npos; at = nl + 1) {
    std::string line = r.out.substr(at, nl - at);
    // Byte for byte the record in the log.
    CHECK(std::find(log.b.lines.begin(), log.b.lines.end(), line + "\n") != log.b.lines.end());
    rapidjson::Document doc;
    doc.Parse(line.c_str());
    REQUIRE_FALSE(doc.HasParseError());
    CHECK(std::string(doc["principal"].GetString()) == "agent-x");
    CHECK(std::string(doc["outcome"].GetString()) == "approval-required");
    std::int64_t t = 0;
    REQUIRE(warden::audit::parse_time(doc["time"].GetString(), &t));
    CHECK(t >= since);
    ++rows;
  }
  CHECK(rows > 0);

  // The same as a table; all of them across the three files without --since.
  auto table = run_warden(
      {"audit", "query", log.live, "--principal", "agent-x", "--outcome", "approval-required"});
  CHECK(table.code == 0);
  CHECK(table.out.find("PRINCIPAL") != std::string::npos);
  CHECK(table.out.find("shell run: rm -rf build") != std::string::npos);
  CHECK(table.out.find("in 3 files") == std::string::npos);  // "read, 3 files"
  CHECK(table.out.find("3 files") != std::string::npos);

  auto rule = run_warden(
      {"audit", "query", log.live, "--rule", "shell-rm", "--limit", "2", "--format", "json"});
  CHECK(rule.code == 0);
  CHECK(std::count(rule.out.begin(), rule.out.end(), '\n') == 2);

  auto usage = run_warden({"audit", "query", log.live, "--since", "yesterday"});
  CHECK(usage.code == 2);
  CHECK(usage.err.find("yesterday") != std::string::npos);
}

TEST_CASE("audit show prints every kind, or one record in full") {
  AuditLog log;
  auto all = run_warden({"audit", "show", log.live, "--limit", "3"});
  CHECK(all.code == 0);
  CHECK(all.out.find("start: ") != std::string::npos);
  auto one = run_warden({"audit", "show", log.live, "--seq", "2"});
  INFO(one.out << one.err);
  CHECK(one.code == 0);
  CHECK(one.out.find("\"decision_id\": \"d2\"") != std::string::npos);
  CHECK(run_warden({"audit", "show", log.live, "--seq", "9999"}).code == 1);
}

TEST_CASE("audit keygen writes a key pair and never overwrites") {
  TempDir dir;
  const std::string key = dir.str() + "/signing.pem";
  auto r = run_warden({"audit", "keygen", "--out", key});
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  struct stat st {};
  REQUIRE(::stat(key.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string error;
  auto pub = warden::audit::VerifyKey::load(key + ".pub", &error);
  REQUIRE(pub);
  CHECK(r.out.find(pub->key_id()) != std::string::npos);
  CHECK(r.out.find("OFF this host") != std::string::npos);

  auto again = run_warden({"audit", "keygen", "--out", key, "--pub", dir.str() + "/other.pub"});
  CHECK(again.code == 2);
  CHECK(again.err.find(key) != std::string::npos);
}

TEST_CASE("audit verify --require-closed, --partial at the end, --max-unsigned") {
  AuditLog log;
  // The live file ends at an interval checkpoint: fine for a running daemon, not a closed log.
  CHECK(run_warden({"audit", "verify", log.live, "--key", log.pub}).code == 0);
  auto open = run_warden({"audit", "verify", log.live, "--key", log.pub, "--require-closed"});
  INFO(open.out << open.err);
  CHECK(open.code == 1);
  CHECK(open.out.find("truncated") != std::string::npos);
  log.b.stop();
  log.dir.write("audit.jsonl", log.dir.read("audit.jsonl") + log.b.text(log.b.lines.size() - 2));
  auto closed = run_warden({"audit", "verify", log.live, "--key", log.pub, "--require-closed"});
  INFO(closed.out << closed.err);
  CHECK(closed.code == 0);

  // A rotated file alone ends with its rotation checkpoint: the log goes on elsewhere.
  const std::string middle = log.dir.str() + "/audit.000000000012-000000000022.jsonl";
  auto alone = run_warden({"audit", "verify", middle, "--key", log.pub});
  CHECK(alone.code == 1);
  CHECK(alone.out.find("truncated") != std::string::npos);
  CHECK(run_warden({"audit", "verify", middle, "--key", log.pub, "--partial"}).code == 0);

  // No checkpoint at all: over the verifier's ceiling, the log fails with the key.
  TempDir dir;
  LogBuilder b(log.key, 0, 0);
  b.start();
  for (int i = 0; i < 20; ++i) b.decision();
  const std::string unsigned_log = dir.write("audit.jsonl", b.text());
  CHECK(run_warden({"audit", "verify", unsigned_log, "--key", log.pub}).code == 0);
  auto ceiling =
      run_warden({"audit", "verify", unsigned_log, "--key", log.pub, "--max-unsigned", "10"});
  INFO(ceiling.out << ceiling.err);
  CHECK(ceiling.code == 1);
  CHECK(ceiling.out.find("missing-checkpoint") != std::string::npos);
  CHECK(
      run_warden({"audit", "verify", unsigned_log, "--key", log.pub, "--max-unsigned", "0"}).code ==
      2);
}
