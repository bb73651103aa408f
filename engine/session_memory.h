// SessionMemory: what earlier approved decisions of one session did (their effects), kept
// for a while and handed to later decisions of the same session as `history` facts
// (DecideRequest::history), so rules can judge a step by the steps before it: "no build of
// files this session wrote", "no network after a credential read".
//
// Security choices:
// - Keyed by (principal, session id). The principal is the authenticated one (the daemon's
//   token owner), so a session id names a session only within one principal: another
//   principal using the same id neither reads this history nor adds to it (no poisoning,
//   no leak). Only the (principal, session) that made a decision may add its effects.
// - Only APPROVED decisions are remembered (remember() checks the outcome): what was
//   rejected or is waiting for a human did not happen.
// - An empty session id is no session: nothing is recorded and the snapshot is empty.
// - The session id comes from the proposal (context.session), which the agent chooses. The
//   memory is a tripwire for an agent steered step by step (a prompt injection that first
//   writes a Makefile, then asks to run make), not a boundary against a caller that picks a
//   fresh session id for every step; rules that care can refuse proposals without a session.
// - Bounded: entries older than ttl_seconds are forgotten; a session keeps at most
//   max_entries (the oldest go first); at most max_sessions sessions and max_bytes of
//   strings are kept in all. When a cap is hit, the least recently used session of the
//   principal holding the most sessions (or bytes) goes first, so one principal that opens
//   sessions without end evicts its own, not another principal's history.
// - Identical effects (same kind, object, target and program) are kept once, the newest:
//   a session that reads one file a thousand times holds one entry.
// - Two decisions of one session decided at the same time on different workers do not see
//   each other; each sees what was approved before it started.
//
// Thread-safe: every member function may be called from any thread (one mutex). A decision
// holds its session's entries without a copy and without the lock (shared_snapshot).
// The in-memory SessionHistory (engine/session_history.h); the daemon of a fleet keeps the
// same history in PostgreSQL instead (server/session_history_pg.h).
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/decision.h"
#include "engine/session_history.h"

namespace warden {

class Engine;
struct DecideRequest;
struct DecideResult;

struct SessionMemoryOptions {
  std::int64_t ttl_seconds = 3600;    // entries older than this are forgotten
  std::size_t max_entries = 512;      // per session; the oldest are dropped first
  std::size_t max_sessions = 10000;   // in all; least recently used dropped first
  std::size_t max_bytes = 64u << 20;  // strings held in all (targets, ids, keys)
};

class SessionMemory final : public SessionHistory {
 public:
  explicit SessionMemory(SessionMemoryOptions options = {});
  SessionMemory(const SessionMemory&) = delete;
  SessionMemory& operator=(const SessionMemory&) = delete;

  std::string_view kind() const override { return "memory"; }

  // Remembers the effects of one decision, made at `time` (seconds since the epoch). The
  // caller checks that it was approved; remember() (SessionHistory) does that check itself.
  // Never throws SessionHistoryError.
  void record(const std::string& principal, const std::string& session,
              const std::string& decision_id, std::int64_t time,
              const std::vector<EffectRecord>& effects) override;
  using SessionHistory::remember;

  // The session's entries younger than ttl_seconds at `now`, oldest first (entries dated
  // after `now` are kept). Empty for an unknown or empty session id.
  std::vector<HistoryEntry> snapshot(const std::string& principal, const std::string& session,
                                     std::int64_t now) override;
  // The same entries without copying them: the session's own, which it never changes while
  // they are shared (a change copies them first). One lookup under the lock.
  HistorySnapshot shared_snapshot(const std::string& principal, const std::string& session,
                                  std::int64_t now) override;

  // Forgets one session, or all of them.
  void forget(const std::string& principal, const std::string& session) override;
  void clear();

  std::size_t session_count() const override;
  std::size_t bytes() const;
  const SessionMemoryOptions& options() const { return options_; }

 private:
  using Key = std::pair<std::string, std::string>;  // (principal, session id)
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept;
  };
  using Lru = std::list<Key>;  // one principal's sessions, least recently used first
  struct Owner {
    Lru lru;                // this principal's sessions, least recently used first
    std::size_t bytes = 0;  // what they hold
  };
  struct Session {
    std::shared_ptr<std::vector<HistoryEntry>> entries;  // in the order recorded; null: none yet
    std::size_t bytes = 0;
    Owner* owner = nullptr;  // stable: map nodes do not move
    Lru::iterator lru;
  };

  void touch(Session& s);                           // mutex_ held
  std::vector<HistoryEntry>& writable(Session& s);  // mutex_ held; copies entries a decision holds
  void expire(Session& s, std::int64_t now);        // mutex_ held
  void drop_entry(Session& s, std::size_t index);   // mutex_ held
  void erase(const Key& key);                       // mutex_ held
  void enforce_caps(const Key& keep);               // mutex_ held

  SessionMemoryOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, Session, KeyHash> sessions_;
  std::unordered_map<std::string, Owner> owners_;  // by principal
  std::size_t bytes_ = 0;
};

// Who and which session a proposal belongs to: `principal` is the authenticated principal
// when given, else the proposal's context.principal; `session` is context.session (a
// string, else ""). The same values the engine puts in the `proposal` fact.
struct SessionKey {
  std::string principal;
  std::string session;
};
SessionKey session_key(const rapidjson::Value& proposal,
                       const std::optional<std::string>& principal);
// The same from JSON text; an empty key when the text is not a JSON object.
SessionKey session_key(std::string_view proposal_json, const std::optional<std::string>& principal);

// Seconds since the epoch by the engine's clock (EngineOptions::clock), else system time.
std::int64_t engine_now(const Engine& engine);

// Decides one proposal within its session, as the daemon does: the session's history
// (snapshot at request.now, else the engine's clock, read once) goes in request.history, and an approved decision's
// effects are remembered. `record` false: decide with the history but remember nothing
// (a dry run). request.history is replaced. A store that cannot be read throws
// SessionHistoryError before anything is decided.
DecideResult decide_in_session(Engine& engine, SessionHistory& memory, DecideRequest request,
                               const SessionKey& key, bool record = true);

}  // namespace warden
