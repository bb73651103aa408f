// Starting child processes: the one place the product forks. start() makes the report pipe,
// forks (or clones into new namespaces) with every signal blocked, runs the caller's child
// side, and waits until the child has called execve or has said, through the report pipe,
// which step failed and with what errno; a child that failed is killed and reaped.
// program() builds on it: one program with pipes on the standard descriptors asked for.
// Every descriptor either makes is closed on every path that does not hand it to the caller.
// Thread-safe (no shared state; children are forked from the calling thread).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace warden::spawn {

// A file descriptor closed on destruction.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// `fd` moved to a number of 3 or above, close-on-exec (so a child's dup2 onto 0, 1 or 2 never
// clobbers it); -1 when fd is, or when it cannot be moved (fd is then closed).
int high_fd(int fd);
// A close-on-exec pipe whose ends are numbered 3 or above. False (errno set, both ends
// empty) when it cannot be made.
bool make_pipe(Fd* read_end, Fd* write_end);

// Steps of a start that fail in the parent (a child's own steps are the caller's numbers, > 0).
constexpr int kStepPipe = -1;  // the report pipe (or program()'s pipes) could not be made
constexpr int kStepFork = -2;  // fork or clone failed

// In the child: sends `step` and errno to the parent through `report` and exits 127.
// Async-signal-safe.
[[noreturn]] void fail(int report, int step);
// In the child: every signal's disposition back to the default (a signal the caller ignores
// would stay ignored across execve). Async-signal-safe.
void default_dispositions();

struct Start {
  // The child's side, called in the child with every signal blocked: async-signal-safe calls
  // only. `report` is the report pipe's write end (close-on-exec); the child ends in execve,
  // or in fail(report, step) with a step > 0. Returning is a failure of step `exec_step`.
  void (*child)(const void* data, int report) = nullptr;
  const void* data = nullptr;
  int exec_step = 1;
  // With flags, the child is made by clone(2) with SIGCHLD and these (new namespaces).
  int clone_flags = 0;
};

struct Started {
  bool started = false;  // the child called execve (the report pipe closed empty)
  pid_t pid = -1;        // the child's pid once forked (already reaped when !started)
  int step = 0;          // when not: the step that failed (kStepPipe, kStepFork, the child's)
  int error = 0;         // and its errno
};

Started start(const Start& spec);

// A program run by program(): argv[0] searched in PATH, the caller's environment.
struct Program {
  std::vector<std::string> argv;
  std::string cwd;           // the directory it starts in; "" for the caller's
  bool pipe_stdin = false;   // a pipe on each standard descriptor asked for; the rest is
  bool pipe_stdout = false;  // inherited
  bool pipe_stderr = false;
  int death_signal = 0;  // sent to it when the calling thread ends (0: none)
};

// program()'s steps in the child.
constexpr int kStepChdir = 1;
constexpr int kStepDup2 = 2;
constexpr int kStepExec = 3;

struct Child {
  Started started;
  Fd in, out, err;  // the parent's ends of the pipes asked for (stdin's is the write end)
};

// Starts the program in a process group of its own (its pid), with default signal
// dispositions and an empty signal mask.
Child program(const Program& spec);

}  // namespace warden::spawn
