#include "server/listener.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "protocol/frame.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "server/session.h"

namespace warden::server {

namespace asio = boost::asio;
namespace fs = std::filesystem;

namespace {

// The directory of a Unix socket must be writable by us alone, or another user could
// replace the socket with their own.
std::string check_socket_directory(const std::string& path) {
  fs::path dir = fs::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    return "unix.path: cannot use directory " + dir.string() + ": " + std::strerror(errno);
  }
  if (!S_ISDIR(st.st_mode)) return "unix.path: " + dir.string() + " is not a directory";
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return "unix.path: directory " + dir.string() + " belongs to uid " + std::to_string(st.st_uid) +
           ", not to us; put the socket in a directory we own";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "unix.path: directory " + dir.string() +
           " is writable by group or others; put the socket in a directory only we can write "
           "(e.g. the state directory)";
  }
  return {};
}

// A socket file left by a daemon that died is removed; a live one (someone answers) or a
// file that is not a socket is an error.
std::string remove_stale_socket(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return "unix.path: cannot inspect " + path + ": " + std::strerror(errno);
  }
  if (!S_ISSOCK(st.st_mode)) {
    return "unix.path: " + path + " exists and is not a socket; refusing to replace it";
  }
  if (st.st_uid != ::geteuid()) {
    return "unix.path: " + path + " is a socket of uid " + std::to_string(st.st_uid) +
           ", not ours; refusing to replace it";
  }
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::string("unix.path: socket: ") + std::strerror(errno);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  int saved = errno;
  ::close(fd);
  if (rc == 0) return "unix.path: another process is listening on " + path;
  if (saved != ECONNREFUSED) {
    return "unix.path: cannot tell whether " + path + " is in use: " + std::strerror(saved);
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return "unix.path: cannot remove the stale socket " + path + ": " + std::strerror(errno);
  }
  return {};
}

bool is_loopback(asio::ip::address address) {
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  return address.is_loopback();
}

}  // namespace

Listener::Listener(asio::io_context& io, ServerContext& context, Connections& connections)
    : io_(io), retry_timer_(io), context_(context), connections_(connections) {}

Listener::~Listener() { stop(); }

std::string Listener::open_tcp(const tcp::endpoint& endpoint, asio::ssl::context* tls) {
  boost::system::error_code ec;
  tcp_.emplace(io_);
  tls_ = tls;
  tcp_->open(endpoint.protocol(), ec);
  if (!ec) tcp_->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) tcp_->bind(endpoint, ec);
  if (!ec) tcp_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    tcp_.reset();
    return "cannot listen on " + endpoint.address().to_string() + ":" +
           std::to_string(endpoint.port()) + ": " + ec.message();
  }
  return {};
}

std::string Listener::open_unix(const std::string& path, unsigned mode,
                                std::vector<unsigned> allow_uids) {
  if (path.size() >= sizeof(sockaddr_un::sun_path)) {
    return "unix.path: " + path + " is longer than " +
           std::to_string(sizeof(sockaddr_un::sun_path) - 1) + " bytes";
  }
  if (std::string error = check_socket_directory(path); !error.empty()) return error;
  if (std::string error = remove_stale_socket(path); !error.empty()) return error;
  boost::system::error_code ec;
  unix_.emplace(io_);
  unix_->open(local(), ec);
  if (!ec) unix_->bind(local::endpoint(path), ec);
  if (ec) {
    unix_.reset();
    return "unix.path: cannot bind " + path + ": " + ec.message();
  }
  // The mode is set before listen(): until then nobody can connect.
  struct stat st {};
  if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0 || ::lstat(path.c_str(), &st) != 0) {
    std::string error = "unix.path: cannot set the mode of " + path + ": " + std::strerror(errno);
    unix_.reset();
    ::unlink(path.c_str());
    return error;
  }
  unix_path_ = path;
  unix_dev_ = st.st_dev;
  unix_ino_ = st.st_ino;
  unix_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    stop();
    return "unix.path: cannot listen on " + path + ": " + ec.message();
  }
  allow_uids_ = std::move(allow_uids);
  return {};
}

Listener::tcp::endpoint Listener::local_endpoint() const {
  boost::system::error_code ec;
  return tcp_ ? tcp_->local_endpoint(ec) : tcp::endpoint();
}

void Listener::start() { do_accept(); }

void Listener::stop() {
  stopped_ = true;
  boost::system::error_code ec;
  retry_timer_.cancel();
  if (tcp_) tcp_->close(ec);
  if (unix_) unix_->close(ec);
  if (!unix_path_.empty()) {
    // Remove the socket file only if it is still the one we made.
    struct stat st {};
    if (::lstat(unix_path_.c_str(), &st) == 0 && st.st_dev == unix_dev_ && st.st_ino == unix_ino_) {
      ::unlink(unix_path_.c_str());
    }
    unix_path_.clear();
  }
}

void Listener::do_accept() {
  if (stopped_) return;
  if (tcp_) {
    tcp_->async_accept(
        io_, [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
          self->on_accept_tcp(ec, std::move(socket));
        });
  } else if (unix_) {
    unix_->async_accept(
        io_, [self = shared_from_this()](boost::system::error_code ec, local::socket socket) {
          self->on_accept_unix(ec, std::move(socket));
        });
  }
}

bool Listener::accept_failed(boost::system::error_code ec) {
  if (!ec) return false;
  // Out of descriptors or similar: pause instead of spinning; sessions will close.
  connections_.throttled().log(context_.log, spdlog::level::warn, "accept failed",
                               "accept failed: " + ec.message() + "; pausing 100 ms");
  retry_timer_.expires_after(std::chrono::milliseconds(100));
  retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code wait_ec) {
    if (!wait_ec) self->do_accept();
  });
  return true;
}

void Listener::on_accept_tcp(boost::system::error_code ec, tcp::socket socket) {
  if (stopped_ || ec == asio::error::operation_aborted) return;
  if (accept_failed(ec)) return;
  PeerInfo peer = peer_info(socket, tls_ != nullptr);
  admit(tls_ ? make_tls_transport(std::move(socket), *tls_) : make_tcp_transport(std::move(socket)),
        std::move(peer));
  do_accept();
}

void Listener::on_accept_unix(boost::system::error_code ec, local::socket socket) {
  if (stopped_ || ec == asio::error::operation_aborted) return;
  if (accept_failed(ec)) return;
  PeerInfo peer = peer_info(socket);
  auto transport = make_unix_transport(std::move(socket));
  if (!allow_uids_.empty() &&
      (!peer.credentials || std::find(allow_uids_.begin(), allow_uids_.end(),
                                      peer.credentials->uid) == allow_uids_.end())) {
    refuse(*transport, peer, err::kPeerNotAllowed, "this uid may not use the daemon");
  } else {
    admit(std::move(transport), std::move(peer));
  }
  do_accept();
}

void Listener::admit(std::unique_ptr<Transport> transport, PeerInfo peer) {
  if (!connections_.make_room(peer, *context_.config)) {
    refuse(*transport, peer, err::kTooManyConnections, "the daemon is at its connection limit");
    return;
  }
  std::uint64_t id = connections_.next_id();
  std::make_shared<Session>(std::move(transport), std::move(peer), context_, connections_, id)
      ->start();
}

void Listener::refuse(Transport& transport, const PeerInfo& peer, const char* code,
                      const std::string& message) {
  Stats::add(context_.stats.connections_refused);
  connections_.throttled().log(context_.log, spdlog::level::warn, code,
                               "refusing a connection from " + peer.text + ": " + code + ": " +
                                   message + " (" + std::to_string(connections_.size()) +
                                   " connections open)");
  // Best effort, never blocking: one small frame into an empty socket buffer (not on TLS,
  // where no handshake happened yet).
  transport.write_now(encode_frame(error_response("null", "", {code, message})));
  transport.close();
}

std::string check_tcp_exposure(const Config& config, const asio::ip::tcp::endpoint& endpoint,
                               const Logger& log) {
  if (is_loopback(endpoint.address())) return {};
  std::string where = endpoint.address().to_string() + ":" + std::to_string(endpoint.port());
  if (config.insecure_no_auth) {
    return "--insecure-no-auth is refused on the non-loopback address " + where +
           ": anyone who can reach it could decide as 'anonymous'; listen on 127.0.0.1 or "
           "use tokens";
  }
  if (!config.tls.enabled()) {
    if (!config.tls.allow_plaintext) {
      return "plain TCP on the non-loopback address " + where +
             " would send tokens in clear: set tls.cert and tls.key, or tls.allow_plaintext = "
             "true to accept the risk";
    }
    log->warn(
        "PLAINTEXT on {}: tokens and proposals travel unencrypted and clients cannot tell they "
        "talk to warden (tls.allow_plaintext = true)",
        where);
  }
  return {};
}

std::string make_server_tls(const TlsConfig& tls, asio::ssl::context* context) {
  boost::system::error_code ec;
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                           asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                           asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use,
                       ec);
  if (ec) return "tls: " + ec.message();
  context->use_certificate_chain_file(tls.cert, ec);
  if (ec) return "tls.cert: cannot use " + tls.cert + ": " + ec.message();
  context->use_private_key_file(tls.key, asio::ssl::context::pem, ec);
  if (ec) return "tls.key: cannot use " + tls.key + ": " + ec.message();
  if (SSL_CTX_check_private_key(context->native_handle()) != 1) {
    return "tls.key: " + tls.key + " does not match the certificate in " + tls.cert;
  }
  return {};
}

}  // namespace warden::server
