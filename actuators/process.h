// ChildProcess: runs one program with execve in a new session (process group, no terminal),
// confined working directory, given environment, stdin from /dev/null, stdout+stderr captured into
// one capped buffer, resource limits, and a deadline that kills the whole group. The group is
// killed when the program ends too, so nothing it started outlives the run. Everything is
// prepared before fork; the child makes only async-signal-safe calls. Thread-safe (one call
// per run; no shared state).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace warden::actuators {

// out = head + the decimal digits of n + tail, without allocating or formatting (safe in a
// cloned child before exec). out must hold strlen(head) + 10 + strlen(tail) + 1 bytes.
void write_proc_path(char* out, const char* head, unsigned n, const char* tail);

struct ProcessSpec {
  std::string program;            // passed to execve: absolute, or relative to cwd_fd
  std::vector<std::string> argv;  // argv[0] first
  std::vector<std::string> env;   // "NAME=value"
  int cwd_fd = -1;                // directory the child fchdir()s into (not owned)
  std::chrono::milliseconds timeout{30000};
  std::size_t max_output_bytes = 64 * 1024;
  std::uint64_t cpu_seconds = 30;
  std::uint64_t memory_bytes = 1ull << 30;
  std::uint64_t max_processes = 64;
  std::uint64_t max_file_bytes = 64ull << 20;
  // Confinement hooks (actuators/confine.cpp). With clone_flags the keeper is created by
  // clone(2) with those namespace flags (it is then the init of a new PID namespace);
  // keeper_setup runs in it before it forks the program, program_setup in the program just
  // before execve. Both run in a forked child, so async-signal-safe calls only; each returns
  // 0, or a step number >= 100 (errno set) that step_name explains.
  int clone_flags = 0;
  int (*keeper_setup)(const void* data) = nullptr;
  int (*program_setup)(const void* data) = nullptr;
  const void* setup_data = nullptr;
  const char* (*step_name)(int step) = nullptr;
  // stdin, stdout and stderr are the caller's and nothing is captured (`warden exec`).
  bool attached = false;
};

struct ProcessOutcome {
  bool started = false;    // execve succeeded
  std::string error;       // why it did not start ("" when started)
  int exit_code = -1;      // the exit status, or 128 + signal when killed by one
  int signal = 0;          // the terminating signal, 0 when it exited
  bool timed_out = false;  // the deadline passed and the group was killed
  bool truncated = false;  // output went past max_output_bytes (the rest was drained and dropped)
  std::string output;      // stdout and stderr, interleaved as written
  int pid = -1;            // the child's pid (also its process group)
  int failed_step = 0;     // when not started: the step that failed (>= 100: confinement)
};

ProcessOutcome run_process(const ProcessSpec& spec);

}  // namespace warden::actuators
