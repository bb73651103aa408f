// The set of open sessions, so the daemon can count them, drain them on shutdown and close
// whatever is left at the deadline; and admission of new ones: connections that have not
// authenticated yet live on a small budget (in all and per peer), and the oldest of them
// make room when it is exhausted, so slots stay free for clients that do authenticate.
// Also re-checks every authenticated session when the token set changes. I/O thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "server/config.h"
#include "server/reply_inbox.h"
#include "server/roles.h"
#include "server/throttled_log.h"
#include "server/transport.h"

namespace warden::server {

class Session;

// The connections kept for approvers and admins: limits.reserved_connections, at most a
// quarter of limits.max_connections.
std::size_t reserved_connections(const Limits& limits);

class Connections {
 public:
  // Decides whether a new connection from `peer` may open. Closes the oldest
  // unauthenticated connections (of this peer, then of anyone) when a budget is full;
  // false when every slot is held by authenticated connections.
  bool make_room(const PeerInfo& peer, const Config& config);

  // Ids increase with every connection (so the oldest has the smallest id).
  std::uint64_t next_id() { return next_id_++; }
  void add(std::uint64_t id, const std::shared_ptr<Session>& session, const PeerInfo& peer,
           bool authenticated);
  // A token of `who` was accepted on connection `id`: "" when it may hold one more
  // authenticated connection (then it is counted until remove), else why not. One principal
  // holds at most limits.max_connections_per_principal connections; agents together leave
  // limits.reserved_connections of limits.max_connections to approvers and admins.
  std::string admit(std::uint64_t id, const Identity& who, const Config& config);
  // The session authenticated: it leaves the pre-auth budget.
  void authenticated(std::uint64_t id);
  void remove(std::uint64_t id);
  std::size_t size() const { return sessions_.size(); }
  std::size_t unauthenticated() const { return preauth_.size(); }

  // Stop reading everywhere; each session closes once its in-flight replies are written.
  void drain_all();
  void close_all();
  // The token set changed: every authenticated session re-checks its token.
  void recheck_auth_all();
  // Called (once) when the set becomes empty; immediately if it already is.
  void when_empty(std::function<void()> callback);

  ThrottledLog& throttled() { return throttled_; }
  // Replies from other threads to the sessions (thread-safe push).
  ReplyInbox& replies() { return replies_; }

 private:
  struct PreAuth {
    std::string budget_key;
    bool counted_per_peer = false;
  };
  void forget_preauth(std::uint64_t id);
  bool evict_oldest(const std::string* budget_key);

  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions_;
  std::map<std::uint64_t, PreAuth> preauth_;  // by id: oldest first
  std::unordered_map<std::string, std::size_t> preauth_per_peer_;
  struct Admitted {
    std::string principal;
    bool agent = false;
  };
  std::unordered_map<std::uint64_t, Admitted> admitted_;  // by id: authenticated by a token
  std::unordered_map<std::string, std::size_t> per_principal_;
  std::size_t agents_ = 0;  // admitted connections of role agent
  std::function<void()> on_empty_;
  std::uint64_t next_id_ = 1;
  ThrottledLog throttled_;
  ReplyInbox replies_;  // last: its waiting replies hold sessions
};

}  // namespace warden::server
