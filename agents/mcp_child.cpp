// The MCP server as a child process (agents/mcp_child.h).
#include "agents/mcp_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "bindings/spawn.h"

namespace warden::agents::mcp {

namespace {

void close_fd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

ChildProcess::~ChildProcess() {
  close_stdin();
  if (pid_ > 0 && !exited_) terminate(std::chrono::milliseconds(500));
  close_fd(&out_);
}

bool ChildProcess::start(const std::vector<std::string>& argv, std::string* error) {
  if (argv.empty()) {
    *error = "no command to start";
    return false;
  }
  spawn::Program program;
  program.argv = argv;
  program.pipe_stdin = true;
  program.pipe_stdout = true;
  program.death_signal = SIGTERM;
  spawn::Child child = spawn::program(program);
  const spawn::Started& s = child.started;
  if (!s.started) {
    if (s.step == spawn::kStepPipe)
      *error = strerror(s.error);
    else if (s.step == spawn::kStepFork)
      *error = std::string("fork: ") + strerror(s.error);
    else
      *error = "cannot run " + argv[0] + ": " + strerror(s.error);
    return false;
  }
  pid_ = s.pid;
  in_ = child.in.release();
  out_ = child.out.release();
  ::fcntl(in_, F_SETFL, ::fcntl(in_, F_GETFL) | O_NONBLOCK);
  return true;
}

void ChildProcess::close_stdin() { close_fd(&in_); }

bool ChildProcess::poll_exit() {
  if (exited_) return true;
  if (pid_ <= 0) return false;
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid_) {
    exited_ = true;
    status_ = status;
  }
  return exited_;
}

bool ChildProcess::wait_exit(std::chrono::milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!poll_exit()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

void ChildProcess::terminate(std::chrono::milliseconds grace) {
  if (pid_ <= 0) return;
  if (!exited_) ::kill(-pid_, SIGTERM);
  if (!wait_exit(grace)) {
    ::kill(-pid_, SIGKILL);
    wait_exit(std::chrono::milliseconds(5000));
  }
  ::kill(-pid_, SIGKILL);  // whatever the server started and left behind in its group
}

std::string ChildProcess::status_text() const {
  if (!exited_) return "still running";
  if (WIFEXITED(status_)) return "status " + std::to_string(WEXITSTATUS(status_));
  if (WIFSIGNALED(status_)) return "signal " + std::to_string(WTERMSIG(status_));
  return "unknown status";
}

}  // namespace warden::agents::mcp
