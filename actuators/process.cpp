#include "actuators/process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "actuators/beneath.h"
#include "bindings/spawn.h"

namespace warden::actuators {
namespace {

std::vector<char*> pointers(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const auto& s : strings) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

void set_limit(int resource, std::uint64_t value) {
  struct rlimit r;
  r.rlim_cur = r.rlim_max = static_cast<rlim_t>(value);
  ::setrlimit(resource, &r);
}

// The keeper's program, killed by the keeper's SIGTERM handler (the daemon's time limit).
// Set only while the program is not yet reaped, so its pid cannot have been reused.
volatile sig_atomic_t keeper_program = 0;
extern "C" void keeper_on_term(int) {
  const pid_t p = keeper_program;
  if (p > 0) ::kill(p, SIGKILL);
}

// "/proc/self/task/TID/children" of the calling (single-threaded) process, without snprintf.
void children_path(char* out, pid_t self) {
  write_proc_path(out, "/proc/self/task/", static_cast<unsigned>(self), "/children");
}

// SIGKILLs the keeper's children: how many it could signal, or -1 when /proc does not list
// them.
int kill_children(const char* path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[8192];
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  if (n < 0) return -1;
  std::size_t len = static_cast<std::size_t>(n);
  if (len == sizeof buf)  // may end inside a number: the rest is killed in a later round
    while (len > 0 && buf[len - 1] != ' ') --len;
  int signalled = 0;
  long pid = 0;
  for (std::size_t i = 0; i <= len; ++i) {
    const char c = i < len ? buf[i] : ' ';
    if (c >= '0' && c <= '9') {
      pid = pid * 10 + (c - '0');
      continue;
    }
    if (pid > 0 && ::kill(static_cast<pid_t>(pid), SIGKILL) == 0) ++signalled;
    pid = 0;
  }
  return signalled;
}

// What the child is given, prepared before the fork.
struct KeeperArgs {
  const ProcessSpec* spec;
  const char* program;
  char* const* argv;
  char* const* envp;
  pid_t parent;
  int devnull, out, cwd_fd, max_fd;
  volatile int* program_status;
};

// The child: only async-signal-safe calls from here to execve. On any failure the errno
// and the step number go to `report` and the child exits 127. It starts with every signal
// blocked (spawn::start forks so).
//
// It is the program's keeper: a child subreaper that forks the program, waits for it, then
// kills and reaps everything the program started — a descendant that left the process group
// (setsid, a job of its own) is reparented to the keeper, not to init, so it cannot outlive
// the run. The daemon's SIGTERM (the time limit) makes it kill the program. Its exit status
// is the program's.
[[noreturn]] void keeper(const KeeperArgs& a, int report) {
  const ProcessSpec& spec = *a.spec;
  const char* program = a.program;
  char* const* argv = a.argv;
  char* const* envp = a.envp;
  const pid_t parent = a.parent;
  const int devnull = a.devnull, out = a.out, cwd_fd = a.cwd_fd, max_fd = a.max_fd;
  volatile int* program_status = a.program_status;
  auto fail = [&](int step) { spawn::fail(report, step); };
  // A session of its own: its own process group, and no controlling terminal (the daemon's,
  // at `warden chat`, could be written, read or fed input with TIOCSTI).
  if (::setsid() < 0) fail(1);
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(2);
  // The daemon died before the line above (in a new PID namespace the parent has no pid).
  const bool confined = spec.clone_flags != 0;
  if (::getppid() != (confined ? 0 : parent)) ::_exit(127);
  // Default dispositions and an empty mask: the daemon's ignored SIGPIPE must not leak.
  spawn::default_dispositions();
  struct sigaction dfl;
  ::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigset_t none, term_only;
  ::sigemptyset(&none);
  ::sigemptyset(&term_only);
  ::sigaddset(&term_only, SIGTERM);
  struct sigaction term;
  ::memset(&term, 0, sizeof term);
  term.sa_handler = keeper_on_term;  // no SA_RESTART: it interrupts waitid
  ::sigaction(SIGTERM, &term, nullptr);
  ::sigprocmask(SIG_SETMASK, &term_only, nullptr);
  if (!spec.attached && (::dup2(devnull, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0))
    fail(3);
  if (spec.keeper_setup) {
    // The confinement's mounts, id maps and working directory (in the new view).
    if (int step = spec.keeper_setup(spec.setup_data); step != 0) fail(step);
  } else if (::fchdir(cwd_fd) != 0) {
    fail(4);
  }
  set_limit(RLIMIT_CORE, 0);
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) fail(7);
  const pid_t keeper = ::getpid();
  const pid_t pid = ::_Fork();
  if (pid < 0) fail(8);
  if (pid == 0) {
    // The program: dies with its keeper.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(2);
    if (::getppid() != keeper) ::_exit(127);
    ::sigaction(SIGTERM, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    set_limit(RLIMIT_CPU, spec.cpu_seconds);
    set_limit(RLIMIT_AS, spec.memory_bytes);
    set_limit(RLIMIT_NPROC, spec.max_processes);
    set_limit(RLIMIT_FSIZE, spec.max_file_bytes);
    // Every descriptor but 0, 1, 2 and the report pipe (close-on-exec) is closed.
    if (report > 3 && ::dup2(report, 3) < 0) fail(5);
    if (report != 3) {
      ::fcntl(3, F_SETFD, FD_CLOEXEC);
      report = 3;
    }
    if (::syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
      for (int fd = 4; fd <= max_fd; ++fd) ::close(fd);
    if (spec.program_setup) {
      if (int step = spec.program_setup(spec.setup_data); step != 0) fail(step);
    }
    ::execve(program, argv, envp);
    fail(6);
    ::_exit(127);
  }
  // The keeper holds nothing of the daemon's, nor the output pipe.
  if (::syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
    for (int fd = 3; fd <= max_fd; ++fd) ::close(fd);
  if (!spec.attached) {
    ::dup2(0, 1);
    ::dup2(0, 2);
  }
  keeper_program = pid;
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  // Until the program ends (not reaped yet: the handler may still signal it), reaping the
  // orphans that come to the keeper meanwhile.
  for (;;) {
    siginfo_t info;
    info.si_pid = 0;
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT) != 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (info.si_pid == pid) break;
    ::waitpid(info.si_pid, nullptr, 0);
  }
  ::sigprocmask(SIG_SETMASK, &term_only, nullptr);
  keeper_program = 0;
  int status = 0;
  ::waitpid(pid, &status, 0);
  // A PID namespace's init cannot die of a signal it sends itself: the parent reads the
  // program's status here instead.
  if (program_status) *program_status = status;
  // Everything the program left behind, whatever its process group: kill, reap, repeat (a
  // killed process's children come to the keeper) until no child is left — or only children
  // it may not signal, which it leaves to the daemon's group kill.
  char path[64];
  children_path(path, keeper);
  for (;;) {
    const int signalled = kill_children(path);
    if (signalled < 0) break;  // no /proc: the daemon's group kill is what is left
    const pid_t w = ::waitpid(-1, nullptr, signalled > 0 ? 0 : WNOHANG);
    if (w < 0 && errno == ECHILD) break;
    if (signalled == 0 && w <= 0) break;
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    ::sigaction(sig, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::kill(keeper, sig);
    ::_exit(128 + sig);
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

void keeper_child(const void* data, int report) {
  keeper(*static_cast<const KeeperArgs*>(data), report);
}

const char* step_name(int step) {
  switch (step) {
    case 1:
      return "setsid";
    case 2:
      return "prctl";
    case 3:
      return "dup2";
    case 4:
      return "fchdir";
    case 5:
      return "dup2";
    case 7:
      return "prctl";
    case 8:
      return "fork";
    default:
      return "execve";
  }
}

// One shared page holding the program's wait status, written by a confined keeper (the init
// of its PID namespace, which cannot die of the program's signal as a plain keeper does).
class StatusPage {
 public:
  explicit StatusPage(bool wanted) {
    if (!wanted) return;
    void* p = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    page_ = static_cast<volatile int*>(p);
    *page_ = -1;
  }
  ~StatusPage() {
    if (page_) ::munmap(const_cast<int*>(page_), 4096);
  }
  StatusPage(const StatusPage&) = delete;
  StatusPage& operator=(const StatusPage&) = delete;
  volatile int* status() const { return page_; }

 private:
  volatile int* page_ = nullptr;
};

// Waits for `pid` to become a zombie without reaping it (so its pid, which is also the
// group id, cannot be reused before the group is killed). Returns true when it exited.
bool exited(pid_t pid) {
  siginfo_t info;
  info.si_pid = 0;
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

}  // namespace

ProcessOutcome run_process(const ProcessSpec& spec) {
  ProcessOutcome outcome;
  if (spec.argv.empty()) {
    outcome.error = "no program";
    return outcome;
  }
  Fd devnull(spawn::high_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC)));
  Fd out_read, out_write;
  if (!devnull || !spawn::make_pipe(&out_read, &out_write)) {
    outcome.error = "cannot prepare the child's descriptors: " + errno_text(errno);
    return outcome;
  }
  std::vector<char*> argv = pointers(spec.argv);
  std::vector<char*> envp = pointers(spec.env);
  struct rlimit nofile {};
  ::getrlimit(RLIMIT_NOFILE, &nofile);
  const int max_fd = nofile.rlim_cur == RLIM_INFINITY || nofile.rlim_cur > 65536
                         ? 65536
                         : static_cast<int>(nofile.rlim_cur);
  const auto deadline = std::chrono::steady_clock::now() + spec.timeout;
  StatusPage shared(spec.clone_flags != 0);

  const KeeperArgs args{.spec = &spec,
                        .program = spec.program.c_str(),
                        .argv = argv.data(),
                        .envp = envp.data(),
                        .parent = ::getpid(),
                        .devnull = devnull.get(),
                        .out = out_write.get(),
                        .cwd_fd = spec.cwd_fd,
                        .max_fd = max_fd,
                        .program_status = shared.status()};
  // A confined keeper starts in its namespaces: clone(2) as fork(2) does, plus their flags.
  spawn::Start start;
  start.child = keeper_child;
  start.data = &args;
  start.exec_step = 6;
  start.clone_flags = spec.clone_flags;
  const spawn::Started started = spawn::start(start);
  // The child calls setsid() before it reports or execs, so its group exists once it has
  // started (setpgid here would make the child's setsid() fail).
  outcome.pid = started.pid;
  out_write = Fd();
  if (!started.started) {
    if (started.step == spawn::kStepPipe) {
      outcome.error = "cannot prepare the child's descriptors: " + errno_text(started.error);
    } else if (started.step == spawn::kStepFork) {
      outcome.error = "fork failed: " + errno_text(started.error);
    } else {
      const char* what = started.step >= 100 && spec.step_name ? spec.step_name(started.step)
                                                               : step_name(started.step);
      outcome.error = std::string(what) + " failed: " + errno_text(started.error);
      outcome.failed_step = started.step;
    }
    return outcome;
  }
  const pid_t pid = started.pid;
  outcome.started = true;

  // Read until the output closes, the program ends, or the deadline passes.
  ::fcntl(out_read.get(), F_SETFL, O_NONBLOCK);
  char buf[16384];
  bool open = !spec.attached, done = false;
  auto drain = [&]() {
    for (;;) {
      ssize_t got = ::read(out_read.get(), buf, sizeof buf);
      if (got > 0) {
        std::size_t room = spec.max_output_bytes > outcome.output.size()
                               ? spec.max_output_bytes - outcome.output.size()
                               : 0;
        std::size_t take = std::min(room, static_cast<std::size_t>(got));
        outcome.output.append(buf, take);
        if (take < static_cast<std::size_t>(got)) outcome.truncated = true;
        continue;
      }
      if (got == 0)
        open = false;
      else if (errno == EINTR)
        continue;
      return;
    }
  };
  // A pidfd wakes the loop when the program ends even while a descendant holds the pipe
  // open; without one (old kernels) the loop wakes every 50 ms to look.
  Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  while (!done) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      outcome.timed_out = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
    int wait_ms =
        static_cast<int>(pidfd ? std::min<long long>(left, 60000) : std::min<long long>(left, 50));
    struct pollfd p[2];
    nfds_t n = 0;
    if (open) p[n++] = {out_read.get(), POLLIN, 0};
    if (pidfd) p[n++] = {pidfd.get(), POLLIN, 0};
    if (::poll(p, n, wait_ms) > 0 && open && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) drain();
    if (exited(pid)) done = true;
  }
  // At the time limit the keeper kills the program and everything it started (SIGTERM asks
  // it to); the group is killed once the keeper is done. Then the rest of the output.
  // The program runs as the daemon's user and may stop or kill its keeper: the keeper gets a
  // SIGCONT and a grace period, then the group kill is all there is.
  if (outcome.timed_out && !exited(pid)) {
    ::kill(pid, SIGTERM);
    ::kill(pid, SIGCONT);
    const auto grace = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!exited(pid) && std::chrono::steady_clock::now() < grace) {
      struct pollfd p = {pidfd.get(), POLLIN, 0};
      if (!pidfd || ::poll(&p, 1, 50) < 0) ::usleep(50 * 1000);
    }
  }
  ::kill(-pid, SIGKILL);
  if (open && done) drain();
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A confined keeper (a namespace's init) reports the program's status in shared memory.
  if (shared.status() && *shared.status() != -1) status = *shared.status();
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
    outcome.exit_code = 128 + outcome.signal;
  }
  return outcome;
}

void write_proc_path(char* out, const char* head, unsigned n, const char* tail) {
  char digits[16];
  int count = 0;
  do {
    digits[count++] = static_cast<char>('0' + n % 10);
    n /= 10;
  } while (n);
  char* p = out;
  while (*head) *p++ = *head++;
  while (count) *p++ = digits[--count];
  while (*tail) *p++ = *tail++;
  *p = 0;
}

}  // namespace warden::actuators
