// SessionHistory: where the daemon keeps what the approved decisions of a session did, for the
// session's later decisions (`history` facts). Two stores implement it:
// - SessionMemory (engine/session_memory.h): in this process; a restart forgets it and another
//   daemon never sees it.
// - PgSessionHistory (server/session_history_pg.h): in the PostgreSQL database the approvals
//   store of a fleet already shares, so every daemon of the fleet decides with the same
//   history and a restart forgets nothing.
// Both keep the same things: keyed by (authenticated principal, session id); only approved
// decisions' effects; an identical effect (kind, object, target, program) once, the newest;
// at most max_entries per session (the oldest go first); entries older than ttl_seconds are
// not shown and are pruned. They differ in what bounds the whole: see each store.
//
// A store that cannot be read or written throws SessionHistoryError: the daemon turns a
// failed read into a fail-closed decision (E_SESSION_STORE), never a decision with an empty
// history. The engine layer knows only this interface: no database client is linked here.
//
// Thread-safe: every member function may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decision.h"

namespace warden {

// A session history store could not be read or written (its database is unreachable, a
// query failed, or effects of this session could not be stored and are still owed).
class SessionHistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How the store's calls have gone, for `status` and `health-check`.
struct SessionHistoryHealth {
  bool ok = true;                   // the last call succeeded
  std::string error;                // why the last failing call failed (while not ok)
  std::uint64_t read_failures = 0;  // snapshots that failed (their decisions failed closed)
  std::uint64_t remember_failures =
      0;                   // approved decisions whose effects could not be stored at once
  std::uint64_t owed = 0;  // effects not stored yet, retried (their sessions fail closed here)
  std::uint64_t lost = 0;  // effects given up on (past the retry buffer)
};

// A session's entries as one decision reads them: shared, immutable.
using HistorySnapshot = std::shared_ptr<const std::vector<HistoryEntry>>;

class SessionHistory {
 public:
  virtual ~SessionHistory() = default;

  // "memory" or "postgres".
  virtual std::string_view kind() const = 0;

  // Remembers the effects of one decision, made at `time` (seconds since the epoch). The
  // caller checks that it was approved (remember() does). Nothing for an empty session id or
  // no effects. Throws SessionHistoryError when they cannot be stored.
  virtual void record(const std::string& principal, const std::string& session,
                      const std::string& decision_id, std::int64_t time,
                      const std::vector<EffectRecord>& effects) = 0;

  // The same, finishing later: `done` is called exactly once, on any thread (possibly before
  // this returns), with "" once the effects are stored, or why they could not be. The default
  // calls record() and then done.
  using Done = std::function<void(const std::string& error)>;
  virtual void record_then(const std::string& principal, const std::string& session,
                           const std::string& decision_id, std::int64_t time,
                           const std::vector<EffectRecord>& effects, Done done) {
    std::string error;
    try {
      record(principal, session, decision_id, time, effects);
    } catch (const std::exception& e) {
      error = e.what();
    }
    done(error);
  }

  // The session's entries younger than ttl_seconds at `now`, oldest first (entries dated
  // after `now` are kept). Empty for an unknown or empty session id. Throws
  // SessionHistoryError when the history cannot be read (never an empty one instead).
  virtual std::vector<HistoryEntry> snapshot(const std::string& principal,
                                             const std::string& session, std::int64_t now) = 0;
  // The same, shared and never changed (what a decision reads); null when there are none.
  // A store that keeps its entries in memory hands them out without copying.
  virtual HistorySnapshot shared_snapshot(const std::string& principal, const std::string& session,
                                          std::int64_t now) {
    auto entries = snapshot(principal, session, now);
    if (entries.empty()) return nullptr;
    return std::make_shared<const std::vector<HistoryEntry>>(std::move(entries));
  }

  // Forgets one session.
  virtual void forget(const std::string& principal, const std::string& session) = 0;

  // Sessions held (for `status`); cheap, never blocks on a database: a store that counts
  // remotely gives the count of its last look.
  virtual std::size_t session_count() const = 0;

  virtual SessionHistoryHealth health() const { return {}; }

  // Finishes what record_then() still has to store (bounded: each waiting effect is tried
  // once more), then stops accepting: a later record_then() fails at once. Reads still work.
  // The daemon calls it at shutdown, after the audit log's last record; idempotent.
  virtual void close() {}

  // True when the decision is one whose effects join its session: approved without an
  // engine error, in a session.
  static bool rememberable(const std::string& session, const Decision& decision) {
    return !session.empty() && decision.outcome == Outcome::Approve && decision.error_code.empty();
  }

  // Records the decision's effects when it was approved without an engine error; false
  // (nothing recorded) otherwise, or when the session id is empty. Throws as record().
  bool remember(const std::string& principal, const std::string& session, const Decision& decision,
                std::int64_t time) {
    if (!rememberable(session, decision)) return false;
    record(principal, session, decision.decision_id, time, decision.effects);
    return true;
  }
};

}  // namespace warden
