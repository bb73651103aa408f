#include "server/connections.h"

#include <vector>

#include "server/session.h"

namespace warden::server {

void Connections::add(std::uint64_t id, const std::shared_ptr<Session>& session) {
  sessions_[id] = session;
}

void Connections::remove(std::uint64_t id) {
  sessions_.erase(id);
  if (sessions_.empty() && on_empty_) {
    auto callback = std::move(on_empty_);
    on_empty_ = nullptr;
    callback();
  }
}

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

void Connections::drain_all() {
  for (auto& session : snapshot(sessions_)) session->drain();
}

void Connections::close_all() {
  for (auto& session : snapshot(sessions_)) session->close();
}

void Connections::when_empty(std::function<void()> callback) {
  if (sessions_.empty()) {
    callback();
  } else {
    on_empty_ = std::move(callback);
  }
}

}  // namespace warden::server
