// A `warden` process started by a test: the build's binary with the given arguments, stdin
// and stdout on /dev/null, its stderr read into a string by a thread (so a daemon never blocks
// on a full pipe). SIGKILLed and reaped when destroyed, if still running.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "server_fixture.h"
#include "tests/build_paths.h"

namespace warden::server::testing {

inline const std::string kWardenBinary = WARDEN_BINARY_DIR "/cli/warden";

class WardenChild {
 public:
  // file_size_limit: the child's RLIMIT_FSIZE (SIGXFSZ ignored, so writes past it fail with
  // EFBIG instead of killing it); 0: none.
  explicit WardenChild(const std::vector<std::string>& args, rlim_t file_size_limit = 0) {
    INFO(kWardenBinary << " must be built (a build dependency of every test binary that runs it)");
    REQUIRE(::access(kWardenBinary.c_str(), X_OK) == 0);
    std::signal(SIGPIPE, SIG_IGN);
    int err[2];
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      if (file_size_limit) {
        ::signal(SIGXFSZ, SIG_IGN);
        rlimit rl{file_size_limit, file_size_limit};
        ::setrlimit(RLIMIT_FSIZE, &rl);
      }
      std::vector<char*> argv{const_cast<char*>(kWardenBinary.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(kWardenBinary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    fd_ = err[0];
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        std::lock_guard lock(mutex_);
        err_.append(buf, static_cast<std::size_t>(n));
      }
    });
  }
  WardenChild(const WardenChild&) = delete;
  WardenChild& operator=(const WardenChild&) = delete;
  ~WardenChild() {
    kill9();
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  // Everything the process wrote to stderr so far.
  std::string err() {
    std::lock_guard lock(mutex_);
    return err_;
  }
  // True once the process has exited (exit_code() is then set); never blocks.
  bool exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
    return true;
  }
  int exit_code() const { return code_; }
  // For `warden serve`: waits until it serves (true, address() set to the protocol
  // listener's HOST:PORT) or exits (false, exit_code()).
  bool serving() {
    bool up = eventually([&] {
      std::string e = err();
      return e.find(" (protocol") != std::string::npos || exited();
    });
    std::string e = err();
    std::size_t at = e.find("serving on ");
    if (!up || at == std::string::npos) return false;
    at += 11;
    address_ = e.substr(at, e.find(' ', at) - at);
    return true;
  }
  const std::string& address() const { return address_; }
  int wait_exit() {
    using namespace std::chrono_literals;
    REQUIRE(eventually([&] { return exited(); }, 30000ms));
    return code_;
  }
  // SIGTERM, then waits (a daemon drains, and its audit log gets its stop record).
  int terminate() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
    return wait_exit();
  }
  // As terminate(), without a test assertion (a destructor may call it): SIGKILLed when it
  // has not exited by the time terminate() would fail.
  void stop() {
    using namespace std::chrono_literals;
    if (pid_ > 0) ::kill(pid_, SIGTERM);
    if (!eventually([&] { return exited(); }, 30000ms)) kill9();
  }
  void hup() {
    if (pid_ > 0) ::kill(pid_, SIGHUP);
  }
  // After the process exited: all it wrote to stderr (waits for the pipe to close, so a
  // process it started must not hold the pipe open).
  std::string err_to_end() {
    REQUIRE(exited());
    if (reader_.joinable()) reader_.join();
    return err();
  }
  void kill9() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  int code_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::string err_;
  std::string address_;
};

}  // namespace warden::server::testing
