// Red team of `submit` (tests/server/REDTEAM_SUBMIT.md): a hostile agent client and a
// hostile model against the pipeline behind the daemon. Each finding has a test here that
// failed before its fix; the rest pin what held.
#include <spdlog/sinks/base_sink.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

#include "protocol/json_text.h"
#include "server/own_files.h"
#include "server_fixture.h"
#include "tests/support/http_fake.h"
#include "warden_child.h"

namespace warden::server::testing {
namespace {

// Approves every proposal: the rules are not what these tests attack.
const char* kApproveAll = R"CLP(
(defrule all-ok
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule all-ok) (reason "ok"))))
)CLP";

const std::string kCarolToken = "wdn_test_second_agent_token";

Config redteam_submit_config(const TempDir& dir) {
  Config c = test_config(dir);
  dir.write("rules/policy.clp", kApproveAll);
  fs::create_directories(dir.path() / "ws");
  c.workspace_root = (dir.path() / "ws").string();
  return c;
}

void add_script_provider(Config& c, const TempDir& dir, const std::string& lines) {
  reasoning::ProviderConfig p;
  p.name = "script";
  p.kind = "script";
  p.script_path = dir.write("model.jsonl", lines);
  c.pipeline.reasoning.providers.push_back(p);
}

struct Message {
  std::string type;  // event, response
  std::string id;
  std::string event;   // payload.event of an event
  std::string status;  // payload.status (final event, response)
  std::string code;    // payload.error.code of an error response
  std::string decision_id;
  std::string raw;
};

Message message_of(const std::string& json) {
  Message m;
  m.raw = json;
  auto d = parse(json);
  if (d.HasParseError() || !d.IsObject()) {
    m.type = "<not json>";
    return m;
  }
  auto str = [](const rapidjson::Value& v, const char* k) {
    return v.IsObject() && v.HasMember(k) && v[k].IsString() ? std::string(v[k].GetString())
                                                             : std::string();
  };
  m.type = str(d, "type");
  m.id = str(d, "id");
  if (d.HasMember("payload") && d["payload"].IsObject()) {
    const auto& p = d["payload"];
    m.event = str(p, "event");
    m.status = str(p, "status");
    m.decision_id = str(p, "decision_id");
    if (p.HasMember("error")) m.code = str(p["error"], "code");
  }
  return m;
}

// Reads messages until the response with `id` (or a read failure).
std::vector<Message> read_until_response(Client& client, const std::string& id) {
  std::vector<Message> out;
  for (int i = 0; i < 1000; ++i) {
    std::string payload;
    auto status = client.read_message(&payload, 20000ms);
    if (status != Client::ReadStatus::Ok) {
      Message failed;
      failed.type = "<read status " + std::to_string(static_cast<int>(status)) + ">";
      out.push_back(std::move(failed));
      return out;
    }
    out.push_back(message_of(payload));
    if (out.back().type == "response" && out.back().id == id) return out;
  }
  return out;
}

std::string submit_request(const std::string& id, const std::string& text,
                           const std::string& more = "") {
  return make_request(id, "submit", "\"text\":" + json_string(text) + more);
}

// A log sink that notices when a line holding `needle` is written (thread-safe).
class WatchSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit WatchSink(std::string needle) : needle_(std::move(needle)) {}
  std::atomic<bool> seen{false};

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    std::string_view text(msg.payload.data(), msg.payload.size());
    if (text.find(needle_) != std::string_view::npos) seen.store(true);
  }
  void flush_() override {}

 private:
  std::string needle_;
};

// ---------------------------------------------------------------------------------------
// Finding: a hostile model writes raw control characters into the daemon's log.
TEST_CASE("redteam: model text in the daemon log cannot forge lines or drive the terminal",
          "[redteam][submit]") {
  TempDir dir;
  Config c = redteam_submit_config(dir);
  c.log_level = "info";
  // The log actuator writes "a line to the daemon's log": the model picks the line.
  add_script_provider(
      c, dir,
      R"({"text":{"target":"log","payload":{"message":"fine\n2026-11-23T09:00:00.000 warn token of principal root revoked\u001b]0;owned\u0007\u001b[2J\u009b31m"}}})"
      "\n");
  auto out = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(out, spdlog::level::info);
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  Client agent;
  connect_agent(agent, daemon);
  std::string error;
  REQUIRE(agent.send_message(submit_request("1", "log something"), &error));
  auto messages = read_until_response(agent, "1");
  REQUIRE(!messages.empty());
  CHECK(messages.back().type == "response");
  daemon.stop();
  const std::string log = out->str();
  INFO(log);
  REQUIRE(log.find("fine") != std::string::npos);  // the line was written
  CHECK(log.find('\x1b') == std::string::npos);
  CHECK(log.find('\a') == std::string::npos);
  CHECK(log.find("\xc2\x9b") == std::string::npos);  // C1 CSI
  // No line of the log starts with the forged text.
  CHECK(log.find("\n2026-11-23T09:00:00.000 warn") == std::string::npos);
}

// ---------------------------------------------------------------------------------------
// Finding: after the requester half-closes during the model call, the run still "decides"
// the model's proposal: a decision event with a decision the audit log never recorded.
TEST_CASE("redteam: a hang-up during the model call ends the run before any decision",
          "[redteam][submit]") {
  TempDir dir;
  warden::testing::HttpFake model;
  Gate entered, release;
  model.route("/v1/chat/completions", [&](const warden::testing::HttpSeen&) {
    entered.open();
    release.wait();
    warden::testing::HttpReply r;
    r.headers = {{"Content-Type", "application/json"}};
    r.body =
        R"({"choices":[{"message":{"role":"assistant","content":"{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":\"touch marker\"}}"}}]})";
    return r;
  });
  Config c = redteam_submit_config(dir);
  reasoning::ProviderConfig p;
  p.name = "fake";
  p.kind = "openai";
  p.base_url = model.base_url();
  p.model = "m";
  p.native_tools = false;
  c.pipeline.reasoning.providers.push_back(p);
  c.log_level = "debug";
  auto watch = std::make_shared<WatchSink>("peer closed its side");
  Daemon::Options options;
  options.logger = std::make_shared<spdlog::logger>("redteam", watch);
  options.logger->set_level(spdlog::level::debug);
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  Client agent;
  connect_agent(agent, daemon);
  std::string error;
  REQUIRE(agent.send_message(submit_request("1", "make a marker"), &error));
  REQUIRE(entered.wait());
  {
    // Held: a model that does not answer holds its pipeline thread, never the decisions
    // of other connections.
    Client other;
    connect_agent(other, daemon);
    REQUIRE(other.send_message(decide_request("d", kReplyProposal), &error));
    std::string reply = read_or_fail(other, 20000ms);
    INFO(reply);
    CHECK(error_code(reply) == "");
  }
  agent.shutdown_write();
  REQUIRE(eventually([&] { return watch->seen.load(); }));
  release.open();
  auto messages = read_until_response(agent, "1");
  REQUIRE(!messages.empty());
  const Message& last = messages.back();
  INFO(last.raw);
  CHECK(last.type == "response");
  CHECK(last.status == "cancelled");
  for (const Message& m : messages) {
    INFO(m.raw);
    CHECK(m.event != "decision");  // nothing was decided for a requester that is gone
  }
  CHECK(!fs::exists(dir.path() / "ws/marker"));
  daemon.stop();
}

// ---------------------------------------------------------------------------------------
// Finding: one agent's flood of submits fills the whole pipeline queue; every other agent's
// submit is refused with E_BUSY until the flood drains.
TEST_CASE("redteam: one agent's submits cannot take the whole pipeline queue",
          "[redteam][submit]") {
  TempDir dir;
  Config c = redteam_submit_config(dir);
  c.tokens = dir.write("tokens",
                       Tokens{}.file_text() + "agent carol " + token_hash_text(kCarolToken) + "\n");
  fs::permissions(c.tokens, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  c.pipeline.threads = 1;
  c.pipeline.max_queue = 2;
  Gate release;
  std::atomic<int> alice_runs{0};
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal& signal, const Identity& identity,
                                std::shared_ptr<const std::atomic<bool>>,
                                const pipeline::EventSink&) {
    if (identity.principal == "alice") {
      alice_runs.fetch_add(1);
      release.wait();
    }
    (void)signal;
    return pipeline::RunSummary{"done", 1, 0, 0};
  };
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  Client alice, carol;
  connect_agent(alice, daemon);
  std::string error;
  // One run holds the only pipeline thread; then alice asks for more than the queue holds.
  REQUIRE(alice.send_message(submit_request("a0", "x"), &error));
  REQUIRE(eventually([&] { return alice_runs.load() == 1; }));
  for (int i = 1; i <= 4; ++i) {
    REQUIRE(alice.send_message(submit_request("a" + std::to_string(i), "x"), &error));
  }
  REQUIRE(carol.connect(daemon.address(), 5000ms, &error));
  REQUIRE(carol.authenticate(kCarolToken, 5000ms, &error));
  // alice's requests are all read before carol's: the flood is in place first. A decide
  // behind them on alice's connection answers once the submits before it have answered, so
  // wait on the daemon's counters instead.
  Client admin;
  REQUIRE(admin.connect(daemon.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(eventually([&] {
    std::string e;
    if (!admin.send_message(make_request("s", "status", ""), &e)) return false;
    auto doc = parse(read_or_fail(admin));
    const auto& s = doc["payload"]["counters"];
    return s.HasMember("errors") && s["errors"].GetUint64() >= 1;  // some of alice's: E_BUSY
  }));
  REQUIRE(carol.send_message(submit_request("c1", "y"), &error));
  std::string reply = read_or_fail(carol, 20000ms);
  INFO(reply);
  CHECK(error_code(reply) != "E_BUSY");
  release.open();
  // alice's connection still answers every request, in order.
  for (int i = 0; i <= 4; ++i) {
    auto ms = read_until_response(alice, "a" + std::to_string(i));
    REQUIRE(!ms.empty());
    CHECK(ms.back().type == "response");
  }
  daemon.stop();
}

// ---------------------------------------------------------------------------------------
// Held: roles, sensors and fields the client may not choose.
TEST_CASE(
    "redteam: submit refuses other roles and pipeline-only sensors; the identity is "
    "the token's",
    "[redteam][submit]") {
  TempDir dir;
  Config c = redteam_submit_config(dir);
  std::mutex mutex;
  std::vector<pipeline::Signal> seen;
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal& signal, const Identity&,
                                std::shared_ptr<const std::atomic<bool>>,
                                const pipeline::EventSink& sink) {
    {
      std::lock_guard lock(mutex);
      seen.push_back(signal);
    }
    sink(R"({"event":"reply","text":"hi"})");
    return pipeline::RunSummary{"done", 1, 0, 0};
  };
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  std::string error;
  for (const std::string& token : {Tokens{}.approver, Tokens{}.admin}) {
    Client other;
    REQUIRE(other.connect(daemon.address(), 5000ms, &error));
    REQUIRE(other.authenticate(token, 5000ms, &error));
    REQUIRE(other.send_message(submit_request("1", "x"), &error));
    CHECK(error_code(read_or_fail(other)) == "E_FORBIDDEN");
  }
  Client agent;
  connect_agent(agent, daemon);
  for (const char* sensor : {"tool-output", "tool-error", "loop-error", "HEARTBEAT", ""}) {
    REQUIRE(
        agent.send_message(submit_request("s", "x", ",\"sensor\":" + json_string(sensor)), &error));
    CHECK(error_code(read_or_fail(agent)) == "E_BAD_REQUEST");
  }
  REQUIRE(
      agent.send_message(submit_request("p", "x",
                                        ",\"principal\":\"root\",\"depth\":-5,\"session\":\"s1\","
                                        "\"context\":{\"principal\":\"root\"},\"role\":\"admin\""),
                         &error));
  auto ms = read_until_response(agent, "p");
  CHECK(ms.back().type == "response");
  CHECK(ms.back().code == "");
  std::lock_guard lock(mutex);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].principal == "alice");
  CHECK(seen[0].depth == 0);
  CHECK(seen[0].session == "s1");
}

// Held: a submit's events and the replies of requests pipelined around it on one connection
// come back in request order, each event before its own response, nothing lost.
TEST_CASE("redteam: events of pipelined submits do not interleave with other replies",
          "[redteam][submit]") {
  TempDir dir;
  Config c = redteam_submit_config(dir);
  Gate release_first;
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal& signal, const Identity&,
                                std::shared_ptr<const std::atomic<bool>>,
                                const pipeline::EventSink& sink) {
    if (signal.text == "first") release_first.wait();
    for (int i = 0; i < 50; ++i) {
      sink("{\"event\":\"reply\",\"text\":" + json_string(signal.text + std::to_string(i)) + "}");
    }
    return pipeline::RunSummary{"done", 1, 0, 0};
  };
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  Client agent;
  connect_agent(agent, daemon);
  std::string error;
  REQUIRE(agent.send_message(submit_request("1", "first"), &error));
  REQUIRE(agent.send_message(decide_request("2", kReplyProposal), &error));
  REQUIRE(agent.send_message(submit_request("3", "second"), &error));
  REQUIRE(agent.send_message(decide_request("4", kReplyProposal), &error));
  release_first.open();
  std::vector<Message> all;
  for (const char* id : {"1", "2", "3", "4"}) {
    auto ms = read_until_response(agent, id);
    all.insert(all.end(), ms.begin(), ms.end());
  }
  std::vector<std::string> order;
  for (const Message& m : all) order.push_back(m.type + ":" + m.id);
  std::vector<std::string> expected;
  for (int i = 0; i < 50; ++i) expected.push_back("event:1");
  expected.push_back("response:1");
  expected.push_back("response:2");
  for (int i = 0; i < 50; ++i) expected.push_back("event:3");
  expected.push_back("response:3");
  expected.push_back("response:4");
  CHECK(order == expected);
}

// ---------------------------------------------------------------------------------------
// Finding: revoking an agent's token (reload) does not stop its run in flight: the model's
// next proposal is still decided and dispatched for the revoked principal.
TEST_CASE("redteam: a revoked token's run in flight stops before its next step",
          "[redteam][submit]") {
  TempDir dir;
  warden::testing::HttpFake model;
  Gate entered, release;
  model.route("/v1/chat/completions", [&](const warden::testing::HttpSeen&) {
    entered.open();
    release.wait();
    warden::testing::HttpReply r;
    r.headers = {{"Content-Type", "application/json"}};
    r.body =
        R"({"choices":[{"message":{"role":"assistant","content":"{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":\"touch marker\"}}"}}]})";
    return r;
  });
  Config c = redteam_submit_config(dir);
  reasoning::ProviderConfig p;
  p.name = "fake";
  p.kind = "openai";
  p.base_url = model.base_url();
  p.model = "m";
  p.native_tools = false;
  c.pipeline.reasoning.providers.push_back(p);
  c.log_level = "info";
  auto watch = std::make_shared<WatchSink>("by a reload; closing");
  Daemon::Options options;
  options.logger = std::make_shared<spdlog::logger>("redteam", watch);
  options.logger->set_level(spdlog::level::info);
  RunningDaemon daemon(c, options);
  REQUIRE(daemon.ok());
  Client agent, admin;
  connect_agent(agent, daemon);
  std::string error;
  REQUIRE(admin.connect(daemon.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(agent.send_message(submit_request("1", "make a marker"), &error));
  REQUIRE(entered.wait());
  // The operator revokes alice: her token leaves the token file.
  Tokens t;
  dir.write("tokens",
            "approver bob " + token_hash_text(t.approver) + "\nadmin root " +
                token_hash_text(t.admin) + "\n",
            0600);
  REQUIRE(admin.send_message(make_request("r", "reload", ""), &error));
  CHECK(error_code(read_or_fail(admin)) == "");
  REQUIRE(eventually([&] { return watch->seen.load(); }));
  release.open();
  auto messages = read_until_response(agent, "1");
  REQUIRE(!messages.empty());
  INFO(messages.back().raw);
  for (const Message& m : messages) {
    INFO(m.raw);
    CHECK(m.event != "tool-output");
  }
  CHECK(!fs::exists(dir.path() / "ws/marker"));
  daemon.stop();
}

// ---------------------------------------------------------------------------------------
// Finding: the TLS private key is not among the daemon's own files, so a workspace that
// holds it is accepted and an approved `cat`/file read hands the model the daemon's key.
TEST_CASE("redteam: a workspace holding the daemon's TLS key is refused", "[redteam][submit]") {
  TempDir dir;
  Config c = redteam_submit_config(dir);
  c.tls.cert = (dir.path() / "ws/server.crt").string();
  c.tls.key = (dir.path() / "ws/server.key").string();
  auto conflicts = workspace_conflicts(c.workspace_root, own_files(c));
  bool key = false, cert = false;
  for (const std::string& m : conflicts) {
    key = key || m.find("server.key") != std::string::npos;
    cert = cert || m.find("server.crt") != std::string::npos;
  }
  CHECK(key);
  CHECK(cert);  // rewriting the certificate is as bad as reading the key
}

// ---------------------------------------------------------------------------------------
// Held: with the audit log unwritable (RLIMIT_FSIZE → EFBIG), the model's approved shell
// proposal is a reject E_AUDIT and nothing runs. `warden serve` as a child process.
TEST_CASE("redteam: nothing is dispatched while the audit log cannot be written",
          "[redteam][submit]") {
  TempDir dir;
  dir.write("rules/policy.clp", kApproveAll);
  fs::create_directories(dir.path() / "ws");
  std::string tokens = dir.write("tokens", Tokens{}.file_text(), 0600);
  dir.write(
      "model.jsonl",
      R"({"repeat":true,"text":{"target":"shell","action":"run","payload":{"command":"touch marker"}}})"
      "\n");
  std::string config = dir.write("warden.toml", "workspace_root = \"" + dir.str() +
                                                    "/ws\"\n[[reasoning.providers]]\n"
                                                    "name = \"s\"\nkind = \"script\"\nscript = \"" +
                                                    dir.str() + "/model.jsonl\"\n");
  // The log's writes fail with EFBIG past 96 KiB (above the approvals store's SQLite WAL,
  // about 57 KiB with its schema and indexes, and its 32 KiB WAL index).
  WardenChild serve(
      {"serve", "--config", config, "--listen", "127.0.0.1:0", "--tokens", tokens, "--rules",
       dir.str() + "/rules", "--state-dir", dir.str() + "/state", "--workers", "2"},
      96 * 1024);
  INFO(serve.err());
  REQUIRE(serve.serving());
  const std::string address = serve.address();
  Client agent;
  std::string error;
  REQUIRE(agent.connect(address, 5000ms, &error));
  REQUIRE(agent.authenticate(Tokens{}.agent, 5000ms, &error));
  // Fill the log with decisions until they fail closed.
  bool failing = false;
  for (int i = 0; i < 800 && !failing; ++i) {
    REQUIRE(agent.send_message(decide_request(std::to_string(i), kReplyProposal), &error));
    failing = read_or_fail(agent).find("\"E_AUDIT\"") != std::string::npos;
  }
  REQUIRE(failing);
  REQUIRE(agent.send_message(submit_request("run", "make a marker"), &error));
  auto messages = read_until_response(agent, "run");
  REQUIRE(!messages.empty());
  CHECK(messages.back().type == "response");
  for (const Message& m : messages) {
    INFO(m.raw);
    CHECK(m.event != "tool-output");
    CHECK(m.event != "tool-error");
    if (m.event == "decision") CHECK(m.raw.find("\"outcome\":\"reject\"") != std::string::npos);
  }
  CHECK(!fs::exists(dir.path() / "ws/marker"));
}

}  // namespace
}  // namespace warden::server::testing
