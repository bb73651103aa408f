#include "tests/support/http_fake.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace warden::testing {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string reason_phrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 307:
      return "Temporary Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Status";
  }
}

void send_all(int fd, const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string HttpSeen::header(const std::string& name) const {
  const std::string wanted = lower(name);
  for (const auto& [k, v] : headers)
    if (lower(k) == wanted) return v;
  return {};
}

HttpFake::HttpFake(const std::string& address) : host_(address) {
  fallback_.status = 500;
  fallback_.body = "no scripted answer left";
  const bool v6 = address.find(':') != std::string::npos;
  listen_fd_ = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error("HttpFake: socket failed");
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage storage{};
  socklen_t length = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&storage);
    a->sin6_family = AF_INET6;
    if (::inet_pton(AF_INET6, address.c_str(), &a->sin6_addr) != 1)
      throw std::runtime_error("HttpFake: bad address " + address);
    length = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&storage);
    a->sin_family = AF_INET;
    if (::inet_pton(AF_INET, address.c_str(), &a->sin_addr) != 1)
      throw std::runtime_error("HttpFake: bad address " + address);
    length = sizeof(sockaddr_in);
  }
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&storage), length) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    ::close(listen_fd_);
    throw std::runtime_error("HttpFake: cannot listen on " + address + ": " + std::strerror(errno));
  }
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&storage), &length);
  port_ = v6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&storage)->sin6_port)
             : ntohs(reinterpret_cast<sockaddr_in*>(&storage)->sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

HttpFake::~HttpFake() {
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  if (acceptor_.joinable()) acceptor_.join();
  ::close(listen_fd_);
  std::vector<std::thread> workers;
  {
    std::lock_guard lock(mutex_);
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    workers.swap(workers_);
  }
  for (auto& t : workers)
    if (t.joinable()) t.join();
}

std::string HttpFake::base_url() const {
  if (host_.find(':') != std::string::npos)
    return "http://[" + host_ + "]:" + std::to_string(port_);
  return "http://" + host_ + ":" + std::to_string(port_);
}

void HttpFake::push(HttpReply reply) {
  std::lock_guard lock(mutex_);
  script_.push_back(std::move(reply));
}

void HttpFake::set_fallback(HttpReply reply) {
  std::lock_guard lock(mutex_);
  fallback_ = std::move(reply);
}

void HttpFake::route(const std::string& path, std::function<HttpReply(const HttpSeen&)> handler) {
  std::lock_guard lock(mutex_);
  routes_[path] = std::move(handler);
}

std::vector<HttpSeen> HttpFake::requests() const {
  std::lock_guard lock(mutex_);
  return seen_;
}

std::size_t HttpFake::request_count() const {
  std::lock_guard lock(mutex_);
  return seen_.size();
}

void HttpFake::accept_loop() {
  while (!stopping_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    std::lock_guard lock(mutex_);
    if (stopping_) {
      ::close(fd);
      break;
    }
    open_fds_.push_back(fd);
    workers_.emplace_back([this, fd] { serve(fd); });
  }
}

HttpReply HttpFake::answer_for(const HttpSeen& seen) {
  std::function<HttpReply(const HttpSeen&)> handler;
  {
    std::lock_guard lock(mutex_);
    seen_.push_back(seen);
    std::string path = seen.target.substr(0, seen.target.find('?'));
    auto it = routes_.find(path);
    if (it != routes_.end()) {
      handler = it->second;
    } else if (!script_.empty()) {
      HttpReply reply = std::move(script_.front());
      script_.pop_front();
      return reply;
    } else {
      return fallback_;
    }
  }
  return handler(seen);
}

void HttpFake::serve(int fd) {
  std::string data;
  char buffer[16384];
  std::size_t header_end = std::string::npos;
  auto read_more = [&]() {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10000) <= 0) return false;
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
    return true;
  };
  while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
    if (data.size() > (1 << 20) || !read_more()) {
      ::shutdown(fd, SHUT_RDWR);
      return;
    }
  }
  HttpSeen seen;
  std::size_t line_end = data.find("\r\n");
  std::string request_line = data.substr(0, line_end);
  std::size_t sp1 = request_line.find(' ');
  std::size_t sp2 = request_line.find(' ', sp1 + 1);
  seen.method = request_line.substr(0, sp1);
  seen.target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::size_t pos = line_end + 2;
  std::size_t content_length = 0;
  while (pos < header_end) {
    std::size_t eol = data.find("\r\n", pos);
    std::string line = data.substr(pos, eol - pos);
    std::size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      if (lower(name) == "content-length") content_length = std::stoul(value);
      seen.headers.emplace_back(name, value);
    }
    pos = eol + 2;
  }
  const std::size_t body_start = header_end + 4;
  while (data.size() < body_start + content_length) {
    if (!read_more()) break;
  }
  seen.body = data.substr(body_start, content_length);
  HttpReply reply = answer_for(seen);
  auto until = std::chrono::steady_clock::now() + reply.delay;
  while (!stopping_ && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!reply.hang_up && !stopping_) {
    std::string out =
        "HTTP/1.1 " + std::to_string(reply.status) + " " + reason_phrase(reply.status) + "\r\n";
    bool has_type = false;
    for (const auto& [k, v] : reply.headers) {
      out += k + ": " + v + "\r\n";
      if (lower(k) == "content-type") has_type = true;
    }
    if (!has_type) out += "Content-Type: application/json\r\n";
    out += "Content-Length: " + std::to_string(reply.body.size()) + "\r\nConnection: close\r\n\r\n";
    out += reply.body;
    send_all(fd, out);
  }
  ::shutdown(fd, SHUT_RDWR);
  std::lock_guard lock(mutex_);
  open_fds_.erase(std::remove(open_fds_.begin(), open_fds_.end(), fd), open_fds_.end());
  ::close(fd);
}

}  // namespace warden::testing
