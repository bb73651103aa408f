// The MCP server the gateway starts: a child process with pipes on its stdin and stdout,
// stderr inherited, argv exactly as given (no shell), in its own process group so the gateway
// can stop the server and everything it started. Owned by one thread (the gateway's main
// thread); the pipe descriptors are handed to the relay threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace warden::agents::mcp {

class ChildProcess {
 public:
  ChildProcess() = default;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();  // kills the group and reaps the child if still running

  // Starts argv[0] (searched in PATH) with argv. False with *error when it cannot be started
  // (the command not found or not executable included).
  bool start(const std::vector<std::string>& argv, std::string* error);

  pid_t pid() const { return pid_; }
  int stdin_fd() const { return in_; }    // the child's stdin (write end, non-blocking)
  int stdout_fd() const { return out_; }  // the child's stdout (read end)
  void close_stdin();

  // Reaps the child if it has exited; true when it has (status() is then valid).
  bool poll_exit();
  // Waits until the child exits or `within` passes; true when it exited.
  bool wait_exit(std::chrono::milliseconds within);
  // SIGTERM to the group, then SIGKILL after `grace`; reaps the child.
  void terminate(std::chrono::milliseconds grace);
  bool exited() const { return exited_; }
  // "status N" or "signal S", for messages.
  std::string status_text() const;

 private:
  pid_t pid_ = -1;
  int in_ = -1;
  int out_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace warden::agents::mcp
