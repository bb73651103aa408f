#include "actuators/egress.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "bindings/ip_address.h"

namespace warden::actuators::confine {
namespace {

constexpr int kHeadTimeoutMs = 10000;
constexpr int kConnectTimeoutMs = 10000;
constexpr std::size_t kMaxHead = 8192;

void send_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void reply(int fd, const char* status, const std::string& why) {
  std::string text = std::string("HTTP/1.1 ") + status +
                     "\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: " +
                     std::to_string(why.size() + 1) + "\r\n\r\n" + why + "\n";
  send_all(fd, text.data(), text.size());
}

// Connects to one address within the timeout; -1 on failure.
int connect_to(const addrinfo* a, int wake) {
  int s = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
  if (s < 0) return -1;
  if (::connect(s, a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
    ::close(s);
    return -1;
  }
  pollfd p[2] = {{s, POLLOUT, 0}, {wake, POLLIN, 0}};
  int err = 0;
  socklen_t len = sizeof err;
  if (::poll(p, 2, kConnectTimeoutMs) <= 0 || !(p[0].revents & POLLOUT) ||
      ::getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
    ::close(s);
    return -1;
  }
  ::fcntl(s, F_SETFL, ::fcntl(s, F_GETFL) & ~O_NONBLOCK);
  return s;
}

std::string address_text(const addrinfo* a) {
  char text[INET6_ADDRSTRLEN] = {0};
  if (a->ai_family == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr, text,
                sizeof text);
  else if (a->ai_family == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof text);
  return text;
}

}  // namespace

bool EgressProxy::allows(const std::string& host) const {
  std::string h = host;
  std::transform(h.begin(), h.end(), h.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!h.empty() && h.back() == '.') h.pop_back();  // "example.com." is "example.com"
  return !h.empty() && std::find(hosts_.begin(), hosts_.end(), h) != hosts_.end();
}

int EgressProxy::channel() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return -1;
  if (::pipe2(wake_, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return -1;
  }
  ours_ = sv[0];
  theirs_ = sv[1];
  return theirs_;
}

void EgressProxy::start() {
  if (ours_ < 0) return;
  thread_ = std::thread([this] { serve(); });
}

void EgressProxy::stop() {
  if (wake_[1] >= 0) {
    stopping_ = true;
    ::close(wake_[1]);  // every poller sees the hang-up
    wake_[1] = -1;
  }
  if (thread_.joinable()) thread_.join();
  for (auto& t : connections_)
    if (t.joinable()) t.join();
  connections_.clear();
  for (int* fd : {&ours_, &theirs_, &wake_[0]})
    if (*fd >= 0) {
      ::close(*fd);
      *fd = -1;
    }
}

void EgressProxy::serve() {
  // The listening socket, from the keeper.
  pollfd p[2] = {{ours_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
  while (::poll(p, 2, -1) < 0 && errno == EINTR) {
  }
  if (stopping_ || !(p[0].revents & POLLIN)) return;
  char byte;
  char control[CMSG_SPACE(sizeof(int))];
  iovec iov{&byte, 1};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (::recvmsg(ours_, &msg, MSG_CMSG_CLOEXEC) <= 0) return;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return;
  int listener;
  ::memcpy(&listener, CMSG_DATA(c), sizeof listener);
  for (;;) {
    pollfd q[2] = {{listener, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(q, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (stopping_ || (q[1].revents & (POLLIN | POLLHUP))) break;
    int client = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    connections_.emplace_back([this, client] {
      handle(client);
      ::close(client);
    });
  }
  ::close(listener);
}

void EgressProxy::handle(int client) {
  std::string head;
  char buf[16384];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > kMaxHead) return reply(client, "431 Request Header Fields Too Large", "");
    pollfd p[2] = {{client, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(p, 2, kHeadTimeoutMs) <= 0 || !(p[0].revents & (POLLIN | POLLHUP))) return;
    ssize_t n = ::recv(client, buf, sizeof buf, 0);
    if (n <= 0) return;
    head.append(buf, static_cast<std::size_t>(n));
  }
  const std::size_t end = head.find("\r\n\r\n") + 4;
  std::string rest = head.substr(end);
  const std::string line = head.substr(0, head.find("\r\n"));
  const std::size_t sp1 = line.find(' ');
  const std::size_t sp2 = sp1 == std::string::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string::npos) return reply(client, "400 Bad Request", "not an HTTP request");
  if (line.substr(0, sp1) != "CONNECT")
    return reply(client, "405 Method Not Allowed",
                 "only CONNECT (HTTPS) goes out of a confined run; plain HTTP does not");
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string host, port;
  if (!target.empty() && target.front() == '[') {
    auto close = target.find(']');
    if (close == std::string::npos || close + 1 >= target.size() || target[close + 1] != ':')
      return reply(client, "400 Bad Request", "bad CONNECT target");
    host = target.substr(1, close - 1);
    port = target.substr(close + 2);
  } else {
    auto colon = target.rfind(':');
    if (colon == std::string::npos) return reply(client, "400 Bad Request", "no port");
    host = target.substr(0, colon);
    port = target.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 ||
      port.find_first_not_of("0123456789") != std::string::npos || std::stoi(port) < 1 ||
      std::stoi(port) > 65535)
    return reply(client, "400 Bad Request", "bad port");
  if (!allows(host))
    return reply(client, "403 Forbidden", "the decision did not approve the host " + host);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), port.c_str(), &hints, &found) != 0 || !found)
    return reply(client, "502 Bad Gateway", "cannot resolve " + host);
  int upstream = -1;
  std::string refused;
  const ip::Address literal = ip::parse(host);
  for (addrinfo* a = found; a && upstream < 0; a = a->ai_next) {
    const std::string text = address_text(a);
    ip::Address parsed = ip::parse(text);
    const std::string kind = parsed.valid ? ip::classify(parsed.text) : "unknown";
    // As the http actuator: private addresses with private-network; the metadata address
    // only when the approved host names it literally.
    const bool metadata_named = kind == "metadata" && literal.valid && literal.text == parsed.text;
    if (kind != "public" && !(private_network_ && (kind != "metadata" || metadata_named))) {
      refused += (refused.empty() ? "" : ", ") + text + " (" + kind + ")";
      continue;
    }
    upstream = connect_to(a, wake_[0]);
  }
  ::freeaddrinfo(found);
  if (upstream < 0)
    return reply(client, "502 Bad Gateway",
                 refused.empty() ? "cannot connect to " + host
                                 : host + " resolved to refused addresses: " + refused);
  static constexpr char kEstablished[] = "HTTP/1.1 200 Connection established\r\n\r\n";
  send_all(client, kEstablished, sizeof kEstablished - 1);
  if (!rest.empty()) send_all(upstream, rest.data(), rest.size());
  // Relay both ways until both sides are done.
  bool client_open = true, upstream_open = true;
  while (client_open || upstream_open) {
    pollfd p[3] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0},
                   {upstream, static_cast<short>(upstream_open ? POLLIN : 0), 0},
                   {wake_[0], POLLIN, 0}};
    if (::poll(p, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (p[2].revents) break;
    for (int i = 0; i < 2; ++i) {
      if (!(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const int from = i == 0 ? client : upstream;
      const int to = i == 0 ? upstream : client;
      ssize_t n = ::recv(from, buf, sizeof buf, 0);
      if (n <= 0) {
        ::shutdown(to, SHUT_WR);
        (i == 0 ? client_open : upstream_open) = false;
      } else {
        send_all(to, buf, static_cast<std::size_t>(n));
      }
    }
  }
  ::close(upstream);
}

}  // namespace warden::actuators::confine
