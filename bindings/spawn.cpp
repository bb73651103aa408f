#include "bindings/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace warden::spawn {

Fd& Fd::operator=(Fd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

int high_fd(int fd) {
  if (fd < 0 || fd > 2) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int e = errno;
  ::close(fd);
  errno = e;
  return moved;
}

bool make_pipe(Fd* read_end, Fd* write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  Fd r(high_fd(p[0])), w(high_fd(p[1]));
  if (!r || !w) return false;
  *read_end = std::move(r);
  *write_end = std::move(w);
  return true;
}

void fail(int report, int step) {
  const int msg[2] = {step, errno};
  (void)!::write(report, msg, sizeof msg);
  ::_exit(127);
}

void default_dispositions() {
  struct sigaction dfl;
  ::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    ::sigaction(s, &dfl, nullptr);
  }
}

Started start(const Start& spec) {
  Started s;
  Fd report_read, report_write;
  if (!make_pipe(&report_read, &report_write)) {
    s.step = kStepPipe;
    s.error = errno;
    return s;
  }
  // The child starts with every signal blocked: no handler of the caller's runs in it.
  sigset_t all, saved;
  ::sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &saved);
  const pid_t pid = spec.clone_flags
                        ? static_cast<pid_t>(::syscall(SYS_clone, SIGCHLD | spec.clone_flags,
                                                       nullptr, nullptr, nullptr, nullptr))
                        : ::fork();
  if (pid == 0) {
    spec.child(spec.data, report_write.get());
    fail(report_write.get(), spec.exec_step);
  }
  const int fork_error = errno;
  ::pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  if (pid < 0) {
    s.step = kStepFork;
    s.error = fork_error;
    return s;
  }
  s.pid = pid;
  report_write = Fd();
  // execve succeeded when the report pipe closes without a message.
  int msg[2] = {0, 0};
  ssize_t n;
  do {
    n = ::read(report_read.get(), msg, sizeof msg);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof msg)) {
    // Its group too, when it made one: whatever it started before failing goes with it.
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    int status;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    s.step = msg[0];
    s.error = msg[1];
    return s;
  }
  s.started = true;
  return s;
}

namespace {

struct ProgramChild {
  const Program* spec;
  char* const* argv;
  int in, out, err;  // the child's ends, -1 where the descriptor is inherited
};

void program_child(const void* data, int report) {
  const auto* c = static_cast<const ProgramChild*>(data);
  ::setpgid(0, 0);  // its own group: stopping it stops whatever it started
  if (c->spec->death_signal) ::prctl(PR_SET_PDEATHSIG, c->spec->death_signal);
  default_dispositions();
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  if (!c->spec->cwd.empty() && ::chdir(c->spec->cwd.c_str()) != 0) fail(report, kStepChdir);
  if ((c->in >= 0 && ::dup2(c->in, 0) < 0) || (c->out >= 0 && ::dup2(c->out, 1) < 0) ||
      (c->err >= 0 && ::dup2(c->err, 2) < 0))
    fail(report, kStepDup2);
  ::execvp(c->argv[0], c->argv);
  fail(report, kStepExec);
}

}  // namespace

Child program(const Program& spec) {
  Child c;
  if (spec.argv.empty()) {
    c.started.step = kStepExec;
    c.started.error = EINVAL;
    return c;
  }
  Fd in_read, out_write, err_write;
  if ((spec.pipe_stdin && !make_pipe(&in_read, &c.in)) ||
      (spec.pipe_stdout && !make_pipe(&c.out, &out_write)) ||
      (spec.pipe_stderr && !make_pipe(&c.err, &err_write))) {
    c.started.step = kStepPipe;
    c.started.error = errno;
    c.in = Fd();
    c.out = Fd();
    c.err = Fd();
    return c;
  }
  std::vector<char*> argv;
  argv.reserve(spec.argv.size() + 1);
  for (const auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const ProgramChild data{&spec, argv.data(), in_read.get(), out_write.get(), err_write.get()};
  Start start_spec;
  start_spec.child = program_child;
  start_spec.data = &data;
  start_spec.exec_step = kStepExec;
  c.started = start(start_spec);
  if (!c.started.started) {
    c.in = Fd();
    c.out = Fd();
    c.err = Fd();
  }
  return c;
}

}  // namespace warden::spawn
