// The audit log writer on real files: the chain across concurrent appends, signed checkpoints
// at the right seqs, rotation keeping the chain, resume, torn tails, a tampered tail refused,
// a full disk (RLIMIT_FSIZE in a child) failing records without breaking the chain, and each
// durability mode writing a record before its done.
#include "audit/writer.h"

#include <rapidjson/document.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "audit/chain.h"
#include "audit/record.h"
#include "audit/signing.h"
#include "bindings/digest.h"
#include "tests/support/temp_dir.h"

using namespace warden::audit;
using warden::server::testing::TempDir;
namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> out;
  std::istringstream in(slurp(path));
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

struct Keys {
  std::shared_ptr<const SigningKey> signing;
  std::unique_ptr<VerifyKey> verify;
};

Keys make_keys(const TempDir& dir) {
  std::string error;
  const std::string priv = dir.str() + "/sign.pem", pub = dir.str() + "/sign.pub";
  if (!fs::exists(priv)) REQUIRE(generate_key(priv, pub, &error));
  Keys k;
  k.signing = SigningKey::load(priv, &error);
  REQUIRE(k.signing);
  k.verify = VerifyKey::load(pub, &error);
  REQUIRE(k.verify);
  return k;
}

WriterOptions options(const TempDir& dir, const Keys& keys) {
  WriterOptions o;
  o.path = dir.str() + "/audit.jsonl";
  o.daemon_id = "test-daemon";
  o.key = keys.signing;
  o.start_fields = R"("version":"test","pid":1)";
  o.rotate_bytes = 0;
  o.rotate_age = std::chrono::seconds(0);
  o.checkpoint_records = 1000;
  o.checkpoint_age = std::chrono::seconds(0);
  return o;
}

struct Line {
  Head head;
  std::string text;
  rapidjson::Document fields;
};

// Checks the chain over `files` in order (seq +1, prev = previous hash, every hash matches,
// every checkpoint's signature verifies and covers first_seq..seq-1) and returns the records.
std::vector<std::pair<std::uint64_t, std::string>> verify_chain(
    const std::vector<std::string>& files, const VerifyKey& key) {
  std::vector<std::pair<std::uint64_t, std::string>> records;  // seq, kind
  std::string prev(kGenesis);
  std::uint64_t seq = 0, last_checkpoint = 0;
  for (const auto& file : files) {
    const std::string text = slurp(file);
    REQUIRE((text.empty() || text.back() == '\n'));
    for (const auto& line : lines_of(file)) {
      INFO(file << ": " << line);
      Head h;
      std::string error;
      REQUIRE(parse_head(line, &h, &error));
      REQUIRE(hash_matches(h));
      if (seq != 0) REQUIRE(h.seq == seq + 1);
      REQUIRE(h.prev == prev);
      if (h.kind == "checkpoint") {
        std::string_view signed_bytes, sig;
        REQUIRE(split_signature(line, &signed_bytes, &sig));
        REQUIRE(key.verify_hex(signed_bytes, sig));
        rapidjson::Document d;
        const std::string obj = "{" + std::string(h.fields) + "}";
        d.Parse(obj.c_str());
        REQUIRE_FALSE(d.HasParseError());
        CHECK(std::string(d["key_id"].GetString()) == key.key_id());
        CHECK(d["last_seq"].GetUint64() == h.seq - 1);
        if (last_checkpoint != 0) CHECK(d["first_seq"].GetUint64() == last_checkpoint + 1);
        last_checkpoint = h.seq;
      }
      seq = h.seq;
      prev = std::string(h.hash);
      records.emplace_back(h.seq, std::string(h.kind));
    }
  }
  return records;
}

rapidjson::Document fields_of(const std::string& line) {
  Head h;
  std::string error;
  REQUIRE(parse_head(line, &h, &error));
  rapidjson::Document d;
  const std::string obj = "{" + std::string(h.fields) + "}";
  d.Parse(obj.c_str());
  REQUIRE_FALSE(d.HasParseError());
  return d;
}

std::uint64_t seq_of(const std::string& line) {
  Head h;
  std::string error;
  REQUIRE(parse_head(line, &h, &error));
  return h.seq;
}

std::string kind_of(const std::string& line) {
  Head h;
  std::string error;
  REQUIRE(parse_head(line, &h, &error));
  return std::string(h.kind);
}

std::string decision(int i) {
  return R"("decision_id":"d-)" + std::to_string(i) + R"(","outcome":"approve")";
}

}  // namespace

TEST_CASE("10k appends from 4 threads: every done once, unique seqs, one unbroken chain",
          "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  std::string error;
  auto w = Writer::open(o, &error);
  REQUIRE(w);
  constexpr int kThreads = 4, kEach = 2500;
  std::vector<std::atomic<int>> calls(kThreads * kEach);
  std::vector<std::uint64_t> seqs(kThreads * kEach, 0);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const int id = t * kEach + i;
        w->append("decision", 1795148900000000 + id, decision(id), [&, id](const AppendResult& r) {
          calls[id].fetch_add(1);
          seqs[id] = r.seq;
          if (!r.ok) failures.fetch_add(1);
        });
      }
    });
  }
  for (auto& t : threads) t.join();
  w->close();
  w->close();  // idempotent
  CHECK(failures.load() == 0);
  for (int i = 0; i < kThreads * kEach; ++i) REQUIRE(calls[i].load() == 1);
  std::set<std::uint64_t> unique(seqs.begin(), seqs.end());
  CHECK(unique.size() == seqs.size());
  CHECK_FALSE(unique.count(0));

  const auto records = verify_chain({o.path}, *keys.verify);
  // start, 10000 decisions, 10 interval checkpoints, stop, closing checkpoint.
  REQUIRE(records.size() == 1 + 10000 + 10 + 2);
  CHECK(records.front().second == "start");
  CHECK(records[records.size() - 2].second == "stop");
  CHECK(records.back().second == "checkpoint");
  std::vector<std::uint64_t> checkpoints;
  for (const auto& [seq, kind] : records) {
    if (kind == "checkpoint") checkpoints.push_back(seq);
  }
  CHECK(checkpoints == std::vector<std::uint64_t>{1001, 2002, 3003, 4004, 5005, 6006, 7007, 8008,
                                                  9009, 10010, 10013});
  // Each decision's seq is the one its done was told.
  const auto lines = lines_of(o.path);
  for (int id : {0, 4999, 9999}) {
    const auto& line = lines[seqs[id] - 1];
    CHECK(line.find("\"decision_id\":\"d-" + std::to_string(id) + "\"") != std::string::npos);
  }
  const auto h = w->health();
  CHECK(h.ok);
  CHECK(h.last_seq == 10013);
  CHECK(h.records == 10013);
  CHECK(h.failures == 0);
}

TEST_CASE("checkpoints: at every N records, signed, covering first_seq..seq-1", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.checkpoint_records = 5;
  std::string error;
  {
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    for (int i = 0; i < 12; ++i) REQUIRE(w->append_wait("decision", 1, decision(i)).ok);
  }  // the destructor closes
  const auto lines = lines_of(o.path);
  verify_chain({o.path}, *keys.verify);
  // 1 start, 2-5 d, 6 cp, 7-11 d, 12 cp, 13-15 d, 16 stop, 17 cp(stop)
  REQUIRE(lines.size() == 17);
  for (std::uint64_t s : {6, 12, 17}) CHECK(kind_of(lines[s - 1]) == "checkpoint");
  const auto cp1 = fields_of(lines[5]);
  CHECK(cp1["first_seq"].GetUint64() == 1);
  CHECK(cp1["last_seq"].GetUint64() == 5);
  CHECK(cp1["every_records"].GetUint64() == 5);
  CHECK(cp1["every_seconds"].GetUint64() == 0);
  CHECK(std::string(cp1["reason"].GetString()) == "interval");
  const auto cp2 = fields_of(lines[11]);
  CHECK(cp2["first_seq"].GetUint64() == 7);
  CHECK(cp2["last_seq"].GetUint64() == 11);
  const auto cp3 = fields_of(lines[16]);
  CHECK(cp3["first_seq"].GetUint64() == 13);
  CHECK(cp3["last_seq"].GetUint64() == 16);
  CHECK(std::string(cp3["reason"].GetString()) == "stop");
  CHECK(kind_of(lines[15]) == "stop");
  CHECK(fields_of(lines[15])["reason"] == "shutdown");
  const auto start = fields_of(lines[0]);
  CHECK(start["version"] == "test");
  CHECK_FALSE(start.HasMember("torn"));

  // A whole-file rewrite with recomputed hashes cannot recompute the signature.
  std::string_view signed_bytes, sig;
  REQUIRE(split_signature(lines[5], &signed_bytes, &sig));
  std::string forged(signed_bytes);
  forged.replace(forged.find("\"last_seq\":5"), 12, "\"last_seq\":4");
  CHECK_FALSE(keys.verify->verify_hex(forged, sig));
}

TEST_CASE("checkpoints by age, with a test clock", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.checkpoint_records = 0;
  o.checkpoint_age = std::chrono::seconds(30);
  auto now = std::make_shared<std::atomic<std::int64_t>>(1795148900000000);
  o.clock_us = [now] { return now->load(); };
  std::string error;
  auto w = Writer::open(o, &error);
  REQUIRE(w);
  REQUIRE(w->append_wait("decision", 1, decision(1)).ok);
  now->fetch_add(31 * 1000000);
  REQUIRE(w->append_wait("decision", 1, decision(2)).ok);
  w->close();
  const auto lines = lines_of(o.path);
  verify_chain({o.path}, *keys.verify);
  // start, d1, d2, stop, closing checkpoint, and one checkpoint by age once the clock moved:
  // after d2's batch, or after d1's when the writer looks at the clock before d2 arrives.
  REQUIRE(lines.size() == 6);
  std::vector<std::size_t> interval;
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    if (kind_of(lines[i]) == "checkpoint") interval.push_back(i);
  }
  REQUIRE(interval.size() == 1);
  CHECK((interval[0] == 2 || interval[0] == 3));
  const auto cp = fields_of(lines[interval[0]]);
  CHECK(cp["reason"] == "interval");
  CHECK(cp["first_seq"].GetUint64() == 1);
  CHECK(cp["last_seq"].GetUint64() == interval[0]);
  CHECK(cp["every_seconds"].GetUint64() == 30);
  CHECK(fields_of(lines[5])["first_seq"].GetUint64() == interval[0] + 2);
}

TEST_CASE("rotation by size keeps the chain across files named by their seqs", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.rotate_bytes = 3000;
  o.checkpoint_records = 0;
  std::string error;
  {
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    for (int i = 0; i < 60; ++i) REQUIRE(w->append_wait("decision", 1, decision(i)).ok);
  }
  std::vector<std::string> rotated;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("audit.") && name != "audit.jsonl") rotated.push_back(e.path().string());
  }
  std::sort(rotated.begin(), rotated.end());
  REQUIRE(rotated.size() >= 3);
  std::vector<std::string> files = rotated;
  files.push_back(o.path);
  const auto records = verify_chain(files, *keys.verify);
  CHECK(records.size() == 1 + 60 + 2 + 2 * rotated.size());
  std::string previous_name;
  for (const auto& file : rotated) {
    INFO(file);
    const auto lines = lines_of(file);
    const std::string expected = rotated_name(o.path, seq_of(lines.front()), seq_of(lines.back()));
    CHECK(file == expected);
    CHECK(fs::path(file).filename().string().size() ==
          std::string("audit.000000000001-000000000024.jsonl").size());
    CHECK(kind_of(lines.back()) == "checkpoint");
    CHECK(fields_of(lines.back())["reason"] == "rotate");
    if (previous_name.empty()) {
      CHECK(kind_of(lines.front()) == "start");
      CHECK(fs::path(file).filename().string().starts_with("audit.000000000001-"));
    } else {
      CHECK(kind_of(lines.front()) == "rotate");
      const auto f = fields_of(lines.front());
      CHECK(std::string(f["previous_file"].GetString()) == previous_name);
      CHECK(f["reason"] == "size");
    }
    previous_name = fs::path(file).filename().string();
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK(static_cast<std::uint64_t>(st.st_size) >= o.rotate_bytes);
  }
  const auto live = lines_of(o.path);
  CHECK(kind_of(live.front()) == "rotate");
  CHECK(std::string(fields_of(live.front())["previous_file"].GetString()) == previous_name);
}

TEST_CASE("rotation by age, with a test clock", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.rotate_age = std::chrono::seconds(3600);
  auto now = std::make_shared<std::atomic<std::int64_t>>(1795148900000000);
  o.clock_us = [now] { return now->load(); };
  std::string error;
  auto w = Writer::open(o, &error);
  REQUIRE(w);
  REQUIRE(w->append_wait("decision", 1, decision(1)).ok);
  now->fetch_add(3601ll * 1000000);
  REQUIRE(w->append_wait("decision", 1, decision(2)).ok);
  w->close();
  // The rotation happens after d2's batch, or already after d1's when the writer thread
  // looks at the clock between d1's done and d2's append: either way one rotated file.
  std::vector<std::string> rotated;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("audit.0")) rotated.push_back(e.path().string());
  }
  REQUIRE(rotated.size() == 1);
  const auto old_lines = lines_of(rotated[0]);
  CHECK(rotated[0] == rotated_name(o.path, 1, seq_of(old_lines.back())));
  CHECK(fs::path(rotated[0]).filename().string().starts_with("audit.000000000001-00000000000"));
  CHECK(fields_of(old_lines.back())["reason"] == "rotate");
  const auto records = verify_chain({rotated[0], o.path}, *keys.verify);
  CHECK(records.size() == 7);  // start, d1, d2, checkpoint(rotate), rotate, stop, checkpoint
  const auto live = lines_of(o.path);
  CHECK(kind_of(live[0]) == "rotate");
  CHECK(seq_of(live[0]) == seq_of(old_lines.back()) + 1);
  CHECK(fields_of(live[0])["reason"] == "time");
}

TEST_CASE("reopening resumes the chain; an empty live file continues the newest rotated one",
          "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.checkpoint_records = 4;
  std::string error;
  for (int run = 0; run < 3; ++run) {
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    for (int i = 0; i < 3; ++i) REQUIRE(w->append_wait("decision", 1, decision(i)).ok);
  }
  const auto records = verify_chain({o.path}, *keys.verify);
  // Per run: start, 3 decisions, (checkpoint after 4), stop, checkpoint(stop) = 7 lines.
  CHECK(records.size() == 21);
  const auto lines = lines_of(o.path);
  CHECK(kind_of(lines[7]) == "start");
  CHECK(seq_of(lines[7]) == 8);
  // The first checkpoint of a resumed run covers from the previous closing checkpoint on.
  CHECK(fields_of(lines[11])["first_seq"].GetUint64() == 8);

  // The live file rotated away and not yet recreated: continue from the rotated file.
  const std::string moved = rotated_name(o.path, 1, 21);
  fs::rename(o.path, moved);
  {
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    CHECK(w->append_wait("decision", 1, decision(9)).seq == 23);
  }
  verify_chain({moved, o.path}, *keys.verify);
}

TEST_CASE("a torn last line is cut and reported in the start record", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  std::string error;
  { REQUIRE(Writer::open(o, &error)); }
  const std::string torn = R"({"seq":4,"prev":"abc","kind":"deci)";
  { std::ofstream(o.path, std::ios::app | std::ios::binary) << torn; }
  { REQUIRE(Writer::open(o, &error)); }
  const auto lines = lines_of(o.path);
  verify_chain({o.path}, *keys.verify);
  REQUIRE(lines.size() == 6);
  CHECK(seq_of(lines[3]) == 4);
  const auto start = fields_of(lines[3]);
  REQUIRE(start.HasMember("torn"));
  CHECK(start["torn"]["bytes"].GetUint64() == torn.size());
  CHECK(std::string(start["torn"]["sha256"].GetString()) == warden::digest::sha256_hex(torn));
  CHECK(start["version"] == "test");
  CHECK(slurp(o.path).find(torn) == std::string::npos);
}

TEST_CASE("a last record whose hash does not match refuses the open", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  std::string error;
  {
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    REQUIRE(w->append_wait("decision", 1, decision(1)).ok);
    w->close();
  }
  std::string text = slurp(o.path);
  const auto at = text.rfind("\"reason\":\"stop\"");
  REQUIRE(at != std::string::npos);
  text.replace(at, 15, "\"reason\":\"stoP\"");
  { std::ofstream(o.path, std::ios::trunc | std::ios::binary) << text; }
  CHECK_FALSE(Writer::open(o, &error));
  CHECK(error == "the last record of " + o.path +
                     " (seq 4) does not match its hash: the log was altered; refusing to "
                     "continue its chain");
  { std::ofstream(o.path, std::ios::app | std::ios::binary) << "not a record\n"; }
  CHECK_FALSE(Writer::open(o, &error));
  CHECK(error.starts_with("the last record of " + o.path + " (at byte "));
  CHECK(error.ends_with(") is not an audit record: the line does not begin with {\"seq\":"));
}

TEST_CASE("open refuses options it cannot honour", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  std::string error;
  WriterOptions o = options(dir, keys);
  o.daemon_id = "has space";
  CHECK_FALSE(Writer::open(o, &error));
  CHECK(error == "the audit daemon id 'has space' is not 1 to 64 of [A-Za-z0-9._:-]");
  o = options(dir, keys);
  o.key.reset();
  CHECK_FALSE(Writer::open(o, &error));
  CHECK(error == "the audit log needs a signing key for its checkpoints");
  o = options(dir, keys);
  o.path = dir.str() + "/missing/dir/audit.jsonl";
  CHECK_FALSE(Writer::open(o, &error));
  CHECK(error == "cannot open the audit log " + o.path + ": No such file or directory");
}

TEST_CASE("appends after close and malformed appends fail with their cause", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  std::string error;
  auto w = Writer::open(options(dir, keys), &error);
  REQUIRE(w);
  auto r = w->append_wait("Decision", 1, decision(1));
  CHECK_FALSE(r.ok);
  CHECK(r.error == "the audit record kind 'Decision' is not a kind name");
  r = w->append_wait("decision", 1, "\"a\":\"x\ny\"");
  CHECK(r.error == "the audit record's fields hold a newline");
  r = w->append_wait("decision", 253402300800000000, decision(1));
  CHECK(r.error == "the audit record's time 253402300800000000 is outside 1970-01-01..9999-12-31");
  // A done that throws does not stop the writer.
  w->append("decision", 1, decision(2), [](const AppendResult&) { throw std::runtime_error("x"); });
  CHECK(w->append_wait("decision", 1, decision(3)).ok);
  w->close();
  r = w->append_wait("decision", 1, decision(1));
  CHECK_FALSE(r.ok);
  CHECK(r.error == "the audit log is closed");
}

TEST_CASE("each durability mode has the record in the file before its done", "[writer]") {
  for (Durability mode : {Durability::Fsync, Durability::Group, Durability::Write}) {
    TempDir dir;
    const Keys keys = make_keys(dir);
    WriterOptions o = options(dir, keys);
    o.durability = mode;
    std::string error;
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    std::atomic<int> present{0}, done{0};
    for (int i = 0; i < 50; ++i) {
      w->append("decision", 1, decision(i), [&, i, path = o.path](const AppendResult& r) {
        const std::string text = slurp(path);
        const std::string line_start = "{\"seq\":" + std::to_string(r.seq) + ",";
        if (r.ok && text.find(line_start) != std::string::npos &&
            text.find("\"decision_id\":\"d-" + std::to_string(i) + "\"") != std::string::npos) {
          present.fetch_add(1);
        }
        done.fetch_add(1);
      });
    }
    w->close();
    CHECK(done.load() == 50);
    CHECK(present.load() == 50);
    verify_chain({o.path}, *keys.verify);
  }
}

TEST_CASE("a full disk fails records, keeps a verifiable chain, and recovers", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.checkpoint_records = 0;
  // In a child: RLIMIT_FSIZE makes writes beyond the limit fail with EFBIG (SIGXFSZ ignored).
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    std::string error;
    auto w = Writer::open(o, &error);
    if (!w) ::_exit(10);
    if (!w->append_wait("decision", 1, decision(0)).ok) ::_exit(11);
    struct stat st {};
    ::stat(o.path.c_str(), &st);
    const off_t good = st.st_size;
    struct rlimit limit {};
    ::getrlimit(RLIMIT_FSIZE, &limit);
    const rlim_t hard = limit.rlim_max;
    limit.rlim_cur = static_cast<rlim_t>(good + 100);  // room for part of one record
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(12);
    const std::string big = R"("decision_id":"fail","pad":")" + std::string(300, 'x') + "\"";
    const auto r = w->append_wait("decision", 1, big);
    if (r.ok) ::_exit(13);
    if (r.error != "cannot write " + o.path + ": File too large") ::_exit(14);
    ::stat(o.path.c_str(), &st);
    if (st.st_size != good) ::_exit(15);  // truncated back to the last good size
    const auto h = w->health();
    if (h.ok || h.failures != 1 || h.error != r.error) ::_exit(16);
    if (w->append_wait("decision", 1, big).ok) ::_exit(17);  // still full: fails again
    limit.rlim_cur = hard;
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(18);
    const auto back = w->append_wait("decision", 1, R"("decision_id":"after")");
    if (!back.ok || back.seq != 3) ::_exit(19);
    if (!w->health().ok) ::_exit(20);
    w->close();
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  const auto records = verify_chain({o.path}, *keys.verify);
  REQUIRE(records.size() == 5);  // start, d0, after, stop, checkpoint
  const std::string text = slurp(o.path);
  CHECK(text.find("\"fail\"") == std::string::npos);
  CHECK(text.find("\"after\"") != std::string::npos);
}

TEST_CASE("writer throughput (measured, not asserted)", "[.bench]") {
  for (Durability mode : {Durability::Group, Durability::Fsync, Durability::Write}) {
    TempDir dir;
    const Keys keys = make_keys(dir);
    WriterOptions o = options(dir, keys);
    o.durability = mode;
    const std::string fields = R"("decision_id":"d","pad":")" + std::string(800, 'x') + "\"";
    const int threads = 4, each = mode == Durability::Fsync ? 250 : 2500;
    std::atomic<int> failed{0};
    if (const char* g = std::getenv("WARDEN_BENCH_GROUP_MS"))
      o.group_commit = std::chrono::milliseconds(std::atoi(g));
    std::string error;
    auto w = Writer::open(o, &error);
    REQUIRE(w);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (int i = 0; i < each; ++i) {
          if (!w->append_wait("decision", 1, fields).ok) failed.fetch_add(1);
        }
      });
    }
    for (auto& t : pool) t.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto h = w->health();
    CHECK(failed.load() == 0);
    std::cout << "writer "
              << (mode == Durability::Group   ? "group"
                  : mode == Durability::Fsync ? "fsync"
                                              : "write")
              << ": " << threads * each / s << " records/s with 4 waiting threads, " << h.batches
              << " batches\n";
  }
}

TEST_CASE("decision records written with a masker keep the secret out of the file", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  std::string error;
  auto w = Writer::open(o, &error);
  REQUIRE(w);
  const Masker masker(std::string(32, 's'));
  const std::string secret = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
  const std::string proposal = R"({"target":"shell","payload":{"command":"git push https://x:)" +
                               secret + R"(@github.com/o/r"}})";
  DecisionInput in;
  in.proposal_json = proposal;
  in.principal = "agent";
  warden::Decision d;
  d.decision_id = "d-1";
  d.outcome = warden::Outcome::Reject;
  d.reason = "token in the command: " + secret;
  const auto r = w->append_wait("decision", 1795148900000000, decision_fields(in, d, &masker));
  REQUIRE(r.ok);
  w->close();
  const std::string text = slurp(o.path);
  CHECK(text.find(secret) == std::string::npos);
  CHECK(text.find(secret.substr(4)) == std::string::npos);
  const auto lines = lines_of(o.path);
  const auto f = fields_of(lines[r.seq - 1]);
  REQUIRE(f["masks"].Size() == 2);
  CHECK(f["masks"][0]["field"] == "/input/payload/command");
  CHECK(f["masks"][1]["field"] == "/reason");
  verify_chain({o.path}, *keys.verify);
}

// A rotation renames the old file, then writes the new one's first record, `rotate`. When that
// write fails, the next batch that succeeds writes `rotate` first: every live file after a
// rotation begins with it, and the chain goes on unbroken.
TEST_CASE("a rotate record that failed to write is written first by the next batch", "[writer]") {
  TempDir dir;
  const Keys keys = make_keys(dir);
  WriterOptions o = options(dir, keys);
  o.rotate_bytes = 600;
  o.checkpoint_records = 0;
  std::atomic<int> rotate_failures{0};
  o.fail_write = [&](std::string_view lines) {
    // Fail the batches that would begin the new file with `rotate`, twice.
    if (lines.find("\"kind\":\"rotate\"") != std::string_view::npos && rotate_failures < 2) {
      ++rotate_failures;
      return EIO;
    }
    return 0;
  };
  std::string error;
  auto w = Writer::open(o, &error);
  REQUIRE(w);
  // Fill the first file: a rotation renames it, and its rotate write fails.
  int i = 0;
  while (rotate_failures.load() == 0 && i < 50) w->append_wait("decision", 1, decision(i++));
  REQUIRE(rotate_failures.load() >= 1);
  // The next batches carry `rotate` first (the second of them fails once more).
  AppendResult r;
  for (int k = 0; k < 5 && !r.ok; ++k) r = w->append_wait("decision", 1, decision(i++));
  REQUIRE(r.ok);
  CHECK(rotate_failures.load() == 2);
  w->close();
  std::vector<std::string> rotated;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("audit.") && name != "audit.jsonl") rotated.push_back(e.path().string());
  }
  std::sort(rotated.begin(), rotated.end());
  REQUIRE(rotated.size() >= 1);
  std::vector<std::string> files = rotated;
  files.push_back(o.path);
  verify_chain(files, *keys.verify);
  const auto live = lines_of(o.path);
  REQUIRE(!live.empty());
  CHECK(kind_of(live.front()) == "rotate");
  CHECK(std::string(fields_of(live.front())["previous_file"].GetString()) ==
        fs::path(rotated.back()).filename().string());
  for (std::size_t k = 1; k < live.size(); ++k) CHECK(kind_of(live[k]) != "rotate");
}
