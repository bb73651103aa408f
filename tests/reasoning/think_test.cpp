// Think: the prompt (catalog, hints, the rejection trace, the perception as a message) and
// the proposal read from an answer (fences, key case, dropped members, tool calls, replies).
#include "reasoning/think.h"

#include <catch2/catch.hpp>

#include "tests/reasoning/reasoning_fixture.h"

using namespace warden::reasoning;
using namespace warden::reasoning::testing;
using warden::reasoning::Signal;

namespace {

Catalog catalog() {
  Catalog c;
  c.identity = "You are Warden's test assistant.";
  c.targets = {
      {"shell", "Run a command line",
       R"({"type":"object","properties":{"command":{"type":"string"}}})"},
      {"file", "Read or write a file",
       R"({"type":"object","properties":{"action":{"type":"string"},"path":{"type":"string"}}})"},
      {"http", "Make an HTTP request", R"({"type":"object"})"},
      {"reply", "Answer the user", R"({"type":"object","properties":{"text":{"type":"string"}}})"},
      {"message", "Send a chat message", R"({"type":"object"})"},
  };
  c.tools = {
      {"sha256", "Hash a text", R"({"type":"object","properties":{"text":{"type":"string"}}})"}};
  return c;
}

Answer answer_text(const std::string& text) {
  Answer a;
  a.ok = true;
  a.text = text;
  return a;
}

Answer call_answer(const std::string& name, const std::string& args, const std::string& text = "") {
  Answer a;
  a.ok = true;
  a.text = text;
  a.tool_call = ToolCall{name, args};
  return a;
}

Signal user_says(const std::string& text) {
  Signal s;
  s.sensor = "user-input";
  s.text = text;
  s.session = "s1";
  s.principal = "alice";
  s.source = "cli";
  return s;
}

}  // namespace

TEST_CASE("build_request: identity, targets with payload schemas, tools, instructions", "[think]") {
  Request r = build_request(user_says("list files"), catalog(), {}, {}, {});
  CHECK(r.system.rfind("You are Warden's test assistant.", 0) == 0);
  CHECK(r.system.find("- shell: Run a command line\n  payload: "
                      "{\"type\":\"object\",\"properties\":{\"command\"") != std::string::npos);
  CHECK(r.system.find("- sha256: Hash a text") != std::string::npos);
  CHECK(r.system.find("payload {\"tool\": NAME, \"args\": {…}}") != std::string::npos);
  CHECK(r.system.find("answer with one JSON object") != std::string::npos);
  CHECK(r.system.find("Hints from the security policy") == std::string::npos);
  CHECK(r.system.find("was refused by") == std::string::npos);
  REQUIRE(r.messages.size() == 1);
  CHECK(r.messages[0].role == "user");
  CHECK(r.messages[0].content == "list files");
  REQUIRE(r.tools.size() == 6);  // five targets and one registered tool
  CHECK(r.tools[5].name == "sha256");
  CHECK(r.session == std::string("alice\x1fs1"));
}

TEST_CASE("build_request: hints and the rejection trace, naming each attempt's rules", "[think]") {
  std::vector<Rejection> trace = {
      {1,
       R"({"target":"shell","action":"run","payload":{"command":"rm -rf ~"}})",
       "destructive rm outside workspace",
       {"shell-destructive-rm"}},
      {2,
       R"({"target":"shell","action":"run","payload":{"command":"rm -r ~/x"}})",
       "two reasons",
       {"r-a", "r-b"}},
  };
  Request r =
      build_request(user_says("clean up"), catalog(), {}, trace, {"Prefer read-only commands."});
  CHECK(r.system.find("Hints from the security policy:\n- Prefer read-only commands.") !=
        std::string::npos);
  CHECK(
      r.system.find(
          "Attempt 1 was refused by rule shell-destructive-rm: destructive rm outside workspace; "
          "do not propose it again. The refused proposal: {\"target\":\"shell\",\"action\":\"run\","
          "\"payload\":{\"command\":\"rm -rf ~\"}}") != std::string::npos);
  CHECK(r.system.find(
            "Attempt 2 was refused by rules r-a, r-b: two reasons; do not propose it again") !=
        std::string::npos);
}

TEST_CASE("build_request: the conversation first, feedback as the result of the previous action",
          "[think]") {
  Signal out = user_says("file-a\nfile-b");
  out.sensor = "tool-output";
  out.tool = "shell";
  out.action_json = R"({"target":"shell","action":"run","payload":{"command":"ls"}})";
  out.depth = 1;
  std::vector<Message> conversation = {{"user", "list files"}, {"assistant", out.action_json}};
  Request r = build_request(out, catalog(), conversation, {}, {});
  REQUIRE(r.messages.size() == 3);
  CHECK(r.messages[0].content == "list files");
  CHECK(r.messages[1].role == "assistant");
  CHECK(r.messages[2].role == "user");
  CHECK(r.messages[2].content ==
        "Result of the previous action (shell " + out.action_json + "):\nfile-a\nfile-b");

  Signal failed = out;
  failed.sensor = "tool-error";
  failed.text = "exit 2";
  CHECK(build_request(failed, catalog(), {}, {}, {})
            .messages.back()
            .content.rfind("The previous action failed (shell ", 0) == 0);
}

TEST_CASE("the rejection trace reaches the model in the request body sent over HTTP", "[think]") {
  warden::testing::HttpFake server;
  server.push(json_reply(
      R"({"choices":[{"message":{"content":"{\"target\":\"shell\",\"payload\":{\"command\":\"ls\"}}"}}]})"));
  auto provider = must_make(http_config("main", "openai", server));
  std::vector<Rejection> trace = {
      {1,
       R"({"target":"shell","action":"run","payload":{"command":"rm -rf ~"}})",
       "destructive rm",
       {"shell-destructive-rm"}}};
  Answer answer =
      provider->complete(build_request(user_says("tidy my home"), catalog(), {}, trace, {}));
  REQUIRE(answer.ok);
  auto body = parse_body(server.requests().at(0).body);
  const std::string system = body["messages"][0]["content"].GetString();
  CHECK(system.find("Attempt 1 was refused by rule shell-destructive-rm: destructive rm; do not "
                    "propose it again") != std::string::npos);
  CHECK(system.find("rm -rf ~") != std::string::npos);
  CHECK(parse_answer(answer, catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
}

TEST_CASE("parse_answer: plain JSON, fences, key case; context and extra members dropped",
          "[think]") {
  CHECK(
      parse_answer(
          answer_text(
              R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"look"})"),
          catalog()) ==
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"look"})");
  CHECK(parse_answer(answer_text("```json\n{\"target\":\"shell\",\"action\":\"run\",\"payload\":{"
                                 "\"command\":\"ls\"}}\n```"),
                     catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
  CHECK(
      parse_answer(
          answer_text(
              "Here you go:\n```\n{\"target\":\"reply\",\"payload\":{\"text\":\"hi\"}}\n```\nbye"),
          catalog()) == R"({"target":"reply","action":"send","payload":{"text":"hi"}})");
  CHECK(
      parse_answer(
          answer_text(R"({"Target":"Shell","ACTION":"run","Payload":{"Command":"ls","CWD":"/w"}})"),
          catalog()) ==
      R"({"target":"shell","action":"run","payload":{"command":"ls","cwd":"/w"}})");
  // What the model writes as context (or anything else) never reaches the rules.
  CHECK(parse_answer(answer_text(R"({"target":"shell","action":"run","payload":{"command":"ls"},
                       "context":{"principal":"root","agent":"admin"},"approved":true})"),
                     catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
}

TEST_CASE("parse_answer: backticks inside a JSON answer are not taken for a fence", "[think]") {
  CHECK(parse_answer(
            answer_text("{\"target\":\"shell\",\"payload\":{\"command\":\"echo ```x```\"}\n}"),
            catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"echo ```x```"}})");
}

TEST_CASE("parse_answer: anything else becomes a reply with the raw text", "[think]") {
  auto reply_of = [](const std::string& raw) { return parse_answer(answer_text(raw), catalog()); };
  CHECK(reply_of("Sure, I listed them.") ==
        R"({"target":"reply","action":"send","payload":{"text":"Sure, I listed them."}})");
  CHECK(reply_of(R"([1,2,3])") ==
        R"({"target":"reply","action":"send","payload":{"text":"[1,2,3]"}})");
  CHECK(reply_of(R"({"action":"run"})") ==
        R"({"target":"reply","action":"send","payload":{"text":"{\"action\":\"run\"}"}})");
  CHECK(reply_of(R"({"target":"shell","payload":"rm -rf /"})").find(R"("target":"reply")") == 1);
  // Two keys that are the same after lowercasing: ambiguous, so not an action.
  CHECK(reply_of(R"({"target":"reply","TARGET":"shell","payload":{}})")
            .find(R"("target":"reply","action":"send")") == 1);
  CHECK(reply_of(R"({"target":"shell","payload":{"command":"ls","Command":"rm -rf /"}})")
            .find(R"("target":"reply")") == 1);
}

TEST_CASE("parse_answer: native tool calls become proposals", "[think]") {
  CHECK(
      parse_answer(call_answer("shell", R"({"Command":"ls -la"})", "Looking."), catalog()) ==
      R"({"target":"shell","action":"run","payload":{"command":"ls -la"},"explanation":"Looking."})");
  CHECK(parse_answer(call_answer("Shell", R"({"command":"ls"})"), catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
  CHECK(parse_answer(call_answer("file", R"({"action":"read","path":"a.txt"})"), catalog()) ==
        R"({"target":"file","action":"read","payload":{"action":"read","path":"a.txt"}})");
  CHECK(parse_answer(call_answer("http", R"({"url":"https://example.com"})"), catalog()) ==
        R"({"target":"http","action":"request","payload":{"url":"https://example.com"}})");
  CHECK(parse_answer(call_answer("reply", R"({"text":"done"})"), catalog()) ==
        R"({"target":"reply","action":"send","payload":{"text":"done"}})");
  CHECK(parse_answer(call_answer("message", R"({"to":"bob"})"), catalog()) ==
        R"({"target":"message","action":"call","payload":{"to":"bob"}})");
  CHECK(parse_answer(call_answer("sha256", R"({"text":"abc"})"), catalog()) ==
        R"({"target":"tool","action":"call","payload":{"tool":"sha256","args":{"text":"abc"}}})");
  // Not in the catalog, or arguments that are not an object: a reply, never an action.
  CHECK(parse_answer(call_answer("launch_missiles", R"({"n":1})"), catalog()) ==
        R"({"target":"reply","action":"send","payload":{"text":"launch_missiles {\"n\":1}"}})");
  CHECK(parse_answer(call_answer("shell", "not json"), catalog()).find(R"("target":"reply")") == 1);
}

TEST_CASE("normalized_action: target, action, payload with keys sorted; no explanation",
          "[think]") {
  const std::string a =
      R"({"target":"shell","action":"run","payload":{"cwd":"/w","command":"ls"},"explanation":"x"})";
  const std::string b =
      R"({"explanation":"y","payload":{"command":"ls","cwd":"/w"},"action":"run","target":"shell"})";
  CHECK(normalized_action(a) == normalized_action(b));
  CHECK(normalized_action(a) ==
        R"({"action":"run","payload":{"command":"ls","cwd":"/w"},"target":"shell"})");
  CHECK(normalized_action(a) !=
        normalized_action(
            R"({"target":"shell","action":"run","payload":{"command":"ls -a","cwd":"/w"}})"));
}

TEST_CASE("build_request: every tool offered requires an explanation argument",
          "[think][explanation]") {
  Catalog c = catalog();
  // A tool whose own schema has an `explanation` keeps it; one with no schema gets one.
  c.tools.push_back({"annotate", "Annotate a line",
                     R"({"type":"object","properties":{"explanation":{"type":"integer"}}})"});
  c.tools.push_back({"ping", "Ping", ""});
  Request r = build_request(user_says("list files"), c, {}, {}, {});
  REQUIRE(r.tools.size() == 8);
  for (const ToolSpec& t : r.tools) {
    INFO(t.name << ": " << t.parameters_schema_json);
    if (t.name == "annotate") {
      CHECK(t.parameters_schema_json ==
            R"({"type":"object","properties":{"explanation":{"type":"integer"}}})");
      continue;
    }
    CHECK(t.parameters_schema_json.find(R"("explanation":{"type":"string")") != std::string::npos);
    const bool required =
        t.parameters_schema_json.find(R"("required":["explanation"])") != std::string::npos ||
        t.parameters_schema_json.find(R"(,"explanation"])") != std::string::npos;
    CHECK(required);
  }
  CHECK(r.tools[0].parameters_schema_json.rfind(
            R"({"type":"object","properties":{"command":{"type":"string"},"explanation":)", 0) ==
        0);
  // A required list the schema had keeps its members.
  Catalog d;
  d.targets = {
      {"shell", "Run",
       R"({"type":"object","properties":{"command":{"type":"string"}},"required":["command"]})"}};
  Request q = build_request(user_says("x"), d, {}, {}, {});
  REQUIRE(q.tools.size() == 1);
  CHECK(q.tools[0].parameters_schema_json.find(R"("required":["command","explanation"])") !=
        std::string::npos);
  // The system prompt's payload schemas are the targets' own (a JSON answer has its
  // explanation at the top level).
  CHECK(r.system.find("\"required\":[\"explanation\"]") == std::string::npos);
  CHECK(r.system.find("\"explanation\" argument") != std::string::npos);
}

TEST_CASE("parse_answer: a tool call's explanation argument is the proposal's explanation",
          "[think][explanation]") {
  // No text (OpenAI and Ollama send content null): the argument explains, and leaves the payload.
  CHECK(
      parse_answer(call_answer("shell", R"({"command":"ls","explanation":"see the files"})"),
                   catalog()) ==
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"see the files"})");
  // Keys of a target's arguments are read case-blind, like the rest of its payload.
  CHECK(
      parse_answer(call_answer("shell", R"({"command":"ls","Explanation":" why "})"), catalog()) ==
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"why"})");
  // A registered tool: out of args.
  CHECK(
      parse_answer(call_answer("sha256", R"({"text":"abc","explanation":"checksum"})"),
                   catalog()) ==
      R"({"target":"tool","action":"call","payload":{"tool":"sha256","args":{"text":"abc"}},"explanation":"checksum"})");
  // The argument wins over text; text is the fallback; a non-string or blank argument is no
  // explanation (and is dropped from the payload all the same).
  CHECK(parse_answer(call_answer("shell", R"({"command":"ls","explanation":"arg"})", "text"),
                     catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"arg"})");
  CHECK(parse_answer(call_answer("shell", R"({"command":"ls","explanation":"  "})", "text"),
                     catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"},"explanation":"text"})");
  CHECK(parse_answer(call_answer("shell", R"({"command":"ls","explanation":["a"]})"), catalog()) ==
        R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
  // A tool whose own schema has `explanation` keeps its argument.
  Catalog c = catalog();
  c.tools.push_back({"annotate", "Annotate",
                     R"({"type":"object","properties":{"explanation":{"type":"string"}}})"});
  CHECK(
      parse_answer(call_answer("annotate", R"({"explanation":"mine"})", "why"), c) ==
      R"({"target":"tool","action":"call","payload":{"tool":"annotate","args":{"explanation":"mine"}},"explanation":"why"})");
}
