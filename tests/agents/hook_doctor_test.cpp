// `warden hook doctor` as a real child process: a good setup (the real hook deciding with the
// shipped rules, and against a real daemon), a missing entry, a Bash-only matcher, Codex with
// `ask`, an untrusted Codex hook, a daemon that is down, and the settings that switch hooks off.
#include <rapidjson/document.h>
#include <signal.h>

#include <regex>

#include "agents/hook_doctor.h"
#include "agents/hook_install.h"
#include "tests/agents/hook_setup_fixture.h"
#include "tests/build_paths.h"
#include "tests/server/warden_child.h"

using namespace warden::agents;
using namespace warden::agents::testing;
using namespace std::chrono_literals;

namespace {

// The doctor's line starting with LEVEL and containing `text`, or "".
std::string line_with(const std::string& out, const std::string& level, const std::string& text) {
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(level + "  ", 0) == 0 && line.find(text) != std::string::npos) return line;
  }
  return "";
}

std::vector<std::string> env_for(const HookHome& dir) {
  return {"HOME=" + dir.str() + "/home", "CODEX_HOME=" + dir.str() + "/home/.codex"};
}

void install(const HookHome& dir, std::vector<std::string> args) {
  std::vector<std::string> all{"hook", "install"};
  all.insert(all.end(), args.begin(), args.end());
  auto r = warden_cli(all, env_for(dir));
  INFO(r.err);
  REQUIRE(r.code == 0);
}

warden::cli::testing::Run run_doctor(const HookHome& dir, std::vector<std::string> args) {
  std::vector<std::string> all{"hook", "doctor"};
  all.insert(all.end(), args.begin(), args.end());
  return warden_cli(all, env_for(dir));
}

}  // namespace

TEST_CASE("doctor passes a good Claude Code setup and its probe denies rm -rf /",
          "[agents][doctor]") {
  HookHome dir;
  install(dir, {"claude-code", "--project", dir.str(), "--rules", kShippedRules});
  auto r = run_doctor(dir, {"claude-code", "--project", dir.str()});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(line_with(r.out, "FAIL", "").empty());
  CHECK_FALSE(line_with(r.out, "OK", "matcher \"*\" covers every tool").empty());
  CHECK_FALSE(line_with(r.out, "OK", "is executable").empty());
  CHECK_FALSE(line_with(r.out, "OK", "probe `rm -rf /` denied: Warden: ").empty());
  CHECK_FALSE(line_with(r.out, "OK", "probe `ls` allowed").empty());
}

TEST_CASE("doctor probes through a real daemon, and names the cause when it is down",
          "[agents][doctor]") {
  HookHome dir;
  // A daemon with the shipped rules and a token file for the hook.
  auto made =
      warden_cli({"token", "new", "--role", "agent", "--principal", "alice", "--format", "json"});
  INFO(made.out << made.err);
  REQUIRE(made.code == 0);
  rapidjson::Document token;
  token.Parse(made.out.c_str());
  REQUIRE(token.IsObject());
  dir.write("token", std::string(token["token"].GetString()) + "\n", 0600);
  const std::string tokens_file =
      dir.write("tokens", std::string(token["line"].GetString()) + "\n", 0600);
  warden::server::testing::WardenChild serve({"serve", "--listen", "127.0.0.1:0", "--rules",
                                              kShippedRules, "--tokens", tokens_file, "--state-dir",
                                              dir.str() + "/state"});
  INFO(serve.err());
  REQUIRE(serve.serving());
  const std::string addr = serve.address();

  install(dir, {"claude-code", "--project", dir.str(), "--addr", addr, "--token-file",
                dir.str() + "/token"});
  auto good = run_doctor(dir, {"claude-code", "--project", dir.str()});
  INFO(good.out << good.err);
  CHECK(good.code == 0);
  CHECK_FALSE(line_with(good.out, "OK", "probe `rm -rf /` denied: Warden: ").empty());

  CHECK(serve.terminate() == 0);
  auto down = run_doctor(dir, {"claude-code", "--project", dir.str()});
  INFO(down.out);
  CHECK(down.code == 1);
  std::string fail = line_with(down.out, "FAIL", "could not decide");
  CHECK(fail.find("E_UNAVAILABLE") != std::string::npos);
  CHECK(fail.find(addr) != std::string::npos);
}

TEST_CASE("doctor fails without a Warden entry and warns about a Bash-only matcher",
          "[agents][doctor]") {
  HookHome dir;
  auto none = run_doctor(dir, {"claude-code", "--project", dir.str()});
  CHECK(none.code == 1);
  CHECK_FALSE(line_with(none.out, "FAIL", "not found").empty());

  dir.write(
      ".claude/settings.json",
      R"({"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"audit.sh"}]}]}})");
  auto missing = run_doctor(dir, {"claude-code", "--project", dir.str()});
  CHECK(missing.code == 1);
  CHECK_FALSE(line_with(missing.out, "FAIL", "no Warden PreToolUse entry").empty());

  dir.write(".claude/settings.json",
            R"({"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":")" +
                kWardenPath + " hook claude-code --rules " + kShippedRules +
                R"(","timeout":30}]}]}})");
  auto bash_only = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
  INFO(bash_only.out);
  CHECK(bash_only.code == 0);  // a warning, not a failure
  std::string warn = line_with(bash_only.out, "WARN", "matcher \"Bash\" leaves");
  CHECK(warn.find("Write") != std::string::npos);
  CHECK(warn.find("mcp__") != std::string::npos);
  CHECK(warn.find(" Bash,") == std::string::npos);
}

TEST_CASE("doctor fails on settings that switch the hook off or outlast its timeout",
          "[agents][doctor]") {
  HookHome dir;
  const std::string command = kWardenPath + " hook claude-code --rules " + kShippedRules;
  dir.write(".claude/settings.json",
            R"({"disableAllHooks": true, "permissions": {"defaultMode": "bypassPermissions"},
                "hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                command + R"( --timeout-ms 9000","timeout":5}]}]}})");
  auto r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK_FALSE(line_with(r.out, "FAIL", "disableAllHooks").empty());
  CHECK_FALSE(line_with(r.out, "FAIL", "decision budget 9000 ms").empty());
  CHECK_FALSE(line_with(r.out, "WARN", "bypassPermissions").empty());

  // The budget must leave the hook time to start and answer within the agent's timeout.
  for (auto [budget, fails] : {std::pair{"29500", true}, std::pair{"29000", false}}) {
    dir.write(".claude/settings.json",
              R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                  command + " --timeout-ms " + budget + R"(","timeout":30}]}]}})");
    r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
    INFO(r.out);
    CHECK(line_with(r.out, "FAIL", std::string("decision budget ") + budget).empty() == !fails);
    CHECK(r.code == (fails ? 1 : 0));
  }

  dir.write(
      ".claude/settings.json",
      R"({"hooks":{"PreToolUse":[{"hooks":[{"type":"command","command":"/nonexistent/warden hook claude-code"}]}]}})");
  r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
  CHECK(r.code == 1);
  CHECK_FALSE(line_with(r.out, "FAIL", "/nonexistent/warden does not exist").empty());
}

TEST_CASE("doctor fails a Codex hook that answers ask, and one never trusted",
          "[agents][doctor][codex]") {
  HookHome dir;
  dir.write(
      ".codex/config.toml",
      "[[hooks.PreToolUse]]\nmatcher = \"*\"\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n"
      "command = \"" +
          kWardenPath + " hook codex --rules " + kShippedRules +
          " --on-approval-required ask\"\ntimeout = 30\n");
  auto r = run_doctor(dir, {"codex", "--project", dir.str(), "--no-probe"});
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK_FALSE(line_with(r.out, "FAIL", "--on-approval-required ask").empty());
  CHECK_FALSE(line_with(r.out, "FAIL", "never trusted").empty());

  // Installed properly: the only failure left is trust; a trust entry turns it into a warning
  // (the doctor cannot compute Codex's hash without Codex).
  HookHome good;
  install(good, {"codex", "--project", good.str(), "--rules", kShippedRules});
  auto untrusted = run_doctor(good, {"codex", "--project", good.str()});
  INFO(untrusted.out);
  CHECK(untrusted.code == 1);
  CHECK_FALSE(line_with(untrusted.out, "OK", "approval-required answers deny").empty());
  CHECK_FALSE(line_with(untrusted.out, "OK", "probe `rm -rf /` denied").empty());
  const std::string key = good.str() + "/.codex/config.toml:pre_tool_use:0:0";
  CHECK_FALSE(line_with(untrusted.out, "FAIL", "only in a trusted project").empty());
  good.write("home/.codex/config.toml", "[projects.\"" + good.str() +
                                            "\"]\ntrust_level = \"trusted\"\n"
                                            "[hooks.state.\"" +
                                            key + "\"]\ntrusted_hash = \"sha256:00\"\n");
  auto trusted_once = run_doctor(good, {"codex", "--project", good.str()});
  INFO(trusted_once.out);
  CHECK(trusted_once.code == 0);
  CHECK_FALSE(line_with(trusted_once.out, "WARN", "trusted once").empty());
}

TEST_CASE("doctor reads a hook's answer as the agent does", "[agents][doctor]") {
  HookHome dir;
  // Stand-ins named warden: one allows everything, one prints nothing and exits 2.
  dir.write("allow/warden",
            "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":"
            "\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n",
            0755);
  dir.write("silent/warden", "#!/bin/sh\ncat >/dev/null\necho broken >&2\nexit 2\n", 0755);
  dir.write(".claude/settings.json",
            R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                dir.str() + R"(/allow/warden hook claude-code","timeout":30}]}]}})");
  auto allow_all = run_doctor(dir, {"claude-code", "--project", dir.str()});
  INFO(allow_all.out);
  CHECK(allow_all.code == 1);
  CHECK_FALSE(line_with(allow_all.out, "FAIL", "probe `rm -rf /` answered allow").empty());

  dir.write(".claude/settings.json",
            R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                dir.str() + R"(/silent/warden hook claude-code","timeout":30}]}]}})");
  auto silent = run_doctor(dir, {"claude-code", "--project", dir.str()});
  INFO(silent.out);
  CHECK(silent.code == 1);
  CHECK_FALSE(line_with(silent.out, "FAIL", "no decision of Warden's").empty());
}

TEST_CASE("the matcher semantics of each agent", "[agents][doctor]") {
  CHECK(matcher_covers(HookAgent::ClaudeCode, false, "", "Write"));
  CHECK(matcher_covers(HookAgent::ClaudeCode, true, "*", "mcp__fs__read"));
  CHECK(matcher_covers(HookAgent::ClaudeCode, true, "Edit|Write", "Write"));
  CHECK_FALSE(matcher_covers(HookAgent::ClaudeCode, true, "Edit|Write", "Bash"));
  CHECK_FALSE(matcher_covers(HookAgent::ClaudeCode, true, "Bash", "BashOutput"));
  CHECK(matcher_covers(HookAgent::ClaudeCode, true, "mcp__.*", "mcp__fs__read"));
  CHECK(matcher_covers(HookAgent::Codex, true, "Bash|apply_patch", "apply_patch"));
  CHECK_FALSE(matcher_covers(HookAgent::Codex, true, "Bash", "apply_patch"));
  CHECK_FALSE(matcher_covers(HookAgent::Codex, true, "(", "Bash"));
}

// --wait lets the hook run its budget plus the wait: a hook timeout shorter than both (and
// the margin to start and answer) lets the agent give up on the hook, which is no deny.
TEST_CASE("doctor counts the hook's --wait in its budget", "[agents][doctor]") {
  HookHome dir;
  const std::string command = kWardenPath + " hook claude-code --addr 127.0.0.1:9 --wait 60";
  dir.write(".claude/settings.json",
            R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                command + R"(","timeout":30}]}]}})");
  auto r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
  INFO(r.out);
  CHECK(r.code == 1);
  CHECK(line_with(r.out, "FAIL", "decision budget") ==
        "FAIL  decision budget 5000 ms (default) + wait 60 s vs hook timeout 30 s: the budget and "
        "the wait must leave the hook 1000 ms to start and answer, else the agent may give up on "
        "the hook before Warden answers, and a hook timeout is not a deny (reinstall with `warden "
        "hook install claude-code --wait 60`, which writes a timeout that fits)");
  // Exactly budget + wait + margin fits; a second less does not.
  for (auto [timeout, fails] : {std::pair{"66", false}, std::pair{"65", true}}) {
    dir.write(".claude/settings.json",
              R"({"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":")" +
                  command + R"(","timeout":)" + timeout + "}]}]}}");
    r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
    INFO(timeout << "\n" << r.out);
    CHECK(line_with(r.out, "FAIL", "decision budget").empty() == !fails);
    CHECK(r.code == (fails ? 1 : 0));
  }
  // What `hook install --wait` writes passes.
  install(dir, {"claude-code", "--project", dir.str(), "--addr", "127.0.0.1:9", "--token-file",
                dir.str() + "/token", "--timeout-ms", "8000", "--wait", "90"});
  r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
  INFO(r.out);
  CHECK(r.code == 0);
  CHECK_FALSE(
      line_with(r.out, "OK", "decision budget 8000 ms + wait 90 s vs hook timeout 99 s").empty());
}

// The settings are read with the shared parser (bindings/json.h): text hidden after a NUL byte
// (RapidJSON took it for the end), bytes that are not UTF-8 or a zero RapidJSON would misread
// make the file no valid JSON object, at the offending byte.
TEST_CASE("doctor fails settings with a NUL byte, bad UTF-8 or a misread zero",
          "[agents][doctor]") {
  using namespace std::string_literals;
  HookHome dir;
  install(dir, {"claude-code", "--project", dir.str(), "--rules", kShippedRules});
  const std::string good = dir.read(".claude/settings.json");
  const std::size_t end = good.rfind('}') + 1;
  const std::string file = (dir.path() / ".claude/settings.json").string();
  const std::string bad_byte = "{\"model\":\"\xff\"," + good.substr(1);
  for (const auto& [text, offset] :
       {std::pair{good.substr(0, end) + "\0{}"s, end}, std::pair{bad_byte, std::size_t{10}},
        std::pair{"{\"n\":0e66," + good.substr(1), std::size_t{5}}}) {
    dir.write(".claude/settings.json", text);
    auto r = run_doctor(dir, {"claude-code", "--project", dir.str(), "--no-probe"});
    INFO(r.out);
    CHECK(r.code == 1);
    CHECK(line_with(r.out, "FAIL", "is not a valid JSON object") ==
          "FAIL  " + file + " is not a valid JSON object (offset " + std::to_string(offset) + ")");
  }
}
