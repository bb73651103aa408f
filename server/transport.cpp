#include "server/transport.h"

#include <sys/socket.h>

#include <type_traits>

namespace warden::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using local_socket = asio::local::stream_protocol::socket;
using tls_stream = asio::ssl::stream<tcp::socket>;

namespace {

template <typename Stream>
class StreamTransport final : public Transport {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, tls_stream>;

  template <typename... Args>
  explicit StreamTransport(Args&&... args) : stream_(std::forward<Args>(args)...) {}

  asio::any_io_executor executor() override { return stream_.get_executor(); }

  void async_start(StartHandler handler) override {
    if constexpr (kTls) {
      stream_.async_handshake(asio::ssl::stream_base::server, std::move(handler));
    } else {
      asio::post(stream_.get_executor(), [handler = std::move(handler)] { handler({}); });
    }
  }

  void async_read_some(asio::mutable_buffer buffer, IoHandler handler) override {
    stream_.async_read_some(buffer, std::move(handler));
  }

  void async_write(const std::vector<asio::const_buffer>& buffers, IoHandler handler) override {
    asio::async_write(stream_, buffers, std::move(handler));
  }

  void shutdown_receive() override {
    boost::system::error_code ec;
    socket().shutdown(asio::socket_base::shutdown_receive, ec);
  }
  void shutdown_send() override {
    boost::system::error_code ec;
    socket().shutdown(asio::socket_base::shutdown_send, ec);
  }
  void close() override {
    boost::system::error_code ec;
    socket().shutdown(asio::socket_base::shutdown_both, ec);
    socket().close(ec);
  }

  void write_now(std::string_view bytes) override {
    if constexpr (!kTls) {
      boost::system::error_code ec;
      socket().non_blocking(true, ec);
      socket().write_some(asio::buffer(bytes.data(), bytes.size()), ec);
    }
  }

 private:
  auto& socket() {
    if constexpr (kTls) {
      return stream_.next_layer();
    } else {
      return stream_;
    }
  }

  Stream stream_;
};

}  // namespace

PeerInfo peer_info(const tcp::socket& socket, bool tls) {
  PeerInfo peer;
  peer.transport = tls ? "tls" : "tcp";
  boost::system::error_code ec;
  auto endpoint = socket.remote_endpoint(ec);
  if (ec) {
    peer.text = "?";
    peer.budget_key = "ip:?";
    return peer;
  }
  asio::ip::address address = endpoint.address();
  if (address.is_v6() && address.to_v6().is_v4_mapped()) {
    address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
  }
  peer.loopback = address.is_loopback();
  peer.budget_key = "ip:" + address.to_string();
  peer.text = (address.is_v6() ? "[" + address.to_string() + "]" : address.to_string()) + ":" +
              std::to_string(endpoint.port());
  return peer;
}

PeerInfo peer_info(const local_socket& socket) {
  PeerInfo peer;
  peer.transport = "unix";
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(const_cast<local_socket&>(socket).native_handle(), SOL_SOCKET, SO_PEERCRED, &cred,
                 &len) == 0 &&
      len == sizeof cred) {
    peer.credentials = PeerInfo::UnixCredentials{cred.uid, cred.gid, cred.pid};
    peer.text = "unix uid=" + std::to_string(cred.uid) + " gid=" + std::to_string(cred.gid) +
                " pid=" + std::to_string(cred.pid);
    peer.budget_key = "uid:" + std::to_string(cred.uid);
  } else {
    peer.text = "unix (no peer credentials)";
    peer.budget_key = "uid:?";
  }
  return peer;
}

std::unique_ptr<Transport> make_tcp_transport(tcp::socket socket) {
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  return std::make_unique<StreamTransport<tcp::socket>>(std::move(socket));
}

std::unique_ptr<Transport> make_tls_transport(tcp::socket socket, asio::ssl::context& context) {
  boost::system::error_code ec;
  socket.set_option(tcp::no_delay(true), ec);
  return std::make_unique<StreamTransport<tls_stream>>(std::move(socket), context);
}

std::unique_ptr<Transport> make_unix_transport(local_socket socket) {
  return std::make_unique<StreamTransport<local_socket>>(std::move(socket));
}

bool is_end_of_stream(const boost::system::error_code& ec) {
  return ec == asio::error::eof || ec == asio::ssl::error::stream_truncated;
}

}  // namespace warden::server
