// Accepts incoming connections and launches the sessions: on TCP (plain or TLS) or on a
// Unix-domain socket. Admission goes through Connections (budgets for connections not yet
// authenticated); a connection that cannot be admitted gets an error frame and is closed.
// Unix sockets: created with a restrictive mode in a directory only we can write, stale
// sockets removed safely, peers optionally limited to an allowlist of uids.
// Survives accept errors (EMFILE) by pausing briefly. I/O thread only (start/stop are
// posted there by the daemon).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/asio.h"
#include "server/connections.h"
#include "server/server_context.h"
#include "server/transport.h"

namespace warden::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  using tcp = boost::asio::ip::tcp;
  using local = boost::asio::local::stream_protocol;

  Listener(boost::asio::io_context& io, ServerContext& context, Connections& connections);
  ~Listener();

  // Binds and listens on TCP; with tls, every connection starts with a TLS handshake.
  // Returns an error text on failure.
  std::string open_tcp(const tcp::endpoint& endpoint, boost::asio::ssl::context* tls);
  // Binds and listens on a Unix socket at path (see the header comment). Returns an error
  // text on failure.
  std::string open_unix(const std::string& path, unsigned mode, std::vector<unsigned> allow_uids);
  tcp::endpoint local_endpoint() const;
  void start();
  // Stops accepting; a Unix socket file is removed (if it is still ours).
  void stop();

 private:
  void do_accept();
  void on_accept_tcp(boost::system::error_code ec, tcp::socket socket);
  void on_accept_unix(boost::system::error_code ec, local::socket socket);
  bool accept_failed(boost::system::error_code ec);
  void admit(std::unique_ptr<Transport> transport, PeerInfo peer);
  void refuse(Transport& transport, const PeerInfo& peer, const char* code,
              const std::string& message);

  boost::asio::io_context& io_;
  std::optional<tcp::acceptor> tcp_;
  std::optional<local::acceptor> unix_;
  boost::asio::ssl::context* tls_ = nullptr;
  std::string unix_path_;
  dev_t unix_dev_ = 0;
  ino_t unix_ino_ = 0;
  std::vector<unsigned> allow_uids_;
  boost::asio::steady_timer retry_timer_;
  ServerContext& context_;
  Connections& connections_;
  bool stopped_ = false;
};

// Refuses to expose the daemon on a non-loopback TCP address without protection:
// --insecure-no-auth is refused there, and so is plain TCP unless tls.allow_plaintext (then
// a loud warning). Returns the error text, or empty when the address may be used.
std::string check_tcp_exposure(const Config& config, const boost::asio::ip::tcp::endpoint& endpoint,
                               const Logger& log);

// Makes the server-side TLS context from tls.cert / tls.key (TLS 1.2 or later). Returns the
// error text on failure.
std::string make_server_tls(const TlsConfig& tls, boost::asio::ssl::context* context);

}  // namespace warden::server
