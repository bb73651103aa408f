// The real `warden serve` as a child process for the submit and chat tests: a temporary
// directory with test rules, tokens, a workspace holding one known file, a model script, and
// a warden.toml the test extends with its [reasoning] / [actuators] / [limits] sections. Reads
// the daemon's stderr on a thread; address() once serving. One per test; not thread-safe.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/json_writer.h"
#include "server_fixture.h"
#include "tests/build_paths.h"

namespace warden::server::testing {

inline const std::string kWardenBinary = WARDEN_BINARY_DIR "/cli/warden";

// rm is refused, ls approved, replies approved; everything else falls to the default
// (approval-required).
inline const char* kSubmitRules = R"CLP(
(defrule no-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "rm deletes files"))))
(defrule ls-ok
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "ls"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing is harmless"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

// One line of a script provider's file: the model's text answer `proposal`.
inline std::string script_line(const std::string& proposal, const std::string& extra = "") {
  std::string out = "{\"text\":" + json_string(proposal);
  if (!extra.empty()) out += "," + extra;
  return out + "}\n";
}

inline std::string shell_proposal(const std::string& command) {
  return "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":" +
         json_string(command) + "},\"explanation\":\"needed for the task\"}";
}

inline std::string reply_proposal(const std::string& text) {
  return "{\"target\":\"reply\",\"action\":\"send\",\"payload\":{\"text\":" + json_string(text) +
         "}}";
}

class SubmitDaemon {
 public:
  // toml: sections appended to the generated warden.toml. The workspace holds marker.txt.
  explicit SubmitDaemon(const TempDir& dir, const std::string& toml,
                        std::vector<std::string> extra_args = {})
      : dir_(dir) {
    INFO(kWardenBinary << " must be built (a dependency of server_tests and cli_tests)");
    REQUIRE(::access(kWardenBinary.c_str(), X_OK) == 0);
    std::signal(SIGPIPE, SIG_IGN);
    dir.write("rules/policy.clp", kSubmitRules);
    dir.write("workspace/marker.txt", "x");
    fs::create_directories(dir.path() / "home");
    std::string tokens = dir.write("tokens", Tokens{}.file_text(), 0600);
    std::string config = dir.write("warden.toml", toml, 0600);
    std::vector<std::string> args{"serve",
                                  "--config",
                                  config,
                                  "--listen",
                                  "127.0.0.1:0",
                                  "--tokens",
                                  tokens,
                                  "--rules",
                                  dir.str() + "/rules",
                                  "--state-dir",
                                  state(),
                                  "--workspace",
                                  workspace(),
                                  "--home",
                                  dir.str() + "/home",
                                  "--workers",
                                  "2"};
    for (auto& a : extra_args) args.push_back(a);
    int err[2];
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      ::dup2(err[1], 2);
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, 0);
      ::dup2(null, 1);
      std::vector<char*> argv{const_cast<char*>(kWardenBinary.c_str())};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(kWardenBinary.c_str(), argv.data());
      ::_exit(127);
    }
    ::close(err[1]);
    err_fd_ = err[0];
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        ssize_t n = ::read(err_fd_, buf, sizeof buf);
        if (n <= 0) return;
        std::lock_guard lock(mutex_);
        err_.append(buf, static_cast<std::size_t>(n));
      }
    });
  }
  ~SubmitDaemon() {
    kill9();
    if (reader_.joinable()) reader_.join();
    if (err_fd_ >= 0) ::close(err_fd_);
  }

  std::string state() const { return dir_.str() + "/state"; }
  std::string log() const { return state() + "/audit.jsonl"; }
  std::string workspace() const { return dir_.str() + "/workspace"; }
  std::string err() {
    std::lock_guard lock(mutex_);
    return err_;
  }
  // Waits until the daemon serves (true, address() set) or exits (false).
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
  bool exited() {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
    return true;
  }
  int exit_code() const { return code_; }
  // SIGTERM and wait: the audit log gets its stop record and final checkpoint.
  int terminate() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
    REQUIRE(eventually([&] { return exited(); }, 30000ms));
    return code_;
  }
  void kill9() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }

 private:
  const TempDir& dir_;
  pid_t pid_ = -1;
  int err_fd_ = -1;
  int code_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::string err_;
  std::string address_;
};

}  // namespace warden::server::testing
