// Accepts incoming connections and launches the sessions; refuses connections over
// max_connections with an error frame. Survives accept errors (EMFILE) by pausing briefly.
// I/O thread only (start/stop are posted there by the daemon).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "server/asio.h"
#include "server/connections.h"
#include "server/server_context.h"

namespace warden::server {

class Listener : public std::enable_shared_from_this<Listener> {
 public:
  using tcp = boost::asio::ip::tcp;

  Listener(boost::asio::io_context& io, ServerContext& context, Connections& connections);

  // Binds and listens. Returns an error text on failure.
  std::string open(const tcp::endpoint& endpoint);
  tcp::endpoint local_endpoint() const;
  void start();
  void stop();

 private:
  void do_accept();
  void on_accept(boost::system::error_code ec, tcp::socket socket);
  void refuse(tcp::socket socket);

  boost::asio::io_context& io_;
  tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_timer_;
  ServerContext& context_;
  Connections& connections_;
  std::uint64_t next_id_ = 1;
  bool stopped_ = false;
};

}  // namespace warden::server
