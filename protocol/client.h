// A blocking client for the daemon protocol: connect (TCP, TLS or a Unix socket), read the
// handshake, authenticate, send framed requests and read framed replies (read_reply in
// protocol/reply.h) with timeouts. With TLS the server certificate is verified (CA file and
// host name, optionally a SHA-256 pin) before anything, the token included, is sent. Used by
// every `warden` client command, the agents' decider, the tests and the bench. One thread each.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/address.h"
#include "protocol/frame.h"

struct ssl_st;
struct ssl_ctx_st;

namespace warden::protocol {

// How to check the server's certificate on a TLS connection.
struct ClientTls {
  bool enabled = false;
  std::string ca_file;      // PEM trust anchors; empty: the system's store (unless pinned)
  std::string server_name;  // name the certificate must carry; empty: the host of the address
  // "sha256:HEX" of the server certificate (DER). Must match when set; with no ca_file the
  // pin alone identifies the server (a self-signed certificate).
  std::string pin;
};

// TRUE for a pin as ClientTls::pin takes it: "sha256:" and 64 hex digits (either case).
bool valid_certificate_pin(std::string_view pin);

class Client {
 public:
  enum class ReadStatus { Ok, Timeout, Closed, Bad };
  using ms = std::chrono::milliseconds;

  Client() = default;
  ~Client() { close(); }
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Applies to later connects (TCP addresses only).
  void set_tls(ClientTls tls) { tls_ = std::move(tls); }
  // authenticate() refuses (E_PLAINTEXT_TOKEN) to send a token over plain TCP to a peer that
  // is not a loopback address: anyone on the path, or a fake server on the port, would have
  // it. This lets it, when the operator said so in so many words.
  void set_allow_plaintext_token(bool allow) { allow_plaintext_token_ = allow; }
  // True when the connection is plain TCP (no TLS) to a non-loopback peer.
  bool plaintext_remote() const { return plaintext_remote_; }

  // Connects to HOST:PORT ([v6]:PORT) or unix:PATH and reads the handshake event.
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
  // What the handshake said: whether the daemon wants a token (any "auth" but "none"), and
  // its frame limit for an authenticated connection (0 when it did not say).
  bool auth_required() const { return auth_required_; }
  std::uint64_t max_frame_bytes() const { return max_frame_bytes_; }
  // SHA-256 of the server certificate's DER ("sha256:HEX"), or empty without TLS.
  const std::string& peer_certificate_sha256() const { return peer_sha256_; }

 private:
  bool start_tls(const std::string& host, std::chrono::steady_clock::time_point deadline,
                 std::string* error);
  // One read of up to size bytes: >0 bytes, 0 closed, -1 timeout, -2 error.
  long read_some(char* buffer, std::size_t size, std::chrono::steady_clock::time_point deadline);

  int fd_ = -1;
  ClientTls tls_;
  bool allow_plaintext_token_ = false;
  bool plaintext_remote_ = false;  // set by connect_raw
  ssl_ctx_st* ssl_ctx_ = nullptr;
  ssl_st* ssl_ = nullptr;
  std::string peer_sha256_;
  FrameDecoder decoder_{kMaxEncodableFrame};
  std::string handshake_;
  bool auth_required_ = true;
  std::uint64_t max_frame_bytes_ = 0;
};

// {"type":"request","id":ID,"payload":{"action":ACTION<,fields>}}; id is JSON-escaped.
std::string make_request(std::string_view id, std::string_view action,
                         std::string_view fields = {});

}  // namespace warden::protocol
