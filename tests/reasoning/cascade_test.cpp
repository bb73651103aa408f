// The cascade over real HTTP providers on loopback: order and fail-over, cool-off (injected
// clock), 429 with Retry-After (injected sleep), consensus, the per-session budget, the
// selector, and the configuration check.
#include "reasoning/cascade.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>

#include "reasoning/config_check.h"
#include "reasoning/make_cascade.h"
#include "reasoning/think.h"
#include "tests/reasoning/reasoning_fixture.h"

using namespace warden::reasoning;
using namespace warden::reasoning::testing;
using warden::reasoning::Signal;
using warden::testing::HttpFake;
using warden::testing::HttpReply;
using Status = CascadeResult::Status;

namespace {

std::string chat_text(const std::string& content, int in = 0, int out = 0) {
  std::string escaped;
  for (char c : content) {
    if (c == '\n') {
      escaped += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return R"({"choices":[{"message":{"content":")" + escaped + R"("}}],"usage":{"prompt_tokens":)" +
         std::to_string(in) + R"(,"completion_tokens":)" + std::to_string(out) + "}}";
}

Catalog test_catalog() {
  Catalog c;
  c.targets = {{"shell", "Run a command", R"({"type":"object"})"},
               {"reply", "Answer", R"({"type":"object"})"}};
  return c;
}

std::string normalize(const Answer& answer) {
  return normalized_action(parse_answer(answer, test_catalog()));
}

Signal user(const std::string& text, const std::string& session = "s1") {
  Signal s;
  s.sensor = "user-input";
  s.text = text;
  s.session = session;
  s.principal = "alice";
  return s;
}

Request request_for(const Signal& signal) {
  return build_request(signal, test_catalog(), {}, {}, {});
}

// A fake clock the test moves by hand.
struct FakeTime {
  std::chrono::steady_clock::time_point now{std::chrono::hours(1000)};
  Cascade::Clock clock() {
    return [this] { return now; };
  }
};

struct Sleeps {
  std::vector<std::chrono::milliseconds> waits;
  Cascade::Sleep sleep() {
    return [this](std::chrono::milliseconds d) { waits.push_back(d); };
  }
};

struct Setup {
  std::vector<std::unique_ptr<HttpFake>> servers;
  ReasoningConfig config;
  FakeTime time;
  Sleeps sleeps;

  explicit Setup(int n) {
    for (int i = 0; i < n; ++i) {
      servers.push_back(std::make_unique<HttpFake>());
      ProviderConfig p =
          http_config(std::string(1, static_cast<char>('a' + i)), "openai", *servers.back());
      config.providers.push_back(p);
    }
  }
  HttpFake& server(int i) { return *servers.at(i); }
  std::unique_ptr<Cascade> cascade() {
    std::vector<std::unique_ptr<Provider>> providers;
    for (const auto& p : config.providers) providers.push_back(must_make(p));
    return std::make_unique<Cascade>(std::move(providers), config, normalize, time.clock(),
                                     sleeps.sleep());
  }
};

}  // namespace

TEST_CASE("cascade: fail-over past a 500, garbage, a hang-up and a timeout, in configured order",
          "[cascade]") {
  Setup s(5);
  s.server(0).push(json_reply("boom", 500));
  s.server(1).push(json_reply("this is not json"));
  HttpReply hang;
  hang.hang_up = true;
  s.server(2).push(hang);
  HttpReply slow = json_reply(chat_text("late"));
  slow.delay = std::chrono::milliseconds(60000);  // never answered within d's timeout
  s.server(3).push(slow);
  s.config.providers[3].timeout = std::chrono::milliseconds(400);
  s.server(4).push(
      json_reply(chat_text(R"({"target":"shell","action":"run","payload":{"command":"ls"}})")));
  auto cascade = s.cascade();
  const Signal signal = user("list");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  REQUIRE(r.status == Status::Ok);
  CHECK(r.answer.provider == "e");
  REQUIRE(r.answers.size() == 5);
  CHECK(r.answers[0].error == "HTTP 500: boom");
  CHECK(r.answers[1].error.rfind("unparseable answer", 0) == 0);
  CHECK(r.answers[2].error.rfind("connection failed", 0) == 0);
  CHECK(r.answers[3].error.rfind("timeout after 400 ms", 0) == 0);
  for (int i = 0; i < 5; ++i) CHECK(s.server(i).request_count() == 1);
  // The failed ones are cooled off: tried last now, in their configured order.
  CHECK(cascade->order() == std::vector<std::string>{"e", "a", "b", "c", "d"});
}

TEST_CASE("cascade: every provider down is a cascade failure naming each error", "[cascade]") {
  Setup s(2);
  s.server(0).push(json_reply("boom", 500));
  s.server(1).push(json_reply(R"({"error":"overloaded"})", 503));
  auto cascade = s.cascade();
  const Signal signal = user("hello");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  CHECK(r.status == Status::AllFailed);
  CHECK(r.message == R"(cascade failure: a: HTTP 500: boom; b: HTTP 503: {"error":"overloaded"})");
  CHECK(r.answers.size() == 2);
}

TEST_CASE("cascade: no providers", "[cascade]") {
  Cascade cascade({}, ReasoningConfig{}, normalize);
  const Signal signal = user("hello");
  CascadeResult r = cascade.ask(request_for(signal), signal);
  CHECK(r.status == Status::NoProviders);
  CHECK(r.message == "no language-model provider is configured");
}

TEST_CASE("cascade: a failed provider is tried last for the cool-off, then first again",
          "[cascade]") {
  Setup s(2);
  s.config.cool_off = std::chrono::seconds(60);
  s.server(0).push(json_reply("boom", 500));
  s.server(0).set_fallback(json_reply(chat_text("from a")));
  s.server(1).set_fallback(json_reply(chat_text("from b")));
  auto cascade = s.cascade();
  const Signal signal = user("hello");
  CHECK(cascade->ask(request_for(signal), signal).answer.provider == "b");
  CHECK(cascade->order() == std::vector<std::string>{"b", "a"});

  s.time.now += std::chrono::seconds(30);
  CHECK(cascade->ask(request_for(signal), signal).answer.provider == "b");
  CHECK(s.server(0).request_count() == 1);  // a was not asked while cooling off

  s.time.now += std::chrono::seconds(31);
  CHECK(cascade->order() == std::vector<std::string>{"a", "b"});
  CascadeResult r = cascade->ask(request_for(signal), signal);
  CHECK(r.answer.provider == "a");
  CHECK(r.answer.text == "from a");
  CHECK(s.server(0).request_count() == 2);
}

TEST_CASE("cascade: 429 waits Retry-After and retries the same provider", "[cascade]") {
  Setup s(2);
  HttpReply busy = json_reply(R"({"error":"slow down"})", 429);
  busy.headers = {{"Retry-After", "3"}};
  s.server(0).push(busy);
  s.server(0).push(json_reply(chat_text("after waiting")));
  auto cascade = s.cascade();
  const Signal signal = user("hello");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  REQUIRE(r.status == Status::Ok);
  CHECK(r.answer.provider == "a");
  CHECK(r.answer.text == "after waiting");
  CHECK(s.sleeps.waits == std::vector<std::chrono::milliseconds>{std::chrono::milliseconds(3000)});
  CHECK(s.server(0).request_count() == 2);
  CHECK(s.server(1).request_count() == 0);
}

TEST_CASE("cascade: 429 retries are bounded; a long Retry-After moves on at once", "[cascade]") {
  Setup s(2);
  s.config.providers[0].max_retries_429 = 2;
  s.config.providers[0].retry_after_max = std::chrono::milliseconds(5000);
  s.server(1).set_fallback(json_reply(chat_text("from b")));
  SECTION("always 429") {
    HttpReply busy = json_reply("busy", 429);
    busy.headers = {{"Retry-After", "1"}};
    s.server(0).set_fallback(busy);
    auto cascade = s.cascade();
    const Signal signal = user("hello");
    CascadeResult r = cascade->ask(request_for(signal), signal);
    CHECK(r.answer.provider == "b");
    CHECK(s.server(0).request_count() == 3);  // the first try and two retries
    CHECK(s.sleeps.waits.size() == 2);
  }
  SECTION("Retry-After longer than the maximum") {
    HttpReply busy = json_reply("busy", 429);
    busy.headers = {{"Retry-After", "3600"}};
    s.server(0).set_fallback(busy);
    auto cascade = s.cascade();
    const Signal signal = user("hello");
    CascadeResult r = cascade->ask(request_for(signal), signal);
    CHECK(r.answer.provider == "b");
    CHECK(s.server(0).request_count() == 1);
    CHECK(s.sleeps.waits.empty());
  }
}

TEST_CASE("cascade: consensus agrees on the normalized action", "[cascade]") {
  Setup s(3);
  s.config.consensus = 2;
  s.server(0).push(json_reply("boom", 500));
  s.server(1).push(json_reply(chat_text(
      R"({"target":"shell","action":"run","payload":{"command":"ls","cwd":"/w"},"explanation":"one"})")));
  s.server(2).push(
      json_reply(chat_text("```json\n{\"Payload\":{\"cwd\":\"/"
                           "w\",\"command\":\"ls\"},\"target\":\"shell\",\"action\":\"run\","
                           "\"explanation\":\"two\"}\n```")));
  auto cascade = s.cascade();
  const Signal signal = user("list");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  REQUIRE(r.status == Status::Ok);
  CHECK(r.answer.provider == "b");
  CHECK(r.answers.size() == 3);
}

TEST_CASE("cascade: consensus disagreement names each provider's action", "[cascade]") {
  Setup s(3);
  s.config.consensus = 2;
  s.server(0).push(
      json_reply(chat_text(R"({"target":"shell","action":"run","payload":{"command":"ls"}})")));
  s.server(1).push(json_reply(
      chat_text(R"({"target":"shell","action":"run","payload":{"command":"rm -rf build"}})")));
  auto cascade = s.cascade();
  const Signal signal = user("tidy");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  CHECK(r.status == Status::Disagreement);
  CHECK(r.message.find(
            R"(a proposes {"action":"run","payload":{"command":"ls"},"target":"shell"})") !=
        std::string::npos);
  CHECK(
      r.message.find(
          R"(b proposes {"action":"run","payload":{"command":"rm -rf build"},"target":"shell"})") !=
      std::string::npos);
  CHECK(s.server(2).request_count() == 0);  // two answers were enough to compare
}

TEST_CASE("cascade: consensus without enough answers is a cascade failure", "[cascade]") {
  Setup s(2);
  s.config.consensus = 2;
  s.server(0).push(json_reply(chat_text("ok")));
  s.server(1).push(json_reply("boom", 500));
  auto cascade = s.cascade();
  const Signal signal = user("hi");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  CHECK(r.status == Status::AllFailed);
  CHECK(r.message == "cascade failure: consensus needs 2 answers, 1 received: b: HTTP 500: boom");
}

TEST_CASE("cascade: the session budget stops model calls once spent", "[cascade]") {
  Setup s(1);
  s.config.budget_per_session_usd = 0.5;
  s.config.providers[0].price_input_per_mtok = 2.0;  // $2 per million input tokens
  s.config.providers[0].price_output_per_mtok = 10.0;
  s.server(0).set_fallback(json_reply(chat_text("ok", 200000, 5000)));  // $0.40 + $0.05
  auto cascade = s.cascade();
  const Signal signal = user("hi");
  CascadeResult first = cascade->ask(request_for(signal), signal);
  REQUIRE(first.status == Status::Ok);
  CHECK(first.spent_usd == Approx(0.45));
  CascadeResult second = cascade->ask(request_for(signal), signal);  // 0.45 < 0.5: allowed
  REQUIRE(second.status == Status::Ok);
  CHECK(second.spent_usd == Approx(0.90));
  CHECK(s.server(0).request_count() == 2);

  CascadeResult third = cascade->ask(request_for(signal), signal);
  CHECK(third.status == Status::BudgetSpent);
  CHECK(third.message ==
        "the model budget of this session is spent ($0.9000 of $0.5000); no more model calls in "
        "this session");
  CHECK(s.server(0).request_count() == 2);  // no call was made

  // Another session of the same principal has its own budget.
  const Signal other = user("hi", "s2");
  CHECK(cascade->ask(request_for(other), other).status == Status::Ok);
  CHECK(s.server(0).request_count() == 3);
  CHECK(cascade->spent(std::string("alice\x1fs1")) == Approx(0.90));
}

TEST_CASE("cascade: a selector rule puts its provider first with its model", "[cascade]") {
  Setup s(2);
  SelectorRule deploy;
  deploy.text_regex = "(?i)\\bdeploy\\b";
  deploy.provider = "b";
  deploy.model = "big-model";
  SelectorRule chat;
  chat.sensor = "chat-message";
  chat.min_chars = 10;
  chat.provider = "b";
  s.config.selector = {deploy, chat};
  s.server(0).set_fallback(json_reply(chat_text("from a")));
  s.server(1).set_fallback(json_reply(chat_text("from b")));
  auto cascade = s.cascade();

  const Signal plain = user("list the files");
  CHECK(cascade->ask(request_for(plain), plain).answer.provider == "a");

  const Signal matched = user("please Deploy the site");
  CascadeResult r = cascade->ask(request_for(matched), matched);
  CHECK(r.answer.provider == "b");
  CHECK(std::string(parse_body(s.server(1).requests().back().body)["model"].GetString()) ==
        "big-model");

  Signal short_chat = user("hi there");
  short_chat.sensor = "chat-message";
  CHECK(cascade->ask(request_for(short_chat), short_chat).answer.provider == "a");
  Signal long_chat = user("hi there, how are you");
  long_chat.sensor = "chat-message";
  CHECK(cascade->ask(request_for(long_chat), long_chat).answer.provider == "b");
  CHECK(std::string(parse_body(s.server(1).requests().back().body)["model"].GetString()) ==
        "model-b");
}

TEST_CASE("cascade: a script provider fails over to HTTP and back", "[cascade]") {
  TempFile script(R"({"error":"scripted outage"})"
                  "\n"
                  R"({"text":"scripted"})"
                  "\n");
  HttpFake server;
  ProviderConfig offline;
  offline.name = "offline";
  offline.kind = "script";
  offline.script_path = script.path();
  ReasoningConfig config;
  config.providers = {offline, http_config("http", "openai", server)};
  config.cool_off = std::chrono::seconds(0);
  server.set_fallback(json_reply(chat_text("from http")));
  std::vector<std::unique_ptr<Provider>> providers;
  for (const auto& p : config.providers) providers.push_back(must_make(p));
  Cascade cascade(std::move(providers), config, normalize);
  const Signal signal = user("hi");
  CascadeResult first = cascade.ask(request_for(signal), signal);
  CHECK(first.answer.provider == "http");
  CHECK(first.answers.at(0).error == "scripted outage");
  CHECK(cascade.ask(request_for(signal), signal).answer.text == "scripted");
}

TEST_CASE("check_config names the key that is wrong", "[cascade]") {
  ReasoningConfig config;
  ProviderConfig a;
  a.name = "a";
  config.providers = {a};
  CHECK(check_config(config).empty());
  config.providers.push_back(a);
  CHECK(check_config(config) == "reasoning.providers: the name \"a\" is used twice");
  config.providers.pop_back();
  SelectorRule rule;
  rule.provider = "z";
  config.selector = {rule};
  CHECK(check_config(config) == "reasoning.selector[0]: provider \"z\" is not configured");
  config.selector[0].provider = "a";
  config.selector[0].text_regex = "(unclosed";
  CHECK(check_config(config).rfind("reasoning.selector[0]: text_regex: ", 0) == 0);
  config.selector.clear();
  config.consensus = 2;
  CHECK(check_config(config).rfind("reasoning.consensus: 2 needs that many providers", 0) == 0);
}

TEST_CASE("make_cascade builds every provider or names the one at fault", "[cascade]") {
  HttpFake server;
  server.set_fallback(json_reply(chat_text(R"({"target":"shell","payload":{"command":"ls"}})")));
  ReasoningConfig config;
  config.providers = {http_config("a", "openai", server), http_config("b", "openai", server)};
  config.consensus = 2;
  std::string error;
  auto cascade = make_cascade(config, test_catalog(), &error);
  REQUIRE(cascade);
  const Signal signal = user("list");
  CascadeResult r = cascade->ask(request_for(signal), signal);
  CHECK(r.status == Status::Ok);
  CHECK(server.request_count() == 2);

  config.providers[1].kind = "telepathy";
  CHECK(make_cascade(config, test_catalog(), &error) == nullptr);
  CHECK(error.rfind("reasoning.providers: provider b: unknown kind \"telepathy\"", 0) == 0);
  config.providers[1] = config.providers[0];
  CHECK(make_cascade(config, test_catalog(), &error) == nullptr);
  CHECK(error == "reasoning.providers: the name \"a\" is used twice");
}

TEST_CASE("cascade: concurrent sessions are counted apart", "[cascade]") {
  TempFile script(
      R"({"text":"ok","usage":{"input_tokens":1000000,"output_tokens":0},"repeat":true})"
      "\n");
  ProviderConfig offline;
  offline.name = "offline";
  offline.kind = "script";
  offline.script_path = script.path();
  offline.price_input_per_mtok = 1.0;
  ReasoningConfig config;
  config.providers = {offline};
  std::vector<std::unique_ptr<Provider>> providers;
  providers.push_back(must_make(offline));
  Cascade cascade(std::move(providers), config, normalize);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      const Signal signal = user("hi", "session-" + std::to_string(t));
      for (int i = 0; i < 10; ++i)
        if (cascade.ask(request_for(signal), signal).status == Status::Ok) ++ok;
    });
  for (auto& thread : threads) thread.join();
  CHECK(ok == 40);
  for (int t = 0; t < 4; ++t)
    CHECK(cascade.spent(std::string("alice\x1fsession-") + std::to_string(t)) == Approx(10.0));
}

TEST_CASE("cascade: the principal budget holds across the principal's sessions",
          "[cascade][budget]") {
  Setup s(1);
  s.config.budget_per_session_usd = 0.5;
  s.config.budget_per_principal_usd = 1.0;
  s.config.budget_window = std::chrono::seconds(1000);
  s.config.providers[0].price_input_per_mtok = 2.0;
  s.config.providers[0].price_output_per_mtok = 10.0;
  s.server(0).set_fallback(json_reply(chat_text("ok", 200000, 5000)));  // $0.45 a call
  auto cascade = s.cascade();
  // A new session id each time: each session's own budget is never reached...
  int calls = 0;
  CascadeResult last;
  for (int i = 0; i < 10; ++i) {
    const Signal signal = user("hi", "s" + std::to_string(i));
    last = cascade->ask(request_for(signal), signal);
    if (last.status != Status::Ok) break;
    ++calls;
  }
  // ...but the principal's is: $0.45, $0.90 pass the check, $1.35 is past $1.00.
  CHECK(calls == 3);
  CHECK(s.server(0).request_count() == 3);
  CHECK(last.status == Status::BudgetSpent);
  CHECK(last.message ==
        "the model budget of principal alice is spent ($1.3500 of $1.0000 per 1000 s); no more "
        "model calls for this principal until it drains");
  CHECK(cascade->principal_spent("alice") == Approx(1.35));
  // Another principal is not held up.
  Signal bob = user("hi", "s0");
  bob.principal = "bob";
  CHECK(cascade->ask(request_for(bob), bob).status == Status::Ok);
  // The budget drains at $1.00 per 1000 s: after 400 s, $0.95 is left, under the budget.
  s.time.now += std::chrono::seconds(400);
  CHECK(cascade->principal_spent("alice") == Approx(0.95));
  const Signal again = user("hi", "s-new");
  CHECK(cascade->ask(request_for(again), again).status == Status::Ok);
  CHECK(cascade->principal_spent("alice") == Approx(1.40));
  CHECK(cascade->ask(request_for(again), again).status == Status::BudgetSpent);
}

TEST_CASE("cascade: the spending tables stay bounded whatever session ids arrive",
          "[cascade][budget]") {
  Setup s(1);
  s.config.budget_per_session_usd = 100;
  s.config.budget_per_principal_usd = 1;  // drains $0.001 in 86.4 s
  s.config.budget_window = std::chrono::seconds(86400);
  s.config.budget_max_entries = 8;
  s.config.providers[0].price_input_per_mtok = 1.0;
  s.server(0).set_fallback(json_reply(chat_text("ok", 1000, 0)));  // $0.001 a call
  auto cascade = s.cascade();
  // 50 sessions of 20 principals: the tables never hold more than the bound, and no turn
  // outlives its ask.
  for (int i = 0; i < 50; ++i) {
    Signal signal = user("hi", "flood-" + std::to_string(i));
    signal.principal = "p" + std::to_string(i % 20);
    REQUIRE(cascade->ask(request_for(signal), signal).status == Status::Ok);
    s.time.now += std::chrono::seconds(1);
    const Cascade::Tracked t = cascade->tracked();
    CHECK(t.sessions <= 8);
    CHECK(t.principals <= 8);
    CHECK(t.turns == 0);
  }
  // The most recent session is still counted; the oldest were forgotten first.
  CHECK(cascade->spent(std::string("p9\x1f") + "flood-49") == Approx(0.001));
  CHECK(cascade->spent(std::string("p0\x1f") + "flood-0") == 0);
  // A session idle for a whole window is forgotten, and a drained principal too.
  s.time.now += std::chrono::seconds(86400 * 2);
  Signal late = user("hi", "late");
  REQUIRE(cascade->ask(request_for(late), late).status == Status::Ok);
  const Cascade::Tracked t = cascade->tracked();
  CHECK(t.sessions == 1);
  CHECK(t.principals == 1);
}

TEST_CASE("cascade: without a budget the session table is bounded too", "[cascade][budget]") {
  Setup s(1);
  s.config.budget_max_entries = 4;
  s.server(0).set_fallback(json_reply(chat_text("ok", 10, 10)));
  auto cascade = s.cascade();
  for (int i = 0; i < 12; ++i) {
    const Signal signal = user("hi", "x" + std::to_string(i));
    REQUIRE(cascade->ask(request_for(signal), signal).status == Status::Ok);
    CHECK(cascade->tracked().sessions <= 4);
    CHECK(cascade->tracked().principals == 0);
  }
}

TEST_CASE("cascade: the budget keys are read and checked", "[cascade][budget][config]") {
  ReasoningConfig c;
  c.providers.push_back(ProviderConfig{});
  c.providers[0].name = "a";
  c.providers[0].kind = "script";
  c.providers[0].script_path = "/dev/null";
  c.budget_per_principal_usd = -1;
  CHECK(check_config(c) == "reasoning.budget_per_principal_usd must not be negative");
  c.budget_per_principal_usd = 1;
  c.budget_window = std::chrono::seconds(0);
  CHECK(check_config(c) ==
        "reasoning.budget_window_seconds must be positive with a principal budget");
  c.budget_window = std::chrono::seconds(60);
  c.budget_max_entries = 0;
  CHECK(check_config(c) == "reasoning.budget_max_entries must be at least 1");
}
