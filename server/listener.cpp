#include "server/listener.h"

#include "server/errors.h"
#include "server/frame.h"
#include "server/protocol.h"
#include "server/session.h"

namespace warden::server {

namespace asio = boost::asio;

Listener::Listener(asio::io_context& io, ServerContext& context, Connections& connections)
    : io_(io), acceptor_(io), retry_timer_(io), context_(context), connections_(connections) {}

std::string Listener::open(const tcp::endpoint& endpoint) {
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    return "cannot listen on " + endpoint.address().to_string() + ":" +
           std::to_string(endpoint.port()) + ": " + ec.message();
  }
  return {};
}

Listener::tcp::endpoint Listener::local_endpoint() const {
  boost::system::error_code ec;
  return acceptor_.local_endpoint(ec);
}

void Listener::start() { do_accept(); }

void Listener::stop() {
  stopped_ = true;
  boost::system::error_code ec;
  retry_timer_.cancel();
  acceptor_.close(ec);
}

void Listener::do_accept() {
  if (stopped_) return;
  acceptor_.async_accept(
      io_, [self = shared_from_this()](boost::system::error_code ec, tcp::socket socket) {
        self->on_accept(ec, std::move(socket));
      });
}

void Listener::on_accept(boost::system::error_code ec, tcp::socket socket) {
  if (stopped_ || ec == asio::error::operation_aborted) return;
  if (ec) {
    // Out of descriptors or similar: pause instead of spinning; sessions will close.
    context_.log->warn("accept failed: {}; pausing 100 ms", ec.message());
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([self = shared_from_this()](boost::system::error_code wait_ec) {
      if (!wait_ec) self->do_accept();
    });
    return;
  }
  if (connections_.size() >= context_.config->limits.max_connections) {
    refuse(std::move(socket));
  } else {
    std::make_shared<Session>(std::move(socket), context_, connections_, next_id_++)->start();
  }
  do_accept();
}

void Listener::refuse(tcp::socket socket) {
  Stats::add(context_.stats.connections_refused);
  context_.log->warn("refusing a connection: {} connections open (limits.max_connections)",
                     connections_.size());
  // Best effort, never blocking: one small frame into an empty socket buffer.
  boost::system::error_code ec;
  socket.non_blocking(true, ec);
  std::string frame = encode_frame(error_response(
      "null", "", {err::kTooManyConnections, "the daemon is at its connection limit"}));
  socket.write_some(asio::buffer(frame), ec);
  socket.shutdown(tcp::socket::shutdown_both, ec);
  socket.close(ec);
}

}  // namespace warden::server
