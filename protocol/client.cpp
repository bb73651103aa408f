#include "protocol/client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <rapidjson/document.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "bindings/digest.h"
#include "bindings/json.h"
#include "engine/diagnostic.h"
#include "protocol/json_text.h"

namespace warden::protocol {

namespace {

// Whether the connected socket's peer is a loopback address.
bool peer_is_loopback(int fd) {
  sockaddr_storage peer{};
  socklen_t len = sizeof peer;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return false;
  char text[INET6_ADDRSTRLEN] = {};
  if (peer.ss_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&peer)->sin_addr, text, sizeof text);
  } else if (peer.ss_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&peer)->sin6_addr, text, sizeof text);
  } else {
    return false;
  }
  return is_loopback_ip(text);
}

int remaining_ms(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// SSL_write writes to the socket with write(2): keep a closed peer from raising SIGPIPE
// (the process may not ignore it) by blocking it on this thread and consuming it.
class SigpipeGuard {
 public:
  SigpipeGuard() {
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe, &old_);
  }
  ~SigpipeGuard() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      sigset_t pipe;
      sigemptyset(&pipe);
      sigaddset(&pipe, SIGPIPE);
      timespec zero{0, 0};
      sigtimedwait(&pipe, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t old_{};
  bool was_pending_ = false;
};

std::string openssl_error() {
  unsigned long e = ERR_get_error();
  if (e == 0) return "TLS error";
  char text[256];
  ERR_error_string_n(e, text, sizeof text);
  ERR_clear_error();
  return text;
}

// Waits for the socket; false on timeout or error.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) return false;
    if (errno != EINTR) return false;
  }
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
  auto deadline = std::chrono::steady_clock::now() + timeout;
  if (address.rfind("unix:", 0) == 0) {
    std::string path = address.substr(5);
    sockaddr_un addr{};
    if (path.empty() || path.size() >= sizeof addr.sun_path) {
      *error = "unix socket path must be 1-" + std::to_string(sizeof addr.sun_path - 1) + " bytes";
      return false;
    }
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
      *error = std::string("socket: ") + std::strerror(errno);
      return false;
    }
    int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    while (rc != 0 && errno == EAGAIN && std::chrono::steady_clock::now() < deadline) {
      // The listen backlog is full: try again until the deadline.
      ::poll(nullptr, 0, 10);
      rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    }
    if (rc != 0) {
      *error = "cannot connect to " + address + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    fd_ = fd;
    decoder_ = FrameDecoder(kMaxEncodableFrame);
    return true;
  }
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
  // Where the connection really goes (after name resolution): a token may travel in clear
  // text only to this host.
  plaintext_remote_ = !tls_.enabled && !peer_is_loopback(fd_);
  decoder_ = FrameDecoder(kMaxEncodableFrame);
  if (tls_.enabled && !start_tls(host, deadline, error)) {
    close();
    return false;
  }
  return true;
}

bool Client::start_tls(const std::string& host, std::chrono::steady_clock::time_point deadline,
                       std::string* error) {
  ERR_clear_error();
  ssl_ctx_ = SSL_CTX_new(TLS_client_method());
  if (!ssl_ctx_) {
    *error = "TLS: " + openssl_error();
    return false;
  }
  SSL_CTX_set_min_proto_version(ssl_ctx_, TLS1_2_VERSION);
  const bool pinned = !tls_.pin.empty();
  const bool verify_chain = !tls_.ca_file.empty() || !pinned;
  if (!tls_.ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ssl_ctx_, tls_.ca_file.c_str(), nullptr) != 1) {
      *error = "TLS: cannot load CA file " + tls_.ca_file + ": " + openssl_error();
      return false;
    }
  } else if (!pinned) {
    SSL_CTX_set_default_verify_paths(ssl_ctx_);
  }
  SSL_CTX_set_verify(ssl_ctx_, verify_chain ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  ssl_ = SSL_new(ssl_ctx_);
  if (!ssl_ || SSL_set_fd(ssl_, fd_) != 1) {
    *error = "TLS: " + openssl_error();
    return false;
  }
  SSL_set_mode(ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  const std::string name = tls_.server_name.empty() ? host : tls_.server_name;
  unsigned char ip[16];
  const bool is_ip =
      inet_pton(AF_INET, name.c_str(), ip) == 1 || inet_pton(AF_INET6, name.c_str(), ip) == 1;
  if (!is_ip) SSL_set_tlsext_host_name(ssl_, name.c_str());
  if (verify_chain) {
    int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), name.c_str())
                   : SSL_set1_host(ssl_, name.c_str());
    if (ok != 1) {
      *error = "TLS: cannot check the server name '" + name + "'";
      return false;
    }
  }
  SigpipeGuard guard;
  for (;;) {
    ERR_clear_error();
    int rc = SSL_connect(ssl_);
    if (rc == 1) break;
    int e = SSL_get_error(ssl_, rc);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
      if (!wait_for(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
        *error = "TLS handshake timed out";
        return false;
      }
      continue;
    }
    long verify = SSL_get_verify_result(ssl_);
    *error = verify != X509_V_OK ? std::string("TLS: the server certificate is not trusted: ") +
                                       X509_verify_cert_error_string(verify)
                                 : "TLS handshake failed: " + openssl_error();
    return false;
  }
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (!cert) {
    *error = "TLS: the server sent no certificate";
    return false;
  }
  unsigned char* der = nullptr;
  int der_size = i2d_X509(cert, &der);
  X509_free(cert);
  if (der_size <= 0) {
    *error = "TLS: cannot read the server certificate";
    return false;
  }
  const std::string der_bytes(reinterpret_cast<const char*>(der),
                              static_cast<std::size_t>(der_size));
  OPENSSL_free(der);
  peer_sha256_ = "sha256:" + digest::sha256_hex(der_bytes);
  if (pinned) {
    std::string want = tls_.pin;
    for (char& c : want) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (want != peer_sha256_) {
      *error =
          "TLS: the server certificate (" + peer_sha256_ + ") does not match the pin " + tls_.pin;
      return false;
    }
  }
  return true;
}

bool Client::connect(const std::string& address, ms timeout, std::string* error) {
  if (!connect_raw(address, timeout, error)) return false;
  std::string payload;
  ReadStatus status = read_message(&payload, timeout);
  if (status != ReadStatus::Ok) {
    *error = status == ReadStatus::Timeout ? "timed out waiting for the handshake from " + address
                                           : "no handshake from " + address;
    close();
    return false;
  }
  rapidjson::Document doc;
  // Whatever answers at `address`: outside text, the shared limits.
  if (json::parse(payload, &doc) || !doc.IsObject() || !doc.HasMember("payload") ||
      !doc["payload"].IsObject() || !doc["payload"].HasMember("action") ||
      !doc["payload"]["action"].IsString() ||
      std::string_view(doc["payload"]["action"].GetString()) != "handshake") {
    *error = "unexpected first message from " + address + " (not a warden daemon?)";
    close();
    return false;
  }
  handshake_ = payload;
  const rapidjson::Value& p = doc["payload"];
  auto auth = p.FindMember("auth");
  auth_required_ = !(auth != p.MemberEnd() && auth->value.IsString() &&
                     std::string_view(auth->value.GetString()) == "none");
  auto frame = p.FindMember("max_frame_bytes");
  max_frame_bytes_ =
      frame != p.MemberEnd() && frame->value.IsUint64() ? frame->value.GetUint64() : 0;
  return true;
}

bool valid_certificate_pin(std::string_view pin) {
  return pin.size() == 7 + 64 && pin.starts_with("sha256:") &&
         pin.find_first_not_of("0123456789abcdefABCDEF", 7) == std::string_view::npos;
}

bool Client::authenticate(const std::string& token, ms timeout, std::string* error) {
  if (plaintext_remote_ && !allow_plaintext_token_) {
    *error = std::string(code::kPlaintextToken) +
             ": not sending the token over plain TCP to a host that is not this one: use TLS "
             "(--tls with --ca or --pin), the Unix socket (--unix), or say "
             "--allow-plaintext-token";
    return false;
  }
  std::string fields = "\"token\":";
  append_json_string(fields, token);
  if (!send_message(make_request("auth", "auth", fields), error)) return false;
  std::string payload;
  if (ReadStatus status = read_message(&payload, timeout); status != ReadStatus::Ok) {
    *error = status == ReadStatus::Timeout ? "timed out waiting for the reply to auth"
                                           : "no reply to auth";
    return false;
  }
  rapidjson::Document doc;
  const rapidjson::Value* p = nullptr;
  if (json::parse(payload, &doc) || !(p = json::member(doc, "payload")) || !p->IsObject()) {
    *error = "malformed reply to auth";
    return false;
  }
  if (const rapidjson::Value* ok = json::member(*p, "ok"); ok && ok->IsBool() && ok->GetBool())
    return true;
  // The daemon's error, when it names its code; any other shape is a plain refusal.
  const rapidjson::Value* e = json::member(*p, "error");
  const std::string code = e ? json::string_member(*e, "code") : "";
  *error = code.empty() ? "auth refused" : code + ": " + json::string_member(*e, "message");
  return false;
}

bool Client::send_bytes(std::string_view bytes, std::string* error) {
  std::size_t sent = 0;
  if (ssl_) {
    SigpipeGuard guard;
    while (sent < bytes.size()) {
      ERR_clear_error();
      int n = SSL_write(ssl_, bytes.data() + sent,
                        static_cast<int>(std::min<std::size_t>(bytes.size() - sent, 1 << 20)));
      if (n > 0) {
        sent += static_cast<std::size_t>(n);
        continue;
      }
      int e = SSL_get_error(ssl_, n);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        pollfd p{fd_, static_cast<short>(e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT), 0};
        ::poll(&p, 1, 1000);
        continue;
      }
      *error = "send failed: " + openssl_error();
      return false;
    }
    return true;
  }
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
    long n = read_some(buffer, sizeof buffer, deadline);
    if (n == -1) return ReadStatus::Timeout;
    if (n <= 0) return ReadStatus::Closed;
    decoder_.feed(buffer, static_cast<std::size_t>(n));
  }
}

long Client::read_some(char* buffer, std::size_t size,
                       std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (ssl_) {
      // Decrypted bytes may already wait inside OpenSSL: read first, poll only when asked.
      // (A read may also write, e.g. a TLS alert: no SIGPIPE from that either.)
      SigpipeGuard guard;
      ERR_clear_error();
      int n = SSL_read(ssl_, buffer, static_cast<int>(size));
      if (n > 0) return n;
      int e = SSL_get_error(ssl_, n);
      if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
        ERR_clear_error();
        return 0;  // close_notify, or the peer closed the connection
      }
      if (!wait_for(fd_, e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT, deadline)) {
        return remaining_ms(deadline) == 0 ? -1 : -2;
      }
      continue;
    }
    pollfd p{fd_, POLLIN, 0};
    int rc = ::poll(&p, 1, remaining_ms(deadline));
    if (rc == 0) return -1;
    if (rc < 0) {
      if (errno == EINTR) continue;
      return -2;
    }
    ssize_t n = ::recv(fd_, buffer, size, 0);
    if (n == 0) return 0;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return -2;
    }
    return n;
  }
}

void Client::shutdown_write() {
  if (ssl_) {
    SigpipeGuard guard;
    SSL_shutdown(ssl_);  // close_notify
  }
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

int Client::release() {
  if (decoder_.buffered() != 0 || ssl_) return -1;
  int fd = fd_;
  fd_ = -1;
  return fd;
}

void Client::close() {
  plaintext_remote_ = false;
  auth_required_ = true;
  max_frame_bytes_ = 0;
  if (ssl_) SSL_free(ssl_);
  ssl_ = nullptr;
  if (ssl_ctx_) SSL_CTX_free(ssl_ctx_);
  ssl_ctx_ = nullptr;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  peer_sha256_.clear();
}

}  // namespace warden::protocol
