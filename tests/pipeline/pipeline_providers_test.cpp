// The pipeline with the shipped providers: the `openai` kind against a model server on
// loopback (the rejection trace in the retry's HTTP body), the `script` provider with a
// native tool call, and the shipped rule pack as the rules.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/rule_files.h"
#include "tests/build_paths.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "tests/support/http_fake.h"

using namespace warden;
using namespace warden::pipeline;
using namespace warden::pipeline::test;
using warden::testing::HttpFake;
using warden::testing::HttpReply;
using Kinds = std::vector<std::string>;

namespace {

// An OpenAI chat completion whose assistant content is `content`.
HttpReply chat_completion(const std::string& content) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("index");
  w.Int(0);
  w.Key("message");
  w.StartObject();
  w.Key("role");
  w.String("assistant");
  w.Key("content");
  w.String(content.c_str(), static_cast<rapidjson::SizeType>(content.size()));
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.Key("usage");
  w.StartObject();
  w.Key("prompt_tokens");
  w.Int(100);
  w.Key("completion_tokens");
  w.Int(20);
  w.EndObject();
  w.EndObject();
  return HttpReply{200, {{"Content-Type", "application/json"}}, buffer.GetString()};
}

// The shipped rule pack, as the daemon loads it.
Decider shipped_pack_decider(std::shared_ptr<Engine>* keep, std::shared_ptr<std::mutex> mutex) {
  LoadedPolicy loaded = load_policy({std::string(WARDEN_SOURCE_DIR) + "/rules"});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  *keep = std::make_shared<Engine>(loaded.policy, engine_options());
  std::shared_ptr<Engine> engine = *keep;
  return
      [engine, mutex](const std::string& proposal, const Signal& signal, DecideStage, int attempt) {
        std::lock_guard lock(*mutex);
        DecideRequest request;
        request.proposal_json = proposal;
        request.depth = signal.depth;
        request.attempt = attempt;
        request.principal = signal.principal;
        DecideResult r = engine->decide(request);
        if (r.ok) return r.decision;
        Decision d;
        d.outcome = Outcome::Reject;
        d.error_code = r.error.code;
        d.reason = r.error.message;
        return d;
      };
}

struct Collected {
  std::vector<std::string> events;
  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const auto& e : events) {
      rapidjson::Document doc = parse_json(e);
      std::string kind = string_at(doc, "event");
      if (kind == "decision")
        kind += ":" + string_at(doc, "stage") + ":" + string_at(doc, "outcome");
      if (kind == "final") kind += ":" + string_at(doc, "status");
      out.push_back(kind);
    }
    return out;
  }
};

}  // namespace

TEST_CASE(
    "openai over HTTP with the shipped rules: rm -rf ~ refused, ls run, output fed back, reply") {
  HttpFake server;
  server.push(chat_completion(
      R"({"target":"shell","action":"run","payload":{"command":"rm -rf ~"},"explanation":"free space"})"));
  server.push(
      chat_completion("```json\n{\"Target\":\"shell\",\"Action\":\"run\",\"Payload\":{\"command\":"
                      "\"ls\"},\"Explanation\":\"look first\"}\n```"));
  server.push(chat_completion(
      R"({"target":"reply","action":"send","payload":{"text":"Your home holds a.txt."}})"));

  reasoning::ProviderConfig pc;
  pc.name = "fake-openai";
  pc.kind = "openai";
  pc.base_url = server.base_url();
  pc.model = "gpt-test";
  pc.timeout = std::chrono::milliseconds(20000);
  pc.native_tools = false;
  std::string error;
  auto provider = reasoning::make_provider(pc, &error);
  INFO(error);
  REQUIRE(provider);
  std::vector<std::unique_ptr<reasoning::Provider>> providers;
  providers.push_back(std::move(provider));
  reasoning::ReasoningConfig config;
  config.providers.push_back(pc);

  actuators::Registry registry;
  auto shell = std::make_unique<RecordingActuator>("shell", false,
                                                   [](std::string_view, const actuators::Context&) {
                                                     actuators::Result r;
                                                     r.ok = true;
                                                     r.output = "a.txt\n";
                                                     r.exit_code = 0;
                                                     return r;
                                                   });
  RecordingActuator* shell_actuator = shell.get();
  registry.add(std::move(shell));
  registry.add(std::make_unique<RecordingActuator>("reply", true, reply_through_notify));

  reasoning::Catalog catalog = catalog_from(registry, {}, config.identity);
  reasoning::Cascade cascade(std::move(providers), config, [catalog](const reasoning::Answer& a) {
    return reasoning::normalized_action(reasoning::parse_answer(a, catalog));
  });
  std::shared_ptr<Engine> engine;
  Pipeline pipeline(&cascade, &registry,
                    shipped_pack_decider(&engine, std::make_shared<std::mutex>()), catalog,
                    Options{});
  Collected c;
  RunSummary summary = pipeline.run(Harness::user("what is in my home?"),
                                    [&](std::string_view e) { c.events.emplace_back(e); });

  CHECK(summary.status == "done");
  CHECK(c.kinds() == Kinds{"decision:reason:reject", "decision:reason:approve",
                           "decision:last-mile:approve", "tool-output", "decision:reason:approve",
                           "decision:last-mile:approve", "reply", "final:done"});
  auto calls = shell_actuator->calls();
  REQUIRE(calls.size() == 1);
  CHECK(string_at(parse_json(calls[0].action_json)["payload"], "command") == "ls");

  auto seen = server.requests();
  REQUIRE(seen.size() == 3);
  CHECK(seen[0].target == "/v1/chat/completions");
  // The rejection trace, as sent over HTTP: the refused line and the rule that refused it.
  CHECK_FALSE(contains(seen[0].body, "shell-destructive-rm"));
  CHECK(contains(seen[1].body, "shell-destructive-rm"));
  CHECK(contains(seen[1].body, "rm -rf ~"));
  // The feedback request continues the conversation and carries the output.
  CHECK(contains(seen[2].body, "what is in my home?"));
  CHECK(contains(seen[2].body, "a.txt"));
  CHECK_FALSE(contains(seen[2].body, "shell-destructive-rm"));
  rapidjson::Document reply = parse_json(c.events[6]);
  CHECK(string_at(reply, "text") == "Your home holds a.txt.");
}

TEST_CASE("the script provider's native tool call becomes a proposal the rules decide") {
  auto dir = std::filesystem::temp_directory_path() /
             ("warden-pipeline-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::create_directories(dir);
  const auto script = dir / "model.jsonl";
  {
    std::ofstream out(script);
    out << R"({"tool_call":{"name":"shell","arguments":{"command":"rm -rf ~"}}})"
        << "\n";
    out << R"({"tool_call":{"name":"shell","arguments":{"command":"ls"}}})"
        << "\n";
    out << R"({"text":"{\"target\":\"reply\",\"payload\":{\"text\":\"listed\"}}"})"
        << "\n";
  }
  Harness h({});
  reasoning::ProviderConfig pc;
  pc.name = "script";
  pc.kind = "script";
  pc.script_path = script.string();
  std::string error;
  auto provider = reasoning::make_provider(pc, &error);
  INFO(error);
  REQUIRE(provider);
  h.providers.clear();
  h.providers.push_back(std::move(provider));
  RunSummary summary = h.run(Harness::user("list my files"));
  std::filesystem::remove_all(dir);

  CHECK(summary.status == "done");
  CHECK(h.kinds() == Kinds{"decision:reason:reject", "decision:reason:approve",
                           "decision:last-mile:approve", "tool-output", "decision:reason:approve",
                           "decision:last-mile:approve", "reply", "final:done"});
  auto calls = h.shell->calls();
  REQUIRE(calls.size() == 1);
  CHECK(string_at(parse_json(calls[0].action_json)["payload"], "command") == "ls");
}
