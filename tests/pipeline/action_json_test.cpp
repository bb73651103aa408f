// with_context, resolve_target and describe_action over JSON texts.
#include "pipeline/action_json.h"

#include "tests/pipeline/pipeline_fixture.h"

using namespace warden::pipeline;
using namespace warden::pipeline::test;

TEST_CASE("with_context replaces the model's context with the signal's") {
  Signal s = Harness::user("x");
  std::string error;
  std::string out = with_context(
      R"({"target":"shell","payload":{"command":"ls"},"Context":{"principal":"root","groups":["admins"]}})",
      s, &error);
  REQUIRE(error.empty());
  rapidjson::Document doc = parse_json(out);
  CHECK_FALSE(doc.HasMember("Context"));
  REQUIRE(doc.HasMember("context"));
  CHECK(string_at(doc["context"], "principal") == "alice");
  CHECK(string_at(doc["context"], "session") == "s1");
  CHECK(string_at(doc["context"], "agent") == "coder-1");
  CHECK(string_at(doc["context"], "source") == "cli");
  CHECK_FALSE(doc["context"].HasMember("groups"));
  CHECK(string_at(doc["payload"], "command") == "ls");

  Signal bare;
  bare.principal = "bob";
  rapidjson::Document only = parse_json(with_context(R"({"target":"reply"})", bare, &error));
  CHECK(only["context"].MemberCount() == 1);
  CHECK(string_at(only["context"], "principal") == "bob");
}

TEST_CASE("with_context refuses what is not a JSON object") {
  Signal s;
  for (const std::string& bad : std::vector<std::string>{
           "", "[1]", "\"text\"", "{\"target\":", std::string("{\"a\":1}\0x", 10)}) {
    std::string error;
    CHECK(with_context(bad, s, &error).empty());
    CHECK_FALSE(error.empty());
  }
}

TEST_CASE("resolve_target: the action's target, else the signal's source, else the default") {
  ResolvedTarget explicit_target =
      resolve_target(R"({"target":"shell","action":"run"})", "cli", "reply");
  CHECK(explicit_target.target == "shell");
  ResolvedTarget from_source =
      resolve_target(R"({"action":"send","payload":{"text":"hi"}})", "chat", "reply");
  CHECK(from_source.target == "chat");
  CHECK(string_at(parse_json(from_source.action_json), "target") == "chat");
  ResolvedTarget fallback = resolve_target(R"({"target":"","payload":{}})", "", "reply");
  CHECK(fallback.target == "reply");
  CHECK(string_at(parse_json(fallback.action_json), "target") == "reply");
  // Key case as the engine reads it: "Target" is the target, kept in place.
  ResolvedTarget upper = resolve_target(R"({"Target":"shell","payload":{}})", "cli", "reply");
  CHECK(upper.target == "shell");
  CHECK(upper.action_json == R"({"Target":"shell","payload":{}})");
  ResolvedTarget bad = resolve_target("not json", "cli", "reply");
  CHECK(bad.target.empty());
  CHECK_FALSE(bad.error.empty());
}

TEST_CASE("describe_action names the target and what it does") {
  CHECK(describe_action(R"({"target":"shell","action":"run","payload":{"command":"rm -rf ~"}})") ==
        "shell run: rm -rf ~");
  CHECK(describe_action(
            R"({"target":"http","action":"request","payload":{"url":"https://x.test/"}})") ==
        "http request: GET https://x.test/");
  CHECK(describe_action(
            R"({"target":"file","action":"write","payload":{"action":"write","path":"a.txt"}})") ==
        "file write: write a.txt");
  CHECK(
      describe_action(R"({"target":"tool","action":"call","payload":{"tool":"now","args":{}}})") ==
      "tool call: now");
  CHECK(describe_action(R"({"target":"odd","payload":{"n":1}})") == R"(odd: {"n":1})");
  std::string long_line =
      R"({"target":"shell","payload":{"command":")" + std::string(500, 'x') + "\"}}";
  CHECK(describe_action(long_line).size() < 200);
  CHECK(describe_action("garbage\nline") == "garbage line");
}
