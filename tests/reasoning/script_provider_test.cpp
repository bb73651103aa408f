// The script provider: answers from a JSON-lines file, one cursor per session, lines that
// match the newest message, repeats, errors, and the file problems make_provider reports.
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>

#include "reasoning/provider.h"
#include "tests/build_paths.h"
#include "tests/reasoning/reasoning_fixture.h"

using namespace warden::reasoning;
using namespace warden::reasoning::testing;

namespace {

ProviderConfig script_config(const std::string& path) {
  ProviderConfig config;
  config.name = "offline";
  config.kind = "script";
  config.script_path = path;
  return config;
}

Request said(const std::string& text, const std::string& session = "alice\x1fs1") {
  Request request;
  request.messages = {{"user", "earlier words"}, {"user", text}};
  request.session = session;
  return request;
}

}  // namespace

TEST_CASE("script: lines answer in order: text, object text, tool call, error, usage", "[script]") {
  TempFile file(
      R"({"text":"hello there"})"
      "\n"
      R"({"text":{"target":"shell","action":"run","payload":{"command":"ls"}},"usage":{"input_tokens":10,"output_tokens":3}})"
      "\n\n"
      R"({"tool_call":{"name":"shell","arguments":{"command":"pwd"}}})"
      "\n"
      R"({"error":"the model is tired"})"
      "\n");
  auto provider = must_make(script_config(file.path()));
  Answer a = provider->complete(said("hi"));
  REQUIRE(a.ok);
  CHECK(a.text == "hello there");
  CHECK(a.provider == "offline");
  CHECK(a.model == "script");
  Answer b = provider->complete(said("hi"));
  REQUIRE(b.ok);
  CHECK(b.text == R"({"target":"shell","action":"run","payload":{"command":"ls"}})");
  CHECK(b.usage.input_tokens == 10);
  CHECK(b.usage.output_tokens == 3);
  Answer c = provider->complete(said("hi"));
  REQUIRE(c.ok);
  REQUIRE(c.tool_call);
  CHECK(c.tool_call->name == "shell");
  CHECK(c.tool_call->arguments_json == R"({"command":"pwd"})");
  Answer d = provider->complete(said("hi"));
  CHECK_FALSE(d.ok);
  CHECK(d.error == "the model is tired");
  Answer e = provider->complete(said("hi"));
  CHECK_FALSE(e.ok);
  CHECK(e.error == "script exhausted");
}

TEST_CASE("script: one cursor per session", "[script]") {
  TempFile file(R"({"text":"one"})"
                "\n"
                R"({"text":"two"})"
                "\n");
  auto provider = must_make(script_config(file.path()));
  CHECK(provider->complete(said("x", "a")).text == "one");
  CHECK(provider->complete(said("x", "b")).text == "one");
  CHECK(provider->complete(said("x", "a")).text == "two");
  CHECK(provider->complete(said("x", "a")).error == "script exhausted");
  CHECK(provider->complete(said("x", "b")).text == "two");
}

TEST_CASE("script: a line whose match is not in the newest message is skipped; repeat stays",
          "[script]") {
  TempFile file(R"({"match":"delete","text":"refusing"})"
                "\n"
                R"({"match":"Result of the previous action","text":"summary"})"
                "\n"
                R"({"text":"fallback","repeat":true})"
                "\n");
  auto provider = must_make(script_config(file.path()));
  // Only the newest message counts: "earlier words" holds none of the matches.
  Answer first = provider->complete(said("Result of the previous action (shell): a b c"));
  REQUIRE(first.ok);
  CHECK(first.text == "summary");
  CHECK(provider->complete(said("anything")).text == "fallback");
  CHECK(provider->complete(said("delete it")).text == "fallback");  // the skipped line is gone
  CHECK(provider->complete(said("again")).text == "fallback");
}

TEST_CASE("script: file problems name the file and line", "[script]") {
  std::string error;
  SECTION("bad JSON") {
    TempFile file(R"({"text":"ok"})"
                  "\n"
                  R"({"text": oops})"
                  "\n");
    CHECK(make_provider(script_config(file.path()), &error) == nullptr);
    CHECK(error.find(file.path() + ":2: not JSON") != std::string::npos);
    CHECK(error.rfind("provider offline: ", 0) == 0);
  }
  SECTION("unknown member") {
    TempFile file(R"({"text":"ok","colour":"red"})"
                  "\n");
    CHECK(make_provider(script_config(file.path()), &error) == nullptr);
    CHECK(error.find(":1: unknown member \"colour\"") != std::string::npos);
  }
  SECTION("two answers on one line") {
    TempFile file(
        "\n\n"
        R"({"text":"ok","error":"no"})"
        "\n");
    CHECK(make_provider(script_config(file.path()), &error) == nullptr);
    CHECK(error.find(":3: needs exactly one of") != std::string::npos);
  }
  SECTION("tool call without a name") {
    TempFile file(R"({"tool_call":{"arguments":{}}})"
                  "\n");
    CHECK(make_provider(script_config(file.path()), &error) == nullptr);
    CHECK(error.find(":1: \"tool_call\" needs a \"name\" string") != std::string::npos);
  }
  SECTION("missing file") {
    CHECK(make_provider(script_config("/nonexistent/warden/script.jsonl"), &error) == nullptr);
    CHECK(error == "provider offline: cannot read script /nonexistent/warden/script.jsonl");
  }
  SECTION("empty file") {
    TempFile file("\n  \n");
    CHECK(make_provider(script_config(file.path()), &error) == nullptr);
    CHECK(error.find("holds no answer") != std::string::npos);
  }
}

TEST_CASE("script: the example in docs/REASONING.md is a valid script", "[script]") {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR) + "/docs/REASONING.md");
  REQUIRE(in);
  std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto open = doc.find("```jsonl\n");
  REQUIRE(open != std::string::npos);
  const auto start = open + 9;
  const auto close = doc.find("```", start);
  REQUIRE(close != std::string::npos);
  TempFile file(doc.substr(start, close - start));
  auto provider = must_make(script_config(file.path()));
  Answer first = provider->complete(said("clean my home"));
  REQUIRE(first.tool_call);
  CHECK(first.tool_call->arguments_json == R"({"command":"rm -rf ~"})");
  Answer second = provider->complete(said("clean my home"));
  CHECK(second.text.find("\"ls\"") != std::string::npos);
  Answer third = provider->complete(said("Result of the previous action (shell): a b"));
  CHECK(third.text.find("Done.") != std::string::npos);
  CHECK(provider->complete(said("thanks")).text == "I have nothing more to do.");
  CHECK(provider->complete(said("bye")).text == "I have nothing more to do.");
}
