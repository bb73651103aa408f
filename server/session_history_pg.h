// PgSessionHistory: session memory (engine/session_history.h) kept in PostgreSQL, the database
// the approvals store of a fleet already shares ([approvals] store = "postgres"), so that
// "read a credential on daemon A, then reach the network on daemon B" is judged with the
// whole session's history, and a restarted daemon still has it.
//
// Same semantics as SessionMemory: keyed by (authenticated principal, session id), only
// approved effects, an identical effect (kind, object, target, program) kept once (the
// newest), at most max_entries per session (the oldest dropped), entries older than
// ttl_seconds neither shown nor kept (pruned every prune_interval). What bounds the whole
// differs: max_sessions and max_bytes are each principal's share of the database (fleet-wide):
// past either, that principal's least recently remembered sessions are dropped (then, for a
// single session alone over max_bytes, its oldest entries), so one principal never evicts
// another's history. The database holds at most (principals) × max_bytes of entries.
//
// Cost per decision: a decision in a session reads its history with one indexed query
// (prepared, on a pooled connection: one per decision worker in use); an approved one is
// remembered with one call of a PL/pgSQL function, sent by writer threads that take up to 64
// waiting calls at once and send them pipelined, as one transaction: one round trip and one
// commit per batch (calls are sent one transaction each when the batch's transaction fails).
//
// Failures: a history that cannot be read throws SessionHistoryError (the decision fails
// closed with E_SESSION_STORE). Effects that cannot be stored are logged, counted and owed:
// kept here (up to max_owed effects) and retried; while a session owes effects, its decisions
// on this daemon fail closed, and its next decision first tries to store them. Effects
// dropped past max_owed are lost: their sessions are refused on this daemon for ttl_seconds.
//
// Every statement has bound parameters only; the SQL text is constant. Principal and session
// id are stored as a SHA-256 key (the principal also in clear, for the per-principal caps);
// effects as an opaque binary entry, so no byte of a target can break a query or an encoding.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "engine/session_history.h"
#include "engine/session_memory.h"
#include "server/config.h"
#include "server/log.h"

namespace warden::server {

struct PgSessionOptions {
  std::string conninfo;  // libpq conninfo (the approvals store's)
  // ttl_seconds, max_entries (per session), max_sessions and max_bytes (per principal).
  SessionMemoryOptions limits;
  unsigned max_connections = 4;  // connections for reads (one per decision worker in use)
  unsigned writers = 1;          // threads storing effects, one connection each
  std::chrono::milliseconds prune_interval{60000};  // 0: no pruning thread (tests prune())
  std::size_t max_owed = 10000;         // effects kept for retry while they cannot be stored
  std::function<std::int64_t()> clock;  // seconds since the epoch; empty: the system clock
  Logger log;                           // null: nothing is logged
};

class PgSessionHistory final : public SessionHistory {
 public:
  // Connects, creates the tables and functions if missing (serialized between daemons by an
  // advisory lock) and starts the writer and pruning threads. Throws SessionHistoryError
  // when the database cannot be reached or set up.
  explicit PgSessionHistory(PgSessionOptions options);
  ~PgSessionHistory() override;  // stores what is queued (bounded wait), then stops
  PgSessionHistory(const PgSessionHistory&) = delete;
  PgSessionHistory& operator=(const PgSessionHistory&) = delete;

  std::string_view kind() const override { return "postgres"; }
  void record(const std::string& principal, const std::string& session,
              const std::string& decision_id, std::int64_t time,
              const std::vector<EffectRecord>& effects) override;
  void record_then(const std::string& principal, const std::string& session,
                   const std::string& decision_id, std::int64_t time,
                   const std::vector<EffectRecord>& effects, Done done) override;
  std::vector<HistoryEntry> snapshot(const std::string& principal, const std::string& session,
                                     std::int64_t now) override;
  void forget(const std::string& principal, const std::string& session) override;
  std::size_t session_count() const override;
  SessionHistoryHealth health() const override;
  void close() override;

  // Drops what expired at `now` (sessions not remembered for ttl_seconds, with their
  // entries), retries owed effects and refreshes session_count(); the pruning thread calls it
  // every prune_interval. Returns the sessions dropped. Throws SessionHistoryError.
  std::size_t prune(std::int64_t now);

  const PgSessionOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The session memory the config asks for (effective_session_store): null when [session]
// ttl_seconds = 0; a SessionMemory; or a PgSessionHistory on the approvals store's database
// ([approvals] conninfo, else the variable conninfo_env names), with a connection per decision
// worker. clock_us: the decisions' clock (µs), for pruning; null: the system clock. Throws
// SessionHistoryError when PostgreSQL cannot be reached or set up, or no conninfo is given.
std::unique_ptr<SessionHistory> open_session_history(const Config& config, unsigned workers,
                                                     Logger log,
                                                     std::function<std::int64_t()> clock_us);

}  // namespace warden::server
