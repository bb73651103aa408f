// `submit` on the wire, with pipeline runs the test injects (Daemon::Options::pipeline_runner):
// each event is written as soon as it happens, the response ends the run, later requests of
// the connection are answered after it, the connection closing cancels the run; the agent
// role is required and a daemon without providers answers E_NO_PROVIDER. Decisions of a run
// (make_daemon_decider) go through the workers and the audit log like `decide`, and
// record_act writes `act` records that verify.
#include <catch2/catch.hpp>

#include "audit/signing.h"
#include "audit/verify.h"
#include "protocol/json_text.h"
#include "server/act_record.h"
#include "server/daemon_decider.h"
#include "server/errors.h"
#include "server_fixture.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

std::string submit_request_json(const std::string& id, const std::string& text,
                                const std::string& extra = "") {
  return make_request(id, "submit", "\"text\":" + json_string(text) + extra);
}

std::string type_of(const std::string& message) {
  auto doc = parse(message);
  return doc.IsObject() && doc.HasMember("type") && doc["type"].IsString() ? doc["type"].GetString()
                                                                           : "<none>";
}

std::string event_of(const std::string& message) {
  auto doc = parse(message);
  if (!doc.IsObject() || !doc["payload"].IsObject() || !doc["payload"].HasMember("event")) {
    return "<none>";
  }
  return doc["payload"]["event"].GetString();
}

std::string text_of(const std::string& message) {
  auto doc = parse(message);
  return doc["payload"].HasMember("text") ? doc["payload"]["text"].GetString() : "";
}

void send(Client& client, const std::string& json) {
  std::string error;
  REQUIRE(client.send_message(json, &error));
}

std::string connect_and_submit(Client& client, RunningDaemon& daemon, const std::string& id,
                               const std::string& text) {
  connect_agent(client, daemon);
  send(client, submit_request_json(id, text));
  return id;
}

}  // namespace

TEST_CASE("submit writes each event as it happens, then the response", "[server][submit]") {
  TempDir dir;
  Gate second_sent, go_on;
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal& signal, const Identity& identity,
                                std::shared_ptr<const std::atomic<bool>>,
                                const pipeline::EventSink& sink) {
    sink("{\"event\":\"reply\",\"text\":\"one " + identity.principal + " " + signal.sensor + "\"}");
    sink("{\"event\":\"reply\",\"text\":\"two " + signal.session + "\"}");
    second_sent.open();
    go_on.wait();  // the run goes on only after the test has read both events
    sink("{\"event\":\"final\",\"status\":\"done\",\"cycles\":2}");
    return pipeline::RunSummary{"done", 2, 1, 0};
  };
  RunningDaemon daemon(test_config(dir), options);
  REQUIRE(daemon.ok());
  Client client;
  connect_agent(client, daemon);
  send(client, submit_request_json("s1", "hello", ",\"session\":\"sess-9\""));
  std::string first = read_or_fail(client);
  std::string second = read_or_fail(client);
  REQUIRE(second_sent.wait());
  CHECK(type_of(first) == "event");
  CHECK(reply_id(first) == "s1");
  CHECK(text_of(first) == "one alice user-input");  // the authenticated principal
  CHECK(text_of(second) == "two sess-9");
  go_on.open();
  std::string final_event = read_or_fail(client);
  CHECK(event_of(final_event) == "final");
  std::string response = read_or_fail(client);
  CHECK(type_of(response) == "response");
  CHECK(reply_id(response) == "s1");
  CHECK(error_code(response) == "");
  auto doc = parse(response);
  CHECK(std::string(doc["payload"]["action"].GetString()) == "submit");
  CHECK(std::string(doc["payload"]["status"].GetString()) == "done");
  CHECK(doc["payload"]["cycles"].GetInt() == 2);
}

TEST_CASE("a request after a submit is answered after the submit's response", "[server][submit]") {
  TempDir dir;
  Gate go_on;
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal&, const Identity&,
                                std::shared_ptr<const std::atomic<bool>>,
                                const pipeline::EventSink& sink) {
    sink("{\"event\":\"reply\",\"text\":\"working\"}");
    go_on.wait();
    sink("{\"event\":\"reply\",\"text\":\"finished\"}");
    return pipeline::RunSummary{"done", 1, 1, 0};
  };
  RunningDaemon daemon(test_config(dir), options);
  REQUIRE(daemon.ok());
  Client client;
  connect_agent(client, daemon);
  send(client, submit_request_json("s", "go"));
  send(client, decide_request("d", kShellProposal));  // decided at once, answered in order
  CHECK(text_of(read_or_fail(client)) == "working");
  go_on.open();
  std::string finished = read_or_fail(client);
  CHECK(text_of(finished) == "finished");
  std::string submit_response = read_or_fail(client);
  CHECK(type_of(submit_response) == "response");
  CHECK(reply_id(submit_response) == "s");
  std::string decide_response = read_or_fail(client);
  CHECK(reply_id(decide_response) == "d");
  CHECK(decide_response.find("\"outcome\":\"reject\"") != std::string::npos);
}

TEST_CASE("the connection closing cancels the run", "[server][submit]") {
  TempDir dir;
  Gate started;
  std::atomic<bool> saw_cancel{false};
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal&, const Identity&,
                                std::shared_ptr<const std::atomic<bool>> closed,
                                const pipeline::EventSink& sink) {
    sink("{\"event\":\"reply\",\"text\":\"started\"}");
    started.open();
    // A real run checks the flag before each model call and dispatch.
    saw_cancel = eventually([&] { return closed->load(); });
    return pipeline::RunSummary{"cancelled", 1, 0, 0};
  };
  RunningDaemon daemon(test_config(dir), options);
  REQUIRE(daemon.ok());
  {
    Client client;
    connect_and_submit(client, daemon, "s", "long job");
    CHECK(text_of(read_or_fail(client)) == "started");
    REQUIRE(started.wait());
  }  // closed here
  REQUIRE(eventually([&] { return saw_cancel.load(); }));
}

TEST_CASE("submit: agent role only, payload checked, E_NO_PROVIDER without providers",
          "[server][submit]") {
  TempDir dir;
  SECTION("no provider configured") {
    RunningDaemon daemon(test_config(dir));
    REQUIRE(daemon.ok());
    Client client;
    connect_agent(client, daemon);
    send(client, submit_request_json("1", "hello"));
    CHECK(error_code(read_or_fail(client)) == err::kNoProvider);
    // The connection still serves decisions.
    send(client, decide_request("2", kReplyProposal));
    CHECK(error_code(read_or_fail(client)) == "");
  }
  SECTION("roles and payload") {
    Daemon::Options options;
    std::atomic<int> runs{0};
    options.pipeline_runner = [&](const pipeline::Signal&, const Identity&,
                                  std::shared_ptr<const std::atomic<bool>>,
                                  const pipeline::EventSink&) {
      ++runs;
      return pipeline::RunSummary{"done", 1, 0, 0};
    };
    RunningDaemon daemon(test_config(dir), options);
    REQUIRE(daemon.ok());
    for (const std::string& token : {Tokens{}.approver, Tokens{}.admin}) {
      Client other;
      std::string error;
      REQUIRE(other.connect(daemon.address(), 5000ms, &error));
      REQUIRE(other.authenticate(token, 5000ms, &error));
      send(other, submit_request_json("x", "hello"));
      CHECK(error_code(read_or_fail(other)) == err::kForbidden);
    }
    Client client;
    connect_agent(client, daemon);
    send(client, make_request("a", "submit", "\"sensor\":\"user-input\""));
    CHECK(error_code(read_or_fail(client)) == err::kBadRequest);
    send(client, make_request("b", "submit", "\"text\":7"));
    CHECK(error_code(read_or_fail(client)) == err::kBadRequest);
    // Feedback signals come from the pipeline only.
    send(client, submit_request_json("c", "out", ",\"sensor\":\"tool-output\""));
    CHECK(error_code(read_or_fail(client)) == err::kBadRequest);
    send(client, submit_request_json("d", "hi", ",\"session\":5"));
    CHECK(error_code(read_or_fail(client)) == err::kBadRequest);
    CHECK(runs == 0);
    send(client, submit_request_json("e", "tick", ",\"sensor\":\"heartbeat\""));
    CHECK(error_code(read_or_fail(client)) == "");
    CHECK(runs == 1);
  }
}

TEST_CASE("a run's decisions go through the workers and the audit log; act records verify",
          "[server][submit][audit]") {
  TempDir dir;
  std::unique_ptr<RunningDaemon> daemon;
  Daemon::Options options;
  options.pipeline_runner = [&](const pipeline::Signal& signal, const Identity& identity,
                                std::shared_ptr<const std::atomic<bool>> closed,
                                const pipeline::EventSink& sink) {
    ServerContext& ctx = daemon->daemon().context();
    pipeline::Decider decide = make_daemon_decider(ctx, identity, closed);
    Decision shell = decide(kShellProposal, signal, pipeline::DecideStage::Reason, 1);
    Decision reply = decide(kReplyProposal, signal, pipeline::DecideStage::LastMile, 1);
    sink("{\"event\":\"decision\",\"decision_id\":\"" + shell.decision_id + "\",\"outcome\":\"" +
         std::string(outcome_name(shell.outcome)) + "\"}");
    sink("{\"event\":\"decision\",\"decision_id\":\"" + reply.decision_id + "\",\"outcome\":\"" +
         std::string(outcome_name(reply.outcome)) + "\"}");
    actuators::Result result;
    result.ok = true;
    result.exit_code = 0;
    result.truncated = true;
    record_act(ctx, reply.decision_id, "echo", signal.principal, result);
    return pipeline::RunSummary{"done", 1, 0, 1};
  };
  daemon = std::make_unique<RunningDaemon>(test_config(dir), options);
  REQUIRE(daemon->ok());
  Client client;
  connect_and_submit(client, *daemon, "s", "go");
  std::string shell = read_or_fail(client);
  std::string reply = read_or_fail(client);
  CHECK(shell.find("\"outcome\":\"reject\"") != std::string::npos);
  CHECK(reply.find("\"outcome\":\"approve\"") != std::string::npos);
  CHECK(type_of(read_or_fail(client)) == "response");
  std::string shell_id = parse(shell)["payload"]["decision_id"].GetString();
  std::string reply_id_ = parse(reply)["payload"]["decision_id"].GetString();
  // Both decisions were in the log before the run saw them.
  std::string log = dir.read("state/audit.jsonl");
  CHECK(log.find("\"decision_id\":\"" + shell_id + "\"") != std::string::npos);
  CHECK(log.find("\"kind\":\"act\"") != std::string::npos);
  CHECK(log.find("\"decision_id\":\"" + reply_id_ +
                 "\",\"target\":\"echo\",\"principal\":"
                 "\"alice\",\"ok\":true,\"error_code\":\"\",\"exit_code\":0,\"truncated\":true") !=
        std::string::npos);
  daemon->stop();
  std::string error;
  auto key = audit::VerifyKey::load(dir.str() + "/state/audit-signing.pem.pub", &error);
  INFO(error);
  REQUIRE(key);
  audit::VerifyOptions verify;
  verify.key = key.get();
  verify.threads = 1;
  auto report = audit::verify_paths({dir.str() + "/state/audit.jsonl"}, verify);
  INFO(audit::report_to_json(report));
  CHECK(report.ok);
}
