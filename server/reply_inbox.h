// Replies finished off the I/O thread (decision workers, the audit writer's completions, the
// reloader) on their way to their sessions. push() is thread-safe; the first reply into an
// empty inbox posts one drain to the I/O thread, which completes every reply waiting by then
// and flushes each session once. A group commit's replies thus cost the I/O thread one
// wake-up, not one per reply. Owned by Connections (one per I/O loop).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/asio.h"

namespace warden::server {

class Session;

class ReplyInbox {
 public:
  struct Entry {
    std::shared_ptr<Session> session;
    std::uint64_t seq = 0;
    std::string json;  // the reply (not framed)
    bool close = false;
    bool partial = false;  // an event before the final reply (Reply::partial)
  };
  // Entry::seq of a message outside any request (SessionAuth::push).
  static constexpr std::uint64_t kUnsolicited = ~std::uint64_t{0};

  // Thread-safe. `executor` is the sessions' I/O executor (the same for every session).
  void push(Entry entry, const boost::asio::any_io_executor& executor);

 private:
  void drain();  // I/O thread; defined in session.cpp

  std::mutex mutex_;
  std::vector<Entry> pending_;
  bool posted_ = false;
  std::vector<Entry> draining_;  // I/O thread only
};

}  // namespace warden::server
