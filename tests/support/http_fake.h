// HttpFake: a real HTTP/1.1 server on loopback for tests, with scripted answers — model
// APIs (answers, delays, 500s, 429s, garbage) and webhook targets (redirects, big bodies).
// One connection per request (it answers with `Connection: close`). Thread-safe.
//
//   HttpFake server;                                  // listening on 127.0.0.1:<ephemeral>
//   server.push({200, {{"Content-Type","application/json"}}, R"({"ok":true})"});
//   … call server.base_url() …
//   REQUIRE(server.requests().at(0).body.find("rm -rf") != std::string::npos);
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace warden::testing {

struct HttpReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::chrono::milliseconds delay{0};  // wait this long before answering (timeouts)
  bool hang_up = false;                // close the connection without answering
};

struct HttpSeen {
  std::string method;
  std::string target;  // path and query as sent
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string header(const std::string& name) const;  // case-insensitive; "" if absent
};

class HttpFake {
 public:
  // Listens on `address` (an IPv4 or IPv6 literal) at an ephemeral port. Throws on failure.
  explicit HttpFake(const std::string& address = "127.0.0.1");
  ~HttpFake();
  HttpFake(const HttpFake&) = delete;
  HttpFake& operator=(const HttpFake&) = delete;

  int port() const { return port_; }
  std::string base_url() const;  // "http://127.0.0.1:PORT"

  // Scripted answers, used in order by requests that no route handles.
  void push(HttpReply reply);
  // Answer when the script is empty (default: 500 "no scripted answer left").
  void set_fallback(HttpReply reply);
  // Requests whose path (target without the query) equals `path` are answered by `handler`.
  void route(const std::string& path, std::function<HttpReply(const HttpSeen&)> handler);

  std::vector<HttpSeen> requests() const;
  std::size_t request_count() const;

 private:
  void accept_loop();
  void serve(int fd);
  HttpReply answer_for(const HttpSeen& seen);

  int listen_fd_ = -1;
  int port_ = 0;
  std::string host_;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::deque<HttpReply> script_;
  HttpReply fallback_;
  std::map<std::string, std::function<HttpReply(const HttpSeen&)>> routes_;
  std::vector<HttpSeen> seen_;
  std::vector<std::thread> workers_;
  std::vector<int> open_fds_;
};

}  // namespace warden::testing
