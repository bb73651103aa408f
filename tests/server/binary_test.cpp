// The real `warden` binary as a child process: serve with SIGHUP and SIGTERM, decide and
// status as clients, config errors with exit 2. The binary is a build dependency of this
// test (tests/CMakeLists.txt); a missing binary fails the test.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "server_fixture.h"
#include "tests/build_paths.h"
#include "warden_child.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

const std::string kBinaryWarden = WARDEN_BINARY_DIR "/cli/warden";

void require_binary() {
  INFO(kBinaryWarden << " is not built (it is a dependency of server_tests)");
  REQUIRE(access(kBinaryWarden.c_str(), X_OK) == 0);
}

struct BinaryChild {
  pid_t pid = -1;
  int err_fd = -1;  // the child's stderr
  std::string err;

  // Reads stderr until it contains `text` (true) or the timeout passes (false).
  bool wait_for(const std::string& text, std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (err.find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{err_fd, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      ssize_t n = read(err_fd, buf, sizeof buf);
      if (n <= 0) return false;
      err.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  }
  int wait_exit() {
    int status = 0;
    waitpid(pid, &status, 0);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ~BinaryChild() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      wait_exit();
    }
    if (err_fd >= 0) close(err_fd);
  }
};

BinaryChild spawn(std::vector<std::string> args, const std::string& stdin_text = {},
                  const std::vector<std::string>& env = {}, std::string* out = nullptr) {
  int err_pipe[2], in_pipe[2], out_pipe[2];
  REQUIRE(pipe(err_pipe) == 0);
  REQUIRE(pipe(in_pipe) == 0);
  REQUIRE(pipe(out_pipe) == 0);
  BinaryChild child;
  child.pid = fork();
  if (child.pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    for (int fd : {err_pipe[0], err_pipe[1], in_pipe[0], in_pipe[1], out_pipe[0], out_pipe[1]})
      close(fd);
    for (const auto& e : env) putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> argv{const_cast<char*>(kBinaryWarden.c_str())};
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(kBinaryWarden.c_str(), argv.data());
    _exit(127);
  }
  close(err_pipe[1]);
  close(in_pipe[0]);
  close(out_pipe[1]);
  if (!stdin_text.empty()) (void)!write(in_pipe[1], stdin_text.data(), stdin_text.size());
  close(in_pipe[1]);
  if (out) {
    char buf[4096];
    ssize_t n;
    while ((n = read(out_pipe[0], buf, sizeof buf)) > 0)
      out->append(buf, static_cast<std::size_t>(n));
  }
  close(out_pipe[0]);
  child.err_fd = err_pipe[0];
  return child;
}

}  // namespace

TEST_CASE("warden serve, decide, status, SIGHUP and SIGTERM as processes", "[server][binary]") {
  require_binary();
  TempDir dir;
  Config config = test_config(dir);
  WardenChild serve({"serve", "--listen", "127.0.0.1:0", "--rules", config.rules[0], "--tokens",
                     config.tokens, "--state-dir", config.state_dir, "--workers", "1"});
  INFO(serve.err());
  REQUIRE(serve.serving());
  const std::string addr = serve.address();
  Tokens t;

  std::string out;
  BinaryChild decide = spawn({"decide", "--addr", addr}, std::string(kShellProposal) + "\n",
                             {"WARDEN_TOKEN=" + t.agent}, &out);
  CHECK(decide.wait_exit() == 1);  // reject
  CHECK(out.find("\"outcome\":\"reject\"") != std::string::npos);

  out.clear();
  BinaryChild lines =
      spawn({"decide", "--addr", addr, "--token", t.agent, "--format", "text"},
            std::string(kReplyProposal) + "\nnot json\n" + kShellProposal + "\n", {}, &out);
  CHECK(lines.wait_exit() == 2);  // one line was not a proposal
  CHECK(out.find("line 2: error E_INPUT_JSON") != std::string::npos);

  out.clear();
  BinaryChild forbidden = spawn({"status", "--addr", addr, "--token", t.agent}, {}, {}, &out);
  CHECK(forbidden.wait_exit() == 4);

  out.clear();
  BinaryChild status =
      spawn({"status", "--addr", addr, "--token", t.admin, "--format", "json"}, {}, {}, &out);
  CHECK(status.wait_exit() == 0);
  CHECK(parse(out)["counters"]["decisions"].GetUint64() == 3);

  dir.write("rules/policy.clp", kRulesB);
  serve.hup();
  CHECK(eventually(
      [&] { return serve.err().find("reload (SIGHUP) succeeded") != std::string::npos; }));
  CHECK(serve.terminate() == 0);
}

TEST_CASE("warden serve stops with exit 2 and names the key of a wrong config value",
          "[server][binary]") {
  require_binary();
  TempDir dir;
  std::string path = dir.write("warden.toml", "[limits]\nidle_timeout_ms = \"soon\"\n");
  BinaryChild serve = spawn({"serve", "--config", path});
  CHECK(serve.wait_exit() == 2);
  CHECK(serve.wait_for("limits.idle_timeout_ms: must be an integer", 2000ms));

  BinaryChild no_tokens =
      spawn({"serve", "--listen", "127.0.0.1:0", "--state-dir", (dir.path() / "s").string()});
  CHECK(no_tokens.wait_exit() == 2);
}
