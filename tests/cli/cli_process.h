// The `warden` binary as a child process for the CLI tests: arguments in, stdin written as
// the test goes, stdout and stderr read with a deadline (so a broken binary fails the test
// instead of hanging it). One Child per process; not thread-safe.
#pragma once

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>
#include "tests/build_paths.h"

namespace warden::cli::testing {

inline const std::string kWarden = WARDEN_BINARY_DIR "/cli/warden";

// Fails the test when the binary is missing (cli_tests depends on it; never skip).
inline void require_binary() {
  INFO(kWarden << " must be built (ninja warden)");
  REQUIRE(::access(kWarden.c_str(), X_OK) == 0);
}

class Child {
 public:
  explicit Child(std::vector<std::string> args, std::vector<std::string> env = {}) {
    require_binary();
    ::signal(SIGPIPE, SIG_IGN);  // a child that exits early must not kill the test binary
    int in[2], out[2], err[2];
    REQUIRE(::pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      ::dup2(err[1], 2);
      for (auto& e : env) ::putenv(e.data());
      std::vector<char*> argv{const_cast<char*>(kWarden.c_str())};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kWarden.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    close_stdin();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
    if (err_ >= 0) ::close(err_);
  }

  void write(const std::string& text) {
    REQUIRE(in_ >= 0);
    for (std::size_t at = 0; at < text.size();) {
      ssize_t n = ::write(in_, text.data() + at, text.size() - at);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EPIPE) return;  // the child stopped reading; its exit code tells why
      REQUIRE(n > 0);
      at += static_cast<std::size_t>(n);
    }
  }
  void close_stdin() {
    if (in_ >= 0) ::close(in_);
    in_ = -1;
  }

  // Reads stdout until it holds a complete line and returns it (without '\n'); "" with
  // timed_out set when the deadline passes or stdout ends first.
  std::string read_line(std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
    return read_until(out_, &out_text_, "\n", deadline) ? take_line() : std::string();
  }
  // Reads stderr until it contains `text`.
  bool wait_stderr(const std::string& text,
                   std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
    return read_until(err_, &err_text_, text, deadline);
  }

  // Closes stdin, reads stdout and stderr to their end and returns the exit status. A child
  // still writing or running when the drain's deadline passes is killed (timed_out set), so
  // a hung binary fails its test instead of hanging the suite.
  int finish() {
    close_stdin();
    drain();
    if (timed_out) ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void terminate() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
  }

  const std::string& out() const { return out_text_; }
  const std::string& err() const { return err_text_; }
  bool timed_out = false;

 private:
  std::string take_line() {
    std::size_t nl = out_text_.find('\n');
    std::string line = out_text_.substr(0, nl);
    out_text_.erase(0, nl + 1);
    return line;
  }

  bool read_until(int fd, std::string* into, const std::string& text,
                  std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (into->find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        timed_out = true;
        return false;
      }
      char buf[4096];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      into->append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }

  void drain() {
    pollfd p[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
    std::string* into[2] = {&out_text_, &err_text_};
    int open = 2;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (open > 0) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || ::poll(p, 2, static_cast<int>(left.count())) <= 0) {
        timed_out = true;
        return;
      }
      for (int i = 0; i < 2; ++i) {
        if (p[i].fd < 0 || !p[i].revents) continue;
        char buf[65536];
        ssize_t n = ::read(p[i].fd, buf, sizeof buf);
        if (n > 0) {
          into[i]->append(buf, static_cast<std::size_t>(n));
        } else {
          p[i].fd = -1;
          --open;
        }
      }
    }
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string out_text_, err_text_;
};

struct Run {
  int code;
  std::string out;
  std::string err;
};

// Runs `warden ARGS` to completion with `input` on stdin.
inline Run run_warden(std::vector<std::string> args, const std::string& input = "") {
  Child child(std::move(args));
  child.write(input);
  int code = child.finish();
  REQUIRE_FALSE(child.timed_out);
  return {code, child.out(), child.err()};
}

}  // namespace warden::cli::testing
