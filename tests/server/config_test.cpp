// warden.toml: defaults, every key, and errors that name their key.
#include "server/config.h"

#include <algorithm>
#include <catch2/catch.hpp>

#include "tests/build_paths.h"

using namespace warden::server;

namespace {
std::vector<std::string> error_keys(const std::string& toml) {
  Config c;
  std::vector<std::string> keys;
  for (const auto& e : parse_config(toml, "/etc/warden", &c)) keys.push_back(e.key);
  return keys;
}
}  // namespace

TEST_CASE("an empty config gives the documented defaults", "[server][config]") {
  Config c;
  REQUIRE(parse_config("", "", &c).empty());
  CHECK(c.listen == "127.0.0.1:9105");
  CHECK(c.rules.empty());
  CHECK(c.tokens.empty());
  CHECK(c.limits.max_frame_bytes == 1048576);
  CHECK(c.default_outcome == "approval-required");
  CHECK_FALSE(c.watch_rules);
  CHECK(validate_config(c).empty());
}

TEST_CASE("every key is read, relative paths resolve against the file", "[server][config]") {
  Config c;
  auto errors = parse_config(R"(
listen = "0.0.0.0:7000"
rules = ["rules", "/abs/more"]
tokens = "tokens.txt"
workspace_root = "/srv/work"
home = "/home/agent"
default_outcome = "reject"
workers = 3
watch_rules = true
watch_interval_ms = 500
audit_log = "audit.jsonl"
state_db = "/var/lib/warden/state.db"
state_dir = "state"
[limits]
max_frame_bytes = 4096
max_connections = 10
auth_timeout_ms = 100
idle_timeout_ms = 200
max_in_flight = 5
run_limit = 99
deadline_ms = 7
depth = 4
retries = 1
max_json_depth = 20
shutdown_timeout_ms = 300
[log]
level = "debug"
json = true
)",
                             "/etc/warden", &c);
  for (const auto& e : errors) FAIL(e.to_text("t"));
  CHECK(c.listen == "0.0.0.0:7000");
  CHECK(c.rules == std::vector<std::string>{"/etc/warden/rules", "/abs/more"});
  CHECK(c.tokens == "/etc/warden/tokens.txt");
  CHECK(c.audit_log == "/etc/warden/audit.jsonl");
  CHECK(c.state_db == "/var/lib/warden/state.db");
  CHECK(c.state_dir == "/etc/warden/state");
  CHECK(c.workspace_root == "/srv/work");
  CHECK(c.default_outcome == "reject");
  CHECK(c.workers == 3);
  CHECK(c.watch_rules);
  CHECK(c.watch_interval.count() == 500);
  CHECK(c.limits.max_frame_bytes == 4096);
  CHECK(c.limits.max_connections == 10);
  CHECK(c.limits.auth_timeout.count() == 100);
  CHECK(c.limits.idle_timeout.count() == 200);
  CHECK(c.limits.max_in_flight == 5);
  CHECK(c.limits.run_limit == 99);
  CHECK(c.limits.deadline.count() == 7);
  CHECK(c.limits.depth == 4);
  CHECK(c.limits.retries == 1);
  CHECK(c.limits.max_json_depth == 20);
  CHECK(c.limits.shutdown_timeout.count() == 300);
  CHECK(c.log_level == "debug");
  CHECK(c.log_json);
}

TEST_CASE("wrong values name their key", "[server][config]") {
  CHECK(error_keys("listen = 9105") == std::vector<std::string>{"listen"});
  CHECK(error_keys("listen = \"nohost\"") == std::vector<std::string>{"listen"});
  CHECK(error_keys("listen = \"127.0.0.1:99999\"") == std::vector<std::string>{"listen"});
  CHECK(error_keys("rules = \"dir\"") == std::vector<std::string>{"rules"});
  CHECK(error_keys("rules = [\"a\", 3]") == std::vector<std::string>{"rules[1]"});
  CHECK(error_keys("default_outcome = \"maybe\"") == std::vector<std::string>{"default_outcome"});
  CHECK(error_keys("workspace_root = \"relative\"") == std::vector<std::string>{"workspace_root"});
  CHECK(error_keys("[limits]\nmax_frame_bytes = 0") ==
        std::vector<std::string>{"limits.max_frame_bytes"});
  CHECK(error_keys("[limits]\nmax_frame_bytes = 16777216") ==
        std::vector<std::string>{"limits.max_frame_bytes"});
  CHECK(error_keys("[limits]\nidle_timeout_ms = \"5s\"") ==
        std::vector<std::string>{"limits.idle_timeout_ms"});
  CHECK(error_keys("[limits]\nmax_connections = -1") ==
        std::vector<std::string>{"limits.max_connections"});
  CHECK(error_keys("[log]\nlevel = \"loud\"") == std::vector<std::string>{"log.level"});
  CHECK(error_keys("[log]\njson = 1") == std::vector<std::string>{"log.json"});
  CHECK(error_keys("watch_rules = \"yes\"") == std::vector<std::string>{"watch_rules"});
  CHECK(error_keys("limits = 3") == std::vector<std::string>{"limits"});
  // SPEC §2's ceilings: a deployment may lower the depth limit and the model attempts, never
  // raise them.
  CHECK(error_keys("[limits]\ndepth = 11") == std::vector<std::string>{"limits.depth"});
  CHECK(error_keys("[limits]\nretries = 4") == std::vector<std::string>{"limits.retries"});
  CHECK(error_keys("[limits]\nretries = 0") == std::vector<std::string>{"limits.retries"});
  CHECK(error_keys("[limits]\ndepth = 0\nretries = 1").empty());
}

TEST_CASE("unknown keys are errors, all reported", "[server][config]") {
  CHECK(error_keys("lisen = \"x\"\n[limits]\nmax_frames = 1\n[logging]\n") ==
        std::vector<std::string>{"limits.max_frames", "lisen", "logging"});
}

TEST_CASE("TOML syntax errors say where", "[server][config]") {
  Config c;
  auto errors = parse_config("listen = \n", "", &c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key.empty());
  CHECK(errors[0].message.find("line 1") != std::string::npos);
}

TEST_CASE("a failed parse leaves the config unchanged", "[server][config]") {
  Config c;
  CHECK_FALSE(parse_config("listen = \"1.2.3.4:5\"\nworkers = -3\n", "", &c).empty());
  CHECK(c.listen == "127.0.0.1:9105");
}

TEST_CASE("host:port splitting", "[server][config]") {
  std::string host;
  std::uint16_t port = 0;
  CHECK(split_host_port("127.0.0.1:0", &host, &port));
  CHECK(host == "127.0.0.1");
  CHECK(port == 0);
  CHECK(split_host_port("[::1]:9105", &host, &port));
  CHECK(host == "::1");
  CHECK(port == 9105);
  CHECK_FALSE(split_host_port("::1:9105", &host, &port));
  CHECK_FALSE(split_host_port(":9105", &host, &port));
  CHECK_FALSE(split_host_port("host:", &host, &port));
  CHECK_FALSE(split_host_port("host:x1", &host, &port));
}

TEST_CASE("the documented example config parses and matches the defaults", "[server][config]") {
  Config c;
  auto errors = load_config_file(WARDEN_SOURCE_DIR "/examples/warden.toml", &c);
  for (const auto& e : errors) FAIL(e.to_text("examples/warden.toml"));
  Config defaults;
  CHECK(c.listen == defaults.listen);
  CHECK(c.limits.max_frame_bytes == defaults.limits.max_frame_bytes);
  CHECK(c.limits.idle_timeout == defaults.limits.idle_timeout);
  CHECK(c.limits.max_in_flight == defaults.limits.max_in_flight);
  CHECK(c.log_level == defaults.log_level);
  CHECK(c.workspace_root == defaults.workspace_root);
  CHECK(c.home == defaults.home);
}

TEST_CASE("the systemd service's example config parses and validates", "[server][config]") {
  Config c;
  auto errors = load_config_file(WARDEN_SOURCE_DIR "/packaging/warden.toml", &c);
  for (const auto& e : errors) FAIL(e.to_text("packaging/warden.toml"));
  errors = validate_config(c);
  for (const auto& e : errors) FAIL(e.to_text("packaging/warden.toml"));
  // What warden.service provides: its RuntimeDirectory= and StateDirectory=.
  CHECK(c.unix_socket.path == "/run/warden/warden.sock");
  CHECK(c.unix_socket.mode == 0660u);
  CHECK(c.workspace_root == "/var/lib/warden-workspace");
  CHECK(c.tokens == WARDEN_SOURCE_DIR "/packaging/tokens");  // beside the file: /etc/warden/tokens
  CHECK(c.rules.empty());                                    // the installed rule pack
}

TEST_CASE("the workspace and home default to the engine's, not the current directory",
          "[server][config]") {
  Config c;
  REQUIRE(parse_config("", "", &c).empty());
  CHECK(c.workspace_root == warden::kDefaultWorkspaceRoot);
  CHECK(c.home == warden::kDefaultHome);
  CHECK(c.state_dir.empty());  // resolved at startup from XDG_STATE_HOME or HOME
}

TEST_CASE("actuators.shell.confine is on by default, off only when written out",
          "[server][config]") {
  Config defaults;
  REQUIRE(parse_config("", "", &defaults).empty());
  CHECK(defaults.pipeline.actuators.shell.confine);
  CHECK(config_warnings(defaults).empty());
  Config off;
  REQUIRE(parse_config(R"(
[actuators.shell]
confine = "off"
hide = ["/srv/secrets"]
writable = ["/srv/out"]
read = ["/opt/toolchain"]
cache_dir = "/var/cache/warden"
)",
                       "/etc/warden", &off)
              .empty());
  CHECK_FALSE(off.pipeline.actuators.shell.confine);
  CHECK(off.pipeline.actuators.shell.hide == std::vector<std::string>{"/srv/secrets"});
  CHECK(off.pipeline.actuators.shell.writable == std::vector<std::string>{"/srv/out"});
  CHECK(off.pipeline.actuators.shell.read == std::vector<std::string>{"/opt/toolchain"});
  CHECK(off.pipeline.actuators.shell.cache_dir == "/var/cache/warden");
  // The start-up log and status carry the warning.
  auto warnings = config_warnings(off);
  CHECK(std::find(warnings.begin(), warnings.end(), kConfineOffWarning) != warnings.end());
  // Not a boolean, not another word.
  CHECK(error_keys("[actuators.shell]\nconfine = false\n") ==
        std::vector<std::string>{"actuators.shell.confine"});
  CHECK(error_keys("[actuators.shell]\nconfine = \"no\"\n") ==
        std::vector<std::string>{"actuators.shell.confine"});
  // Paths are absolute.
  CHECK(error_keys("[actuators.shell]\nhide = [\"secrets\"]\ncache_dir = \"cache\"\n") ==
        std::vector<std::string>{"actuators.shell.hide[0]", "actuators.shell.cache_dir"});
}

TEST_CASE("the confined shell hides Warden's own files", "[server][config]") {
  Config c;
  REQUIRE(parse_config(R"(
tokens = "/etc/warden/tokens"
rules = ["/etc/warden/rules"]
state_dir = "/var/lib/warden"
)",
                       "/etc/warden", &c)
              .empty());
  auto own = effective_actuators(c).shell.own_files;
  for (const char* path : {"/etc/warden/tokens", "/etc/warden/rules", "/var/lib/warden"})
    CHECK(std::find(own.begin(), own.end(), path) != own.end());
}

TEST_CASE("[approvals] caps pending approvals per principal and keeps closed ones for days",
          "[server][config]") {
  Config defaults;
  CHECK(defaults.approvals.max_pending_per_principal == 100);
  CHECK(defaults.approvals.retain_days == 30);
  Config c;
  auto errors =
      parse_config("[approvals]\nmax_pending_per_principal = 5\nretain_days = 7\n", "", &c);
  for (const auto& e : errors) FAIL(e.to_text("t"));
  CHECK(c.approvals.max_pending_per_principal == 5);
  CHECK(c.approvals.retain_days == 7);
  CHECK(error_keys("[approvals]\nmax_pending_per_principal = 0") ==
        std::vector<std::string>{"approvals.max_pending_per_principal"});
  CHECK(error_keys("[approvals]\nretain_days = 0") ==
        std::vector<std::string>{"approvals.retain_days"});
  CHECK(error_keys("[approvals]\nretain_days = \"a month\"") ==
        std::vector<std::string>{"approvals.retain_days"});
  // A wrong value's error names its key and the range.
  Config bad;
  auto named = parse_config("[approvals]\nstore = \"sqlite\"\nretain_days = -1\n", "", &bad);
  REQUIRE(named.size() == 1);
  CHECK(named[0].to_text("warden.toml") ==
        "warden.toml: approvals.retain_days: must be between 1 and 36500, not -1");
}
