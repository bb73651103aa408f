#include "server/connections.h"

#include <algorithm>
#include <vector>

#include "server/session.h"

namespace warden::server {

namespace {

std::vector<std::shared_ptr<Session>> snapshot(
    const std::unordered_map<std::uint64_t, std::weak_ptr<Session>>& sessions) {
  std::vector<std::shared_ptr<Session>> out;
  out.reserve(sessions.size());
  for (const auto& [id, weak] : sessions) {
    if (auto session = weak.lock()) out.push_back(std::move(session));
  }
  return out;
}

}  // namespace

bool Connections::make_room(const PeerInfo& peer, const Config& config) {
  const PreAuthLimits& budget = config.preauth;
  // Loopback TCP peers all share one address, so a per-peer budget would count every local
  // client as one; the Unix socket (per uid) is where local clients are told apart.
  if (!peer.loopback) {
    auto it = preauth_per_peer_.find(peer.budget_key);
    while (it != preauth_per_peer_.end() && it->second >= budget.max_per_peer) {
      if (!evict_oldest(&peer.budget_key)) break;
      it = preauth_per_peer_.find(peer.budget_key);
    }
  }
  std::size_t max_preauth = std::min(budget.max_connections, config.limits.max_connections);
  while (preauth_.size() >= max_preauth) {
    if (!evict_oldest(nullptr)) break;
  }
  while (sessions_.size() >= config.limits.max_connections) {
    if (!evict_oldest(nullptr)) return false;
  }
  return true;
}

bool Connections::evict_oldest(const std::string* budget_key) {
  for (const auto& [id, entry] : preauth_) {
    if (budget_key && entry.budget_key != *budget_key) continue;
    std::uint64_t victim = id;
    auto it = sessions_.find(victim);
    std::shared_ptr<Session> session = it == sessions_.end() ? nullptr : it->second.lock();
    forget_preauth(victim);
    if (session) {
      session->evict();  // closes; remove() runs from there
    } else {
      sessions_.erase(victim);
    }
    return true;
  }
  return false;
}

void Connections::add(std::uint64_t id, const std::shared_ptr<Session>& session,
                      const PeerInfo& peer, bool authenticated) {
  sessions_[id] = session;
  if (!authenticated) {
    preauth_[id] = PreAuth{peer.budget_key, !peer.loopback};
    if (!peer.loopback) ++preauth_per_peer_[peer.budget_key];
  }
}

std::size_t reserved_connections(const Limits& limits) {
  return std::min(limits.reserved_connections, limits.max_connections / 4);
}

std::string Connections::admit(std::uint64_t id, const Identity& who, const Config& config) {
  const Limits& l = config.limits;
  auto it = per_principal_.find(who.principal);
  const std::size_t held = it == per_principal_.end() ? 0 : it->second;
  if (held >= l.max_connections_per_principal) {
    return "principal '" + who.principal + "' already holds " + std::to_string(held) +
           " connections (limits.max_connections_per_principal = " +
           std::to_string(l.max_connections_per_principal) + ")";
  }
  const bool agent = who.role == Role::Agent;
  const std::size_t reserve = reserved_connections(l);
  if (agent && agents_ >= l.max_connections - reserve) {
    return "agents hold " + std::to_string(agents_) + " connections; the other " +
           std::to_string(reserve) +
           " of limits.max_connections are kept for approvers and admins "
           "(limits.reserved_connections)";
  }
  if (admitted_.count(id)) return {};  // counted already
  admitted_[id] = Admitted{who.principal, agent};
  ++per_principal_[who.principal];
  if (agent) ++agents_;
  return {};
}

void Connections::authenticated(std::uint64_t id) { forget_preauth(id); }

void Connections::forget_preauth(std::uint64_t id) {
  auto it = preauth_.find(id);
  if (it == preauth_.end()) return;
  if (it->second.counted_per_peer) {
    auto peer = preauth_per_peer_.find(it->second.budget_key);
    if (peer != preauth_per_peer_.end() && --peer->second == 0) preauth_per_peer_.erase(peer);
  }
  preauth_.erase(it);
}

void Connections::remove(std::uint64_t id) {
  forget_preauth(id);
  if (auto it = admitted_.find(id); it != admitted_.end()) {
    auto count = per_principal_.find(it->second.principal);
    if (count != per_principal_.end() && --count->second == 0) per_principal_.erase(count);
    if (it->second.agent) --agents_;
    admitted_.erase(it);
  }
  sessions_.erase(id);
  if (sessions_.empty() && on_empty_) {
    auto callback = std::move(on_empty_);
    on_empty_ = nullptr;
    callback();
  }
}

void Connections::drain_all() {
  for (auto& session : snapshot(sessions_)) session->drain();
}

void Connections::close_all() {
  for (auto& session : snapshot(sessions_)) session->close();
}

void Connections::recheck_auth_all() {
  for (auto& session : snapshot(sessions_)) session->recheck_auth();
}

void Connections::when_empty(std::function<void()> callback) {
  if (sessions_.empty()) {
    callback();
  } else {
    on_empty_ = std::move(callback);
  }
}

}  // namespace warden::server
