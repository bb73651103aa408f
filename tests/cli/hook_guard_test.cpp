// The hook process's last word (cli/hook_guard.h), in forked children: one answer, whatever
// happens after it; a deny with exit 2 for an overrun or a crash before it.
#include "cli/hook_guard.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using warden::agents::HookAnswer;
using warden::cli::give_hook_answer;
using warden::cli::guard_hook_process;

namespace {

struct GuardRan {
  int code = -1;  // exit status, or 128 + signal
  std::string out, err;
};

HookAnswer answer(const std::string& decision, int code) {
  HookAnswer a;
  a.stdout_json = R"({"decision":")" + decision + R"("})";
  a.stderr_text = code == 2 ? "Warden: " + decision : "";
  a.exit_code = code;
  return a;
}

// Sleeps the whole interval, through any signal that does not end the process.
void sleep_ms(long ms) {
  timespec left{ms / 1000, (ms % 1000) * 1000000L};
  while (::nanosleep(&left, &left) != 0) {
  }
}

// The body in a child process whose stdout and stderr are read to their end.
GuardRan in_child(const std::function<void()>& body) {
  int out[2], err[2];
  REQUIRE(::pipe(out) == 0);
  REQUIRE(::pipe(err) == 0);
  std::fflush(nullptr);  // nothing of this process's buffers is written again by the child
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    body();
    ::_exit(99);  // the body returned without exiting
  }
  ::close(out[1]);
  ::close(err[1]);
  GuardRan r;
  pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* into[2] = {&r.out, &r.err};
  for (int open = 2; open > 0;) {
    REQUIRE(::poll(p, 2, 60000) > 0);  // a child that hangs fails the test
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !p[i].revents) continue;
      char buf[4096];
      ssize_t n = ::read(p[i].fd, buf, sizeof buf);
      if (n > 0) {
        into[i]->append(buf, static_cast<std::size_t>(n));
      } else {
        ::close(p[i].fd);
        p[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

using std::chrono::milliseconds;

void guard(milliseconds budget) {
  guard_hook_process(budget, milliseconds(0), answer("crashed", 2), answer("overran", 2));
}

}  // namespace

TEST_CASE("hook guard: an answer stands when the process outlives its budget after it",
          "[cli][hook_guard]") {
  // The sanitizers' leak check at exit once ran past a hook's budget: the overrun's deny was
  // printed after the allow, from a string already destroyed, and the process hung.
  for (int code : {0, 2}) {
    INFO(code);
    GuardRan r = in_child([code] {
      // SIGALRM held back until after the answer, so the order is fixed whatever the load:
      // the budget runs out either before the answer (pending) or never (disarmed).
      sigset_t alarm;
      sigemptyset(&alarm);
      sigaddset(&alarm, SIGALRM);
      sigprocmask(SIG_BLOCK, &alarm, nullptr);
      guard(milliseconds(20));
      give_hook_answer(answer(code == 0 ? "allow" : "deny", code));
      sleep_ms(300);                              // far past the budget
      sigprocmask(SIG_UNBLOCK, &alarm, nullptr);  // a pending overrun would be handled here
      std::exit(code);
    });
    CHECK(r.out == (code == 0 ? "{\"decision\":\"allow\"}\n" : "{\"decision\":\"deny\"}\n"));
    CHECK(r.err == (code == 0 ? "" : "Warden: deny\n"));
    CHECK(r.code == code);
  }
}

TEST_CASE("hook guard: a crash or a stop after the answer keeps the answer and its code",
          "[cli][hook_guard]") {
  for (int sig : {SIGSEGV, SIGTERM, SIGABRT}) {
    INFO(sig);
    GuardRan r = in_child([sig] {
      guard(milliseconds(60000));
      give_hook_answer(answer("allow", 0));
      ::raise(sig);
    });
    CHECK(r.out == "{\"decision\":\"allow\"}\n");
    CHECK(r.err.empty());
    CHECK(r.code == 0);
  }
  // Only the first answer is given.
  GuardRan twice = in_child([] {
    guard(milliseconds(60000));
    CHECK(give_hook_answer(answer("allow", 0)) == 0);
    const int second = give_hook_answer(answer("deny", 2));
    ::_exit(second == 0 ? 0 : 3);
  });
  CHECK(twice.out == "{\"decision\":\"allow\"}\n");
  CHECK(twice.code == 0);
}

TEST_CASE("hook guard: no answer within the budget, or a crash before it, is a deny with exit 2",
          "[cli][hook_guard]") {
  GuardRan overran = in_child([] {
    guard(milliseconds(20));
    sleep_ms(60000);  // ended by the budget's SIGALRM
  });
  CHECK(overran.out == "{\"decision\":\"overran\"}\n");
  CHECK(overran.err == "Warden: overran\n");
  CHECK(overran.code == 2);
  for (int sig : {SIGSEGV, SIGTERM, SIGINT, SIGHUP}) {
    INFO(sig);
    GuardRan crashed = in_child([sig] {
      guard(milliseconds(60000));
      ::raise(sig);
    });
    CHECK(crashed.out == "{\"decision\":\"crashed\"}\n");
    CHECK(crashed.err == "Warden: crashed\n");
    CHECK(crashed.code == 2);
  }
}
