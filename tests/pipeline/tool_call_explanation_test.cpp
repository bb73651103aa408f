// A native tool call carries the proposal's explanation: OpenAI and Ollama answer a tool call
// with no text (`content: null`), so every tool the model is offered takes a required
// `explanation` argument, which becomes the proposal's explanation and never reaches the
// payload. Against the loopback model server with the shipped rule pack (explanation-required).
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "engine/rule_files.h"
#include "tests/build_paths.h"
#include "tests/pipeline/pipeline_fixture.h"
#include "tests/support/http_fake.h"

using namespace warden;
using namespace warden::pipeline;
using namespace warden::pipeline::test;
using warden::testing::HttpFake;
using warden::testing::HttpReply;

namespace {

const std::vector<std::pair<std::string, std::string>> kJson = {
    {"Content-Type", "application/json"}};

// An OpenAI chat completion holding one tool call and `content: null`.
HttpReply openai_tool_call(const std::string& name, const std::string& arguments_json) {
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
  w.Null();
  w.Key("tool_calls");
  w.StartArray();
  w.StartObject();
  w.Key("id");
  w.String("call_1");
  w.Key("type");
  w.String("function");
  w.Key("function");
  w.StartObject();
  w.Key("name");
  w.String(name.c_str());
  w.Key("arguments");
  w.String(arguments_json.c_str());  // OpenAI sends the arguments as a JSON text
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  w.Key("finish_reason");
  w.String("tool_calls");
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return HttpReply{200, kJson, buffer.GetString()};
}

HttpReply openai_text(const std::string& content) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("choices");
  w.StartArray();
  w.StartObject();
  w.Key("message");
  w.StartObject();
  w.Key("role");
  w.String("assistant");
  w.Key("content");
  w.String(content.c_str());
  w.EndObject();
  w.EndObject();
  w.EndArray();
  w.EndObject();
  return HttpReply{200, kJson, buffer.GetString()};
}

// An Ollama /api/chat answer: the arguments are an object, the content empty.
HttpReply ollama_tool_call(const std::string& name, const std::string& arguments_object) {
  return HttpReply{
      200, kJson,
      R"({"model":"llama3.1","message":{"role":"assistant","content":"","tool_calls":[)"
      R"({"function":{"name":")" +
          name + R"(","arguments":)" + arguments_object +
          R"(}}]},"done":true,"prompt_eval_count":10,"eval_count":5})"};
}

HttpReply ollama_text(const std::string& content) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("message");
  w.StartObject();
  w.Key("role");
  w.String("assistant");
  w.Key("content");
  w.String(content.c_str());
  w.EndObject();
  w.Key("done");
  w.Bool(true);
  w.EndObject();
  return HttpReply{200, kJson, buffer.GetString()};
}

// The shipped rule pack, as the daemon loads it.
Decider shipped_pack(std::shared_ptr<Engine>* keep) {
  LoadedPolicy loaded = load_policy({std::string(WARDEN_SOURCE_DIR) + "/rules"});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  *keep = std::make_shared<Engine>(loaded.policy, engine_options());
  std::shared_ptr<Engine> engine = *keep;
  auto mutex = std::make_shared<std::mutex>();
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

struct Run {
  RunSummary summary;
  std::vector<std::string> events;
  std::vector<RecordingActuator::Call> shell_calls;
  std::vector<warden::testing::HttpSeen> requests;

  std::vector<rapidjson::Document> decisions() const {
    std::vector<rapidjson::Document> out;
    for (const auto& e : events) {
      rapidjson::Document doc = parse_json(e);
      if (string_at(doc, "event") == "decision") out.push_back(std::move(doc));
    }
    return out;
  }
  std::string dump() const {
    std::string out;
    for (const auto& e : events) out += e + "\n";
    return out;
  }
};

// One run of "list my files" with the provider `kind` against `server`, the shipped rules
// deciding and a recording shell.
Run run_with(HttpFake& server, const std::string& kind) {
  reasoning::ProviderConfig pc;
  pc.name = "fake-" + kind;
  pc.kind = kind;
  pc.base_url = server.base_url();
  pc.model = "m";
  pc.timeout = std::chrono::milliseconds(20000);
  pc.native_tools = true;
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
  RecordingActuator* recorded = shell.get();
  registry.add(std::move(shell));
  registry.add(std::make_unique<RecordingActuator>("reply", true, reply_through_notify));
  reasoning::Catalog catalog = catalog_from(registry, {}, config.identity);
  reasoning::Cascade cascade(std::move(providers), config, [catalog](const reasoning::Answer& a) {
    return reasoning::normalized_action(reasoning::parse_answer(a, catalog));
  });
  std::shared_ptr<Engine> engine;
  Options options;
  options.max_retries = 1;
  Pipeline pipeline(&cascade, &registry, shipped_pack(&engine), catalog, options);
  Run run;
  Signal signal = Harness::user("list my files");
  run.summary = pipeline.run(signal, [&](std::string_view e) { run.events.emplace_back(e); });
  run.shell_calls = recorded->calls();
  run.requests = server.requests();
  return run;
}

// The tools of a request body as sent: each one's parameters require `explanation`.
void check_tools_require_explanation(const std::string& body) {
  rapidjson::Document doc = parse_json(body);
  REQUIRE(doc.HasMember("tools"));
  REQUIRE(doc["tools"].IsArray());
  REQUIRE(doc["tools"].Size() >= 2);
  for (const auto& tool : doc["tools"].GetArray()) {
    const auto& parameters = tool["function"]["parameters"];
    INFO(string_at(tool["function"], "name"));
    REQUIRE(parameters.HasMember("properties"));
    CHECK(string_at(parameters["properties"]["explanation"], "type") == "string");
    bool required = false;
    for (const auto& r : parameters["required"].GetArray())
      required = required || std::string(r.GetString()) == "explanation";
    CHECK(required);
  }
}

}  // namespace

TEST_CASE("a native tool call without text carries its explanation as an argument",
          "[pipeline][explanation]") {
  const std::string kind = GENERATE(std::string("openai"), std::string("ollama"));
  INFO("provider kind " << kind);
  HttpFake server;
  if (kind == "openai") {
    server.push(openai_tool_call("shell", R"({"command":"ls","explanation":"see what is there"})"));
    server.push(openai_text(R"({"target":"reply","payload":{"text":"a.txt"}})"));
  } else {
    server.push(ollama_tool_call("shell", R"({"command":"ls","explanation":"see what is there"})"));
    server.push(ollama_text(R"({"target":"reply","payload":{"text":"a.txt"}})"));
  }
  Run run = run_with(server, kind);
  INFO(run.dump());
  CHECK(run.summary.status == "done");
  // The shipped rules approved the call (explanation-required did not fire) and it ran, with
  // a payload that holds no explanation.
  auto decisions = run.decisions();
  REQUIRE(decisions.size() >= 2);
  CHECK(string_at(decisions[0], "outcome") == "approve");
  CHECK(string_at(decisions[0]["action"], "explanation") == "see what is there");
  CHECK_FALSE(decisions[0]["action"]["payload"].HasMember("explanation"));
  REQUIRE(run.shell_calls.size() == 1);
  rapidjson::Document ran = parse_json(run.shell_calls[0].action_json);
  CHECK(string_at(ran["payload"], "command") == "ls");
  CHECK_FALSE(ran["payload"].HasMember("explanation"));
  // What the model was offered: every tool requires the argument.
  REQUIRE(run.requests.size() == 2);
  check_tools_require_explanation(run.requests[0].body);
}

TEST_CASE("a native tool call with no explanation is still refused", "[pipeline][explanation]") {
  const std::string kind = GENERATE(std::string("openai"), std::string("ollama"));
  INFO("provider kind " << kind);
  HttpFake server;
  // No argument, a blank one, one that is not a string: no explanation.
  const std::string args = GENERATE(std::string(R"({"command":"ls"})"),
                                    std::string(R"({"command":"ls","explanation":"   "})"),
                                    std::string(R"({"command":"ls","explanation":{"why":"x"}})"));
  INFO(args);
  if (kind == "openai")
    server.push(openai_tool_call("shell", args));
  else
    server.push(ollama_tool_call("shell", args));
  Run run = run_with(server, kind);
  INFO(run.dump());
  CHECK(run.summary.status == "rejected");
  auto decisions = run.decisions();
  REQUIRE(decisions.size() == 1);
  CHECK(string_at(decisions[0], "outcome") == "reject");
  bool refused_for_it = false;
  for (const auto& rule : decisions[0]["rules"].GetArray())
    refused_for_it = refused_for_it || string_at(rule, "rule") == "explanation-required";
  CHECK(refused_for_it);
  CHECK_FALSE(decisions[0]["action"]["payload"].HasMember("explanation"));
  CHECK(run.shell_calls.empty());
}
