#include "server/session.h"

#include <algorithm>

#include "protocol/message.h"
#include "server/connections.h"
#include "server/errors.h"

namespace warden::server {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kMaxFramesPerWrite = 64;
constexpr std::chrono::milliseconds kLinger{1000};  // reading out input after a final reply

}  // namespace

Session::Session(std::unique_ptr<Transport> transport, PeerInfo peer, ServerContext& context,
                 Connections& connections, std::uint64_t id)
    : transport_(std::move(transport)),
      timer_(transport_->executor()),
      context_(context),
      connections_(connections),
      handler_(context),
      id_(id),
      peer_(std::move(peer)),
      decoder_(context.auth_required() ? std::min(context.config->preauth.max_frame_bytes,
                                                  context.config->limits.max_frame_bytes)
                                       : context.config->limits.max_frame_bytes) {}

Session::~Session() = default;

void Session::start() {
  auth_.push = [weak = weak_from_this()](std::string json) {
    std::shared_ptr<Session> self = weak.lock();
    if (!self || json.size() > kMaxEncodableFrame) return;
    auto executor = self->transport_->executor();
    Connections& connections = self->connections_;
    connections.replies().push({std::move(self), ReplyInbox::kUnsolicited, std::move(json)},
                               executor);
  };
  Stats::add(context_.stats.connections_accepted);
  Stats::add(context_.stats.connections_current);
  if (!context_.auth_required()) {
    auth_.identity = Identity{"anonymous", Role::Agent, {}, {}};
  }
  // Called from handle() on this session's I/O thread, while the session is alive.
  auth_.admit = [this](const Identity& who) {
    std::string why = connections_.admit(id_, who, *context_.config);
    if (!why.empty()) {
      admission_refused_ = true;
      connections_.throttled().log(context_.log, spdlog::level::warn,
                                   "connections refused at their limit",
                                   fmt::format("connection {} from {}: {}: {}", id_, peer_.text,
                                               err::kTooManyConnections, why));
    }
    return why;
  };
  connections_.add(id_, shared_from_this(), peer_, auth_.identity.has_value());
  context_.log->debug("connection {} from {} ({})", id_, peer_.text, peer_.transport);
  auto now = Clock::now();
  last_activity_ = now;
  // The auth deadline covers the TLS handshake too.
  auth_deadline_ = now + context_.config->limits.auth_timeout;
  arm_timer(auth_.identity ? now + context_.config->limits.idle_timeout : auth_deadline_);
  transport_->async_start(
      [self = shared_from_this()](boost::system::error_code ec) { self->on_started(ec); });
}

void Session::on_started(boost::system::error_code ec) {
  if (closed_) return;
  if (ec) {
    Stats::add(context_.stats.protocol_errors);
    connections_.throttled().log(context_.log, spdlog::level::info, "TLS handshake failed",
                                 fmt::format("connection {} from {}: TLS handshake failed: {}", id_,
                                             peer_.text, ec.message()));
    close();
    return;
  }
  started_ = true;
  write_queue_.push_back(
      make_frame(handshake_event(context_.auth_required(), context_.config->limits.max_frame_bytes,
                                 decoder_.max_frame_bytes())));
  do_write();
  do_read();
}

void Session::drain() {
  if (closed_ || read_closed_) return;
  read_closed_ = true;
  no_linger_ = true;
  transport_->shutdown_receive();
  maybe_finish();
}

void Session::close() {
  if (closed_) return;
  closed_ = true;
  auth_.closed->store(true, std::memory_order_release);   // queued decisions are dropped
  auth_.hung_up->store(true, std::memory_order_release);  // runs in flight stop
  timer_.cancel();
  transport_->close();
  slots_.clear();
  write_queue_.clear();
  decoder_.release();
  context_.log->debug("connection {} closed", id_);
  context_.stats.connections_current.fetch_sub(1, std::memory_order_relaxed);
  connections_.remove(id_);  // may run the shutdown callback; touch nothing after
}

void Session::evict() {
  if (closed_) return;
  Stats::add(context_.stats.connections_refused);
  connections_.throttled().log(
      context_.log, spdlog::level::warn, "unauthenticated connections closed to make room",
      fmt::format("connection {} from {}: closed before auth to make room for new connections "
                  "(preauth budget)",
                  id_, peer_.text));
  if (started_ && writing_.empty() && write_queue_.empty()) {
    transport_->write_now(encode_frame(error_response(
        "null", "",
        {err::kTooManyConnections,
         "closed before authenticating: the daemon needs the slot for other clients"})));
  }
  close();
}

void Session::recheck_auth() {
  if (closed_) return;
  token_still_valid();
}

bool Session::token_still_valid() {
  if (!auth_.identity || !auth_.token_hash) return true;  // not authenticated by a token
  std::shared_ptr<const TokenStore> store = context_.tokens();
  if (auth_.verified_by.lock() == store) return true;
  std::optional<Identity> now = store->identify(*auth_.token_hash);
  if (now && now->principal == auth_.identity->principal && now->role == auth_.identity->role &&
      now->groups == auth_.identity->groups) {
    auth_.verified_by = store;
    return true;
  }
  connections_.throttled().log(
      context_.log, spdlog::level::warn, err::kAuthRevoked,
      fmt::format("connection {} from {}: token of principal {} ({}) {} by a reload; closing", id_,
                  peer_.text, auth_.identity->principal, role_name(auth_.identity->role),
                  now ? "changed" : "revoked"));
  std::string principal = auth_.identity->principal;
  // Its runs in flight stop at their next step: nothing more is decided or dispatched for
  // a token that is no longer valid.
  auth_.hung_up->store(true, std::memory_order_release);
  auth_.identity.reset();
  auth_.token_hash.reset();
  fail(err::kAuthRevoked, "the token of principal '" + principal +
                              "' was revoked or changed by a reload; authenticate again");
  return false;
}

void Session::on_authenticated() {
  connections_.authenticated(id_);
  decoder_.set_max_frame_bytes(context_.config->limits.max_frame_bytes);
  context_.log->debug("connection {} from {}: authenticated principal {} as {}", id_, peer_.text,
                      auth_.identity->principal, role_name(auth_.identity->role));
}

void Session::do_read() {
  if (reading_ || closed_ || !started_) return;
  reading_ = true;
  transport_->async_read_some(
      asio::buffer(read_buffer_),
      [self = shared_from_this()](boost::system::error_code ec, std::size_t bytes) {
        self->on_read(ec, bytes);
      });
}

void Session::on_read(boost::system::error_code ec, std::size_t bytes) {
  reading_ = false;
  if (closed_) return;
  if (ec) {
    if (!is_end_of_stream(ec)) {
      if (ec != asio::error::operation_aborted) {
        context_.log->debug("connection {}: read failed: {}", id_, ec.message());
      }
      close();
      return;
    }
    peer_eof_ = true;
    auth_.hung_up->store(true, std::memory_order_release);  // runs in flight stop
    if (!slots_.empty()) {
      context_.log->debug(
          "connection {}: peer closed its side with {} request(s) in flight; "
          "runs stop at their next step",
          id_, slots_.size());
    }
    if (!read_closed_) {
      read_closed_ = true;
      if (decoder_.mid_frame()) {
        fail(err::kFrameTruncated, "connection closed inside a frame (" +
                                       std::to_string(decoder_.buffered()) +
                                       " bytes of an unfinished frame)");
      }
    }
    maybe_finish();
    return;
  }
  if (read_closed_) {
    // Input after the final reply or during a drain is discarded.
    if (lingering_) do_read();
    return;
  }
  decoder_.feed(read_buffer_.data(), bytes);
  process_frames();
}

void Session::process_frames() {
  const std::size_t cap = context_.config->limits.max_in_flight;
  while (!closed_ && !read_closed_ && outstanding() < cap) {
    FrameDecoder::Result frame = decoder_.next();
    if (frame.status == FrameDecoder::Status::NeedMore) break;
    if (frame.status == FrameDecoder::Status::Bad) {
      fail(frame.code, frame.message);
      break;
    }
    last_activity_ = Clock::now();
    // A reload may have revoked the token since the last request.
    if (!token_still_valid()) break;
    const bool was_authenticated = auth_.identity.has_value();
    const bool was_checked = auth_.token_checked;
    std::uint64_t seq = base_seq_ + slots_.size();
    slots_.emplace_back();
    std::optional<Reply> reply = handler_.handle(frame.payload, &auth_, make_later(seq));
    if (!was_authenticated && auth_.identity) {
      on_authenticated();
    } else if (!was_checked && auth_.token_checked && !auth_.identity && !admission_refused_) {
      connections_.throttled().log(
          context_.log, spdlog::level::warn, "authentication failures",
          fmt::format("connection {} from {}: authentication failed (unknown token)", id_,
                      peer_.text));
    }
    if (reply) {
      complete(seq, make_frame(std::move(reply->json)), reply->close);
      flush_ready();
    }
  }
  decoder_.compact();
  flush_ready();
  if (!closed_ && !read_closed_ && outstanding() < cap) do_read();
  maybe_finish();
}

ReplyFn Session::make_later(std::uint64_t seq) {
  // Runs on a worker, the audit writer or the reloader: hands the reply to the I/O thread
  // through the inbox (one wake-up for every reply waiting), framed there without a copy.
  return [self = shared_from_this(), seq](Reply reply) {
    auto executor = self->transport_->executor();
    Connections& connections = self->connections_;
    connections.replies().push(
        {std::move(self), seq, std::move(reply.json), reply.close, reply.partial}, executor);
  };
}

void ReplyInbox::push(Entry entry, const boost::asio::any_io_executor& executor) {
  bool post = false;
  {
    std::lock_guard lock(mutex_);
    pending_.push_back(std::move(entry));
    post = !posted_;
    posted_ = true;
  }
  if (post) asio::post(executor, [this] { drain(); });
}

void ReplyInbox::drain() {
  draining_.clear();
  {
    std::lock_guard lock(mutex_);
    draining_.swap(pending_);
    posted_ = false;  // replies pushed from now on post the next drain
  }
  // Complete every reply first, then flush each session once (its replies go out in one
  // write), then let it read again under its in-flight cap.
  std::vector<Session*> sessions;
  for (Entry& e : draining_) {
    Session& s = *e.session;
    if (s.closed_) continue;
    if (e.seq == kUnsolicited) {
      s.unsolicited(make_frame(std::move(e.json)));
    } else {
      s.complete(e.seq, make_frame(std::move(e.json)), e.close, e.partial);
    }
    if (!s.in_drain_) {
      s.in_drain_ = true;
      sessions.push_back(&s);
    }
  }
  for (Session* s : sessions) {
    s->in_drain_ = false;
    if (s->closed_) continue;
    s->flush_ready();
    if (!s->closed_) s->process_frames();
  }
  // The entries hold the sessions alive until here.
  draining_.clear();
}

void Session::complete(std::uint64_t seq, OutFrame frame, bool close, bool partial) {
  if (seq < base_seq_ || seq - base_seq_ >= slots_.size()) return;  // dropped (closing)
  Slot& slot = slots_[seq - base_seq_];
  if (slot.ready) return;  // nothing follows the final reply
  slot.frames.push_back(std::move(frame));
  if (partial) return;
  slot.ready = true;
  slot.close = close;
}

void Session::unsolicited(OutFrame frame) {
  if (read_closed_) return;
  // Behind the oldest request's frames so far (they go out as they come), else next.
  if (!slots_.empty()) {
    slots_.front().frames.push_back(std::move(frame));
  } else {
    write_queue_.push_back(std::move(frame));
    do_write();
  }
}

void Session::flush_ready() {
  bool wrote = false;
  while (!slots_.empty()) {
    Slot& front = slots_.front();
    // The oldest request's frames go out as they come (a submit's events), the final one last.
    for (OutFrame& frame : front.frames) write_queue_.push_back(std::move(frame));
    wrote = wrote || !front.frames.empty();
    front.frames.clear();
    if (!front.ready) break;
    const bool close = front.close;
    slots_.pop_front();
    ++base_seq_;
    if (close) {
      // The last reply of this connection: later requests are not answered.
      read_closed_ = true;
      base_seq_ += slots_.size();
      slots_.clear();
      break;
    }
  }
  if (wrote) do_write();
}

void Session::fail(const char* code, const std::string& message) {
  Stats::add(context_.stats.protocol_errors);
  Stats::add(context_.stats.errors);
  connections_.throttled().log(
      context_.log, spdlog::level::info, code,
      fmt::format("connection {} from {}: {}: {}", id_, peer_.text, code, message));
  read_closed_ = true;
  Slot slot;
  slot.ready = true;
  slot.close = true;
  slot.frames.push_back(make_frame(error_response("null", "", {code, message})));
  slots_.push_back(std::move(slot));
  flush_ready();
}

void Session::do_write() {
  if (!writing_.empty() || write_queue_.empty() || closed_) return;
  std::size_t n = std::min(write_queue_.size(), kMaxFramesPerWrite);
  write_buffers_.clear();
  for (std::size_t i = 0; i < n; ++i) {
    writing_.push_back(std::move(write_queue_.front()));
    write_queue_.pop_front();
  }
  for (const OutFrame& frame : writing_) {
    write_buffers_.push_back(asio::buffer(frame.prefix));
    write_buffers_.push_back(asio::buffer(frame.payload));
  }
  write_started_ = Clock::now();
  transport_->async_write(write_buffers_,
                          [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                            self->on_write(ec);
                          });
}

void Session::on_write(boost::system::error_code ec) {
  writing_.clear();
  if (closed_) return;
  if (ec) {
    context_.log->debug("connection {}: write failed: {}", id_, ec.message());
    close();
    return;
  }
  last_activity_ = Clock::now();
  do_write();
  if (writing_.empty()) process_frames();  // room under the in-flight cap again
}

void Session::maybe_finish() {
  if (closed_ || !read_closed_ || !slots_.empty() || !write_queue_.empty() || !writing_.empty()) {
    return;
  }
  if (peer_eof_ || no_linger_) {
    close();
    return;
  }
  if (!lingering_) {
    // Say goodbye with FIN, then read out what the client still sends, so the final reply
    // is not lost to a reset; the timer bounds how long.
    lingering_ = true;
    transport_->shutdown_send();
    arm_timer(Clock::now() +
              std::min<Clock::duration>(kLinger, context_.config->limits.idle_timeout));
    do_read();
  }
}

void Session::arm_timer(Clock::time_point when) {
  timer_.expires_at(when);
  timer_.async_wait(
      [self = shared_from_this()](boost::system::error_code ec) { self->on_timer(ec); });
}

void Session::on_timer(boost::system::error_code ec) {
  if (ec == asio::error::operation_aborted || closed_) return;
  const Limits& limits = context_.config->limits;
  auto now = Clock::now();
  if (lingering_) {
    close();
    return;
  }
  if (!started_) {
    // Still in the TLS handshake at the auth deadline: nothing can be sent on the stream.
    connections_.throttled().log(
        context_.log, spdlog::level::info, err::kAuthTimeout,
        fmt::format("connection {} from {}: {}: TLS handshake not finished", id_, peer_.text,
                    err::kAuthTimeout));
    close();
    return;
  }
  if (!writing_.empty() && now - write_started_ >= limits.idle_timeout) {
    connections_.throttled().log(
        context_.log, spdlog::level::info, "not reading replies",
        fmt::format("connection {} from {}: closed: not reading its replies", id_, peer_.text));
    Stats::add(context_.stats.protocol_errors);
    close();
    return;
  }
  Clock::time_point next = now + limits.idle_timeout;
  if (!read_closed_) {
    if (!auth_.identity) {
      if (now >= auth_deadline_) {
        fail(err::kAuthTimeout,
             "no successful auth within " + std::to_string(limits.auth_timeout.count()) + " ms");
        maybe_finish();
        next = now + kLinger;
      } else {
        next = auth_deadline_;
      }
    } else if (slots_.empty() && writing_.empty() && write_queue_.empty()) {
      auto idle_deadline = last_activity_ + limits.idle_timeout;
      if (now >= idle_deadline) {
        fail(err::kIdleTimeout,
             "no request for " + std::to_string(limits.idle_timeout.count()) + " ms");
        maybe_finish();
        next = now + kLinger;
      } else {
        next = idle_deadline;
      }
    }
  }
  if (!writing_.empty()) next = std::min(next, write_started_ + limits.idle_timeout);
  if (!closed_ && !lingering_) arm_timer(next);
}

}  // namespace warden::server
