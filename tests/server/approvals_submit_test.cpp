// Approvals of a submit's action, end to end in one daemon with the `script` model provider:
// the model proposes `touch made.txt` (approval-required), the agent sees the token; an
// approver approves on another connection; the action runs in the workspace (a real child
// process) on the approving side; the result reaches the agent's connection — in the run's
// stream when it waits (wait_s), as a message outside any request when it does not.
#include <catch2/catch.hpp>

#include <atomic>
#include <fstream>
#include <thread>
#include <vector>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

std::string approval_script_line(const std::string& proposal) {
  return "{\"text\":" + json_string(proposal) + "}\n";
}

std::string touch_proposal(const std::string& file) {
  return "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":\"touch " + file +
         "\"},\"explanation\":\"the user asked\"}";
}

Config submit_config(const TempDir& dir, const std::string& answers) {
  Config c = approvals_config(dir);
  std::string script = dir.write("model.jsonl", answers);
  std::string toml = "[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
                     json_string(script) + "\n";
  ConfigErrors errors = parse_config(toml, dir.str(), &c);
  REQUIRE(errors.empty());
  return c;
}

struct Run {
  std::vector<rapidjson::Document> events;
  std::string status;
};

// Reads a submit's events until the approval-required one; returns its approval.
ApprovalRef read_until_approval(Party& agent, Run* run) {
  for (;;) {
    std::string message = agent.read(60000ms);
    INFO(message);
    auto doc = parse(message);
    REQUIRE(str(doc, "type") == "event");
    std::string event = str(doc["payload"], "event");
    rapidjson::Document payload;
    payload.CopyFrom(doc["payload"], payload.GetAllocator());
    run->events.push_back(std::move(payload));
    if (event == "approval-required") {
      REQUIRE(doc["payload"].HasMember("approval"));
      return approval_ref(doc["payload"]["approval"]);
    }
  }
}

}  // namespace

TEST_CASE("submit: approved in another terminal, the action runs and the agent sees the result",
          "[server][approvals][submit]") {
  TempDir dir;
  Config config = submit_config(dir, approval_script_line(touch_proposal("made.txt")));
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);
  const std::string made = config.workspace_root + "/made.txt";

  SECTION("the agent waits") {
    alice.send(
        make_request("run", "submit", "\"text\":\"make a file\",\"session\":\"s1\",\"wait_s\":60"));
    Run run;
    ApprovalRef token = read_until_approval(alice, &run);
    CHECK(!std::filesystem::exists(made));
    std::string ok = bob.call(approve_request(token));
    INFO(ok);
    REQUIRE(error_code(ok) == "");
    CHECK(str(payload_of(ok), "status") == "executed");
    CHECK(payload_of(ok)["result"]["ok"].GetBool());
    CHECK(std::filesystem::exists(made));
    // The run hears the result, then ends done.
    auto result = parse(alice.read());
    INFO(to_json_text(result));
    CHECK(str(result["payload"], "event") == "approval-result");
    CHECK(str(result["payload"], "status") == "executed");
    CHECK(str(result["payload"], "by") == "bob");
    CHECK(result["payload"]["result"]["ok"].GetBool());
    std::string last;
    for (;;) {
      last = alice.read();
      if (str(parse(last), "type") == "response") break;
    }
    CHECK(str(payload_of(last), "status") == "done");
  }
  SECTION("the agent does not wait: the result still reaches its connection") {
    alice.send(make_request("run", "submit", "\"text\":\"make a file\",\"session\":\"s1\""));
    Run run;
    ApprovalRef token = read_until_approval(alice, &run);
    std::string final_message;
    for (;;) {
      final_message = alice.read();
      if (str(parse(final_message), "type") == "response") break;
    }
    CHECK(str(payload_of(final_message), "status") == "suspended");
    CHECK(!std::filesystem::exists(made));
    std::string ok = bob.call(approve_request(token));
    INFO(ok);
    REQUIRE(error_code(ok) == "");
    CHECK(std::filesystem::exists(made));
    auto pushed = parse(alice.read());
    INFO(to_json_text(pushed));
    CHECK(str(pushed, "type") == "event");
    CHECK(pushed["id"].IsNull());
    CHECK(str(pushed["payload"], "event") == "approval-result");
    CHECK(str(pushed["payload"], "status") == "executed");
  }
  SECTION("denied: nothing runs, the waiting run ends rejected") {
    alice.send(
        make_request("run", "submit", "\"text\":\"make a file\",\"session\":\"s1\",\"wait_s\":60"));
    Run run;
    ApprovalRef token = read_until_approval(alice, &run);
    REQUIRE(error_code(bob.call(
                make_request("n", "deny", "\"token\":" + json_string(token.token)))) == "");
    auto result = parse(alice.read());
    CHECK(str(result["payload"], "status") == "denied");
    std::string last;
    for (;;) {
      last = alice.read();
      if (str(parse(last), "type") == "response") break;
    }
    CHECK(str(payload_of(last), "status") == "rejected");
    CHECK(!std::filesystem::exists(made));
  }
}

TEST_CASE("submit: approvers racing run the action exactly once; changed rules run it never",
          "[server][approvals][submit]") {
  TempDir dir;
  Config config = submit_config(
      dir, "{\"text\":" + json_string(touch_proposal("raced.txt")) + ",\"repeat\":true}\n");
  const std::string log = config.state_dir + "/audit.jsonl";
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice);
  auto ask = [&] {
    alice.send(make_request("run", "submit", "\"text\":\"make a file\",\"session\":\"s1\""));
    Run run;
    ApprovalRef token = read_until_approval(alice, &run);
    for (;;) {
      if (str(parse(alice.read()), "type") == "response") break;
    }
    return token;
  };
  auto count = [&](const std::string& needle) {
    std::ifstream in(log);
    std::string line;
    int n = 0;
    while (std::getline(in, line)) n += line.find(needle) != std::string::npos;
    return n;
  };

  SECTION("racing") {
    const ApprovalRef token = ask();
    std::atomic<int> ok{0};
    std::vector<std::thread> racers;
    for (const std::string& who : {t.bob, t.carol, t.bob, t.carol}) {
      racers.emplace_back([&, who] {
        if (reply_code(call_on_thread(d.address(), who, approve_request(token))).empty()) {
          ++ok;
        }
      });
    }
    for (auto& r : racers) r.join();
    CHECK(ok.load() == 1);
    CHECK(std::filesystem::exists(config.workspace_root + "/raced.txt"));
    d.stop();
    CHECK(count("\"event\":\"executed\"") == 1);
    CHECK(count("\"kind\":\"act\"") == 1);
  }
  SECTION("rules changed to reject before the approval") {
    const ApprovalRef token = ask();
    dir.write("rules/policy.clp", kTouchRefusedRules);
    Party root(d.address(), t.admin), bob(d.address(), t.bob);
    REQUIRE(error_code(root.call(make_request("r", "reload"))) == "");
    std::string refused = bob.call(approve_request(token));
    INFO(refused);
    CHECK(error_code(refused) == err::kApprovalRefused);
    CHECK_FALSE(std::filesystem::exists(config.workspace_root + "/raced.txt"));
    d.stop();
    CHECK(count("\"kind\":\"act\"") == 0);
    CHECK(count("\"event\":\"refused\"") == 1);
  }
}
