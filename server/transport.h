// The byte stream under a session — plain TCP, TLS over TCP, or a Unix-domain socket — behind
// one small interface, so a Session behaves the same on each; plus what is known about the
// peer (address, or the uid/gid/pid the kernel reports for a Unix socket).
// Made by the Listener, owned by one Session; I/O thread only.
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/asio.h"
// clang-format off
#include <boost/asio/ssl.hpp>
// clang-format on

namespace warden::server {

// Who is at the other end, as far as the kernel can tell.
struct PeerInfo {
  struct UnixCredentials {
    uid_t uid = 0;
    gid_t gid = 0;
    pid_t pid = 0;
  };
  const char* transport = "tcp";  // "tcp", "tls" or "unix"
  std::string text;               // for logs: "127.0.0.1:40000" or "unix uid=1000 gid=1000 pid=7"
  std::string budget_key;         // what pre-auth budgets count per peer: "ip:…" or "uid:…"
  bool loopback = false;          // TCP from a loopback address (every local process looks alike)
  std::optional<UnixCredentials> credentials;  // Unix sockets (SO_PEERCRED)
};

PeerInfo peer_info(const boost::asio::ip::tcp::socket& socket, bool tls);
PeerInfo peer_info(const boost::asio::local::stream_protocol::socket& socket);

class Transport {
 public:
  using IoHandler = std::function<void(boost::system::error_code, std::size_t)>;
  using StartHandler = std::function<void(boost::system::error_code)>;

  virtual ~Transport() = default;
  virtual boost::asio::any_io_executor executor() = 0;
  // TLS: the server side of the handshake. Plain streams complete at once (posted).
  virtual void async_start(StartHandler handler) = 0;
  virtual void async_read_some(boost::asio::mutable_buffer buffer, IoHandler handler) = 0;
  // Writes all of the buffers (one outstanding write at a time).
  virtual void async_write(const std::vector<boost::asio::const_buffer>& buffers,
                           IoHandler handler) = 0;
  virtual void shutdown_receive() = 0;
  virtual void shutdown_send() = 0;
  virtual void close() = 0;
  // Best effort, never blocking: hands bytes to an idle plain socket (a last error frame
  // before a close). Does nothing on TLS, where nothing may be written outside the stream.
  virtual void write_now(std::string_view bytes) = 0;
};

std::unique_ptr<Transport> make_tcp_transport(boost::asio::ip::tcp::socket socket);
std::unique_ptr<Transport> make_tls_transport(boost::asio::ip::tcp::socket socket,
                                              boost::asio::ssl::context& context);
std::unique_ptr<Transport> make_unix_transport(boost::asio::local::stream_protocol::socket socket);

// True for errors that mean the peer went away cleanly: EOF, or TLS closed without
// close_notify (frames are self-delimiting, so a cut inside one is still detected).
bool is_end_of_stream(const boost::system::error_code& ec);

}  // namespace warden::server
