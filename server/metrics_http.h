// The operations listener ([metrics] listen, `serve --metrics-listen`): plain HTTP/1.1 with
// Boost.Beast on the daemon's I/O thread, apart from the protocol listeners. It answers
// GET /metrics (server/metrics.h, Prometheus) and GET /health; any other path is 404, any
// other method 405, a request with a body or that does not parse 400, a request line and
// headers over 8 KiB or over 64 header fields 431. Each connection has metrics.timeout to send
// a whole request and to read the answer, and at most metrics.max_connections are open:
// further ones are closed unanswered. Nothing it does waits for a worker, a store or a file,
// so a slow or hostile client costs the protocol listeners and the workers nothing.
// I/O thread only (open/start before the loop runs, stop from the loop or after it).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>

#include "server/asio.h"
#include "server/server_context.h"

namespace warden::server {

class MetricsServer : public std::enable_shared_from_this<MetricsServer> {
 public:
  using tcp = boost::asio::ip::tcp;
  static constexpr std::size_t kMaxHeaderBytes = 8 * 1024;
  static constexpr std::size_t kMaxHeaderFields = 64;

  MetricsServer(boost::asio::io_context& io, ServerContext& context, const MetricsConfig& config);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Binds and listens. Returns an error text on failure.
  std::string open(const tcp::endpoint& endpoint);
  tcp::endpoint local_endpoint() const;
  void start();
  // Stops accepting and closes every open connection. Idempotent.
  void stop();

  class Connection;

 private:
  void do_accept();
  void on_accept(boost::system::error_code ec, tcp::socket socket);

  ServerContext& context_;
  MetricsConfig config_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  std::unordered_set<Connection*> open_;  // live connections (each removes itself)
  bool stopped_ = false;
};

}  // namespace warden::server
