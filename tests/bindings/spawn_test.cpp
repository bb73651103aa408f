// Starting child processes (bindings/spawn.h): a program with pipes on its standard
// descriptors, in a directory and a process group of its own, with clean signal state; a
// start that fails says at which step and why, reaps the child, and leaves no descriptor open.
#include "bindings/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/descriptors.h"

using namespace warden::spawn;
using warden::testing::DescriptorCap;
using warden::testing::open_descriptors;

namespace {

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

int exit_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The hexadecimal mask of /proc/PID/status's line `name` ("SigIgn"), or "".
std::string status_line(const std::string& status, const std::string& name) {
  const auto at = status.find(name + ":\t");
  if (at == std::string::npos) return "";
  const auto from = at + name.size() + 2;
  return status.substr(from, status.find('\n', from) - from);
}

void child_fails_at_42(const void*, int report) {
  errno = EACCES;
  fail(report, 42);
}

void child_returns(const void*, int) {}

}  // namespace

TEST_CASE("a program reads its stdin, writes stdout and stderr, and starts in its directory") {
  Program p;
  p.argv = {"/bin/sh", "-c", "cat; pwd; echo oops >&2; exit 3"};
  p.cwd = "/usr";
  p.pipe_stdin = p.pipe_stdout = p.pipe_stderr = true;
  Child c = program(p);
  REQUIRE(c.started.started);
  REQUIRE(c.in);
  REQUIRE(c.out);
  REQUIRE(c.err);
  CHECK(c.in.get() > 2);
  CHECK(::write(c.in.get(), "hello\n", 6) == 6);
  c.in = Fd();
  CHECK(read_all(c.out.get()) == "hello\n/usr\n");
  CHECK(read_all(c.err.get()) == "oops\n");
  CHECK(exit_status(c.started.pid) == 3);
}

TEST_CASE("a program runs in a process group of its own") {
  Program p;
  p.argv = {"cat"};  // found in PATH
  p.pipe_stdin = true;
  Child c = program(p);
  REQUIRE(c.started.started);
  CHECK(::getpgid(c.started.pid) == c.started.pid);
  CHECK(::getpgid(c.started.pid) != ::getpgrp());
  c.in = Fd();
  CHECK(exit_status(c.started.pid) == 0);
}

TEST_CASE("a program starts with default signal dispositions and an empty signal mask") {
  struct sigaction ignore;
  ::memset(&ignore, 0, sizeof ignore);
  struct sigaction saved_pipe, saved_int;
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &saved_pipe);
  ::sigaction(SIGINT, &ignore, &saved_int);
  sigset_t usr1, saved_mask;
  ::sigemptyset(&usr1);
  ::sigaddset(&usr1, SIGUSR1);
  ::sigprocmask(SIG_BLOCK, &usr1, &saved_mask);
  Program p;
  p.argv = {"/bin/cat", "/proc/self/status"};
  p.pipe_stdout = true;
  Child c = program(p);
  ::sigprocmask(SIG_SETMASK, &saved_mask, nullptr);
  ::sigaction(SIGPIPE, &saved_pipe, nullptr);
  ::sigaction(SIGINT, &saved_int, nullptr);
  REQUIRE(c.started.started);
  const std::string status = read_all(c.out.get());
  CHECK(exit_status(c.started.pid) == 0);
  CHECK(status_line(status, "SigIgn") == "0000000000000000");
  CHECK(status_line(status, "SigBlk") == "0000000000000000");
}

TEST_CASE("a program that cannot be run is reported at exec, reaped, and holds no descriptor") {
  const auto before = open_descriptors();
  Program p;
  p.argv = {"/nonexistent/program"};
  p.pipe_stdin = p.pipe_stdout = p.pipe_stderr = true;
  Child c = program(p);
  CHECK_FALSE(c.started.started);
  CHECK(c.started.step == kStepExec);
  CHECK(c.started.error == ENOENT);
  REQUIRE(c.started.pid > 0);
  CHECK(::waitpid(c.started.pid, nullptr, WNOHANG) < 0);  // already reaped
  CHECK_FALSE(c.in);
  CHECK_FALSE(c.out);
  CHECK_FALSE(c.err);
  CHECK(open_descriptors() == before);
}

TEST_CASE("a program whose directory cannot be entered is reported at chdir") {
  const auto before = open_descriptors();
  Program p;
  p.argv = {"/bin/true"};
  p.cwd = "/nonexistent/directory";
  p.pipe_stdout = true;
  Child c = program(p);
  CHECK_FALSE(c.started.started);
  CHECK(c.started.step == kStepChdir);
  CHECK(c.started.error == ENOENT);
  CHECK_FALSE(c.out);
  CHECK(open_descriptors() == before);
}

TEST_CASE("a program whose pipes cannot all be made is not started and holds no descriptor") {
  const auto before = open_descriptors();
  // Room for none of the pipes, then for stdin's, stdin's and stdout's, all three (the report
  // pipe fails).
  for (int free : {0, 2, 4, 6}) {
    INFO("descriptors left: " << free);
    Child c;
    {
      DescriptorCap cap(free);
      Program p;
      p.argv = {"/bin/true"};
      p.pipe_stdin = p.pipe_stdout = p.pipe_stderr = true;
      c = program(p);
    }
    CHECK_FALSE(c.started.started);
    CHECK(c.started.step == kStepPipe);
    CHECK(c.started.error == EMFILE);
    CHECK(c.started.pid == -1);
    CHECK_FALSE(c.in);
    CHECK(open_descriptors() == before);
  }
}

TEST_CASE("a child's own step and errno reach the parent; a child that returns failed at exec") {
  const auto before = open_descriptors();
  Start s;
  s.child = child_fails_at_42;
  Started failed = start(s);
  CHECK_FALSE(failed.started);
  CHECK(failed.step == 42);
  CHECK(failed.error == EACCES);
  CHECK(::waitpid(failed.pid, nullptr, WNOHANG) < 0);

  s.child = child_returns;
  s.exec_step = 7;
  Started returned = start(s);
  CHECK_FALSE(returned.started);
  CHECK(returned.step == 7);
  CHECK(open_descriptors() == before);
}

TEST_CASE("high_fd moves a standard descriptor number to 3 or above, close-on-exec") {
  int p[2];
  REQUIRE(::pipe(p) == 0);
  const int saved = ::dup(0);
  REQUIRE(::dup2(p[0], 0) == 0);
  Fd moved(high_fd(0));
  CHECK(moved.get() > 2);
  CHECK((::fcntl(moved.get(), F_GETFD) & FD_CLOEXEC) != 0);
  CHECK(::fcntl(0, F_GETFD) < 0);  // the low number is closed
  ::dup2(saved, 0);
  ::close(saved);
  ::close(p[0]);
  ::close(p[1]);
  CHECK(high_fd(7) == 7);
  CHECK(high_fd(-1) == -1);
}
