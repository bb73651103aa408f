// The hook process's signal handlers and its one answer (cli/hook_guard.h).
#include "cli/hook_guard.h"

#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <string>

namespace warden::cli {

namespace {

struct LastWord {
  std::string out;  // stdout, one JSON line
  std::string err;  // stderr, one line
};

// Allocated once and never freed: a handler may run while static destructors do (a slow exit
// past the budget), and must never read a destroyed string.
const LastWord* g_crash = nullptr;
const LastWord* g_overrun = nullptr;

// 0: no answer yet; 1: the answer is being written; 2: answered (with g_code).
volatile sig_atomic_t g_state = 0;
volatile sig_atomic_t g_code = 2;

void write_all(int fd, const std::string& text) {
  std::size_t at = 0;
  while (at < text.size()) {
    ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n <= 0) return;
    at += static_cast<std::size_t>(n);
  }
}

void last_word(const LastWord* w) {
  if (g_state == 2) ::_exit(g_code);  // the answer stands
  if (g_state == 1) ::_exit(2);       // cut short mid-answer: exit 2 is a deny to both agents
  if (w) {
    write_all(STDOUT_FILENO, w->out);
    write_all(STDERR_FILENO, w->err);
  }
  ::_exit(2);
}

extern "C" void on_crash(int) { last_word(g_crash); }
extern "C" void on_overrun(int) { last_word(g_overrun); }

const LastWord* prepared(const agents::HookAnswer& a) {
  return new LastWord{a.stdout_json + "\n", a.stderr_text + "\n"};
}

void disarm_budget() {
  itimerval off{};
  setitimer(ITIMER_REAL, &off, nullptr);
  ::signal(SIGALRM, SIG_IGN);
}

}  // namespace

void guard_hook_process(std::chrono::milliseconds budget, std::chrono::milliseconds grace,
                        const agents::HookAnswer& on_crash_answer,
                        const agents::HookAnswer& on_overrun_answer) {
  g_crash = prepared(on_crash_answer);
  g_overrun = prepared(on_overrun_answer);
  // The handlers run on their own stack: a stack overflow (deep recursion) is a SIGSEGV that
  // could not run a handler on the exhausted stack, and dying by the signal is no exit 2.
  static char alt_stack[64 * 1024];
  stack_t ss{};
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  sigaltstack(&ss, nullptr);
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_ONSTACK;
  sa.sa_handler = on_crash;
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGHUP})
    sigaction(s, &sa, nullptr);
  sa.sa_handler = on_overrun;
  sigaction(SIGALRM, &sa, nullptr);
  ::signal(SIGPIPE, SIG_IGN);
  const auto total = budget + grace;
  itimerval t{};
  t.it_value.tv_sec = static_cast<time_t>(total.count() / 1000);
  t.it_value.tv_usec = static_cast<suseconds_t>((total.count() % 1000) * 1000);
  setitimer(ITIMER_REAL, &t, nullptr);
}

int give_hook_answer(const agents::HookAnswer& a) {
  if (g_state != 0) return g_code;
  // A SIGALRM before this line is the overrun's answer (and this one is never written);
  // after it, none comes.
  disarm_budget();
  g_state = 1;
  write_all(STDOUT_FILENO, a.stdout_json + "\n");
  if (!a.stderr_text.empty()) write_all(STDERR_FILENO, a.stderr_text + "\n");
  g_code = a.exit_code;
  g_state = 2;
  return a.exit_code;
}

}  // namespace warden::cli
