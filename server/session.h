// One client connection over any Transport (TCP, TLS, Unix socket): handshake, then framed
// requests in and framed responses out, in request order even though decisions complete out
// of order on the workers (pipelining). Owns the deadlines and limits that keep hostile
// clients from holding resources: auth deadline, a small frame limit until auth, idle
// timeout, write stall, per-connection in-flight cap (reading pauses at the cap); closes
// itself when its token is revoked by a reload.
// Lifetime: shared_from_this; every pending handler holds the session. All members are
// touched only on the I/O thread; worker completions are posted back to it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "protocol/frame.h"
#include "server/asio.h"
#include "server/errors.h"
#include "server/request_handler.h"
#include "server/server_context.h"
#include "server/transport.h"

namespace warden::server {

class Connections;

class Session : public std::enable_shared_from_this<Session> {
 public:
  using Clock = std::chrono::steady_clock;

  Session(std::unique_ptr<Transport> transport, PeerInfo peer, ServerContext& context,
          Connections& connections, std::uint64_t id);
  ~Session();

  void start();
  // Shutdown: stop reading, write the replies still in flight, then close.
  void drain();
  // Closes at once; replies still in flight are dropped.
  void close();
  // Closes an unauthenticated connection to make room (admission budget); best-effort error.
  void evict();
  // The token set changed: an authenticated session whose token is gone, or now names
  // another principal or role, gets E_AUTH_REVOKED and is closed.
  void recheck_auth();
  const PeerInfo& peer() const { return peer_; }

 private:
  // One request in order: the frames it has produced so far (events of a submit, then its
  // final reply); ready once the final reply is in.
  struct Slot {
    bool ready = false;
    bool close = false;
    std::vector<OutFrame> frames;
  };
  friend class ReplyInbox;

  void on_started(boost::system::error_code ec);
  // False when the session was closed because its token no longer holds.
  bool token_still_valid();
  void on_authenticated();
  void do_read();
  void on_read(boost::system::error_code ec, std::size_t bytes);
  void process_frames();
  ReplyFn make_later(std::uint64_t seq);
  void complete(std::uint64_t seq, OutFrame frame, bool close, bool partial = false);
  // A message outside any request: after the frames already due (SessionAuth::push).
  void unsolicited(OutFrame frame);
  void flush_ready();
  // An error outside any request (framing, timeout): answered in order, then closed.
  void fail(const char* code, const std::string& message);
  void do_write();
  void on_write(boost::system::error_code ec);
  void maybe_finish();
  void arm_timer(Clock::time_point when);
  void on_timer(boost::system::error_code ec);
  std::size_t outstanding() const { return slots_.size() + write_queue_.size() + writing_.size(); }

  std::unique_ptr<Transport> transport_;
  boost::asio::steady_timer timer_;
  ServerContext& context_;
  Connections& connections_;
  RequestHandler handler_;
  const std::uint64_t id_;
  PeerInfo peer_;
  FrameDecoder decoder_;
  std::array<char, 16384> read_buffer_;
  SessionAuth auth_;

  // Requests in order; front is the oldest unanswered: its frames are written as they come,
  // a later request's wait until every request before it is answered.
  std::deque<Slot> slots_;
  std::uint64_t base_seq_ = 0;  // sequence number of slots_.front()
  std::deque<OutFrame> write_queue_;
  std::vector<OutFrame> writing_;  // frames of the one outstanding write
  std::vector<boost::asio::const_buffer> write_buffers_;

  bool reading_ = false;
  bool read_closed_ = false;  // no more requests will be read (EOF, error, drain, closing)
  bool peer_eof_ = false;
  bool no_linger_ = false;  // draining for shutdown: close as soon as replies are written
  bool lingering_ = false;  // final reply sent; discarding input until the peer closes
  bool closed_ = false;
  bool started_ = false;            // transport ready (TLS handshake done); handshake event sent
  bool admission_refused_ = false;  // its token was accepted but its principal is at a limit
  bool in_drain_ = false;           // ReplyInbox::drain: already listed for its flush

  Clock::time_point auth_deadline_;
  Clock::time_point last_activity_;
  Clock::time_point write_started_;
};

}  // namespace warden::server
