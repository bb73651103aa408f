// The daemon's audit log, end to end with real `warden serve` child processes: every
// decision is in the log before its reply (with the reply's decision_id), the chain holds
// across kill -9 under load, restarts and rotation, a log that cannot be written fails
// decisions closed (status and health-check say so), secrets stay out of the file, and
// audit.enabled = false writes nothing. Also the [audit] keys of warden.toml.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "audit/chain.h"
#include "audit/signing.h"
#include "audit/verify.h"
#include "bindings/digest.h"
#include "server/config.h"
#include "server/own_files.h"
#include "server_fixture.h"
#include "tests/build_paths.h"
#include "warden_child.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

struct ServeOptions {
  std::vector<std::string> extra;  // more serve arguments
  rlim_t file_size_limit = 0;      // RLIMIT_FSIZE of the child (SIGXFSZ ignored); 0: none
};

// `warden serve` as a child on an ephemeral port, rules kRulesA, the fixture's tokens, its
// state directory STATE (the audit log is STATE/audit.jsonl). stderr is read on a thread.
class AuditServe : public WardenChild {
 public:
  AuditServe(const TempDir& dir, const ServeOptions& options = {})
      : WardenChild(arguments(dir, options), options.file_size_limit) {}

  static std::string state(const TempDir& dir) { return dir.str() + "/state"; }
  static std::string log(const TempDir& dir) { return state(dir) + "/audit.jsonl"; }

 private:
  static std::vector<std::string> arguments(const TempDir& dir, const ServeOptions& options) {
    if (!fs::exists(dir.path() / "rules/policy.clp")) dir.write("rules/policy.clp", kRulesA);
    std::string tokens = dir.write("tokens", Tokens{}.file_text(), 0600);
    std::vector<std::string> args{
        "serve",   "--listen",           "127.0.0.1:0", "--tokens", tokens,
        "--rules", dir.str() + "/rules", "--state-dir", state(dir), "--workers",
        "2"};
    for (const auto& e : options.extra) args.push_back(e);
    return args;
  }
};

void connect_as(Client& client, const std::string& address, const std::string& token) {
  std::string error;
  REQUIRE(client.connect(address, 5000ms, &error));
  REQUIRE(client.authenticate(token, 5000ms, &error));
}

std::string request(Client& client, const std::string& json) {
  std::string error;
  REQUIRE(client.send_message(json, &error));
  return read_or_fail(client, 20000ms);
}

// The reply's decision object (payload.decision) as JSON text members, via a parsed doc.
struct DecisionReply {
  bool ok = false;
  std::string decision_id, outcome, error_code, reason;
};
DecisionReply decision_of(const std::string& reply) {
  DecisionReply out;
  auto doc = parse(reply);
  if (doc.HasParseError() || !doc.IsObject() || !doc["payload"].HasMember("decision")) return out;
  const auto& d = doc["payload"]["decision"];
  out.ok = true;
  out.decision_id = d["decision_id"].GetString();
  out.outcome = d["outcome"].GetString();
  if (d.HasMember("error")) out.error_code = d["error"].GetString();
  out.reason = d["reason"].GetString();
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The live file's rotated siblings (STEM.<first>-<last>.jsonl, sorted), then the live file.
std::vector<std::string> log_files(const std::string& live) {
  std::vector<std::string> out;
  fs::path p(live);
  std::string stem = p.stem().string() + ".";
  for (const auto& entry : fs::directory_iterator(p.parent_path())) {
    std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) == 0 && name != p.filename().string() &&
        entry.path().extension() == p.extension()) {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  out.push_back(live);
  return out;
}

struct LogRecord {
  std::uint64_t seq = 0;
  std::string kind, line;
};

// Reads the files in order and checks the chain: each line's shape and hash, seq +1, prev =
// the previous hash. A last line without '\n' is reported in *torn (not a record).
std::vector<LogRecord> read_chain(const std::vector<std::string>& files,
                                  std::string* torn = nullptr) {
  std::vector<LogRecord> out;
  std::string prev(warden::audit::kGenesis);
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::string text = read_file(files[f]);
    std::size_t at = 0, line_no = 0;
    while (at < text.size()) {
      std::size_t nl = text.find('\n', at);
      ++line_no;
      INFO(files[f] << " line " << line_no);
      if (nl == std::string::npos) {
        // Only the live file's last line may be torn.
        REQUIRE(torn != nullptr);
        REQUIRE(f + 1 == files.size());
        *torn = text.substr(at);
        break;
      }
      std::string line = text.substr(at, nl - at);
      at = nl + 1;
      warden::audit::Head head;
      std::string error;
      INFO(line);
      REQUIRE(warden::audit::parse_head(line, &head, &error));
      REQUIRE(warden::audit::hash_matches(head));
      REQUIRE(head.seq == out.size() + 1);
      REQUIRE(head.prev == prev);
      prev = std::string(head.hash);
      out.push_back({head.seq, std::string(head.kind), line});
    }
  }
  return out;
}

std::string member(const std::string& line, const char* name) {
  auto doc = parse(line);
  REQUIRE(!doc.HasParseError());
  if (!doc.HasMember(name) || !doc[name].IsString()) return "<none>";
  return doc[name].GetString();
}

std::set<std::string> decision_ids(const std::vector<LogRecord>& records) {
  std::set<std::string> out;
  for (const auto& r : records) {
    if (r.kind == "decision") out.insert(member(r.line, "decision_id"));
  }
  return out;
}

// `warden audit verify` of the daemon's log (every file) with its public key: the chain and
// every checkpoint's signature.
void require_verifies(const TempDir& dir) {
  std::string error;
  auto key =
      warden::audit::VerifyKey::load(AuditServe::state(dir) + "/audit-signing.pem.pub", &error);
  INFO(error);
  REQUIRE(key);
  warden::audit::VerifyOptions options;
  options.key = key.get();
  options.threads = 1;
  auto report = warden::audit::verify_paths({AuditServe::log(dir)}, options);
  INFO(warden::audit::report_to_json(report));
  REQUIRE(report.ok);
  REQUIRE(report.checkpoints >= 1);
}

std::string status_of(const std::string& address) {
  Client admin;
  connect_as(admin, address, Tokens{}.admin);
  return request(admin, make_request("s", "status"));
}

std::string health_of(const std::string& address) {
  Client anyone;
  std::string error;
  REQUIRE(anyone.connect(address, 5000ms, &error));
  return request(anyone, make_request("h", "health-check"));
}

}  // namespace

TEST_CASE("every decision is in the audit log before its reply, with the reply's id", "[audit]") {
  TempDir dir;
  AuditServe serve(dir);
  REQUIRE(serve.serving());
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  std::vector<DecisionReply> replies;
  for (int i = 0; i < 5; ++i) {
    std::string proposal = i % 2 ? kShellProposal : kReplyProposal;
    DecisionReply d = decision_of(request(agent, decide_request(std::to_string(i), proposal)));
    REQUIRE(d.ok);
    // Answered, so recorded: the reply was sent only after the record was durable.
    auto records = read_chain({AuditServe::log(dir)});
    REQUIRE(decision_ids(records).count(d.decision_id) == 1);
    replies.push_back(d);
  }
  // A proposal that is not a proposal (no target) is recorded too, as a reject with its code.
  std::string bad = request(agent, decide_request("bad", R"({"payload":{}})"));
  std::string bad_code = error_code(bad);
  REQUIRE_FALSE(bad_code.empty());

  auto records = read_chain({AuditServe::log(dir)});
  REQUIRE(records.size() == 7);  // start, 5 decisions, the bad input
  CHECK(records[0].kind == "start");
  auto start = parse(records[0].line);
  CHECK(start["pid"].IsInt64());
  CHECK(std::string(start["rules_digest"].GetString()).rfind("sha256:", 0) == 0);
  CHECK(std::string(start["key_id"].GetString()).rfind("ed25519:", 0) == 0);
  CHECK(start["every_records"].GetInt64() == 1000);
  CHECK(start["every_seconds"].GetInt64() == 60);
  CHECK(std::string(start["workspace_root"].GetString()) == warden::kDefaultWorkspaceRoot);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    auto rec = parse(records[i + 1].line);
    INFO(records[i + 1].line);
    CHECK(records[i + 1].kind == "decision");
    CHECK(std::string(rec["decision_id"].GetString()) == replies[i].decision_id);
    CHECK(std::string(rec["outcome"].GetString()) == replies[i].outcome);
    CHECK(std::string(rec["principal"].GetString()) == "alice");
    CHECK(rec["input"].IsObject());
    CHECK(std::string(rec["input"]["target"].GetString()) == (i % 2 ? "shell" : "reply"));
    CHECK(rec["rules"].IsArray());
    CHECK(rec["rules"].Size() == 1);
    CHECK(std::string(rec["rules"][0]["rule"].GetString()) == (i % 2 ? "no-shell" : "replies-ok"));
    // The record's time is the decision's: its second is what the rules saw as (now).
    std::int64_t t = 0;
    CHECK(warden::audit::parse_time(rec["time"].GetString(), &t));
  }
  auto bad_rec = parse(records[6].line);
  CHECK(std::string(bad_rec["outcome"].GetString()) == "reject");
  CHECK(std::string(bad_rec["error_code"].GetString()) == bad_code);

  // status reports the log; health-check says serving.
  auto status = parse(status_of(serve.address()));
  const auto& audit = status["payload"]["audit"];
  CHECK(audit["enabled"].GetBool());
  CHECK(audit["ok"].GetBool());
  CHECK(std::string(audit["path"].GetString()) == AuditServe::log(dir));
  CHECK(audit["last_seq"].GetUint64() == 7);
  CHECK(std::string(parse(health_of(serve.address()))["payload"]["status"].GetString()) ==
        "serving");

  // A reload is recorded with both digests and who asked.
  dir.write("rules/policy.clp", kRulesB);
  Client admin;
  connect_as(admin, serve.address(), Tokens{}.admin);
  std::string reloaded = request(admin, make_request("r", "reload"));
  REQUIRE(error_code(reloaded) == "");
  records = read_chain({AuditServe::log(dir)});
  REQUIRE(records.back().kind == "reload");
  CHECK(member(records.back().line, "by") == "request:root");
  CHECK(member(records.back().line, "previous_digest") == member(records[0].line, "rules_digest"));
  CHECK(member(records.back().line, "rules_digest") != member(records[0].line, "rules_digest"));

  // A graceful stop closes the log with a stop record (then the signed checkpoint).
  agent.close();
  admin.close();
  REQUIRE(serve.terminate() == 0);
  records = read_chain({AuditServe::log(dir)});
  bool stopped = false;
  for (const auto& r : records) stopped = stopped || r.kind == "stop";
  CHECK(stopped);
  CHECK(records.back().kind == "checkpoint");
  require_verifies(dir);
}

TEST_CASE(
    "kill -9 under load leaves every acknowledged decision in the log; a restart resumes the chain",
    "[audit]") {
  TempDir dir;
  std::set<std::string> acknowledged;
  std::mutex mutex;
  {
    AuditServe serve(dir);
    REQUIRE(serve.serving());
    std::atomic<bool> stop{false};
    std::atomic<std::size_t> count{0};
    std::vector<std::thread> clients;
    for (int c = 0; c < 4; ++c) {
      clients.emplace_back([&, c] {
        Client client;
        std::string error;
        if (!client.connect(serve.address(), 5000ms, &error) ||
            !client.authenticate(Tokens{}.agent, 5000ms, &error)) {
          return;
        }
        // A window of 4 requests in flight on each connection.
        const int window = 4;
        int sent = 0;
        for (; sent < window; ++sent) {
          if (!client.send_message(decide_request(std::to_string(c) + "-" + std::to_string(sent),
                                                  sent % 2 ? kShellProposal : kReplyProposal),
                                   &error)) {
            return;
          }
        }
        for (;;) {
          std::string reply;
          if (client.read_message(&reply, 10000ms) != Client::ReadStatus::Ok) return;
          DecisionReply d = decision_of(reply);
          if (!d.ok) return;
          {
            std::lock_guard lock(mutex);
            acknowledged.insert(d.decision_id);
          }
          count.fetch_add(1);
          if (stop.load()) continue;
          int n = sent++;
          if (!client.send_message(decide_request(std::to_string(c) + "-" + std::to_string(n),
                                                  n % 2 ? kShellProposal : kReplyProposal),
                                   &error)) {
            return;
          }
        }
      });
    }
    REQUIRE(eventually([&] { return count.load() >= 400; }, 60000ms));
    serve.kill9();  // while every client has requests in flight
    stop = true;
    for (auto& t : clients) t.join();
  }
  REQUIRE(acknowledged.size() >= 400);
  std::string torn;
  auto records = read_chain({AuditServe::log(dir)}, &torn);
  auto logged = decision_ids(records);
  std::size_t missing = 0;
  for (const auto& id : acknowledged) missing += logged.count(id) ? 0 : 1;
  CHECK(missing == 0);
  // A torn last line, if any, was never acknowledged.
  for (const auto& id : acknowledged) CHECK(torn.find(id) == std::string::npos);

  // The next start continues the chain (a torn tail is cut and reported in the start record).
  std::uint64_t before = records.size();
  {
    AuditServe again(dir);
    REQUIRE(again.serving());
    Client agent;
    connect_as(agent, again.address(), Tokens{}.agent);
    DecisionReply d = decision_of(request(agent, decide_request("after", kReplyProposal)));
    REQUIRE(d.ok);
    records = read_chain({AuditServe::log(dir)});
    REQUIRE(records.size() == before + 2);
    CHECK(records[before].kind == "start");
    CHECK(member(records[before + 1].line, "decision_id") == d.decision_id);
    if (!torn.empty()) CHECK(records[before].line.find("\"torn\":{") != std::string::npos);
    REQUIRE(again.terminate() == 0);
  }
  require_verifies(dir);
}

TEST_CASE("a torn last line is cut at the next start and reported in its start record", "[audit]") {
  TempDir dir;
  std::string id;
  {
    AuditServe serve(dir);
    REQUIRE(serve.serving());
    Client agent;
    connect_as(agent, serve.address(), Tokens{}.agent);
    DecisionReply d = decision_of(request(agent, decide_request("1", kReplyProposal)));
    REQUIRE(d.ok);
    id = d.decision_id;
    serve.kill9();
  }
  // What a crash in the middle of a write leaves: part of a line, no '\n'.
  const std::string partial = R"({"seq":99,"prev":"00)";
  {
    std::ofstream out(AuditServe::log(dir), std::ios::binary | std::ios::app);
    out << partial;
  }
  std::string torn;
  std::size_t before = read_chain({AuditServe::log(dir)}, &torn).size();
  REQUIRE(torn == partial);
  AuditServe serve(dir);
  REQUIRE(serve.serving());
  auto records = read_chain({AuditServe::log(dir)});  // whole lines only: the tail was cut
  REQUIRE(records.size() == before + 1);
  CHECK(records[before].kind == "start");
  auto start = parse(records[before].line);
  REQUIRE(start.HasMember("torn"));
  CHECK(start["torn"]["bytes"].GetUint64() == partial.size());
  CHECK(
      std::string(start["torn"]["sha256"].GetString()).find(warden::digest::sha256_hex(partial)) !=
      std::string::npos);
  CHECK(decision_ids(records).count(id) == 1);
  REQUIRE(serve.terminate() == 0);
  require_verifies(dir);
}

TEST_CASE("a log that cannot be written fails decisions closed and says so", "[audit]") {
  TempDir dir;
  ServeOptions options;
  // The log's writes fail with EFBIG past 96 KiB (above the approvals store's SQLite WAL,
  // about 57 KiB with its schema and indexes, and its 32 KiB WAL index, which the daemon
  // creates at startup).
  options.file_size_limit = 96 * 1024;
  AuditServe serve(dir, options);
  REQUIRE(serve.serving());
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  std::vector<DecisionReply> answered;
  bool failing = false;
  for (int i = 0; i < 400 && !failing; ++i) {
    DecisionReply d =
        decision_of(request(agent, decide_request(std::to_string(i), kReplyProposal)));
    REQUIRE(d.ok);
    INFO(d.reason << " " << d.error_code);
    if (d.error_code == "E_AUDIT") {
      failing = true;
      CHECK(d.outcome == "reject");
      CHECK(d.reason.rfind("the audit log cannot be written: ", 0) == 0);
      CHECK(d.reason.find("large") != std::string::npos);  // EFBIG: "File too large"
    } else {
      CHECK(d.outcome == "approve");
      CHECK(d.error_code == "");
      answered.push_back(d);
    }
  }
  REQUIRE(failing);
  REQUIRE(answered.size() >= 3);
  // Every later decision fails closed as well: nothing is approved without its record.
  for (int i = 0; i < 5; ++i) {
    DecisionReply d =
        decision_of(request(agent, decide_request("x" + std::to_string(i), kReplyProposal)));
    CHECK(d.outcome == "reject");
    CHECK(d.error_code == "E_AUDIT");
  }
  auto health = parse(health_of(serve.address()));
  CHECK(std::string(health["payload"]["status"].GetString()) == "degraded");
  CHECK(std::string(health["payload"]["audit"].GetString()).rfind("failing: ", 0) == 0);
  auto status = parse(status_of(serve.address()));
  const auto& audit = status["payload"]["audit"];
  CHECK_FALSE(audit["ok"].GetBool());
  CHECK(std::string(audit["error"].GetString()).find("large") != std::string::npos);
  CHECK(audit["failures"].GetUint64() >= 6);
  CHECK(status["payload"]["counters"]["failed_closed"].GetUint64() >= 6);
  // The log holds exactly the approved decisions, whole lines, and a chain that verifies.
  serve.kill9();
  auto records = read_chain({AuditServe::log(dir)});
  auto logged = decision_ids(records);
  for (const auto& d : answered) CHECK(logged.count(d.decision_id) == 1);
  CHECK(logged.size() == answered.size());
}

// Operators are told: the daemon's own log says the audit log cannot be written (a few lines,
// not one per decision), and a shutdown whose `stop` record cannot be written exits 4.
TEST_CASE("audit write failures are in the daemon's log and fail the exit code", "[audit]") {
  TempDir dir;
  ServeOptions options;
  options.file_size_limit = 96 * 1024;  // past the approvals store's WAL (see above)
  AuditServe serve(dir, options);
  REQUIRE(serve.serving());
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  int failed = 0;
  for (int i = 0; i < 400 && failed < 50; ++i) {
    DecisionReply d =
        decision_of(request(agent, decide_request(std::to_string(i), kReplyProposal)));
    REQUIRE(d.ok);
    if (d.error_code == "E_AUDIT") ++failed;
  }
  REQUIRE(failed == 50);
  REQUIRE(eventually([&] {
    return serve.err().find("audit log: a decision record cannot be written") != std::string::npos;
  }));
  std::string log = serve.err();
  INFO(log);
  CHECK(log.find("File too large") != std::string::npos);
  // Throttled: 50 failures, at most 5 lines in the minute.
  std::size_t lines = 0;
  for (std::size_t at = 0;
       (at = log.find("a decision record cannot be written", at)) != std::string::npos; ++at)
    ++lines;
  CHECK(lines <= 5);

  const int code = serve.terminate();
  log = serve.err();
  INFO(log);
  CHECK(code == 4);
  CHECK(log.find("the stop record cannot be written") != std::string::npos);
  CHECK(log.find("warden stopped, but the audit log could not record it") != std::string::npos);
}

TEST_CASE("a shutdown that writes its stop record exits 0", "[audit]") {
  TempDir dir;
  AuditServe serve(dir);
  REQUIRE(serve.serving());
  CHECK(serve.terminate() == 0);
  CHECK(serve.err().find("the stop record cannot be written") == std::string::npos);
  auto records = read_chain({AuditServe::log(dir)});
  bool stopped = false;
  for (const auto& r : records) stopped = stopped || r.kind == "stop";
  CHECK(stopped);
}

// Recorded before it takes effect: a reload whose record cannot be written fails (E_AUDIT,
// with the cause), the old rules stay in force and status counts the failure; no reload
// record and no decision under the new rules.
TEST_CASE("a reload the audit log cannot record fails and changes nothing", "[audit]") {
  TempDir dir;
  ServeOptions options;
  options.file_size_limit = 96 * 1024;  // past the approvals store's WAL (see above)
  AuditServe serve(dir, options);
  REQUIRE(serve.serving());
  Client agent, admin;
  connect_as(agent, serve.address(), Tokens{}.agent);
  connect_as(admin, serve.address(), Tokens{}.admin);
  std::string before = member(read_chain({AuditServe::log(dir)})[0].line, "rules_digest");
  bool failing = false;
  for (int i = 0; i < 400 && !failing; ++i) {
    failing =
        decision_of(request(agent, decide_request(std::to_string(i), kReplyProposal))).error_code ==
        "E_AUDIT";
  }
  REQUIRE(failing);
  dir.write("rules/policy.clp", kRulesB);
  std::string reloaded = request(admin, make_request("r", "reload"));
  INFO(reloaded);
  CHECK(error_code(reloaded) == "E_AUDIT");
  CHECK(reloaded.find("audit log") != std::string::npos);
  CHECK(reloaded.find("large") != std::string::npos);  // the cause (EFBIG)
  auto status = parse(status_of(serve.address()));
  CHECK(std::string(status["payload"]["rules_digest"].GetString()) == before);
  CHECK(status["payload"]["counters"]["reloads"].GetUint64() == 0);
  CHECK(status["payload"]["counters"]["reload_failures"].GetUint64() == 1);
  // A SIGHUP reload fails the same way.
  serve.hup();
  REQUIRE(eventually([&] {
    return parse(status_of(serve.address()))["payload"]["counters"]["reload_failures"]
               .GetUint64() == 2;
  }));
  status = parse(status_of(serve.address()));
  CHECK(std::string(status["payload"]["rules_digest"].GetString()) == before);
  for (const auto& digest : status["payload"]["worker_digests"].GetArray()) {
    CHECK(std::string(digest.GetString()) == before);
  }
  serve.kill9();
  for (const auto& r : read_chain({AuditServe::log(dir)})) {
    CHECK(r.kind != "reload");
    if (r.kind == "decision") CHECK(member(r.line, "rules_digest") == before);
  }
}

// The start record carries the daemon's [session] config, so replay rebuilds each session's
// history with the daemon's limits.
TEST_CASE("the start record holds the [session] config", "[audit]") {
  TempDir dir;
  std::string config = dir.write(
      "warden.toml",
      "[session]\nttl_seconds = 120\nmax_entries = 7\nmax_sessions = 33\nmax_bytes = 65536\n",
      0600);
  AuditServe serve(dir, {{"--config", config}});
  REQUIRE(serve.serving());
  serve.kill9();
  auto records = read_chain({AuditServe::log(dir)});
  REQUIRE(!records.empty());
  auto start = parse(records[0].line);
  INFO(records[0].line);
  REQUIRE(start.HasMember("session"));
  const auto& session = start["session"];
  CHECK(session["ttl_seconds"].GetUint64() == 120);
  CHECK(session["max_entries"].GetUint64() == 7);
  CHECK(session["max_sessions"].GetUint64() == 33);
  CHECK(session["max_bytes"].GetUint64() == 65536);
}

TEST_CASE("rotation by size keeps one chain across the files", "[audit]") {
  TempDir dir;
  std::string config = dir.write("warden.toml", "[audit]\nrotate_bytes = 4096\n", 0600);
  AuditServe serve(dir, {{"--config", config}});
  REQUIRE(serve.serving());
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  std::set<std::string> ids;
  for (int i = 0; i < 40; ++i) {
    DecisionReply d =
        decision_of(request(agent, decide_request(std::to_string(i), kShellProposal)));
    REQUIRE(d.ok);
    ids.insert(d.decision_id);
  }
  agent.close();
  REQUIRE(serve.terminate() == 0);
  auto files = log_files(AuditServe::log(dir));
  REQUIRE(files.size() >= 3);
  auto records = read_chain(files);
  CHECK(decision_ids(records) == ids);
  // Each new file begins with a rotate record naming the file before it.
  for (std::size_t f = 1; f < files.size(); ++f) {
    std::string first = read_file(files[f]);
    first = first.substr(0, first.find('\n'));
    CHECK(member(first, "kind") == "rotate");
    CHECK(member(first, "previous_file") == fs::path(files[f - 1]).filename().string());
  }
  require_verifies(dir);
}

TEST_CASE("secrets in a proposal do not reach the audit log", "[audit]") {
  TempDir dir;
  AuditServe serve(dir);
  REQUIRE(serve.serving());
  const std::string secret = "ghp_" + std::string("aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6");
  REQUIRE(secret.size() == 40);
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  std::string proposal =
      R"({"target":"shell","action":"run","payload":{"command":"git push https://)" + secret +
      R"(@github.com/x/y"}})";
  DecisionReply d = decision_of(request(agent, decide_request("s", proposal)));
  REQUIRE(d.ok);
  auto records = read_chain({AuditServe::log(dir)});
  REQUIRE(decision_ids(records).count(d.decision_id) == 1);
  std::string text = read_file(AuditServe::log(dir));
  CHECK(text.find(secret) == std::string::npos);
  CHECK(text.find(secret.substr(4)) == std::string::npos);
  auto rec = parse(records.back().line);
  REQUIRE(rec["masks"].IsArray());
  REQUIRE(rec["masks"].Size() >= 1);
  CHECK(std::string(rec["masks"][0]["kind"].GetString()) == "github-token");
  CHECK(std::string(rec["masks"][0]["field"].GetString()) == "/input/payload/command");
}

TEST_CASE("audit.enabled = false records nothing and status warns", "[audit]") {
  TempDir dir;
  AuditServe serve(dir, {{"--no-audit"}});
  REQUIRE(serve.serving());
  Client agent;
  connect_as(agent, serve.address(), Tokens{}.agent);
  DecisionReply d = decision_of(request(agent, decide_request("1", kReplyProposal)));
  CHECK(d.outcome == "approve");
  auto status = parse(status_of(serve.address()));
  CHECK_FALSE(status["payload"]["audit"]["enabled"].GetBool());
  bool warned = false;
  for (const auto& w : status["payload"]["warnings"].GetArray()) {
    warned =
        warned || std::string(w.GetString()).find("audit.enabled is false") != std::string::npos;
  }
  CHECK(warned);
  CHECK_FALSE(fs::exists(AuditServe::log(dir)));
  CHECK_FALSE(fs::exists(AuditServe::state(dir) + "/audit-signing.pem"));
  CHECK_FALSE(fs::exists(AuditServe::state(dir) + "/audit-mask.key"));
}

TEST_CASE("the audit step: keys made once, a configured key must exist and be private", "[audit]") {
  TempDir dir;
  {
    AuditServe serve(dir);
    REQUIRE(serve.serving());
    struct stat st {};
    REQUIRE(::stat((AuditServe::state(dir) + "/audit-signing.pem").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat((AuditServe::state(dir) + "/audit-mask.key").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    CHECK(fs::exists(AuditServe::state(dir) + "/audit-signing.pem.pub"));
    CHECK(serve.terminate() == 0);
  }
  std::string key = read_file(AuditServe::state(dir) + "/audit-signing.pem");
  {
    // The second start uses the same key.
    AuditServe serve(dir);
    REQUIRE(serve.serving());
    CHECK(read_file(AuditServe::state(dir) + "/audit-signing.pem") == key);
  }
  {
    std::string config = dir.write("missing.toml", "[audit]\nsigning_key = \"nokey.pem\"\n", 0600);
    AuditServe serve(dir, {{"--config", config}});
    CHECK_FALSE(serve.serving());
    CHECK(serve.wait_exit() == 2);
    CHECK(serve.err_to_end().find("cannot start (audit): audit.signing_key: " + dir.str() +
                                  "/nokey.pem does not exist") != std::string::npos);
  }
  {
    ::chmod((AuditServe::state(dir) + "/audit-signing.pem").c_str(), 0644);
    AuditServe serve(dir);
    CHECK_FALSE(serve.serving());
    CHECK(serve.wait_exit() == 2);
    const std::string err = serve.err_to_end();  // all of it: the reader may lag the exit
    CHECK(err.find("cannot start (audit): audit.signing_key: ") != std::string::npos);
    CHECK(err.find("0644") != std::string::npos);
  }
}

TEST_CASE("[audit] keys in warden.toml: defaults, values, errors naming the key", "[audit]") {
  Config c;
  REQUIRE(parse_config("", "/etc/warden", &c).empty());
  CHECK(c.audit.enabled);
  CHECK(c.audit.durability == "group");
  CHECK(c.audit.group_commit == 2ms);
  CHECK(c.audit.rotate_bytes == 64ull << 20);
  CHECK(c.audit.rotate_seconds == 86400);
  CHECK(c.audit.checkpoint_records == 1000);
  CHECK(c.audit.checkpoint_seconds == 60);
  CHECK(c.audit.mask_secrets);
  c.state_dir = "/var/lib/warden";
  REQUIRE(resolve_state_paths(&c).empty());
  CHECK(c.audit_log == "/var/lib/warden/audit.jsonl");
  CHECK(c.audit.signing_key == "/var/lib/warden/audit-signing.pem");
  CHECK(c.audit.signing_key_default);
  CHECK(c.audit.mask_key == "/var/lib/warden/audit-mask.key");
  CHECK(valid_daemon_id(c.audit.daemon_id));

  Config d;
  REQUIRE(parse_config(R"(
[audit]
enabled = false
durability = "fsync"
group_commit_ms = 0
rotate_bytes = 0
rotate_seconds = 3600
checkpoint_records = 10
checkpoint_seconds = 5
signing_key = "keys/sign.pem"
mask_secrets = false
mask_key = "/k/mask"
daemon_id = "host-1.example:a_b"
)",
                       "/etc/warden", &d)
              .empty());
  CHECK_FALSE(d.audit.enabled);
  CHECK(d.audit.durability == "fsync");
  CHECK(d.audit.group_commit == 0ms);
  CHECK(d.audit.rotate_bytes == 0);
  CHECK(d.audit.checkpoint_records == 10);
  CHECK(d.audit.signing_key == "/etc/warden/keys/sign.pem");
  CHECK(d.audit.mask_key == "/k/mask");
  CHECK(d.audit.daemon_id == "host-1.example:a_b");
  d.state_dir = "/s";
  REQUIRE(resolve_state_paths(&d).empty());
  CHECK_FALSE(d.audit.signing_key_default);
  CHECK(d.audit.signing_key == "/etc/warden/keys/sign.pem");

  auto errors_of = [](const std::string& text) {
    Config e;
    std::vector<std::string> out;
    for (const auto& err : parse_config(text, "", &e)) out.push_back(err.to_text("warden.toml"));
    return out;
  };
  CHECK(errors_of("[audit]\nsync = true\n") ==
        std::vector<std::string>{"warden.toml: audit.sync: unknown key"});
  CHECK(errors_of("[audit]\ndurability = \"sometimes\"\n") ==
        std::vector<std::string>{
            "warden.toml: audit.durability: must be fsync, group or write, not 'sometimes'"});
  CHECK(errors_of("[audit]\ndaemon_id = \"a b\"\n") ==
        std::vector<std::string>{"warden.toml: audit.daemon_id: must be 1 to 64 characters of "
                                 "A-Z a-z 0-9 . _ : -, not 'a b'"});
  CHECK(errors_of("[audit]\ndaemon_id = \"" + std::string(65, 'a') + "\"\n").size() == 1);
  CHECK(errors_of("[audit]\nrotate_bytes = 100\n") ==
        std::vector<std::string>{
            "warden.toml: audit.rotate_bytes: must be 0 (never) or at least 4096, not 100"});
  CHECK(errors_of("[audit]\ncheckpoint_records = 0\n") ==
        std::vector<std::string>{
            "warden.toml: audit.checkpoint_records: must be between 1 and 100000000, not 0"});
  CHECK(errors_of("[audit]\nenabled = \"yes\"\n") ==
        std::vector<std::string>{"warden.toml: audit.enabled: must be a boolean, not a string"});
  CHECK(errors_of("audit = 1\n") ==
        std::vector<std::string>{"warden.toml: audit: must be a table, not an integer"});
}

TEST_CASE("the workspace may not hold the audit log or its keys", "[audit]") {
  Config c;
  c.state_dir = "/srv/state";
  c.audit_log = "/home/user/project/logs/audit.jsonl";
  c.audit.signing_key = "/home/user/project/sign.pem";
  REQUIRE(resolve_state_paths(&c).empty());
  auto conflicts = workspace_conflicts("/home/user/project", own_files(c));
  CHECK(std::count_if(conflicts.begin(), conflicts.end(), [](const std::string& s) {
          return s.find("contains the audit log /home/user/project/logs/audit.jsonl") !=
                     std::string::npos ||
                 s.find("contains the audit signing key /home/user/project/sign.pem") !=
                     std::string::npos;
        }) == 2);
  c.audit.enabled = false;
  CHECK(workspace_conflicts("/home/user/project", own_files(c)).empty());
}
