// A blocking client for the daemon protocol: connect, read the handshake, authenticate,
// send framed requests and read framed replies with timeouts. Used by `warden decide` and
// `warden status`, the server tests and the load generator's setup. One thread per Client.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "server/frame.h"

namespace warden::server {

class Client {
 public:
  enum class ReadStatus { Ok, Timeout, Closed, Bad };
  using ms = std::chrono::milliseconds;

  Client() = default;
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Connects to HOST:PORT ([v6]:PORT) and reads the handshake event.
  bool connect(const std::string& address, ms timeout, std::string* error);
  // Connects without reading anything (for tests of hostile clients).
  bool connect_raw(const std::string& address, ms timeout, std::string* error);
  // Sends {"type":"request","id":…,"payload":{"action":"auth","token":…}} and checks the reply.
  // On failure *error holds the error code and message.
  bool authenticate(const std::string& token, ms timeout, std::string* error);

  bool send_bytes(std::string_view bytes, std::string* error);
  bool send_message(std::string_view json, std::string* error);
  ReadStatus read_message(std::string* payload, ms timeout);

  void shutdown_write();
  void close();
  // Gives up the socket (e.g. to an asio socket) when no reply is pending; the Client is
  // then closed. Returns -1 if bytes past the last message were already received.
  int release();
  int fd() const { return fd_; }
  const std::string& handshake() const { return handshake_; }

 private:
  int fd_ = -1;
  FrameDecoder decoder_{kMaxEncodableFrame};
  std::string handshake_;
};

// {"type":"request","id":ID,"payload":{"action":ACTION<,fields>}}; id is JSON-escaped.
std::string make_request(std::string_view id, std::string_view action,
                         std::string_view fields = {});

}  // namespace warden::server
