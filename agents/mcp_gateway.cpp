// The MCP gateway's processes, threads and shutdown (agents/mcp_gateway.h).
#include "agents/mcp_gateway.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "agents/mcp_child.h"
#include "agents/mcp_message.h"
#include "agents/mcp_relay.h"
#include "agents/mcp_stream.h"

namespace warden::agents::mcp {

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Events for the main thread, one byte each: the client's stdin ended ('i'), the server's
// stdout ended ('o'), a child changed state ('c'), a termination signal ('t').
int g_events = -1;

void on_signal(int sig) {
  int saved = errno;
  char e = sig == SIGCHLD ? 'c' : 't';
  if (g_events >= 0) {
    ssize_t ignored = ::write(g_events, &e, 1);
    (void)ignored;
  }
  errno = saved;
}

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0) r = fds[0], w = fds[1];
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void post(char e) const {
    ssize_t ignored = ::write(w, &e, 1);
    (void)ignored;
  }
};

class SignalScope {
 public:
  explicit SignalScope(int events_fd) {
    g_events = events_fd;
    struct sigaction sa = {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &sa, &old_[i]);
    struct sigaction ign = {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_pipe_);
  }
  ~SignalScope() {
    for (int i = 0; i < 4; ++i) ::sigaction(kSignals[i], &old_[i], nullptr);
    ::sigaction(SIGPIPE, &old_pipe_, nullptr);
    g_events = -1;
  }

 private:
  static constexpr int kSignals[4] = {SIGTERM, SIGINT, SIGHUP, SIGCHLD};
  struct sigaction old_[4] = {};
  struct sigaction old_pipe_ = {};
};

void log_line(const std::string& text) {
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  std::string line = "warden mcp-gateway: " + text + "\n";
  write_all(2, line, -1);
}

// A thread that says when it is done, so shutdown never waits on one forever.
class Worker {
 public:
  template <typename F>
  explicit Worker(F body) {
    thread_ = std::thread([this, body] {
      body();
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
      cv_.notify_all();
    });
  }
  // Joins the thread when it ends within `within`; else lets it go (the process is ending).
  void finish(std::chrono::milliseconds within) {
    if (!thread_.joinable()) return;
    std::unique_lock<std::mutex> lock(mutex_);
    bool done = cv_.wait_for(lock, within, [this] { return done_; });
    lock.unlock();
    if (done) {
      thread_.join();
    } else {
      log_line("a relay thread is stuck writing; leaving it behind");
      thread_.detach();
    }
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace

int run_gateway(const GatewayOptions& options, Decider& decider, int in_fd, int out_fd) {
  Pipe events, stop_client, stop_server;
  if (events.r < 0 || stop_client.r < 0 || stop_server.r < 0) {
    log_line("cannot create pipes");
    return 1;
  }
  SignalScope signals(events.w);

  ChildProcess child;
  std::string error;
  if (!child.start(options.command, &error)) {
    log_line(error);
    return 1;
  }

  ToolGate gate(options.gate, decider);
  std::mutex out_mutex;
  bool client_gone = false;
  auto to_client = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(out_mutex);
    if (client_gone) return false;
    if (!write_all(out_fd, line + "\n", -1)) client_gone = true;
    return !client_gone;
  };
  const int child_in = child.stdin_fd();
  std::mutex in_mutex;  // both relay threads write to the server (answers to its requests)
  auto to_server = [&](const std::string& line) {
    std::lock_guard<std::mutex> lock(in_mutex);
    return write_all(child_in, line + "\n", stop_client.r);
  };
  Relay relay(gate, to_client, to_server, log_line);

  Worker client_to_server([&] {
    LineReader reader(in_fd, stop_client.r, kMaxLineBytes);
    std::string line;
    for (;;) {
      auto status = reader.next(&line);
      if (status == LineReader::Status::Line) {
        relay.from_client(line);
      } else if (status == LineReader::Status::TooLong) {
        relay.client_line_too_long();
      } else {
        break;
      }
    }
    events.post('i');
  });
  Worker server_to_client([&] {
    LineReader reader(child.stdout_fd(), stop_server.r, kMaxLineBytes);
    std::string line;
    for (;;) {
      auto status = reader.next(&line);
      if (status == LineReader::Status::Line) {
        relay.from_server(line);
      } else if (status == LineReader::Status::TooLong) {
        relay.server_line_too_long();
      } else {
        break;
      }
    }
    events.post('o');
  });

  bool client_ended = false, server_ended = false, signaled = false;
  // Waits for the next event (or `within`); false on timeout.
  auto next_event = [&](std::chrono::milliseconds within) {
    const auto deadline = Clock::now() + within;
    for (;;) {
      child.poll_exit();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() < 0) return false;
      pollfd p{events.r, POLLIN, 0};
      int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200)));
      if (r < 0 && errno != EINTR) return false;
      if (r <= 0) continue;
      char e;
      while (::read(events.r, &e, 1) == 1) {
        if (e == 'i') client_ended = true;
        if (e == 'o') server_ended = true;
        if (e == 't') signaled = true;
      }
      child.poll_exit();
      return true;
    }
  };
  auto until = [&](auto done, std::chrono::milliseconds within) {
    const auto deadline = Clock::now() + within;
    while (!done()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0 || !next_event(left)) return done();
    }
    return true;
  };

  int exit_code = 0;
  while (!client_ended && !signaled && !server_ended && !child.exited()) next_event(1h);

  if (!client_ended && !signaled) {
    // The server went first: let it finish (or drain what it wrote), then answer for it.
    if (!server_ended) until([&] { return server_ended; }, 1000ms);
    if (!until([&] { return child.exited(); }, options.grace)) child.terminate(options.grace);
    std::string why = "MCP server exited: " + child.status_text();
    log_line(why + (relay.pending() ? "; answering its pending requests with an error" : ""));
    relay.server_gone(why);
    exit_code = 1;
  } else {
    // The client went first (or we were told to stop): close the server's stdin, give it the
    // grace time to exit, then stop it.
    stop_client.post('x');
    client_to_server.finish(options.grace);
    child.close_stdin();
    if (!until([&] { return child.exited(); }, options.grace)) {
      log_line("the MCP server did not exit after its input closed; stopping it");
      child.terminate(options.grace);
    }
    until([&] { return server_ended; }, 1000ms);
    relay.server_gone("MCP server exited: " + child.status_text());
  }
  stop_client.post('x');
  stop_server.post('x');
  client_to_server.finish(5000ms);
  server_to_client.finish(5000ms);
  return exit_code;
}

}  // namespace warden::agents::mcp
