#include "server/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "server/config.h"
#include "server/json_text.h"

namespace warden::server {

namespace {

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

std::string make_request(std::string_view id, std::string_view action, std::string_view fields) {
  std::string out = "{\"type\":\"request\",\"id\":";
  append_json_string(out, id);
  out += ",\"payload\":{\"action\":";
  append_json_string(out, action);
  if (!fields.empty()) {
    out += ',';
    out += fields;
  }
  out += "}}";
  return out;
}

bool Client::connect_raw(const std::string& address, ms timeout, std::string* error) {
  close();
  std::string host;
  std::uint16_t port = 0;
  if (!split_host_port(address, &host, &port)) {
    *error = "address must be HOST:PORT, not '" + address + "'";
    return false;
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* results = nullptr;
  std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &results); rc != 0) {
    *error = "cannot resolve " + host + ": " + gai_strerror(rc);
    return false;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string last_error = "no address";
  for (addrinfo* ai = results; ai; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, remaining_ms(deadline));
      if (rc == 1) {
        int so_error = 0;
        socklen_t len = sizeof so_error;
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
        rc = so_error == 0 ? 0 : -1;
        errno = so_error;
      } else {
        int saved = rc == 0 ? ETIMEDOUT : errno;
        rc = -1;
        errno = saved;
      }
    }
    if (rc == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      fd_ = fd;
      break;
    }
    last_error = std::strerror(errno);
    ::close(fd);
  }
  freeaddrinfo(results);
  if (fd_ < 0) {
    *error = "cannot connect to " + address + ": " + last_error;
    return false;
  }
  decoder_ = FrameDecoder(kMaxEncodableFrame);
  return true;
}

bool Client::connect(const std::string& address, ms timeout, std::string* error) {
  if (!connect_raw(address, timeout, error)) return false;
  std::string payload;
  ReadStatus status = read_message(&payload, timeout);
  if (status != ReadStatus::Ok) {
    *error = "no handshake from " + address;
    close();
    return false;
  }
  rapidjson::Document doc;
  doc.Parse(payload.c_str(), payload.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("payload") ||
      !doc["payload"].IsObject() || !doc["payload"].HasMember("action") ||
      !doc["payload"]["action"].IsString() ||
      std::string_view(doc["payload"]["action"].GetString()) != "handshake") {
    *error = "unexpected first message from " + address + " (not a warden daemon?)";
    close();
    return false;
  }
  handshake_ = payload;
  return true;
}

bool Client::authenticate(const std::string& token, ms timeout, std::string* error) {
  std::string fields = "\"token\":";
  append_json_string(fields, token);
  if (!send_message(make_request("auth", "auth", fields), error)) return false;
  std::string payload;
  if (read_message(&payload, timeout) != ReadStatus::Ok) {
    *error = "no reply to auth";
    return false;
  }
  rapidjson::Document doc;
  doc.Parse(payload.c_str(), payload.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("payload")) {
    *error = "malformed reply to auth";
    return false;
  }
  const auto& p = doc["payload"];
  if (p.HasMember("ok") && p["ok"].IsBool() && p["ok"].GetBool()) return true;
  if (p.HasMember("error") && p["error"].IsObject() && p["error"].HasMember("code")) {
    *error = std::string(p["error"]["code"].GetString()) + ": " +
             (p["error"].HasMember("message") ? p["error"]["message"].GetString() : "");
  } else {
    *error = "auth refused";
  }
  return false;
}

bool Client::send_bytes(std::string_view bytes, std::string* error) {
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd_, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    *error = std::string("send failed: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool Client::send_message(std::string_view json, std::string* error) {
  if (json.size() > kMaxEncodableFrame) {
    *error = "message too large for one frame";
    return false;
  }
  return send_bytes(encode_frame(json), error);
}

Client::ReadStatus Client::read_message(std::string* payload, ms timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buffer[65536];
  for (;;) {
    FrameDecoder::Result r = decoder_.next();
    if (r.status == FrameDecoder::Status::Good) {
      payload->assign(r.payload.data(), r.payload.size());
      return ReadStatus::Ok;
    }
    if (r.status == FrameDecoder::Status::Bad) return ReadStatus::Bad;
    if (fd_ < 0) return ReadStatus::Closed;
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc == 0) return ReadStatus::Timeout;
    if (rc < 0) {
      if (errno == EINTR) continue;
      return ReadStatus::Closed;
    }
    ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
    if (n == 0) return ReadStatus::Closed;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return ReadStatus::Closed;
    }
    decoder_.feed(buffer, static_cast<std::size_t>(n));
  }
}

void Client::shutdown_write() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

int Client::release() {
  if (decoder_.buffered() != 0) return -1;
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace warden::server
