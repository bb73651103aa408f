// The set of open sessions, so the daemon can count them (max_connections), drain them on
// shutdown and close whatever is left at the deadline. I/O thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace warden::server {

class Session;

class Connections {
 public:
  void add(std::uint64_t id, const std::shared_ptr<Session>& session);
  void remove(std::uint64_t id);
  std::size_t size() const { return sessions_.size(); }

  // Stop reading everywhere; each session closes once its in-flight replies are written.
  void drain_all();
  void close_all();
  // Called (once) when the set becomes empty; immediately if it already is.
  void when_empty(std::function<void()> callback);

 private:
  std::unordered_map<std::uint64_t, std::weak_ptr<Session>> sessions_;
  std::function<void()> on_empty_;
};

}  // namespace warden::server
