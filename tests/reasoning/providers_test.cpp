// Each provider kind against a real HTTP server on loopback: the request as sent (path,
// headers, body with tools) and the answer as read (text, tool call, usage); failures as
// values naming their cause, never the API key.
#include <catch2/catch.hpp>

#include "reasoning/provider.h"
#include "tests/reasoning/reasoning_fixture.h"

using namespace warden::reasoning;
using namespace warden::reasoning::testing;
using warden::testing::HttpFake;
using warden::testing::HttpReply;

namespace {
const char* kKeyEnv = "WARDEN_TEST_PROVIDER_KEY";
const char* kKey = "sk-test-7f3a9c-SECRET";
}  // namespace

TEST_CASE("openai: request shape, bearer key, native tools, text answer and usage", "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  HttpFake server;
  server.push(json_reply(
      R"({"model":"gpt-x","choices":[{"message":{"role":"assistant","content":"{\"target\":\"reply\"}"}}],
                             "usage":{"prompt_tokens":120,"completion_tokens":7}})"));
  auto provider = must_make(http_config("main", "openai", server, kKeyEnv));
  Answer answer = provider->complete(shell_request());
  REQUIRE(answer.ok);
  CHECK(answer.text == R"({"target":"reply"})");
  CHECK_FALSE(answer.tool_call);
  CHECK(answer.usage.input_tokens == 120);
  CHECK(answer.usage.output_tokens == 7);
  CHECK(answer.provider == "main");
  CHECK(answer.model == "gpt-x");

  REQUIRE(server.request_count() == 1);
  auto seen = server.requests().at(0);
  CHECK(seen.method == "POST");
  CHECK(seen.target == "/v1/chat/completions");
  CHECK(seen.header("Authorization") == std::string("Bearer ") + kKey);
  CHECK(seen.header("Content-Type") == "application/json");
  auto body = parse_body(seen.body);
  CHECK(std::string(body["model"].GetString()) == "model-main");
  CHECK(body["max_tokens"].GetInt() == 1024);
  REQUIRE(body["messages"].Size() == 2);
  CHECK(std::string(body["messages"][0]["role"].GetString()) == "system");
  CHECK(std::string(body["messages"][0]["content"].GetString()) == "You are a careful assistant.");
  CHECK(std::string(body["messages"][1]["role"].GetString()) == "user");
  CHECK(std::string(body["messages"][1]["content"].GetString()) == "list the files");
  REQUIRE(body["tools"].Size() == 1);
  CHECK(std::string(body["tools"][0]["type"].GetString()) == "function");
  CHECK(std::string(body["tools"][0]["function"]["name"].GetString()) == "shell");
  CHECK(std::string(body["tools"][0]["function"]["parameters"]["properties"]["command"]["type"]
                        .GetString()) == "string");
  CHECK_FALSE(body.HasMember("session"));
}

TEST_CASE("openai: a tool call is read with its arguments; the request's model wins",
          "[providers]") {
  HttpFake server;
  server.push(json_reply(
      R"({"choices":[{"message":{"content":null,"tool_calls":[{"id":"c1","type":"function",
      "function":{"name":"shell","arguments":"{\"command\":\"ls -la\"}"}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":2}})"));
  auto provider = must_make(http_config("main", "openai", server));
  Request request = shell_request();
  request.model = "picked-by-selector";
  Answer answer = provider->complete(request);
  REQUIRE(answer.ok);
  REQUIRE(answer.tool_call);
  CHECK(answer.tool_call->name == "shell");
  CHECK(answer.tool_call->arguments_json == R"({"command":"ls -la"})");
  CHECK(answer.text.empty());
  auto seen = server.requests().at(0);
  CHECK(seen.header("Authorization").empty());  // no key configured: none sent
  CHECK(std::string(parse_body(seen.body)["model"].GetString()) == "picked-by-selector");
}

TEST_CASE("openai: native_tools off sends no tools", "[providers]") {
  HttpFake server;
  server.push(json_reply(R"({"choices":[{"message":{"content":"hello"}}]})"));
  auto config = http_config("main", "openai", server);
  config.native_tools = false;
  Answer answer = must_make(config)->complete(shell_request());
  REQUIRE(answer.ok);
  CHECK_FALSE(parse_body(server.requests().at(0).body).HasMember("tools"));
}

TEST_CASE("openai-responses: instructions, input, flat tools; function_call and output_text read",
          "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  HttpFake server;
  server.push(json_reply(R"({"output":[{"type":"reasoning"},{"type":"function_call","name":"shell",
      "arguments":"{\"command\":\"pwd\"}","call_id":"x"}],"usage":{"input_tokens":50,"output_tokens":5}})"));
  server.push(
      json_reply(R"({"output":[{"type":"message","content":[{"type":"output_text","text":"all "},
      {"type":"output_text","text":"done"}]}],"usage":{"input_tokens":3,"output_tokens":4}})"));
  auto provider = must_make(http_config("resp", "openai-responses", server, kKeyEnv));
  Answer call = provider->complete(shell_request());
  REQUIRE(call.ok);
  REQUIRE(call.tool_call);
  CHECK(call.tool_call->name == "shell");
  CHECK(call.tool_call->arguments_json == R"({"command":"pwd"})");
  CHECK(call.usage.input_tokens == 50);
  CHECK(call.usage.output_tokens == 5);
  Answer text = provider->complete(shell_request());
  REQUIRE(text.ok);
  CHECK(text.text == "all done");

  auto seen = server.requests().at(0);
  CHECK(seen.target == "/v1/responses");
  CHECK(seen.header("Authorization") == std::string("Bearer ") + kKey);
  auto body = parse_body(seen.body);
  CHECK(std::string(body["instructions"].GetString()) == "You are a careful assistant.");
  REQUIRE(body["input"].Size() == 1);
  CHECK(std::string(body["input"][0]["content"].GetString()) == "list the files");
  CHECK(body["max_output_tokens"].GetInt() == 1024);
  CHECK(std::string(body["tools"][0]["type"].GetString()) == "function");
  CHECK(std::string(body["tools"][0]["name"].GetString()) == "shell");
  CHECK(body["tools"][0]["parameters"].IsObject());
}

TEST_CASE("ollama: /api/chat without streaming; tool call arguments as an object; eval counts",
          "[providers]") {
  HttpFake server;
  server.push(json_reply(R"({"model":"llama3","message":{"role":"assistant","content":"",
      "tool_calls":[{"function":{"name":"shell","arguments":{"command":"uname -a"}}}]},
      "prompt_eval_count":33,"eval_count":9,"done":true})"));
  server.push(
      json_reply(R"({"message":{"role":"assistant","content":"plain words"},"done":true})"));
  auto provider = must_make(http_config("local", "ollama", server));
  Answer call = provider->complete(shell_request());
  REQUIRE(call.ok);
  REQUIRE(call.tool_call);
  CHECK(call.tool_call->arguments_json == R"({"command":"uname -a"})");
  CHECK(call.usage.input_tokens == 33);
  CHECK(call.usage.output_tokens == 9);
  CHECK(call.model == "llama3");
  Answer text = provider->complete(shell_request());
  REQUIRE(text.ok);
  CHECK(text.text == "plain words");

  auto seen = server.requests().at(0);
  CHECK(seen.target == "/api/chat");
  auto body = parse_body(seen.body);
  CHECK(body["stream"].IsFalse());
  CHECK(std::string(body["messages"][0]["role"].GetString()) == "system");
  CHECK(std::string(body["tools"][0]["function"]["name"].GetString()) == "shell");
}

TEST_CASE(
    "anthropic: x-api-key and version headers, system, input_schema; text and tool_use blocks",
    "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  HttpFake server;
  server.push(
      json_reply(R"({"content":[{"type":"text","text":"Listing."},{"type":"tool_use","id":"t1",
      "name":"shell","input":{"command":"ls"}}],"usage":{"input_tokens":200,"output_tokens":20}})"));
  auto provider = must_make(http_config("claude", "anthropic", server, kKeyEnv));
  Answer answer = provider->complete(shell_request());
  REQUIRE(answer.ok);
  CHECK(answer.text == "Listing.");
  REQUIRE(answer.tool_call);
  CHECK(answer.tool_call->name == "shell");
  CHECK(answer.tool_call->arguments_json == R"({"command":"ls"})");
  CHECK(answer.usage.input_tokens == 200);
  CHECK(answer.usage.output_tokens == 20);

  auto seen = server.requests().at(0);
  CHECK(seen.target == "/v1/messages");
  CHECK(seen.header("x-api-key") == kKey);
  CHECK(seen.header("anthropic-version") == "2023-06-01");
  CHECK(seen.header("Authorization").empty());
  auto body = parse_body(seen.body);
  CHECK(std::string(body["system"].GetString()) == "You are a careful assistant.");
  REQUIRE(body["messages"].Size() == 1);
  CHECK(std::string(body["messages"][0]["role"].GetString()) == "user");
  CHECK(std::string(body["tools"][0]["name"].GetString()) == "shell");
  CHECK(body["tools"][0]["input_schema"].IsObject());
  CHECK(body["max_tokens"].GetInt() == 1024);
}

TEST_CASE("a non-2xx answer names the status and never the key the server echoed", "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  for (const char* kind : {"openai", "openai-responses", "ollama", "anthropic"}) {
    HttpFake server;
    server.push(
        json_reply(std::string(R"({"error":"Incorrect API key provided: )") + kKey + R"("})", 401));
    Answer answer = must_make(http_config("p", kind, server, kKeyEnv))->complete(shell_request());
    INFO(kind);
    CHECK_FALSE(answer.ok);
    CHECK(answer.http_status == 401);
    CHECK(answer.error.rfind("HTTP 401: ", 0) == 0);
    CHECK(answer.error.find(kKey) == std::string::npos);
    CHECK(answer.error.find("[redacted]") != std::string::npos);
  }
}

TEST_CASE("HTTP error text is cut to 200 bytes after the key is removed", "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  HttpFake server;
  // The key straddles byte 200: cutting first would leave a prefix of it in the text.
  std::string body(190, 'x');
  body += kKey;
  body += std::string(100, 'y');
  server.push(json_reply(body, 503));
  Answer answer = must_make(http_config("p", "openai", server, kKeyEnv))->complete(shell_request());
  CHECK(answer.error.rfind("HTTP 503: ", 0) == 0);
  CHECK(answer.error.size() <= std::string("HTTP 503: ").size() + 200);
  CHECK(answer.error.find("sk-test") == std::string::npos);
}

TEST_CASE("a missing key variable is an error naming the variable; nothing is sent",
          "[providers]") {
  ScopedEnv env("WARDEN_TEST_ABSENT_KEY", nullptr);
  HttpFake server;
  Answer answer = must_make(http_config("p", "openai", server, "WARDEN_TEST_ABSENT_KEY"))
                      ->complete(shell_request());
  CHECK_FALSE(answer.ok);
  CHECK(answer.error == "API key variable WARDEN_TEST_ABSENT_KEY is not set");
  CHECK(server.request_count() == 0);
}

TEST_CASE("429 asks to retry later with the Retry-After seconds", "[providers]") {
  HttpFake server;
  HttpReply busy = json_reply(R"({"error":"rate limited"})", 429);
  busy.headers = {{"Retry-After", "7"}};
  server.push(busy);
  server.push(json_reply(R"({"error":"rate limited"})", 429));  // no Retry-After: one second
  auto provider = must_make(http_config("p", "openai", server));
  Answer first = provider->complete(shell_request());
  CHECK_FALSE(first.ok);
  CHECK(first.retry_later);
  CHECK(first.retry_after == std::chrono::seconds(7));
  CHECK(first.error.rfind("HTTP 429", 0) == 0);
  Answer second = provider->complete(shell_request());
  CHECK(second.retry_later);
  CHECK(second.retry_after == std::chrono::seconds(1));
}

TEST_CASE("a 500 is not retried later", "[providers]") {
  HttpFake server;
  server.push(json_reply("boom", 500));
  Answer answer = must_make(http_config("p", "openai", server))->complete(shell_request());
  CHECK_FALSE(answer.ok);
  CHECK_FALSE(answer.retry_later);
  CHECK(answer.error == "HTTP 500: boom");
}

TEST_CASE("garbage, a wrong shape, a hang-up, a timeout and an oversized answer are errors",
          "[providers]") {
  HttpFake server;
  auto config = http_config("p", "openai", server);
  config.max_response_bytes = 1000;
  auto provider = must_make(config);
  // The timeout is a limit that makes the stalled answer observable (it never comes).
  auto quick_config = config;
  quick_config.timeout = std::chrono::milliseconds(300);
  auto quick = must_make(quick_config);

  server.push(json_reply("<html>not json</html>"));
  Answer garbage = provider->complete(shell_request());
  CHECK_FALSE(garbage.ok);
  CHECK(garbage.error.rfind("unparseable answer: ", 0) == 0);

  server.push(json_reply(R"({"choices":[]})"));
  Answer shape = provider->complete(shell_request());
  CHECK_FALSE(shape.ok);
  CHECK(shape.error == "unparseable answer: no choices");

  server.push(json_reply(R"({"choices":[{"message":{"content":""}}]})"));
  Answer empty = provider->complete(shell_request());
  CHECK_FALSE(empty.ok);
  CHECK(empty.error.rfind("empty answer", 0) == 0);

  HttpReply hang;
  hang.hang_up = true;
  server.push(hang);
  Answer hung = provider->complete(shell_request());
  CHECK_FALSE(hung.ok);
  CHECK(hung.http_status == 0);
  CHECK(hung.error.rfind("connection failed: ", 0) == 0);

  HttpReply slow = json_reply(R"({"choices":[{"message":{"content":"late"}}]})");
  slow.delay = std::chrono::milliseconds(60000);
  server.push(slow);
  Answer late = quick->complete(shell_request());
  CHECK_FALSE(late.ok);
  CHECK(late.error.rfind("timeout after 300 ms", 0) == 0);

  server.push(
      json_reply(R"({"choices":[{"message":{"content":")" + std::string(5000, 'a') + R"("}}]})"));
  Answer big = provider->complete(shell_request());
  CHECK_FALSE(big.ok);
  CHECK(big.error == "answer larger than 1000 bytes");
}

TEST_CASE("a redirect is not followed", "[providers]") {
  HttpFake server;
  HttpReply moved = json_reply("", 302);
  moved.headers = {{"Location", server.base_url() + "/elsewhere"}};
  server.push(moved);
  server.set_fallback(json_reply(R"({"choices":[{"message":{"content":"followed"}}]})"));
  Answer answer = must_make(http_config("p", "openai", server))->complete(shell_request());
  CHECK_FALSE(answer.ok);
  CHECK(answer.error.rfind("HTTP 302", 0) == 0);
  CHECK(server.request_count() == 1);
}

TEST_CASE("proxies from the environment are not used", "[providers]") {
  ScopedEnv a("http_proxy", "http://127.0.0.1:9");
  ScopedEnv b("HTTP_PROXY", "http://127.0.0.1:9");
  ScopedEnv c("ALL_PROXY", "http://127.0.0.1:9");
  ScopedEnv d("no_proxy", nullptr);
  ScopedEnv e("NO_PROXY", nullptr);
  HttpFake server;
  server.push(json_reply(R"({"choices":[{"message":{"content":"direct"}}]})"));
  Answer answer = must_make(http_config("p", "openai", server))->complete(shell_request());
  REQUIRE(answer.ok);
  CHECK(answer.text == "direct");
}

TEST_CASE("a refused connection is an error naming it", "[providers]") {
  std::string base;
  {
    HttpFake gone;
    base = gone.base_url();
  }
  ProviderConfig config;
  config.name = "p";
  config.kind = "openai";
  config.base_url = base;
  config.model = "m";
  Answer answer = must_make(config)->complete(shell_request());
  CHECK_FALSE(answer.ok);
  CHECK(answer.error.rfind("connection failed: ", 0) == 0);
}

TEST_CASE("make_provider refuses unknown kinds and bad base URLs, naming the provider",
          "[providers]") {
  ProviderConfig config;
  config.name = "odd";
  config.kind = "gopher";
  config.base_url = "http://127.0.0.1:1";
  config.model = "m";
  std::string error;
  CHECK(make_provider(config, &error) == nullptr);
  CHECK(error.rfind("provider odd: unknown kind \"gopher\"", 0) == 0);
  config.kind = "openai";
  config.base_url = "file:///etc/passwd";
  CHECK(make_provider(config, &error) == nullptr);
  CHECK(error.find("base_url must start with http:// or https://") != std::string::npos);
}

TEST_CASE("a key echoed into the answer's text or tool call is removed", "[providers]") {
  ScopedEnv env(kKeyEnv, kKey);
  HttpFake server;
  server.push(
      json_reply(std::string(R"({"choices":[{"message":{"content":"your key is )") + kKey +
                 R"(","tool_calls":[{"function":{"name":"reply","arguments":"{\"text\":\")" + kKey +
                 R"(\"}"}}]}}]})"));
  Answer answer = must_make(http_config("p", "openai", server, kKeyEnv))->complete(shell_request());
  REQUIRE(answer.ok);
  CHECK(answer.text == "your key is [redacted]");
  REQUIRE(answer.tool_call);
  CHECK(answer.tool_call->arguments_json == R"({"text":"[redacted]"})");
}

TEST_CASE("a Retry-After too large for a number is longer than any maximum", "[providers]") {
  HttpFake server;
  HttpReply busy = json_reply("busy", 429);
  busy.headers = {{"Retry-After", "99999999999999999999"}};
  server.push(busy);
  Answer answer = must_make(http_config("p", "openai", server))->complete(shell_request());
  CHECK(answer.retry_later);
  CHECK(answer.retry_after > std::chrono::hours(24));
}

TEST_CASE("a base_url ending in /v1 is not doubled", "[providers]") {
  HttpFake server;
  server.push(json_reply(R"({"choices":[{"message":{"content":"hi"}}]})"));
  auto config = http_config("p", "openai", server);
  config.base_url += "/v1/";
  REQUIRE(must_make(config)->complete(shell_request()).ok);
  CHECK(server.requests().at(0).target == "/v1/chat/completions");
}

TEST_CASE("a key with surrounding whitespace is trimmed; one with a line break inside is refused",
          "[providers]") {
  HttpFake server;
  server.set_fallback(json_reply(R"({"choices":[{"message":{"content":"hi"}}]})"));
  {
    ScopedEnv env(kKeyEnv, (std::string(kKey) + "\n").c_str());
    REQUIRE(must_make(http_config("p", "anthropic", server, kKeyEnv))
                ->complete(shell_request())
                .error == "unparseable answer: no content");
    CHECK(server.requests().back().header("x-api-key") == kKey);
  }
  {
    ScopedEnv env(kKeyEnv, "sk-part-one\nX-Injected: yes");
    Answer answer =
        must_make(http_config("p", "openai", server, kKeyEnv))->complete(shell_request());
    CHECK_FALSE(answer.ok);
    CHECK(answer.error == "request not sent: header Authorization holds a line break");
    CHECK(server.request_count() == 1);
  }
  {
    ScopedEnv env(kKeyEnv, "  \n");
    Answer answer =
        must_make(http_config("p", "openai", server, kKeyEnv))->complete(shell_request());
    CHECK(answer.error == std::string("API key variable ") + kKeyEnv + " is not set");
  }
}
