#include "engine/session_memory.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <iterator>

#include "bindings/json.h"
#include "engine/engine.h"

namespace warden {

namespace {

// What one entry costs besides its strings (the vector slot, the list and map nodes).
constexpr std::size_t kEntryOverhead = sizeof(HistoryEntry);
constexpr std::size_t kSessionOverhead = 128;

std::size_t entry_bytes(const HistoryEntry& e) {
  const EffectRecord& f = e.effect;
  return kEntryOverhead + e.decision_id.size() + f.kind.size() + f.object.size() + f.target.size() +
         f.program.size() + f.path_class.size() + f.subcommand.size() + f.via.size();
}

bool same_effect(const EffectRecord& a, const EffectRecord& b) {
  return a.kind == b.kind && a.object == b.object && a.target == b.target && a.program == b.program;
}

}  // namespace

std::size_t SessionMemory::KeyHash::operator()(const Key& k) const noexcept {
  std::size_t a = std::hash<std::string>{}(k.first);
  std::size_t b = std::hash<std::string>{}(k.second);
  return a ^ (b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
}

SessionMemory::SessionMemory(SessionMemoryOptions options) : options_(options) {
  options_.max_entries = std::max<std::size_t>(1, options_.max_entries);
  options_.max_sessions = std::max<std::size_t>(1, options_.max_sessions);
  options_.ttl_seconds = std::max<std::int64_t>(1, options_.ttl_seconds);
}

void SessionMemory::touch(Session& s) {
  s.owner->lru.splice(s.owner->lru.end(), s.owner->lru, s.lru);
}

std::vector<HistoryEntry>& SessionMemory::writable(Session& s) {
  // A decision may still hold the entries it was handed: it keeps them, and this session
  // changes a copy of its own.
  if (!s.entries)
    s.entries = std::make_shared<std::vector<HistoryEntry>>();
  else if (s.entries.use_count() > 1)
    s.entries = std::make_shared<std::vector<HistoryEntry>>(*s.entries);
  return *s.entries;
}

void SessionMemory::drop_entry(Session& s, std::size_t index) {
  auto& entries = writable(s);
  std::size_t n = entry_bytes(entries[index]);
  s.bytes -= n;
  s.owner->bytes -= n;
  bytes_ -= n;
  entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(index));
}

void SessionMemory::expire(Session& s, std::int64_t now) {
  if (!s.entries) return;
  for (std::size_t i = s.entries->size(); i-- > 0;) {
    if (now - (*s.entries)[i].time >= options_.ttl_seconds) drop_entry(s, i);
  }
}

void SessionMemory::erase(const Key& key) {
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return;
  Session& s = it->second;
  Owner* owner = s.owner;
  owner->lru.erase(s.lru);
  owner->bytes -= s.bytes;
  bytes_ -= s.bytes;
  sessions_.erase(it);
  if (owner->lru.empty()) owners_.erase(key.first);
}

void SessionMemory::enforce_caps(const Key& keep) {
  // The victim: the least recently used session (other than `keep`) of the principal that
  // holds the most sessions (by_bytes false) or bytes (true).
  auto victim = [&](bool by_bytes) -> const Key* {
    const Key* best = nullptr;
    std::size_t best_size = 0;
    for (auto& [principal, owner] : owners_) {
      std::size_t size = by_bytes ? owner.bytes : owner.lru.size();
      const Key* candidate = nullptr;
      for (const Key& k : owner.lru) {
        if (k != keep) {
          candidate = &k;
          break;
        }
      }
      if (candidate && (!best || size > best_size)) {
        best = candidate;
        best_size = size;
      }
    }
    return best;
  };
  while (sessions_.size() > options_.max_sessions) {
    const Key* k = victim(false);
    if (!k) break;
    Key copy = *k;
    erase(copy);
  }
  while (bytes_ > options_.max_bytes) {
    if (const Key* k = victim(true)) {
      Key copy = *k;
      erase(copy);
      continue;
    }
    // Only `keep` is left and it alone is over the budget: its oldest entries go.
    auto it = sessions_.find(keep);
    if (it == sessions_.end()) break;
    if (!it->second.entries || it->second.entries->empty()) {
      erase(keep);
      break;
    }
    drop_entry(it->second, 0);
  }
}

void SessionMemory::record(const std::string& principal, const std::string& session,
                           const std::string& decision_id, std::int64_t time,
                           const std::vector<EffectRecord>& effects) {
  if (session.empty() || effects.empty()) return;
  std::lock_guard lock(mutex_);
  Key key{principal, session};
  auto it = sessions_.find(key);
  if (it == sessions_.end()) {
    it = sessions_.emplace(key, Session{}).first;
    Session& s = it->second;
    Owner& owner = owners_[principal];
    s.owner = &owner;
    s.lru = owner.lru.insert(owner.lru.end(), key);
    s.bytes =
        kSessionOverhead + 2 * (principal.size() + session.size());  // the map key and the LRU node
    owner.bytes += s.bytes;
    bytes_ += s.bytes;
  }
  Session& s = it->second;
  expire(s, time);
  auto& entries = writable(s);
  for (const EffectRecord& effect : effects) {
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (same_effect(entries[i].effect, effect)) {
        drop_entry(s, i);  // the newest copy is kept, at the end
        break;
      }
    }
    HistoryEntry entry{decision_id, time, effect};
    std::size_t n = entry_bytes(entry);
    entries.push_back(std::move(entry));
    s.bytes += n;
    s.owner->bytes += n;
    bytes_ += n;
    while (entries.size() > options_.max_entries) drop_entry(s, 0);
  }
  touch(s);
  enforce_caps(key);
}

HistorySnapshot SessionMemory::shared_snapshot(const std::string& principal,
                                               const std::string& session, std::int64_t now) {
  if (session.empty()) return nullptr;
  std::lock_guard lock(mutex_);
  Key key{principal, session};
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return nullptr;
  Session& s = it->second;
  expire(s, now);
  if (!s.entries || s.entries->empty()) {
    erase(key);
    return nullptr;
  }
  touch(s);
  return s.entries;  // shared, never changed again: the next change copies
}

std::vector<HistoryEntry> SessionMemory::snapshot(const std::string& principal,
                                                  const std::string& session, std::int64_t now) {
  HistorySnapshot shared = shared_snapshot(principal, session, now);
  return shared ? *shared : std::vector<HistoryEntry>{};
}

void SessionMemory::forget(const std::string& principal, const std::string& session) {
  std::lock_guard lock(mutex_);
  erase(Key{principal, session});
}

void SessionMemory::clear() {
  std::lock_guard lock(mutex_);
  sessions_.clear();
  owners_.clear();
  bytes_ = 0;
}

std::size_t SessionMemory::session_count() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

std::size_t SessionMemory::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

SessionKey session_key(const rapidjson::Value& proposal,
                       const std::optional<std::string>& principal) {
  SessionKey key;
  if (principal) key.principal = *principal;
  if (!proposal.IsObject()) return key;
  auto context = proposal.FindMember("context");
  if (context == proposal.MemberEnd() || !context->value.IsObject()) return key;
  key.session = warden::json::string_member(context->value, "session");
  if (!principal) key.principal = warden::json::string_member(context->value, "principal");
  return key;
}

SessionKey session_key(std::string_view proposal_json,
                       const std::optional<std::string>& principal) {
  rapidjson::Document doc;
  if (json::parse(proposal_json, &doc, json::Limits::any_depth()) || !doc.IsObject())
    return SessionKey{principal.value_or(""), ""};
  return session_key(doc, principal);
}

std::int64_t engine_now(const Engine& engine) {
  if (engine.options().clock) return engine.options().clock();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

DecideResult decide_in_session(Engine& engine, SessionHistory& memory, DecideRequest request,
                               const SessionKey& key, bool record) {
  // One reading of the clock: the history's snapshot, its ages and the rules see one second.
  const std::int64_t now = request.now ? *request.now : engine_now(engine);
  request.now = now;
  const HistorySnapshot history = memory.shared_snapshot(key.principal, key.session, now);
  request.history = history && !history->empty() ? history.get() : nullptr;
  request.shared_history = request.history ? history : nullptr;
  DecideResult result = engine.decide(request);
  if (record && result.ok) memory.remember(key.principal, key.session, result.decision, now);
  return result;
}

}  // namespace warden
