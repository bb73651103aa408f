// The real arguments of a Codex shell call (agents/codex_call.h), from synthetic rollout files
// shaped like Codex 0.169's: found, not found, workdir, shell, tty, cmd mismatch, a huge file, a
// file that is not a regular file, malformed lines; and run_hook with the shipped rules.
#include "agents/codex_call.h"

#include <rapidjson/document.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "agents/hook_proposal.h"
#include "agents/hook_run.h"
#include "agents/hook_shell.h"
#include "protocol/message.h"
#include "serve_child.h"
#include "tests/support/temp_dir.h"

using namespace warden::agents;
namespace fs = std::filesystem;

namespace {

using warden::server::testing::TempDir;

// One rollout line holding a function_call, as Codex writes it.
std::string call_line(const std::string& call_id, const std::string& arguments_json,
                      const std::string& name = "exec_command") {
  rapidjson::Document d;
  d.Parse(R"({"timestamp":"2026-11-23T01:33:10.197Z","ordinal":9,"type":"response_item",
              "payload":{"type":"function_call","status":"completed","id":"fc_1"},
              "metadata":{"history_sequence":4}})");
  auto& a = d.GetAllocator();
  auto& p = d["payload"];
  p.AddMember("name", rapidjson::Value(name.c_str(), a), a);
  p.AddMember("arguments", rapidjson::Value(arguments_json.c_str(), a), a);
  p.AddMember("call_id", rapidjson::Value(call_id.c_str(), a), a);
  return warden::protocol::to_json_text(d);
}

// Lines Codex writes around the calls.
const std::string kMeta =
    R"({"timestamp":"2026-11-23T01:33:09.761Z","ordinal":0,"type":"session_meta","payload":{"session_id":"s-1"}})";
const std::string kOutput =
    R"({"type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":"ok"}})";

std::string write_rollout(const TempDir& dir, const std::vector<std::string>& lines,
                          const std::string& name = "rollout.jsonl") {
  const fs::path p = dir.path() / name;
  std::ofstream out(p, std::ios::binary);
  for (const auto& l : lines) out << l << "\n";
  return p.string();
}

HookCall codex_bash(const std::string& command, const std::string& transcript,
                    const std::string& call_id = "call_1",
                    const std::string& cwd = "/home/user/project") {
  HookCall call;
  call.session_id = "s-1";
  call.cwd = cwd;
  call.hook_event_name = "PreToolUse";
  call.tool_name = "Bash";
  call.tool_use_id = call_id;
  call.permission_mode = "bypassPermissions";
  call.transcript_path = transcript;
  call.tool_input.SetObject();
  call.tool_input.AddMember("command",
                            rapidjson::Value(command.c_str(), call.tool_input.GetAllocator()),
                            call.tool_input.GetAllocator());
  return call;
}

// The completed proposal, or the error code (then the document is null).
struct Completed {
  bool ok = false;
  HookError error;
  rapidjson::Document proposal;
};

Completed complete(const HookCall& call) {
  Completed c;
  std::string json;
  REQUIRE(hook_proposal(call, "codex", &json, &c.error));
  c.ok = complete_codex_bash_proposal(call, &json, &c.error);
  if (c.ok) c.proposal.Parse(json.c_str());
  return c;
}

std::string payload_string(const Completed& c, const char* key) {
  const auto& p = c.proposal["payload"];
  return p.HasMember(key) && p[key].IsString() ? p[key].GetString() : "<absent>";
}

}  // namespace

TEST_CASE("codex call: the function_call with the hook's call_id gives every argument",
          "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(
      dir, {kMeta, call_line("call_0", R"({"cmd":"pwd"})"),
            call_line("call_1",
                      R"({"cmd":"touch x","workdir":"/tmp/w","shell":"/bin/bash","login":false,)"
                      R"("tty":false,"sandbox_permissions":"use_default","justification":"why",)"
                      R"("max_output_tokens":100,"yield_time_ms":250,"prefix_rule":["touch"]})"),
            kOutput});
  CodexShellCall real;
  HookError error;
  REQUIRE(read_codex_shell_call(path, "call_1", kCodexTranscriptTailBytes, &real, &error));
  CHECK(real.tool == "exec_command");
  CHECK(real.cmd == "touch x");
  CHECK(real.workdir == std::optional<std::string>("/tmp/w"));
  CHECK(real.shell == std::optional<std::string>("/bin/bash"));
  CHECK(real.login == std::optional<bool>(false));
  CHECK(real.tty == std::optional<bool>(false));
  CHECK(real.sandbox_permissions == std::optional<std::string>("use_default"));
  CHECK(real.justification == std::optional<std::string>("why"));

  REQUIRE(read_codex_shell_call(path, "call_0", kCodexTranscriptTailBytes, &real, &error));
  CHECK(real.cmd == "pwd");
  CHECK_FALSE(real.workdir);
  CHECK_FALSE(real.shell);
}

TEST_CASE("codex call: no such call, no call id, no transcript path: deny", "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(dir, {kMeta, call_line("call_0", R"({"cmd":"ls"})"), kOutput});
  CodexShellCall real;
  HookError error;
  CHECK_FALSE(read_codex_shell_call(path, "call_9", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMissing);
  // The output item carries call_1 too; only a function_call counts.
  CHECK_FALSE(read_codex_shell_call(path, "call_1", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMissing);
  CHECK_FALSE(read_codex_shell_call(path, "", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMissing);
  CHECK_FALSE(read_codex_shell_call("", "call_0", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexTranscript);

  auto c = complete(codex_bash("ls", path, "call_9"));
  CHECK_FALSE(c.ok);
  CHECK(c.error.code == kCodexCallMissing);
}

TEST_CASE("codex call: workdir becomes the cwd, joined to the hook cwd when relative",
          "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(
      dir,
      {call_line(
           "call_abs",
           R"({"cmd":"touch warden-unit.service","workdir":"/home/user/.config/systemd/user"})"),
       call_line("call_rel", R"({"cmd":"ls","workdir":"src/../lib/"})"),
       call_line("call_up", R"({"cmd":"ls","workdir":"../.."})"),
       call_line("call_tilde", R"({"cmd":"ls","workdir":"~/.ssh"})"),
       call_line("call_none", R"({"cmd":"ls"})")});
  auto abs = complete(codex_bash("touch warden-unit.service", path, "call_abs"));
  REQUIRE(abs.ok);
  CHECK(payload_string(abs, "cwd") == "/home/user/.config/systemd/user");
  CHECK(payload_string(abs, "workdir") == "/home/user/.config/systemd/user");
  CHECK(payload_string(abs, "command") == "touch warden-unit.service");
  CHECK(std::string(abs.proposal["target"].GetString()) == "shell");

  auto rel = complete(codex_bash("ls", path, "call_rel"));
  REQUIRE(rel.ok);
  CHECK(payload_string(rel, "cwd") == "/home/user/project/lib");
  CHECK(payload_string(rel, "workdir") == "src/../lib/");

  auto up = complete(codex_bash("ls", path, "call_up"));
  REQUIRE(up.ok);
  CHECK(payload_string(up, "cwd") == "/home");

  // Codex does not expand "~" in workdir (measured): it is a directory named "~" in the cwd.
  auto tilde = complete(codex_bash("ls", path, "call_tilde"));
  REQUIRE(tilde.ok);
  CHECK(payload_string(tilde, "cwd") == "/home/user/project/~/.ssh");

  auto none = complete(codex_bash("ls", path, "call_none"));
  REQUIRE(none.ok);
  CHECK(payload_string(none, "cwd") == "/home/user/project");
  CHECK(payload_string(none, "workdir") == "<absent>");

  // A relative workdir with no hook cwd cannot be placed.
  auto nocwd = complete(codex_bash("ls", path, "call_rel", ""));
  CHECK_FALSE(nocwd.ok);
  CHECK(nocwd.error.code == kCodexCallArguments);
}

TEST_CASE("codex call: a shell that is not bash is refused; bash is kept", "[agents][codex]") {
  TempDir dir;
  // A file named bash that is dash (a copy), a link named bash to dash, a link to bash.
  const std::string fake = (dir.path() / "fake").string(), link = (dir.path() / "link").string(),
                    good = (dir.path() / "good").string();
  std::filesystem::create_directories(fake);
  std::filesystem::create_directories(link);
  std::filesystem::create_directories(good);
  std::filesystem::copy_file("/bin/dash", fake + "/bash");
  std::filesystem::create_symlink("/bin/dash", link + "/bash");
  std::filesystem::create_symlink("/bin/bash", good + "/bash");
  const auto path = write_rollout(
      dir, {call_line("py", R"J({"cmd":"import os; os.system('id')","shell":"python3"})J"),
            call_line("pypath", R"({"cmd":"import os","shell":"/usr/bin/python3"})"),
            call_line("env", R"({"cmd":"ls","shell":"/usr/bin/env"})"),
            call_line("sh", R"({"cmd":"ls","shell":"/bin/sh"})"),
            call_line("shname", R"({"cmd":"ls","shell":"sh"})"),
            call_line("zsh", R"({"cmd":"ls","shell":"zsh"})"),
            call_line("dash", R"({"cmd":"ls","shell":"/usr/bin/dash"})"),
            call_line("ksh", R"({"cmd":"ls","shell":"ksh"})"),
            call_line("copy", R"({"cmd":"ls","shell":")" + fake + R"(/bash"})"),
            call_line("link", R"({"cmd":"ls","shell":")" + link + R"(/bash"})"),
            call_line("relative", R"({"cmd":"ls","shell":"bin/bash"})"),
            call_line("bash", R"({"cmd":"ls","shell":"/bin/bash"})"),
            call_line("bashname", R"({"cmd":"ls","shell":"bash"})"),
            call_line("usrbash", R"({"cmd":"ls","shell":"/usr/bin/bash"})"),
            call_line("goodlink", R"({"cmd":"ls","shell":")" + good + R"(/bash"})"),
            call_line("absent", R"({"cmd":"ls"})")});
  for (auto [id, cmd] : {std::pair{"py", "import os; os.system('id')"},
                         {"pypath", "import os"},
                         {"env", "ls"},
                         {"sh", "ls"},
                         {"shname", "ls"},
                         {"zsh", "ls"},
                         {"dash", "ls"},
                         {"ksh", "ls"},
                         {"copy", "ls"},
                         {"link", "ls"},
                         {"relative", "ls"}}) {
    auto c = complete(codex_bash(cmd, path, id));
    INFO(id << ": " << c.error.message);
    CHECK_FALSE(c.ok);
    CHECK(c.error.code == kCodexShell);
  }
  const std::string good_bash = good + "/bash";  // outlives the list below
  for (auto [id, shell] : {std::pair{"bash", "/bin/bash"},
                           {"bashname", "bash"},
                           {"usrbash", "/usr/bin/bash"},
                           {"goodlink", good_bash.c_str()},
                           {"absent", "<absent>"}}) {
    auto c = complete(codex_bash("ls", path, id));
    INFO(id << ": " << c.error.message);
    REQUIRE(c.ok);
    CHECK(payload_string(c, "shell") == shell);
    CHECK(payload_string(c, "command") == "ls");
  }
}

TEST_CASE("codex shell: which shell Codex would run, and whether it is bash", "[agents][codex]") {
  TempDir dir;
  const std::string ws = dir.path().string();
  ShellEnvironment env;
  env.login_shell = "/bin/bash";
  env.path = "/usr/bin:/bin";
  std::string why;
  CHECK(codex_shell_is_bash(std::nullopt, ws, env, &why));
  CHECK(codex_shell_is_bash(std::string("bash"), ws, env, &why));
  // Blanks around the name: Codex versions read it differently (trimmed, or as no bash).
  CHECK_FALSE(codex_shell_is_bash(std::string("/bin/bash\n"), ws, env, &why));
  CHECK_FALSE(codex_shell_is_bash(std::string(" bash"), ws, env, &why));
  // The user's own shell runs a call without `shell`: it must be bash too.
  for (const char* login : {"/bin/sh", "/usr/bin/zsh", "/bin/zsh", "sh"}) {
    INFO(login);
    env.login_shell = login;
    CHECK_FALSE(codex_shell_is_bash(std::nullopt, ws, env, &why));
    CHECK(why.find(login) != std::string::npos);
  }
  // A login shell Codex does not know (fish, nologin, dash) makes it fall back to bash.
  env.login_shell = "/usr/sbin/nologin";
  CHECK(codex_shell_is_bash(std::nullopt, ws, env, &why));
  env.env_shell = "/bin/zsh";  // $SHELL, which other Codex versions read
  CHECK_FALSE(codex_shell_is_bash(std::nullopt, ws, env, &why));
  env.env_shell.reset();
  // A "bash" on PATH that is dash: Codex's fallback for a missing path would run it.
  std::filesystem::create_directories(ws + "/bin");
  std::filesystem::create_symlink("/bin/dash", ws + "/bin/bash");
  env.path = ws + "/bin:/usr/bin:/bin";
  CHECK_FALSE(codex_shell_is_bash(std::string("bash"), "/nonexistent", env, &why));
  CHECK(why.find("dash") != std::string::npos);
  env.path = "/usr/bin:/bin";
  // A file named bash in the working directory: Codex runs it for shell "bash". Even a copy of
  // bash itself there is not the system's bash.
  std::filesystem::copy_file("/bin/bash", ws + "/bash");
  CHECK_FALSE(codex_shell_is_bash(std::string("bash"), ws, env, &why));
  CHECK(why.find("system's bash") != std::string::npos);
  std::filesystem::remove(ws + "/bash");
  std::ofstream(ws + "/bash") << "#!/bin/sh\necho GNU bash, version\n";
  std::filesystem::permissions(ws + "/bash", std::filesystem::perms::owner_all);
  CHECK_FALSE(codex_shell_is_bash(std::string("bash"), ws, env, &why));
  CHECK(why.find(ws + "/bash") != std::string::npos);
  // is_bash_binary by itself.
  CHECK(is_bash_binary("/bin/bash", &why));
  CHECK_FALSE(is_bash_binary("/bin/sh", &why));
  CHECK(why.find("dash") != std::string::npos);
  CHECK_FALSE(is_bash_binary("/nonexistent/bash", &why));
}

TEST_CASE("codex call: the hook's command must be the transcript's cmd", "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(dir, {call_line("call_1", R"({"cmd":"rm -rf ~"})")});
  auto c = complete(codex_bash("ls", path, "call_1"));
  CHECK_FALSE(c.ok);
  CHECK(c.error.code == kCodexCallMismatch);
  // Differing only by a trailing newline is a different command too.
  auto nl = complete(codex_bash("rm -rf ~\n", path, "call_1"));
  CHECK_FALSE(nl.ok);
  CHECK(nl.error.code == kCodexCallMismatch);
}

TEST_CASE(
    "codex call: the same call_id twice with different arguments is refused; identical is fine",
    "[agents][codex]") {
  TempDir dir;
  const auto same = write_rollout(
      dir, {call_line("c", R"({"cmd":"ls"})"), kOutput, call_line("c", R"({"cmd":"ls"})")},
      "same.jsonl");
  const auto differ = write_rollout(
      dir, {call_line("c", R"({"cmd":"ls"})"), call_line("c", R"({"cmd":"ls","workdir":"/etc"})")},
      "differ.jsonl");
  CodexShellCall real;
  HookError error;
  CHECK(read_codex_shell_call(same, "c", kCodexTranscriptTailBytes, &real, &error));
  CHECK_FALSE(read_codex_shell_call(differ, "c", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMismatch);
}

TEST_CASE("codex call: tty, unknown or mistyped arguments and other tools are refused",
          "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(
      dir, {call_line("tty", R"({"cmd":"sqlite3 db","tty":true})"),
            call_line("notty", R"({"cmd":"ls","tty":false,"login":true})"),
            call_line("unknown", R"({"cmd":"ls","env":{"LD_PRELOAD":"/tmp/x.so"}})"),
            call_line("badtype", R"({"cmd":"ls","workdir":["/etc"]})"),
            call_line("badtty", R"({"cmd":"ls","tty":"yes"})"),
            call_line("nocmd", R"({"workdir":"/tmp"})"), call_line("arraycmd", R"({"cmd":["ls"]})"),
            call_line("notjson", R"({"cmd":"ls")"),
            call_line("shell", R"({"command":["bash","-lc","ls"]})", "shell"),
            call_line("shell_command", R"({"command":"ls"})", "shell_command")});
  auto tty = complete(codex_bash("sqlite3 db", path, "tty"));
  CHECK_FALSE(tty.ok);
  CHECK(tty.error.code == kCodexTty);

  auto notty = complete(codex_bash("ls", path, "notty"));
  REQUIRE(notty.ok);
  CHECK(notty.proposal["payload"]["tty"].IsFalse());
  CHECK(notty.proposal["payload"]["login"].IsTrue());

  for (const char* id :
       {"unknown", "badtype", "badtty", "nocmd", "arraycmd", "notjson", "shell", "shell_command"}) {
    auto c = complete(codex_bash("ls", path, id));
    INFO(id << ": " << c.error.message);
    CHECK_FALSE(c.ok);
    CHECK(c.error.code == kCodexCallArguments);
  }
}

TEST_CASE(
    "codex call: sandbox_permissions is kept for the rules; justification becomes the explanation",
    "[agents][codex]") {
  TempDir dir;
  const auto path = write_rollout(
      dir,
      {call_line(
          "esc",
          R"({"cmd":"ls","sandbox_permissions":"require_escalated","justification":"list the build output"})")});
  auto c = complete(codex_bash("ls", path, "esc"));
  REQUIRE(c.ok);
  CHECK(payload_string(c, "sandbox_permissions") == "require_escalated");
  CHECK(std::string(c.proposal["explanation"].GetString()) == "list the build output");
}

TEST_CASE("codex call: only the tail of a huge rollout is read", "[agents][codex]") {
  TempDir dir;
  std::vector<std::string> lines{call_line("early", R"({"cmd":"ls"})")};
  const std::string filler =
      R"({"type":"event_msg","payload":{"type":"agent_message","message":")" +
      std::string(64 * 1024, 'x') + "\"}}";
  for (int i = 0; i < 96; ++i) lines.push_back(filler);  // 6 MiB
  lines.push_back(call_line("late", R"({"cmd":"pwd"})"));
  const auto path = write_rollout(dir, lines);
  REQUIRE(fs::file_size(path) > kCodexTranscriptTailBytes);

  CodexShellCall real;
  HookError error;
  CHECK(read_codex_shell_call(path, "late", kCodexTranscriptTailBytes, &real, &error));
  CHECK(real.cmd == "pwd");
  CHECK_FALSE(read_codex_shell_call(path, "early", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMissing);

  // A tail that starts inside a line skips that fragment, even when the fragment would parse.
  const std::string line = call_line("cut", R"({"cmd":"ls"})");
  const auto small = write_rollout(dir, {line}, "small.jsonl");
  CHECK(read_codex_shell_call(small, "cut", line.size() + 1, &real, &error));
  CHECK_FALSE(read_codex_shell_call(small, "cut", line.size(), &real, &error));
  CHECK(error.code == kCodexCallMissing);
}

TEST_CASE("codex call: a transcript that is missing or not a regular file is refused",
          "[agents][codex]") {
  TempDir dir;
  CodexShellCall real;
  HookError error;
  CHECK_FALSE(read_codex_shell_call((dir.path() / "absent.jsonl").string(), "c",
                                    kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexTranscript);
  CHECK_FALSE(
      read_codex_shell_call(dir.path().string(), "c", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexTranscript);
  const auto fifo = (dir.path() / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(read_codex_shell_call(fifo, "c", kCodexTranscriptTailBytes, &real,
                                    &error));  // no wait for a writer
  CHECK(error.code == kCodexTranscript);
  CHECK_FALSE(read_codex_shell_call("/dev/null", "c", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexTranscript);
  // A symlink to a regular file is read (the file is what counts).
  const auto target = write_rollout(dir, {call_line("c", R"({"cmd":"ls"})")});
  fs::create_symlink(target, dir.path() / "link.jsonl");
  CHECK(read_codex_shell_call((dir.path() / "link.jsonl").string(), "c", kCodexTranscriptTailBytes,
                              &real, &error));
}

TEST_CASE("codex call: malformed lines are skipped, the call is still found", "[agents][codex]") {
  TempDir dir;
  const std::string bad_utf8 =
      std::string("{\"type\":\"response_item\",\"x\":\"") + "\xff\xfe" + "\"}";
  const auto path = write_rollout(
      dir, {"not json at all", "", "[1,2,3]", "\"a string\"", bad_utf8,
            R"({"type":"response_item","payload":"not an object"})",
            R"({"type":"response_item","payload":{"type":"function_call","call_id":7}})",
            call_line("c", R"({"cmd":"ls"})"),
            R"({"type":"response_item","payload":{"type":"function_call","call_id":"half)"});
  CodexShellCall real;
  HookError error;
  REQUIRE(read_codex_shell_call(path, "c", kCodexTranscriptTailBytes, &real, &error));
  CHECK(real.cmd == "ls");
  // A call whose line is cut short is not found.
  CHECK_FALSE(read_codex_shell_call(path, "half", kCodexTranscriptTailBytes, &real, &error));
  CHECK(error.code == kCodexCallMissing);
}

TEST_CASE("codex hook with the shipped rules: a hidden workdir is judged where it runs",
          "[agents][codex]") {
  TempDir dir;
  const fs::path home = dir.path() / "home";
  const fs::path project = home / "project";
  fs::create_directories(project / "src");
  const std::string unit_dir = (home / ".config/systemd/user").string();
  const auto path = write_rollout(
      dir,
      {call_line("trap", "{\"cmd\":\"touch warden-unit.service\",\"workdir\":\"" + unit_dir +
                             "\",\"justification\":\"create the unit\"}"),
       call_line("plain",
                 R"({"cmd":"touch warden-unit.service","justification":"create the unit"})"),
       call_line("sub", R"({"cmd":"ls","workdir":"src","justification":"list the sources"})")});
  DeciderConfig config;
  config.rules = {warden::agents::testing::kShippedRules};
  config.workspace = project.string();
  config.home = home.string();
  std::string decider_error;
  auto decider = make_decider(config, &decider_error);
  INFO(decider_error);
  REQUIRE(decider);
  HookRunOptions options;
  options.agent = HookAgent::Codex;
  options.on_approval_required = OnApprovalRequired::Deny;

  auto input = [&](const std::string& command, const std::string& id) {
    rapidjson::Document d;
    d.SetObject();
    auto& a = d.GetAllocator();
    auto s = [&](const std::string& v) { return rapidjson::Value(v.c_str(), a); };
    d.AddMember("session_id", s("s-1"), a);
    d.AddMember("transcript_path", s(path), a);
    d.AddMember("cwd", s(project.string()), a);
    d.AddMember("hook_event_name", "PreToolUse", a);
    d.AddMember("permission_mode", "bypassPermissions", a);
    d.AddMember("tool_name", "Bash", a);
    rapidjson::Value ti(rapidjson::kObjectType);
    ti.AddMember("command", s(command), a);
    d.AddMember("tool_input", ti, a);
    d.AddMember("tool_use_id", s(id), a);
    return warden::protocol::to_json_text(d);
  };
  auto trap = run_hook(input("touch warden-unit.service", "trap"), decider.get(), "", options);
  INFO(trap.stdout_json);
  CHECK(trap.exit_code == 2);
  CHECK(trap.stdout_json.find("\"deny\"") != std::string::npos);
  CHECK(trap.stdout_json.find("no decision could be made") == std::string::npos);  // a rule's deny
  CHECK(trap.stdout_json.find(".config/systemd/user") != std::string::npos);

  auto plain = run_hook(input("touch warden-unit.service", "plain"), decider.get(), "", options);
  INFO(plain.stdout_json);
  CHECK(plain.exit_code == 0);
  CHECK(plain.stdout_json.find("\"allow\"") != std::string::npos);

  auto sub = run_hook(input("ls", "sub"), decider.get(), "", options);
  INFO(sub.stdout_json);
  CHECK(sub.exit_code == 0);

  // The hook says ls where the transcript says touch: two interpretations, deny.
  auto mismatch = run_hook(input("ls", "trap"), decider.get(), "", options);
  CHECK(mismatch.exit_code == 2);
  CHECK(mismatch.stdout_json.find(kCodexCallMismatch) != std::string::npos);

  // No transcript at all: deny naming the cause.
  auto gone = run_hook(input("ls", "absent"), decider.get(), "", options);
  CHECK(gone.exit_code == 2);
  CHECK(gone.stdout_json.find(kCodexCallMissing) != std::string::npos);
}

TEST_CASE("codex call: a null transcript_path (codex exec --ephemeral) denies Bash only",
          "[agents][codex]") {
  const std::string base =
      R"({"session_id":"s","turn_id":"t","cwd":"/home/user/project","hook_event_name":"PreToolUse",)"
      R"("model":"m","permission_mode":"bypassPermissions","tool_use_id":"call_1",)";
  HookCall bash;
  HookError error;
  REQUIRE(parse_hook_call(
      base + R"("transcript_path":null,"tool_name":"Bash","tool_input":{"command":"ls"}})", &bash,
      &error));
  CHECK(bash.transcript_path.empty());
  auto c = complete(bash);
  CHECK_FALSE(c.ok);
  CHECK(c.error.code == kCodexTranscript);

  // Other tools do not need the rollout: a null transcript_path is no reason to refuse them.
  HookCall patch;
  REQUIRE(parse_hook_call(
      base +
          R"("transcript_path":null,"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch"}})",
      &patch, &error));
  std::string json;
  CHECK(hook_proposal(patch, "codex", &json, &error));

  HookCall bad;
  CHECK_FALSE(parse_hook_call(
      base + R"("transcript_path":7,"tool_name":"Bash","tool_input":{"command":"ls"}})", &bad,
      &error));
  CHECK(error.code == kHookInputShape);
}

TEST_CASE("codex call: arguments with a duplicate name are refused, whichever one Codex ran",
          "[agents][codex][redteam]") {
  TempDir dir;
  const auto path =
      write_rollout(dir, {call_line("dup", R"({"cmd":"ls","cmd":"rm -r /home/user"})"),
                          call_line("dupdeep", R"({"cmd":"ls","workdir":"/tmp","workdir":"/"})")});
  for (const char* command : {"ls", "rm -r /home/user"}) {
    auto c = complete(codex_bash(command, path, "dup"));
    INFO(command << ": " << c.error.message);
    CHECK_FALSE(c.ok);
    CHECK(c.error.code == kCodexCallArguments);
    CHECK(c.error.message.find("duplicate") != std::string::npos);
  }
  auto c = complete(codex_bash("ls", path, "dupdeep"));
  CHECK_FALSE(c.ok);
  CHECK(c.error.code == kCodexCallArguments);
}
