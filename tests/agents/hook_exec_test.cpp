// The `warden exec` line of an approved Bash call (agents/hook_exec.h) and the updatedInput
// that carries it (agents/hook_answer.h): every word survives a real bash exactly — quotes,
// newlines, $(…), backticks, bytes that are not UTF-8 — and the answer keeps Claude's input.
#include "agents/hook_exec.h"

#include <fcntl.h>
#include <rapidjson/document.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "agents/hook_answer.h"
#include "agents/hook_proposal.h"

using namespace warden;
using namespace warden::agents;

namespace {

// Runs /bin/bash -c SCRIPT and returns its stdout (the script's words, NUL-terminated each).
std::string bash_output(const std::string& script) {
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::execl("/bin/bash", "bash", "-c", script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;)
    text.append(buf, static_cast<std::size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return text;
}

// The words bash makes of LINE: `words LINE` with words() printing each argument.
std::vector<std::string> bash_words(const std::string& line) {
  std::string text = bash_output("words() { printf '%s\\0' \"$@\"; }; words " + line);
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\0', at);
    REQUIRE(end != std::string::npos);
    out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

const std::vector<std::string> kHostile = {
    "it's",
    "'",
    "''''",
    "\"double\" and 'single'",
    "line one\nline two\n",
    "$(touch /tmp/warden-pwned)",
    "`id`",
    "${HOME} $HOME ~ *",
    "a\\'b\\\\",
    "!! !$ history",
    "; rm -r x & y | z > w",
    "\xff\xfe not UTF-8 \xc3",
    "tab\there\rcarriage",
    "",
    " ",
    "-c",
    "--decision",
    "=x",
};

HookCall exec_bash_call(const std::string& command, const std::string& mode = "default") {
  HookCall call;
  call.session_id = "s";
  call.cwd = "/home/user/project";
  call.hook_event_name = "PreToolUse";
  call.tool_name = "Bash";
  call.permission_mode = mode;
  auto& a = call.tool_input.GetAllocator();
  call.tool_input.SetObject();
  call.tool_input.AddMember(
      "command",
      rapidjson::Value(command.data(), static_cast<rapidjson::SizeType>(command.size()), a), a);
  call.tool_input.AddMember("description", "run it", a);
  call.tool_input.AddMember("timeout", 120000, a);
  return call;
}

std::string exec_proposal_of(const HookCall& call) {
  std::string p;
  HookError e;
  REQUIRE(hook_proposal(call, "claude-code", &p, &e));
  return p;
}

Verdict approve(const std::string& id = "dec-1") {
  Verdict v;
  v.ok = true;
  v.outcome = Outcome::Approve;
  v.reason = "fine";
  v.rules = {"r1"};
  v.decision_id = id;
  return v;
}

ExecWrap daemon_wrap() {
  ExecWrap w;
  w.enabled = true;
  w.argv = {"/opt/my warden/bin/warden's",      "exec",         "--addr",
            "unix:/run/warden dir/warden.sock", "--token-file", "/etc/warden/agent token"};
  return w;
}

ExecWrap in_process_wrap() {
  ExecWrap w;
  w.enabled = true;
  w.in_process = true;
  w.argv = {"/usr/bin/warden", "exec", "--rules", "/etc/warden/rules $(x)", "--workspace", "/w s"};
  return w;
}

}  // namespace

TEST_CASE("hook exec: shell_word survives bash byte for byte", "[agents][hook][exec]") {
  for (const std::string& word : kHostile) {
    INFO("word: " << word);
    auto words = bash_words(shell_word(word));
    REQUIRE(words.size() == 1);
    CHECK(words[0] == word);
  }
  // Several words in one line stay apart.
  std::string line;
  for (const std::string& w : kHostile) line += (line.empty() ? "" : " ") + shell_word(w);
  CHECK(bash_words(line) == kHostile);
  CHECK(shell_word("plain-word_1.2/x:y") == "plain-word_1.2/x:y");
  CHECK(shell_word("a=b") == "'a=b'");  // never an assignment
}

TEST_CASE("hook exec: the in-process line passes the command as one argument",
          "[agents][hook][exec]") {
  const ExecWrap wrap = in_process_wrap();
  for (const std::string& command : kHostile) {
    INFO("command: " << command);
    std::string line, error;
    REQUIRE(exec_command_line(wrap, "", command, &line, &error));
    std::vector<std::string> expected = wrap.argv;
    expected.insert(expected.end(), {"--", "/bin/bash", "-c", command});
    CHECK(bash_words(line) == expected);
    // What warden exec then binds to: the command itself, byte for byte.
    std::vector<std::string> after(expected.end() - 3, expected.end());
    CHECK(exec_command_text(after) == command);
  }
}

TEST_CASE("hook exec: the daemon line names the decision and carries no command",
          "[agents][hook][exec]") {
  const ExecWrap wrap = daemon_wrap();
  std::string line, error;
  REQUIRE(exec_command_line(wrap, "01J9-decision_id", "rm -r / $(evil)", &line, &error));
  std::vector<std::string> expected = wrap.argv;
  expected.insert(expected.end(), {"--decision", "01J9-decision_id"});
  CHECK(bash_words(line) == expected);
  CHECK(line.find("evil") == std::string::npos);
  // No decision id: no line (the hook then denies).
  CHECK_FALSE(exec_command_line(wrap, "", "ls", &line, &error));
  CHECK(error.find("decision_id") != std::string::npos);
}

TEST_CASE("hook exec: a NUL byte is refused, never cut short", "[agents][hook][exec]") {
  std::string line, error;
  CHECK_FALSE(exec_command_line(in_process_wrap(), "", std::string("echo a\0; rm -r b", 16), &line,
                                &error));
  CHECK(error.find("NUL") != std::string::npos);
}

TEST_CASE("hook exec: an argv stands for the shell line bash reads back into it",
          "[agents][hook][exec]") {
  CHECK(exec_command_text({"bash", "-c", "ls | wc"}) == "ls | wc");
  CHECK(exec_command_text({"/bin/bash", "-c", "x"}) == "x");
  CHECK(exec_command_text({"/usr/bin/bash", "-c", "x"}) == "x");
  // sh is not bash (it parses $'…' otherwise): its line is the wrapper itself.
  CHECK(exec_command_text({"sh", "-c", "ls"}) == "sh -c ls");
  CHECK(exec_command_text({"bash", "-c", "ls", "extra"}) == "bash -c ls extra");
  CHECK(exec_command_text({"echo", "it's here"}) == "echo 'it'\\''s here'");
  std::vector<std::string> argv = {"printf", "%s\\n", "a b", "$(x)", "\xff"};
  CHECK(bash_words(exec_command_text(argv)) == argv);
}

TEST_CASE("hook exec: an approved Bash call is allowed with an updatedInput through warden exec",
          "[agents][hook][exec]") {
  for (const std::string& command : kHostile) {
    INFO("command: " << command);
    auto call = exec_bash_call(command);
    HookAnswer a = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), approve(),
                                  OnApprovalRequired::Ask, in_process_wrap());
    CHECK(a.decision == "allow");
    CHECK(a.exit_code == 0);
    rapidjson::Document d;
    d.Parse(a.stdout_json.c_str());
    REQUIRE(d.IsObject());
    const auto& h = d["hookSpecificOutput"];
    CHECK(std::string(h["permissionDecision"].GetString()) == "allow");
    REQUIRE(h.HasMember("updatedInput"));
    const auto& in = h["updatedInput"];
    // Claude's other input fields are kept; only the command is replaced.
    CHECK(std::string(in["description"].GetString()) == "run it");
    CHECK(in["timeout"].GetInt() == 120000);
    CHECK(in.MemberCount() == 3);
    const std::string line(in["command"].GetString(), in["command"].GetStringLength());
    auto words = bash_words(line);
    REQUIRE(words.size() >= 4);
    CHECK(words.back() == command);
    CHECK(words[words.size() - 4] == "--");
  }
}

TEST_CASE("hook exec: the daemon form runs the decision, and a rule's rewrite stays bound to it",
          "[agents][hook][exec]") {
  auto call = exec_bash_call("echo old");
  Verdict v = approve("dec-42");
  v.rewritten = true;
  v.action_json =
      R"({"target":"shell","action":"run","payload":{"command":"echo new","cwd":"/home/user/project"}})";
  HookAnswer a = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), v,
                                OnApprovalRequired::Ask, daemon_wrap());
  REQUIRE(a.decision == "allow");
  rapidjson::Document d;
  d.Parse(a.stdout_json.c_str());
  const std::string line = d["hookSpecificOutput"]["updatedInput"]["command"].GetString();
  auto words = bash_words(line);
  REQUIRE(words.size() >= 2);
  CHECK(words[words.size() - 2] == "--decision");
  CHECK(words.back() == "dec-42");

  // In-process, the rewritten command is the one passed on.
  HookAnswer b = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), v,
                                OnApprovalRequired::Ask, in_process_wrap());
  d.Parse(b.stdout_json.c_str());
  CHECK(bash_words(d["hookSpecificOutput"]["updatedInput"]["command"].GetString()).back() ==
        "echo new");
}

TEST_CASE("hook exec: where no rewrite applies, the answer is as without it",
          "[agents][hook][exec]") {
  // Codex cannot take a rewrite: allowed as it is (its own sandbox holds it).
  auto call = exec_bash_call("ls");
  HookAnswer codex = answer_verdict(HookAgent::Codex, call, exec_proposal_of(call), approve(),
                                    OnApprovalRequired::Deny, daemon_wrap());
  CHECK(codex.decision == "allow");
  CHECK(codex.stdout_json.find("updatedInput") == std::string::npos);
  // Plan mode: Claude's own check decides ({}), as before.
  auto plan = exec_bash_call("ls", "plan");
  HookAnswer p = answer_verdict(HookAgent::ClaudeCode, plan, exec_proposal_of(plan), approve(),
                                OnApprovalRequired::Ask, daemon_wrap());
  CHECK(p.stdout_json == "{}");
  // Not a Bash call: no command to wrap.
  HookCall read;
  read.hook_event_name = "PreToolUse";
  read.tool_name = "Read";
  read.cwd = "/home/user/project";
  read.tool_input.SetObject();
  read.tool_input.AddMember("file_path", "/home/user/project/a", read.tool_input.GetAllocator());
  HookAnswer r = answer_verdict(HookAgent::ClaudeCode, read, exec_proposal_of(read), approve(),
                                OnApprovalRequired::Ask, daemon_wrap());
  CHECK(r.decision == "allow");
  CHECK(r.stdout_json.find("updatedInput") == std::string::npos);
  // A reject stays a deny.
  Verdict no = approve();
  no.outcome = Outcome::Reject;
  HookAnswer n = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), no,
                                OnApprovalRequired::Ask, daemon_wrap());
  CHECK(n.decision == "deny");
  CHECK(n.stdout_json.find("updatedInput") == std::string::npos);
}

TEST_CASE("hook exec: an approved call that cannot be wrapped is denied, never run unconfined",
          "[agents][hook][exec]") {
  auto call = exec_bash_call("ls");
  ExecWrap wrap = daemon_wrap();
  wrap.unusable = "the hook was given --token";
  HookAnswer a = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), approve(),
                                OnApprovalRequired::Ask, wrap);
  CHECK(a.decision == "deny");
  CHECK(a.exit_code == 2);
  CHECK(a.reason.find(kHookExec) != std::string::npos);
  // A daemon decision without an id cannot be run under.
  HookAnswer b = answer_verdict(HookAgent::ClaudeCode, call, exec_proposal_of(call), approve(""),
                                OnApprovalRequired::Ask, daemon_wrap());
  CHECK(b.decision == "deny");
  CHECK(b.reason.find(kHookExec) != std::string::npos);
  // In-process, a NUL byte in the command.
  auto nul = exec_bash_call(std::string("echo a\0b", 8));
  HookAnswer c = answer_verdict(HookAgent::ClaudeCode, nul, exec_proposal_of(nul), approve(),
                                OnApprovalRequired::Ask, in_process_wrap());
  CHECK(c.decision == "deny");
  CHECK(c.reason.find(kHookExec) != std::string::npos);
}
