// Test support for the agent front ends: a real `warden serve` as a child process on an
// ephemeral loopback port, with a token file and its own state directory (so its Unix socket
// is STATE_DIR/warden.sock), and a loopback listener that never answers. One per test.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "server/tokens.h"
#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/server/test_tokens.h"
#include "tests/server/warden_child.h"
#include "tests/support/temp_dir.h"

namespace warden::agents::testing {

using server::testing::TempDir;
using server::testing::Tokens;
using warden::testing::kShippedRules;

// A `warden hook` command line with a budget no loaded machine runs out of (a sanitized
// build beside the fuzzers loads the shipped pack in seconds), unless it sets its own: the
// default 5 s would turn a slow load into an E_TIMEOUT deny a test could mistake for its rule's.
inline std::vector<std::string> with_test_budget(std::vector<std::string> args) {
  for (const auto& a : args) {
    if (a == "--timeout-ms") return args;
  }
  args.insert(args.end(), {"--timeout-ms", "50000"});
  return args;
}

// `warden serve` with the given rules; address() is its TCP address once started.
class ServeChild {
 public:
  ServeChild(const TempDir& dir, std::vector<std::string> rules = {kShippedRules},
             std::vector<std::string> extra = {}) {
    token_file_ = dir.write("agent.token", Tokens{}.agent + "\n");
    tokens_ = dir.write("tokens", Tokens{}.file_text());
    std::filesystem::permissions(
        tokens_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
        std::filesystem::perm_options::replace);
    state_dir_ = (dir.path() / "state" / "warden").string();
    std::vector<std::string> args{"serve",       "--listen", "127.0.0.1:0", "--tokens", tokens_,
                                  "--state-dir", state_dir_, "--workers",   "1"};
    for (const auto& r : rules) {
      args.push_back("--rules");
      args.push_back(r);
    }
    for (auto& e : extra) args.push_back(e);
    child_ = std::make_unique<server::testing::WardenChild>(args);
    INFO(child_->err());
    REQUIRE(child_->serving());
    address_ = child_->address();
  }
  const std::string& address() const { return address_; }
  const std::string& token_file() const { return token_file_; }
  const std::string& state_dir() const { return state_dir_; }
  std::string socket_path() const { return state_dir_ + "/warden.sock"; }
  void stop() { child_.reset(); }

 private:
  std::unique_ptr<server::testing::WardenChild> child_;
  std::string address_, token_file_, tokens_, state_dir_;
};

// A loopback TCP listener that accepts into its backlog and never says a word.
class SilentListener {
 public:
  SilentListener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    socklen_t len = sizeof a;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0);
    address_ = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  }
  ~SilentListener() { ::close(fd_); }
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

// A loopback address nothing listens on (bound, then closed: connecting is refused).
inline std::string closed_address() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
}

}  // namespace warden::agents::testing
