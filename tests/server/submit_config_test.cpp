// warden.toml for the pipeline behind submit: [reasoning] with its providers and selector,
// [actuators] with shell, file and http; defaults, every key, errors naming their key, and an
// API key in the file refused without being repeated.
#include <catch2/catch.hpp>

#include "server/config.h"

using namespace warden::server;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> submit_error_keys(const std::string& toml, std::string* text = nullptr) {
  Config c;
  std::vector<std::string> keys;
  for (const auto& e : parse_config(toml, "/etc/warden", &c)) {
    keys.push_back(e.key);
    if (text) *text += e.to_text("warden.toml") + "\n";
  }
  return keys;
}

}  // namespace

TEST_CASE("without [reasoning] there is no provider; actuators default to the workspace",
          "[server][config][submit]") {
  Config c;
  REQUIRE(parse_config("workspace_root = \"/srv/agent\"", "", &c).empty());
  CHECK(c.pipeline.reasoning.providers.empty());
  CHECK(c.pipeline.threads == 2);
  CHECK(c.pipeline.actuators.default_target == "reply");
  auto a = effective_actuators(c);
  CHECK(a.shell.workspace == "/srv/agent");
  CHECK(a.file.root == "/srv/agent");
  // A workspace given on the command line after the file still counts.
  c.workspace_root = "/other";
  CHECK(effective_actuators(c).shell.workspace == "/other");
}

TEST_CASE("every [reasoning] and [actuators] key is read", "[server][config][submit]") {
  Config c;
  auto errors = parse_config(R"(
[reasoning]
threads = 3
max_queue = 9
cool_off_seconds = 30
consensus = 2
budget_per_session_usd = 0.5
identity = "You help with builds."

[[reasoning.providers]]
name = "local"
kind = "script"
script = "demo/answers.jsonl"

[[reasoning.providers]]
name = "openai"
kind = "openai"
base_url = "https://api.openai.com"
model = "gpt-4o-mini"
api_key_env = "OPENAI_API_KEY"
connect_timeout_ms = 1500
timeout_ms = 20000
max_retries_429 = 4
retry_after_max_ms = 3000
max_response_bytes = 65536
price_input_per_mtok = 0.15
price_output_per_mtok = 1
native_tools = false
max_tokens = 512

[[reasoning.selector]]
sensor = "chat-message"
text_regex = "(?i)deploy"
min_chars = 10
provider = "openai"
model = "gpt-4o"

[actuators]
default_target = "reply"
silent = ["reply", "log"]

[actuators.shell]
workspace = "/srv/ws"
path = ["/usr/bin", "/bin"]
timeout_ms = 5000
max_output_bytes = 1000
cpu_seconds = 7
memory_bytes = 268435456
max_processes = 16
max_file_bytes = 1048576
shell = "/bin/bash"

[actuators.file]
root = "files"
max_read_bytes = 100
max_write_bytes = 200

[actuators.http]
connect_timeout_ms = 700
timeout_ms = 800
max_response_bytes = 900
resolve = ["api.example.com:443:203.0.113.7"]
)",
                             "/etc/warden", &c);
  for (const auto& e : errors) FAIL(e.to_text("test"));
  const auto& r = c.pipeline.reasoning;
  CHECK(c.pipeline.threads == 3);
  CHECK(c.pipeline.max_queue == 9);
  CHECK(r.cool_off == 30s);
  CHECK(r.consensus == 2);
  CHECK(r.budget_per_session_usd == Approx(0.5));
  CHECK(r.identity == "You help with builds.");
  REQUIRE(r.providers.size() == 2);
  CHECK(r.providers[0].kind == "script");
  CHECK(r.providers[0].script_path == "/etc/warden/demo/answers.jsonl");  // relative to the file
  const auto& o = r.providers[1];
  CHECK(o.name == "openai");
  CHECK(o.base_url == "https://api.openai.com");
  CHECK(o.model == "gpt-4o-mini");
  CHECK(o.api_key_env == "OPENAI_API_KEY");
  CHECK(o.connect_timeout == 1500ms);
  CHECK(o.timeout == 20000ms);
  CHECK(o.max_retries_429 == 4);
  CHECK(o.retry_after_max == 3000ms);
  CHECK(o.max_response_bytes == 65536);
  CHECK(o.price_input_per_mtok == Approx(0.15));
  CHECK(o.price_output_per_mtok == Approx(1.0));
  CHECK_FALSE(o.native_tools);
  CHECK(o.max_tokens == 512);
  REQUIRE(r.selector.size() == 1);
  CHECK(r.selector[0].sensor == "chat-message");
  CHECK(r.selector[0].text_regex == "(?i)deploy");
  CHECK(r.selector[0].min_chars == 10);
  CHECK(r.selector[0].provider == "openai");
  CHECK(r.selector[0].model == "gpt-4o");
  const auto& a = c.pipeline.actuators;
  CHECK(a.silent == std::vector<std::string>{"reply", "log"});
  CHECK(a.shell.workspace == "/srv/ws");
  CHECK(a.shell.path == std::vector<std::string>{"/usr/bin", "/bin"});
  CHECK(a.shell.timeout == 5000ms);
  CHECK(a.shell.max_output_bytes == 1000);
  CHECK(a.shell.cpu_seconds == 7);
  CHECK(a.shell.memory_bytes == 268435456);
  CHECK(a.shell.max_processes == 16);
  CHECK(a.shell.max_file_bytes == 1048576);
  CHECK(a.shell.shell == "/bin/bash");
  CHECK(a.file.root == "/etc/warden/files");
  CHECK(a.file.max_read_bytes == 100);
  CHECK(a.file.max_write_bytes == 200);
  CHECK(a.http.connect_timeout == 700ms);
  CHECK(a.http.timeout == 800ms);
  CHECK(a.http.max_response_bytes == 900);
  CHECK(a.http.resolve == std::vector<std::string>{"api.example.com:443:203.0.113.7"});
}

TEST_CASE("wrong [reasoning] and [actuators] values name their key", "[server][config][submit]") {
  CHECK(submit_error_keys("[reasoning]\nthreads = 0") ==
        std::vector<std::string>{"reasoning.threads"});
  CHECK(submit_error_keys("[reasoning]\nconsensus = 1") ==
        std::vector<std::string>{"reasoning.consensus"});
  CHECK(submit_error_keys(
            "[reasoning]\nconsensus = 2\n[[reasoning.providers]]\nname = \"a\"\nkind = "
            "\"script\"\nscript = \"a\"") == std::vector<std::string>{"reasoning.consensus"});
  CHECK(submit_error_keys("[reasoning]\nbudget_per_session_usd = -1") ==
        std::vector<std::string>{"reasoning.budget_per_session_usd"});
  CHECK(submit_error_keys("[reasoning]\nproviders = 3") ==
        std::vector<std::string>{"reasoning.providers"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"gpt\"\nbase_url = "
                          "\"https://x\"") ==
        std::vector<std::string>{"reasoning.providers[0].kind"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"openai\"\nbase_url = "
                          "\"ftp://x\"") ==
        std::vector<std::string>{"reasoning.providers[0].base_url"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nkind = \"script\"\nscript = \"s\"") ==
        std::vector<std::string>{"reasoning.providers[0].name"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"") ==
        std::vector<std::string>{"reasoning.providers[0].script"});
  CHECK(
      submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
                        "\"s\"\n[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
                        "\"t\"") == std::vector<std::string>{"reasoning.providers[1].name"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
                          "\"s\"\ntimeout_ms = \"fast\"") ==
        std::vector<std::string>{"reasoning.providers[0].timeout_ms"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
                          "\"s\"\nsurprise = 1") ==
        std::vector<std::string>{"reasoning.providers[0].surprise"});
  CHECK(submit_error_keys("[[reasoning.selector]]\nprovider = \"nobody\"") ==
        std::vector<std::string>{"reasoning.selector[0].provider"});
  CHECK(submit_error_keys("[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
                          "\"s\"\n[[reasoning.selector]]\nprovider = \"a\"\ntext_regex = \"(\"") ==
        std::vector<std::string>{"reasoning.selector[0].text_regex"});
  CHECK(submit_error_keys(
            "[[reasoning.providers]]\nname = \"a\"\nkind = \"script\"\nscript = "
            "\"s\"\n[[reasoning.selector]]\nprovider = \"a\"\nsensor = \"tool-output\"") ==
        std::vector<std::string>{"reasoning.selector[0].sensor"});
  CHECK(submit_error_keys("[actuators.shell]\ntimeout_ms = 0") ==
        std::vector<std::string>{"actuators.shell.timeout_ms"});
  CHECK(submit_error_keys("[actuators.shell]\npath = [\"bin\"]") ==
        std::vector<std::string>{"actuators.shell.path[0]"});
  CHECK(submit_error_keys("[actuators.shell]\nshell = \"sh\"") ==
        std::vector<std::string>{"actuators.shell.shell"});
  CHECK(submit_error_keys("[actuators.file]\nmax_read_bytes = 0") ==
        std::vector<std::string>{"actuators.file.max_read_bytes"});
  CHECK(submit_error_keys("[actuators.http]\nsurprise = true") ==
        std::vector<std::string>{"actuators.http.surprise"});
  CHECK(submit_error_keys("[actuators]\ndefault_target = \"\"") ==
        std::vector<std::string>{"actuators.default_target"});
}

TEST_CASE("an API key in the config file is refused and never repeated",
          "[server][config][submit]") {
  const std::string key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd";
  std::string text;
  auto keys = submit_error_keys(
      "[[reasoning.providers]]\nname = \"a\"\nkind = \"openai\"\nbase_url = "
      "\"https://api.openai.com\"\napi_key = \"" +
          key + "\"",
      &text);
  CHECK(keys == std::vector<std::string>{"reasoning.providers[0].api_key"});
  CHECK(text.find("api_key_env") != std::string::npos);
  // The key itself in api_key_env: not a variable name, refused without echo.
  keys = submit_error_keys(
      "[[reasoning.providers]]\nname = \"a\"\nkind = \"openai\"\nbase_url = "
      "\"https://api.openai.com\"\napi_key_env = \"" +
          key + "\"",
      &text);
  CHECK(keys == std::vector<std::string>{"reasoning.providers[0].api_key_env"});
  // A key-shaped value that is also a valid variable name is caught by the secret detector.
  keys = submit_error_keys(
      "[[reasoning.providers]]\nname = \"a\"\nkind = \"openai\"\nbase_url = "
      "\"https://api.openai.com\"\napi_key_env = "
      "\"ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\"",
      &text);
  CHECK(keys == std::vector<std::string>{"reasoning.providers[0].api_key_env"});
  // A key in the base URL's query.
  keys = submit_error_keys(
      "[[reasoning.providers]]\nname = \"a\"\nkind = \"openai\"\nbase_url = "
      "\"https://user:" +
          key + "@api.example.com\"",
      &text);
  CHECK(keys == std::vector<std::string>{"reasoning.providers[0].base_url"});
  CHECK(text.find(key) == std::string::npos);
  CHECK(text.find("ghp_AbCd") == std::string::npos);
}

TEST_CASE("the budget keys of [reasoning] are read and checked",
          "[server][config][submit][budget]") {
  Config defaults;
  CHECK(defaults.pipeline.reasoning.budget_per_principal_usd == 0);
  CHECK(defaults.pipeline.reasoning.budget_window == std::chrono::seconds(86400));
  CHECK(defaults.pipeline.reasoning.budget_max_entries == 10000);
  Config c;
  REQUIRE(parse_config("[reasoning]\nbudget_per_principal_usd = 2.5\nbudget_window_seconds = 3600\n"
                       "budget_max_entries = 500\n",
                       "", &c)
              .empty());
  CHECK(c.pipeline.reasoning.budget_per_principal_usd == 2.5);
  CHECK(c.pipeline.reasoning.budget_window == std::chrono::seconds(3600));
  CHECK(c.pipeline.reasoning.budget_max_entries == 500);
  CHECK(submit_error_keys("[reasoning]\nbudget_per_principal_usd = -1\n") ==
        std::vector<std::string>{"reasoning.budget_per_principal_usd"});
  CHECK(submit_error_keys("[reasoning]\nbudget_window_seconds = 0\n") ==
        std::vector<std::string>{"reasoning.budget_window_seconds"});
  CHECK(submit_error_keys("[reasoning]\nbudget_max_entries = 0\n") ==
        std::vector<std::string>{"reasoning.budget_max_entries"});
}
