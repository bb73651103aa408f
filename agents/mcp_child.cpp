// The MCP server as a child process (agents/mcp_child.h).
#include "agents/mcp_child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

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
  int in[2], out[2], report[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return *error = strerror(errno), false;
  if (::pipe2(out, O_CLOEXEC) != 0) return *error = strerror(errno), false;
  if (::pipe2(report, O_CLOEXEC) != 0) return *error = strerror(errno), false;
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) {
    *error = std::string("fork: ") + strerror(errno);
    for (int fd : {in[0], in[1], out[0], out[1], report[0], report[1]}) ::close(fd);
    return false;
  }
  if (pid == 0) {
    // Only async-signal-safe calls from here to exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    struct sigaction dfl = {};
    dfl.sa_handler = SIG_DFL;
    for (int s : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) ::sigaction(s, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::execvp(args[0], args.data());
    int e = errno;
    ssize_t ignored = ::write(report[1], &e, sizeof e);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here, so the group exists before anyone signals it
  ::close(in[0]);
  ::close(out[1]);
  ::close(report[1]);
  pid_ = pid;
  in_ = in[1];
  out_ = out[0];
  ::fcntl(in_, F_SETFL, ::fcntl(in_, F_GETFL) | O_NONBLOCK);

  int e = 0;
  ssize_t n;
  do n = ::read(report[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    *error = "cannot run " + argv[0] + ": " + strerror(e);
    wait_exit(std::chrono::milliseconds(5000));
    close_stdin();
    close_fd(&out_);
    return false;
  }
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
