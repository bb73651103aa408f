// `hook doctor`'s probe: runs the configured hook command as the agent would (sh -c, a
// PreToolUse JSON on stdin) and reads its answer the way the agent does.
#include <fcntl.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "agents/codex_call.h"
#include "agents/hook_doctor_checks.h"
#include "bindings/json.h"
#include "bindings/spawn.h"

namespace warden::agents {

namespace {

std::string probe_input(HookAgent agent, const std::string& cwd, const std::string& command,
                        const std::string& transcript_path) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("session_id");
  w.String("warden-hook-doctor");
  w.Key("transcript_path");
  w.String(transcript_path.c_str());
  w.Key("cwd");
  w.String(cwd.c_str());
  w.Key("hook_event_name");
  w.String("PreToolUse");
  w.Key("tool_name");
  w.String("Bash");
  w.Key("tool_input");
  w.StartObject();
  w.Key("command");
  w.String(command.c_str());
  if (agent == HookAgent::ClaudeCode) {  // Codex's shell tool has no description
    w.Key("description");
    w.String("warden hook doctor probe");
  }
  w.EndObject();
  w.Key("tool_use_id");
  w.String("warden-hook-doctor-probe");
  w.Key("permission_mode");
  w.String("default");
  if (agent == HookAgent::Codex) {
    w.Key("turn_id");
    w.String("warden-hook-doctor");
    w.Key("model");
    w.String("probe");
  }
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

// Reads the decision from the hook's stdout JSON; exit 2 denies with stderr as the reason.
void read_answer(ProbeAnswer* a) {
  rapidjson::Document doc;
  // The hook's stdout: outside text, the shared limits.
  if (!json::parse(a->stdout_text, &doc) && doc.IsObject() && doc.HasMember("hookSpecificOutput") &&
      doc["hookSpecificOutput"].IsObject()) {
    const auto& h = doc["hookSpecificOutput"];
    if (h.HasMember("permissionDecision") && h["permissionDecision"].IsString()) {
      a->decision = h["permissionDecision"].GetString();
      a->json = true;
    }
    if (h.HasMember("permissionDecisionReason") && h["permissionDecisionReason"].IsString()) {
      a->reason = h["permissionDecisionReason"].GetString();
    }
  }
  if (a->exit_code == 2) {
    a->decision = "deny";  // both agents deny on exit 2, whatever stdout says
    if (a->reason.empty()) a->reason = a->stderr_text;
  } else if (a->exit_code != 0) {
    a->decision.clear();  // a non-blocking error: the agent would go on without the hook
  }
  if (a->decision != "allow" && a->decision != "deny" && a->decision != "ask") a->decision.clear();
  for (char& c : a->reason) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!a->reason.empty() && a->reason.back() == ' ') a->reason.pop_back();
}

}  // namespace

namespace doctor {

ChildOutput run_child(const std::vector<std::string>& argv, const std::string& cwd,
                      const std::string& input, std::chrono::milliseconds deadline,
                      const std::function<bool(const std::string&)>& done) {
  ChildOutput r;
  spawn::Program program;
  program.argv = argv;
  program.cwd = cwd;
  program.pipe_stdin = program.pipe_stdout = program.pipe_stderr = true;
  spawn::Child child = spawn::program(program);
  const spawn::Started& s = child.started;
  if (!s.started && (s.step == spawn::kStepPipe || s.step == spawn::kStepFork)) {
    r.failure =
        std::string(s.step == spawn::kStepPipe ? "pipe: " : "fork: ") + std::strerror(s.error);
    return r;
  }
  if (!s.started) {
    // As the agent's shell would report it: 126 when the directory cannot be entered, 127
    // when the program cannot be run.
    r.ran = true;
    r.exit_code = s.step == spawn::kStepChdir ? 126 : 127;
    return r;
  }
  const pid_t pid = s.pid;
  void (*old_pipe)(int) = ::signal(SIGPIPE, SIG_IGN);
  for (std::size_t at = 0; at < input.size();) {  // a few hundred bytes: fits the pipe
    ssize_t n = ::write(child.in.get(), input.data() + at, input.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // it stopped reading; its answer says why
    at += static_cast<std::size_t>(n);
  }
  if (!done) child.in = spawn::Fd();  // a server keeps its stdin open until we stop it

  pollfd fds[2] = {{child.out.get(), POLLIN, 0}, {child.err.get(), POLLIN, 0}};
  std::string* into[2] = {&r.out, &r.err};
  int open = 2;
  const auto until = std::chrono::steady_clock::now() + deadline;
  bool stop = false;
  while (open > 0 && !stop) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    int ready = left.count() > 0 ? ::poll(fds, 2, static_cast<int>(left.count())) : 0;
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      r.timed_out = true;
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !fds[i].revents) continue;
      char buf[8192];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0 && into[i]->size() < (4u << 20)) {
        into[i]->append(buf, static_cast<std::size_t>(n));
        if (i == 0 && done && done(r.out)) stop = true;
      } else if (n <= 0) {
        fds[i].fd = -1;
        --open;
      }
    }
  }
  if (done) child.in = spawn::Fd();
  ::signal(SIGPIPE, old_pipe);
  if (r.timed_out || stop) ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (r.timed_out) {
    r.failure = "no answer within " + std::to_string(deadline.count()) + " ms";
    return r;
  }
  r.ran = true;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

}  // namespace doctor

ProbeAnswer probe_hook(HookAgent agent, const std::string& command, const std::string& cwd,
                       const std::string& shell_command, std::chrono::milliseconds deadline) {
  // Codex: the hook reads the call's real arguments from Codex's rollout (agents/codex_call.h),
  // so the probe writes a one-line rollout for its call, removed after the run.
  std::string transcript;
  if (agent == HookAgent::Codex) {
    const char* tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && *tmp ? tmp : "/tmp") + "/warden-doctor-rollout.XXXXXX";
    int fd = ::mkstemp(path.data());
    if (fd >= 0) {
      const std::string line = codex_exec_command_line("warden-hook-doctor-probe", shell_command);
      bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      ::close(fd);
      if (ok)
        transcript = path;
      else
        ::unlink(path.c_str());
    }
  }
  auto run =
      doctor::run_child({"/bin/sh", "-c", command}, cwd,
                        probe_input(agent, cwd, shell_command, transcript), deadline, nullptr);
  if (!transcript.empty()) ::unlink(transcript.c_str());
  ProbeAnswer a;
  a.ran = run.ran;
  a.failure = run.failure;
  a.exit_code = run.exit_code;
  a.stdout_text = std::move(run.out);
  a.stderr_text = std::move(run.err);
  if (a.ran) read_answer(&a);
  return a;
}

}  // namespace warden::agents
