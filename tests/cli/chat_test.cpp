// `warden chat` and `warden submit` against a real `warden serve` with the script provider:
// through a pipe (plain lines, no prompt), and at a terminal (a pty: libedit's prompt and
// line editing), each decision shown with its marker and rule, /quit leaves.
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>

#include <termios.h>
#include <catch2/catch.hpp>
#include <thread>

#include "../server/submit_daemon.h"
#include "cli_process.h"

using namespace warden::server::testing;
namespace cli_testing = warden::cli::testing;

namespace {

std::string rm_then_ls_script(const TempDir& dir) {
  return dir.write("model.jsonl",
                   script_line(shell_proposal("rm -rf ~")) + script_line(shell_proposal("ls")) +
                       script_line(reply_proposal("the workspace holds marker.txt")));
}

std::string provider(const std::string& script) {
  return "[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
         warden::json_string(script) + "\n";
}

}  // namespace

TEST_CASE("warden chat through a pipe: markers per decision, output, reply", "[cli][chat]") {
  TempDir dir;
  SubmitDaemon daemon(dir, provider(rm_then_ls_script(dir)));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  cli_testing::Run run =
      cli_testing::run_warden({"chat", "--addr", daemon.address(), "--token", Tokens{}.agent},
                              "tidy up my home directory\n/quit\nnot sent\n");
  INFO(run.out << run.err);
  CHECK(run.code == 0);
  CHECK(run.out.find("✗ reject shell: rm -rf ~  [no-rm]: rm deletes files") != std::string::npos);
  CHECK(run.out.find("✓ approve shell: ls  [ls-ok]") != std::string::npos);
  CHECK(run.out.find("✓ approve (last mile) shell: ls  [ls-ok]") != std::string::npos);
  CHECK(run.out.find("    marker.txt") != std::string::npos);
  CHECK(run.out.find("» the workspace holds marker.txt") != std::string::npos);
  // Not a terminal: no prompt, no banner.
  CHECK(run.out.find("you> ") == std::string::npos);
  CHECK(run.out.find("warden chat ·") == std::string::npos);
}

TEST_CASE("warden submit prints the events and exits by the final status", "[cli][chat]") {
  TempDir dir;
  SubmitDaemon daemon(dir, provider(rm_then_ls_script(dir)));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  cli_testing::Run run = cli_testing::run_warden(
      {"submit", "tidy up", "--addr", daemon.address(), "--token", Tokens{}.agent});
  INFO(run.out << run.err);
  CHECK(run.code == 0);
  CHECK(run.out.find("✗ reject shell: rm -rf ~  [no-rm]") != std::string::npos);
  CHECK(run.out.find("» the workspace holds marker.txt") != std::string::npos);
  // JSON: one event per line, the response last (another session replays the script).
  run = cli_testing::run_warden({"submit", "again", "--format", "json", "--addr", daemon.address(),
                                 "--token", Tokens{}.agent, "--session", "other"});
  INFO(run.out << run.err);
  CHECK(run.out.find("\"event\":\"decision\"") != std::string::npos);
  CHECK(run.out.find("\"action\":\"submit\"") != std::string::npos);
  CHECK(run.code == 0);
}

TEST_CASE("warden chat at a terminal: libedit prompt, line editing, /quit", "[cli][chat]") {
  cli_testing::require_binary();
  TempDir dir;
  // The model answers "hello from the model" only to the line as edited ("hello there").
  std::string script =
      dir.write("model.jsonl",
                script_line(reply_proposal("hello from the model"),
                            "\"match\":\"hello there\",\"repeat\":true") +
                    script_line(reply_proposal("that was not the edited line"), "\"repeat\":true"));
  SubmitDaemon daemon(dir, provider(script));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  int master = -1;
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::setenv("TERM", "dumb", 1);
    std::string addr = daemon.address();
    std::string token = Tokens{}.agent;
    ::execl(cli_testing::kWarden.c_str(), cli_testing::kWarden.c_str(), "chat", "--addr",
            addr.c_str(), "--token", token.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string screen;
  auto read_until = [&](const std::string& text) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (screen.find(text) == std::string::npos) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{master, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[4096];
      ssize_t n = ::read(master, buf, sizeof buf);
      if (n <= 0) return false;
      screen.append(buf, static_cast<std::size_t>(n));
    }
    return true;
  };
  auto type = [&](const std::string& keys) {
    REQUIRE(::write(master, keys.data(), keys.size()) == static_cast<ssize_t>(keys.size()));
  };
  INFO(screen);
  REQUIRE(read_until("warden chat · session"));
  REQUIRE(read_until("you> "));
  // libedit prints the prompt, then puts the terminal in raw mode: keys typed before that are
  // read by the terminal's own line discipline (Ctrl-A would be a literal character). Wait
  // until the terminal is no longer canonical (the master reports the terminal's modes).
  {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    termios modes{};
    while (::tcgetattr(master, &modes) == 0 && (modes.c_lflag & ICANON) &&
           std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    REQUIRE_FALSE(modes.c_lflag & ICANON);
  }
  // Line editing: "helo", Ctrl-A (start of line), Ctrl-E (end), one backspace, "lo there".
  type("helo\x01\x05\x7flo there\r");
  REQUIRE(read_until("» hello from the model"));
  CHECK(screen.find("✓ approve reply: hello from the model  [replies-ok]") != std::string::npos);
  REQUIRE(read_until("you> "));
  type("/quit\r");
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  ::close(master);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(screen.find("that was not the edited line") == std::string::npos);
}
