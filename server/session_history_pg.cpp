// PgSessionHistory (server/session_history_pg.h): session memory in PostgreSQL.
//
// Tables (created if missing, under an advisory lock):
//   warden_session_owners   (principal) → sessions, bytes: each principal's share, kept exact
//                           by the functions below; its row is locked first by every change
//                           to the principal's sessions, so those serialize fleet-wide and
//                           evictions never deadlock.
//   warden_sessions         (skey) → principal, last_used, next_seq, entries, bytes, oldest
//   warden_session_effects  (skey, ekey) → seq, time, bytes, entry
// skey is SHA-256 of (principal, session id), ekey SHA-256 of (kind, object, target,
// program): the primary key makes an identical effect one row. `entry` is the rest of the
// HistoryEntry in a small binary form (below), so targets of any bytes (NUL, invalid UTF-8,
// megabytes) are data, never SQL and never an index key.
// Functions (PL/pgSQL, one call per remember, forget or prune of one principal):
//   warden_session_remember_v1, warden_session_forget_v1, warden_session_prune_v1.
#include "server/session_history_pg.h"

#include <libpq-fe.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "bindings/digest.h"
#include "bindings/text.h"
#include "server/throttled_log.h"

namespace warden::server {
// Named, not anonymous: PgSessionHistory::Impl holds these types, and in the library's unity
// build this file is included into another, where an anonymous namespace would give Impl's
// members internal linkage (-Wsubobject-linkage).
namespace session_pg {

// Serializes schema creation between daemons starting at the same moment (the approvals
// store uses 727001).
constexpr const char* kSchemaLockKey = "727002";
// A remember batch: at most this many calls, and about this many bytes, per round trip.
constexpr std::size_t kBatchJobs = 64;
constexpr std::size_t kBatchBytes = 1u << 20;
// After a failed connection attempt, reads fail at once for this long instead of each
// waiting for its own attempt (a worker must not wait connect_timeout per decision).
constexpr auto kDownFor = std::chrono::milliseconds(500);
// Owed effects are retried this often.
constexpr auto kRetryEvery = std::chrono::seconds(1);
// Sessions refused on this daemon because effects were lost: at most this many remembered.
constexpr std::size_t kMaxLostSessions = 100000;
// What a session costs besides its entries (as SessionMemory counts it).
constexpr std::int64_t kSessionOverhead = 128;

[[noreturn]] void fail(const std::string& what) {
  throw SessionHistoryError("session store (postgres): " + what);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// ---- the schema ---------------------------------------------------------------------------

const char* const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS warden_session_owners ("
    " principal TEXT PRIMARY KEY,"
    " sessions BIGINT NOT NULL DEFAULT 0,"
    " bytes BIGINT NOT NULL DEFAULT 0)",
    "CREATE TABLE IF NOT EXISTS warden_sessions ("
    " skey BYTEA PRIMARY KEY,"
    " principal TEXT NOT NULL,"
    " last_used BIGINT NOT NULL,"
    " next_seq BIGINT NOT NULL DEFAULT 0,"
    " entries BIGINT NOT NULL DEFAULT 0,"
    " bytes BIGINT NOT NULL DEFAULT 0,"
    " oldest BIGINT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS warden_sessions_lru ON warden_sessions (principal, last_used)",
    "CREATE INDEX IF NOT EXISTS warden_sessions_expiry ON warden_sessions (last_used)",
    "CREATE TABLE IF NOT EXISTS warden_session_effects ("
    " skey BYTEA NOT NULL,"
    " ekey BYTEA NOT NULL,"
    " seq BIGINT NOT NULL,"
    " time BIGINT NOT NULL,"
    " bytes BIGINT NOT NULL,"
    " entry BYTEA NOT NULL,"
    " PRIMARY KEY (skey, ekey))",
    "CREATE INDEX IF NOT EXISTS warden_session_effects_order ON warden_session_effects (skey, seq)",

    // One decision's effects, in one transaction. The principal's row is locked first.
    R"SQL(CREATE OR REPLACE FUNCTION warden_session_remember_v1(
    p_skey BYTEA, p_principal TEXT, p_time BIGINT, p_cutoff BIGINT, p_max_entries BIGINT,
    p_max_sessions BIGINT, p_max_bytes BIGINT, p_session_bytes BIGINT,
    p_ekeys BYTEA[], p_entries BYTEA[], p_sizes BIGINT[])
RETURNS BIGINT LANGUAGE plpgsql AS $fn$
DECLARE
  v_n BIGINT := coalesce(array_length(p_ekeys, 1), 0);
  v_added BIGINT := coalesce((SELECT sum(z) FROM unnest(p_sizes) AS z), 0);
  v_sessions BIGINT;
  v_bytes BIGINT;
  v_sessions0 BIGINT;
  v_bytes0 BIGINT;
  v_created BOOLEAN;
  v_seq BIGINT;
  v_entries BIGINT;
  v_sbytes BIGINT;
  v_oldest BIGINT;
  v_entries0 BIGINT;
  v_sbytes0 BIGINT;
  v_oldest0 BIGINT;
  v_gone_n BIGINT;
  v_gone_b BIGINT;
  v_victim RECORD;
  v_evicted BIGINT := 0;
BEGIN
  SELECT sessions, bytes INTO v_sessions, v_bytes FROM warden_session_owners
    WHERE principal = p_principal FOR UPDATE;
  IF NOT FOUND THEN
    INSERT INTO warden_session_owners (principal) VALUES (p_principal) ON CONFLICT DO NOTHING;
    SELECT sessions, bytes INTO v_sessions, v_bytes FROM warden_session_owners
      WHERE principal = p_principal FOR UPDATE;
  END IF;
  v_sessions0 := v_sessions;
  v_bytes0 := v_bytes;
  INSERT INTO warden_sessions AS s (skey, principal, last_used, next_seq, entries, bytes, oldest)
    VALUES (p_skey, p_principal, p_time, v_n, 0, p_session_bytes, p_time)
    ON CONFLICT (skey) DO UPDATE SET last_used = greatest(s.last_used, EXCLUDED.last_used),
                                     next_seq = s.next_seq + v_n
    RETURNING (s.xmax = 0), s.next_seq, s.entries, s.bytes, s.oldest
    INTO v_created, v_seq, v_entries, v_sbytes, v_oldest;
  v_entries0 := v_entries;
  v_sbytes0 := v_sbytes;
  v_oldest0 := v_oldest;
  IF v_created THEN
    v_sessions := v_sessions + 1;
    v_bytes := v_bytes + p_session_bytes;
  END IF;
  -- Its entries past the ttl.
  IF v_oldest <= p_cutoff THEN
    WITH gone AS (DELETE FROM warden_session_effects
                  WHERE skey = p_skey AND time <= p_cutoff RETURNING bytes)
    SELECT count(*), coalesce(sum(bytes), 0) INTO v_gone_n, v_gone_b FROM gone;
    v_entries := v_entries - v_gone_n;
    v_sbytes := v_sbytes - v_gone_b;
    v_bytes := v_bytes - v_gone_b;
    SELECT coalesce(min(time), p_time) INTO v_oldest FROM warden_session_effects
      WHERE skey = p_skey;
  END IF;
  -- An identical effect recorded before is replaced: the newest is kept, at the end.
  WITH gone AS (DELETE FROM warden_session_effects
                WHERE skey = p_skey AND ekey = ANY (p_ekeys) RETURNING bytes)
  SELECT count(*), coalesce(sum(bytes), 0) INTO v_gone_n, v_gone_b FROM gone;
  INSERT INTO warden_session_effects (skey, ekey, seq, time, bytes, entry)
    SELECT p_skey, u.k, v_seq - v_n + u.i, p_time, u.z, u.b
    FROM unnest(p_ekeys, p_entries, p_sizes) WITH ORDINALITY AS u(k, b, z, i);
  v_entries := v_entries - v_gone_n + v_n;
  v_sbytes := v_sbytes - v_gone_b + v_added;
  v_bytes := v_bytes - v_gone_b + v_added;
  v_oldest := least(v_oldest, p_time);
  -- At most max_entries: the oldest go.
  IF v_entries > p_max_entries THEN
    WITH gone AS (DELETE FROM warden_session_effects
                  WHERE skey = p_skey AND seq IN (
                    SELECT seq FROM warden_session_effects WHERE skey = p_skey
                    ORDER BY seq LIMIT v_entries - p_max_entries)
                  RETURNING bytes)
    SELECT count(*), coalesce(sum(bytes), 0) INTO v_gone_n, v_gone_b FROM gone;
    v_entries := v_entries - v_gone_n;
    v_sbytes := v_sbytes - v_gone_b;
    v_bytes := v_bytes - v_gone_b;
  END IF;
  -- Over the principal's share: its least recently remembered other sessions go, then,
  -- when this session alone is over max_bytes, its oldest entries.
  IF v_sessions > p_max_sessions OR v_bytes > p_max_bytes THEN
    FOR v_victim IN SELECT skey, bytes FROM warden_sessions
                    WHERE principal = p_principal AND skey <> p_skey
                    ORDER BY last_used, skey LOOP
      EXIT WHEN v_sessions <= p_max_sessions AND v_bytes <= p_max_bytes;
      DELETE FROM warden_session_effects WHERE skey = v_victim.skey;
      DELETE FROM warden_sessions WHERE skey = v_victim.skey;
      v_sessions := v_sessions - 1;
      v_bytes := v_bytes - v_victim.bytes;
      v_evicted := v_evicted + 1;
    END LOOP;
    WHILE v_bytes > p_max_bytes AND v_entries > 0 LOOP
      WITH gone AS (DELETE FROM warden_session_effects
                    WHERE skey = p_skey AND seq = (
                      SELECT min(seq) FROM warden_session_effects WHERE skey = p_skey)
                    RETURNING bytes)
      SELECT count(*), coalesce(sum(bytes), 0) INTO v_gone_n, v_gone_b FROM gone;
      EXIT WHEN v_gone_n = 0;
      v_entries := v_entries - v_gone_n;
      v_sbytes := v_sbytes - v_gone_b;
      v_bytes := v_bytes - v_gone_b;
    END LOOP;
  END IF;
  -- Rows are written only when they change: an effect the session already had, remembered
  -- again, leaves the counters as they were.
  IF v_created OR v_entries <> v_entries0 OR v_sbytes <> v_sbytes0 OR v_oldest <> v_oldest0 THEN
    UPDATE warden_sessions SET entries = v_entries, bytes = v_sbytes, oldest = v_oldest
      WHERE skey = p_skey;
  END IF;
  IF v_sessions <> v_sessions0 OR v_bytes <> v_bytes0 THEN
    UPDATE warden_session_owners SET sessions = v_sessions, bytes = v_bytes
      WHERE principal = p_principal;
  END IF;
  RETURN v_evicted;
END
$fn$)SQL",

    R"SQL(CREATE OR REPLACE FUNCTION warden_session_forget_v1(p_skey BYTEA, p_principal TEXT)
RETURNS BIGINT LANGUAGE plpgsql AS $fn$
DECLARE
  v_b BIGINT;
BEGIN
  PERFORM 1 FROM warden_session_owners WHERE principal = p_principal FOR UPDATE;
  DELETE FROM warden_session_effects WHERE skey = p_skey;
  DELETE FROM warden_sessions WHERE skey = p_skey AND principal = p_principal
    RETURNING bytes INTO v_b;
  IF NOT FOUND THEN
    RETURN 0;
  END IF;
  UPDATE warden_session_owners SET sessions = greatest(sessions - 1, 0),
                                   bytes = greatest(bytes - v_b, 0)
    WHERE principal = p_principal;
  RETURN 1;
END
$fn$)SQL",

    // One principal's sessions not remembered since the cutoff, with their entries.
    R"SQL(CREATE OR REPLACE FUNCTION warden_session_prune_v1(p_principal TEXT, p_cutoff BIGINT)
RETURNS BIGINT LANGUAGE plpgsql AS $fn$
DECLARE
  v_n BIGINT;
  v_b BIGINT;
BEGIN
  PERFORM 1 FROM warden_session_owners WHERE principal = p_principal FOR UPDATE;
  WITH gone AS (DELETE FROM warden_sessions
                WHERE principal = p_principal AND last_used <= p_cutoff
                RETURNING skey, bytes),
       effects AS (DELETE FROM warden_session_effects e USING gone WHERE e.skey = gone.skey)
  SELECT count(*), coalesce(sum(bytes), 0) INTO v_n, v_b FROM gone;
  UPDATE warden_session_owners SET sessions = greatest(sessions - v_n, 0),
                                   bytes = greatest(bytes - v_b, 0)
    WHERE principal = p_principal;
  RETURN v_n;
END
$fn$)SQL",
};

// Prepared on every connection.
constexpr const char* kSnapshotSql =
    "SELECT time, entry FROM warden_session_effects WHERE skey = $1::bytea AND time > $2::bigint "
    "ORDER BY seq";
constexpr const char* kRememberSql =
    "SELECT warden_session_remember_v1($1::bytea, $2::text, $3::bigint, $4::bigint, $5::bigint, "
    "$6::bigint, $7::bigint, $8::bigint, $9::bytea[], $10::bytea[], $11::bigint[])";
constexpr const char* kForgetSql = "SELECT warden_session_forget_v1($1::bytea, $2::text)";

// ---- encoding ------------------------------------------------------------------------------

std::string sha256(std::string_view data) {
  digest::Sha256 md;
  try {
    md = digest::sha256(data);
  } catch (const std::runtime_error&) {
    fail("SHA-256 failed");
  }
  return std::string(reinterpret_cast<const char*>(md.data()), md.size());
}

void put_u32(std::string& out, std::uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

void put_str(std::string& out, std::string_view s) {
  put_u32(out, static_cast<std::uint32_t>(s.size()));
  out.append(s);
}

class Reader {
 public:
  Reader(const char* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint32_t u32() {
    need(4);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(*p_++);
    return v;
  }
  std::string str() {
    std::uint32_t n = u32();
    need(n);
    std::string s(p_, n);
    p_ += n;
    return s;
  }
  unsigned char byte() {
    need(1);
    return static_cast<unsigned char>(*p_++);
  }
  bool done() const { return p_ == end_; }

 private:
  void need(std::size_t n) {
    if (static_cast<std::size_t>(end_ - p_) < n) fail("a stored history entry is malformed");
  }
  const char* p_;
  const char* end_;
};

// The session key: SHA-256 of principal and session id (length-prefixed: no two pairs
// collide by concatenation).
std::string session_key_of(const std::string& principal, const std::string& session) {
  std::string in = "warden-session-v1";
  put_str(in, principal);
  put_str(in, session);
  return sha256(in);
}

// The effect key: what makes two effects identical (SessionMemory's same_effect).
std::string effect_key_of(const EffectRecord& f) {
  std::string in;
  put_str(in, f.kind);
  put_str(in, f.object);
  put_str(in, f.target);
  put_str(in, f.program);
  return sha256(in);
}

constexpr unsigned char kEntryVersion = 1;

std::string encode_entry(const std::string& decision_id, const EffectRecord& f) {
  std::string out;
  out.push_back(static_cast<char>(kEntryVersion));
  put_str(out, decision_id);
  put_str(out, f.kind);
  put_str(out, f.object);
  put_str(out, f.target);
  put_str(out, f.program);
  put_str(out, f.path_class);
  put_str(out, f.subcommand);
  put_str(out, f.via);
  out.push_back(static_cast<char>((f.in_workspace ? 1 : 0) | (f.dynamic ? 2 : 0)));
  return out;
}

HistoryEntry decode_entry(const char* data, std::size_t size, std::int64_t time) {
  Reader r(data, size);
  if (r.byte() != kEntryVersion) fail("a stored history entry has an unknown version");
  HistoryEntry e;
  e.time = time;
  e.decision_id = r.str();
  EffectRecord& f = e.effect;
  f.kind = r.str();
  f.object = r.str();
  f.target = r.str();
  f.program = r.str();
  f.path_class = r.str();
  f.subcommand = r.str();
  f.via = r.str();
  unsigned char flags = r.byte();
  f.in_workspace = (flags & 1) != 0;
  f.dynamic = (flags & 2) != 0;
  if (!r.done()) fail("a stored history entry is malformed");
  return e;
}

// What an entry counts against max_bytes: the same measure as SessionMemory's.
std::int64_t entry_bytes(const std::string& decision_id, const EffectRecord& f) {
  return static_cast<std::int64_t>(sizeof(HistoryEntry) + decision_id.size() + f.kind.size() +
                                   f.object.size() + f.target.size() + f.program.size() +
                                   f.path_class.size() + f.subcommand.size() + f.via.size());
}

// A PostgreSQL array literal of bytea values in hex ({"\\x0a1b",...}): only hex digits
// inside, so nothing needs escaping beyond the backslash.
std::string bytea_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += "\"\\\\x";
    text::append_hex(out, items[i].data(), items[i].size());
    out += '"';
  }
  out += '}';
  return out;
}

std::string int_array(const std::vector<std::int64_t>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(items[i]);
  }
  out += '}';
  return out;
}

std::int64_t be_int64(const char* p) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return static_cast<std::int64_t>(v);
}

// ---- libpq ---------------------------------------------------------------------------------

class Result {
 public:
  explicit Result(PGresult* r = nullptr) : r_(r) {}
  ~Result() { PQclear(r_); }
  Result(Result&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Result& operator=(Result&& o) noexcept {
    std::swap(r_, o.r_);
    return *this;
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  PGresult* get() const { return r_; }
  int rows() const { return PQntuples(r_); }
  std::string text(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col),
                       static_cast<std::size_t>(PQgetlength(r_, row, col)));
  }

 private:
  PGresult* r_;
};

// One parameter: text, or binary (bytea).
struct Param {
  std::string value;
  bool binary = false;
};

// Defaults the operator's conninfo may override (it is expanded after them): bounded
// connection attempts and statements, and TCP keepalives and a user timeout, so a dead
// server or network fails a call within seconds instead of holding a decision worker.
constexpr const char* kDefaultKeys[] = {
    "connect_timeout",  "keepalives_idle",  "keepalives_interval",
    "keepalives_count", "tcp_user_timeout", "options",
    "application_name", "dbname",           nullptr};

struct Conn {
  PGconn* pg = nullptr;
  ~Conn() {
    if (pg) PQfinish(pg);
  }
  bool ok() const { return pg && PQstatus(pg) == CONNECTION_OK; }
};

// Arrays for PQexecParams / PQexecPrepared / PQsendQueryPrepared; keeps params alive while in
// use.
struct Bound {
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  explicit Bound(const std::vector<Param>& params) {
    for (const Param& p : params) {
      // libpq passes text parameters as C strings: a NUL would silently cut the value.
      if (!p.binary && p.value.find('\0') != std::string::npos)
        fail("a value contains a NUL character");
      values.push_back(p.value.data());
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
    }
  }
  int n() const { return static_cast<int>(values.size()); }
};

// A statement's result, or its failure thrown (the server's message, else the connection's).
Result succeeded(PGconn* c, Result r) {
  if (!r.get()) fail(trimmed(PQerrorMessage(c)));
  ExecStatusType st = PQresultStatus(r.get());
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string msg = trimmed(PQresultErrorMessage(r.get()));
    if (msg.empty()) msg = trimmed(PQerrorMessage(c));
    fail(msg);
  }
  return r;
}

Result run_sql(PGconn* c, const char* sql, const std::vector<Param>& params = {}) {
  Bound b(params);
  return succeeded(c, Result(PQexecParams(c, sql, b.n(), nullptr, b.values.data(), b.lengths.data(),
                                          b.formats.data(), 0)));
}

Result run_prepared(PGconn* c, const char* name, const std::vector<Param>& params,
                    int result_format = 0) {
  Bound b(params);
  return succeeded(c, Result(PQexecPrepared(c, name, b.n(), b.values.data(), b.lengths.data(),
                                            b.formats.data(), result_format)));
}

std::unique_ptr<Conn> connect(const std::string& conninfo) {
  const char* values[] = {"5",
                          "30",
                          "10",
                          "3",
                          "10000",
                          "-c statement_timeout=10000",
                          "warden-sessions",
                          conninfo.c_str(),
                          nullptr};
  auto conn = std::make_unique<Conn>();
  conn->pg = PQconnectdbParams(kDefaultKeys, values, 1);
  if (!conn->pg) fail("out of memory connecting");
  PQsetNoticeProcessor(
      conn->pg, [](void*, const char*) {}, nullptr);
  if (PQstatus(conn->pg) != CONNECTION_OK)
    fail("cannot connect: " + trimmed(PQerrorMessage(conn->pg)));
  if (PQsetClientEncoding(conn->pg, "UTF8") != 0) {
    fail("cannot set the client encoding: " + trimmed(PQerrorMessage(conn->pg)));
  }
  return conn;
}

void prepare(Conn& conn) {
  for (auto [name, sql] :
       {std::pair{"ws_snapshot", kSnapshotSql}, std::pair{"ws_remember", kRememberSql},
        std::pair{"ws_forget", kForgetSql}}) {
    Result r(PQprepare(conn.pg, name, sql, 0, nullptr));
    if (!r.get() || PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      fail(std::string("cannot prepare ") + name + ": " +
           trimmed(r.get() ? PQresultErrorMessage(r.get()) : PQerrorMessage(conn.pg)));
    }
  }
}

std::unique_ptr<Conn> connect_prepared(const std::string& conninfo) {
  auto conn = connect(conninfo);
  prepare(*conn);
  return conn;
}

// Connections for reads (and owed effects, forget, prune): taken by one caller at a time,
// at most `max` open, idle ones kept.
class Pool {
 public:
  Pool(std::string conninfo, unsigned max)
      : conninfo_(std::move(conninfo)), max_(std::max(1u, max)) {}

  std::unique_ptr<Conn> take() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (!idle_.empty()) {
        auto c = std::move(idle_.back());
        idle_.pop_back();
        return c;
      }
      if (open_ < max_) break;
      cv_.wait(lock);
    }
    if (std::chrono::steady_clock::now() < down_until_) fail(last_error_);
    ++open_;
    lock.unlock();
    try {
      return connect_prepared(conninfo_);
    } catch (const SessionHistoryError& e) {
      lock.lock();
      --open_;
      down_until_ = std::chrono::steady_clock::now() + kDownFor;
      last_error_ = std::string(e.what()).substr(std::string("session store (postgres): ").size());
      cv_.notify_one();
      throw;
    }
  }

  // broken: the connection is closed, and so are the idle ones (a server restart broke
  // them all; the next call connects afresh).
  void give_back(std::unique_ptr<Conn> c, bool broken) {
    std::vector<std::unique_ptr<Conn>> closing;
    {
      std::lock_guard lock(mu_);
      if (broken || !c->ok()) {
        closing.push_back(std::move(c));
        --open_;
        for (auto& i : idle_) closing.push_back(std::move(i));
        open_ -= idle_.size();
        idle_.clear();
      } else {
        idle_.push_back(std::move(c));
      }
    }
    cv_.notify_all();
  }

 private:
  const std::string conninfo_;
  const unsigned max_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> idle_;
  unsigned open_ = 0;
  std::chrono::steady_clock::time_point down_until_{};
  std::string last_error_;
};

// One decision's effects, ready to send.
struct Job {
  std::uint64_t id = 0;
  std::string skey;
  std::string principal;
  std::int64_t time = 0;
  std::int64_t session_bytes = 0;
  std::string ekeys, entries, sizes;  // array literals
  std::size_t count = 0;              // effects
  SessionHistory::Done done;          // empty for owed jobs
};

}  // namespace session_pg
using namespace session_pg;

struct PgSessionHistory::Impl {
  PgSessionOptions options;
  Pool pool;
  ThrottledLog throttled{5, std::chrono::seconds(60)};

  // Writers.
  std::mutex mu;  // queue, stop, owed, lost, health error
  std::condition_variable wake;
  std::deque<Job> queue;
  bool stopping = false;
  bool stopped = false;  // stop() ran
  std::vector<std::thread> writers;
  std::uint64_t next_job = 1;

  // Effects that could not be stored yet, by session key, in order; and sessions whose
  // effects were given up on: refused here until the time given.
  struct Owed {
    std::deque<Job> jobs;
  };
  std::unordered_map<std::string, Owed> owed;
  std::deque<std::string> owed_order;  // session keys, first owed first
  std::size_t owed_effects = 0;
  std::map<std::string, std::int64_t> lost;  // session key → refused until (seconds)

  // Pruning.
  std::mutex prune_mu;
  std::condition_variable prune_wake;
  bool prune_stop = false;
  std::thread pruner;

  // Health.
  std::atomic<bool> ok{true};
  std::string error;  // under mu
  std::atomic<std::uint64_t> read_failures{0}, remember_failures{0}, lost_effects{0};
  std::atomic<std::size_t> sessions{0};

  explicit Impl(PgSessionOptions o)
      : options(std::move(o)), pool(options.conninfo, options.max_connections) {
    options.limits.max_entries = std::max<std::size_t>(1, options.limits.max_entries);
    options.limits.max_sessions = std::max<std::size_t>(1, options.limits.max_sessions);
    options.limits.ttl_seconds = std::max<std::int64_t>(1, options.limits.ttl_seconds);
    options.writers = std::max(1u, options.writers);
    if (!options.clock) {
      options.clock = [] {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
      };
    }
  }

  void log(spdlog::level::level_enum level, std::string_view kind, const std::string& message) {
    if (options.log) throttled.log(options.log, level, kind, message);
  }

  void failed(const std::string& what) {
    ok.store(false);
    std::lock_guard lock(mu);
    error = what;
  }
  void succeeded() {
    if (ok.load(std::memory_order_relaxed)) return;
    bool recovered = false;
    {
      std::lock_guard lock(mu);
      if (!ok.load()) {
        ok.store(true);
        error.clear();
        recovered = true;
      }
    }
    if (recovered && options.log) options.log->info("session store (postgres): working again");
  }

  void create_schema() {
    auto conn = connect(options.conninfo);
    run_sql(conn->pg, "BEGIN");
    run_sql(conn->pg,
            (std::string("SELECT pg_advisory_xact_lock(") + kSchemaLockKey + ")").c_str());
    for (const char* statement : kSchema) run_sql(conn->pg, statement);
    run_sql(conn->pg, "COMMIT");
    refresh_count(*conn);
  }

  void refresh_count(Conn& conn) {
    Result r = run_sql(conn.pg, "SELECT coalesce(sum(sessions), 0) FROM warden_session_owners");
    sessions.store(static_cast<std::size_t>(std::stoll(r.text(0, 0))));
  }

  // Runs f on a pooled connection; once more on a fresh one when the connection turned out
  // broken (a server restart closes every idle connection).
  template <class F>
  auto with_conn(F f) -> decltype(f(std::declval<Conn&>())) {
    for (int attempt = 0;; ++attempt) {
      std::unique_ptr<Conn> conn = pool.take();
      try {
        auto result = f(*conn);
        pool.give_back(std::move(conn), false);
        return result;
      } catch (const SessionHistoryError&) {
        const bool broken = !conn->ok();
        pool.give_back(std::move(conn), broken);
        if (!broken || attempt > 0) throw;
      }
    }
  }

  Job make_job(const std::string& principal, const std::string& session,
               const std::string& decision_id, std::int64_t time,
               const std::vector<EffectRecord>& effects) {
    // Identical effects within one decision: the last is kept (as SessionMemory keeps it).
    std::vector<std::string> keys, entries;
    std::vector<std::int64_t> sizes;
    for (const EffectRecord& f : effects) {
      std::string key = effect_key_of(f);
      auto same = std::find(keys.begin(), keys.end(), key);
      if (same != keys.end()) {
        auto at = same - keys.begin();
        keys.erase(same);
        entries.erase(entries.begin() + at);
        sizes.erase(sizes.begin() + at);
      }
      keys.push_back(std::move(key));
      entries.push_back(encode_entry(decision_id, f));
      sizes.push_back(entry_bytes(decision_id, f));
    }
    Job job;
    job.skey = session_key_of(principal, session);
    job.principal = principal;
    job.time = time;
    job.session_bytes =
        kSessionOverhead + 2 * static_cast<std::int64_t>(principal.size() + session.size());
    job.count = keys.size();
    job.ekeys = bytea_array(keys);
    job.entries = bytea_array(entries);
    job.sizes = int_array(sizes);
    return job;
  }

  std::vector<Param> remember_params(const Job& job) const {
    const SessionMemoryOptions& l = options.limits;
    return {{job.skey, true},
            {job.principal},
            {std::to_string(job.time)},
            {std::to_string(job.time - l.ttl_seconds)},
            {std::to_string(l.max_entries)},
            {std::to_string(l.max_sessions)},
            {std::to_string(l.max_bytes)},
            {std::to_string(job.session_bytes)},
            {job.ekeys},
            {job.entries},
            {job.sizes}};
  }

  // One pipelined query's results, read up to the NULL that ends them, or up to the
  // pipeline's sync when that comes first.
  struct QueryResults {
    bool succeeded = false;  // a result came back OK
    bool failed = false;     // a result came back failed
    std::string error;       // the last failed result's message
    bool synced = false;     // the sync came instead
  };
  static QueryResults read_query(PGconn* pg) {
    QueryResults q;
    while (PGresult* raw = PQgetResult(pg)) {
      Result r(raw);
      ExecStatusType st = PQresultStatus(raw);
      if (st == PGRES_PIPELINE_SYNC) {
        q.synced = true;
        break;
      }
      if (st == PGRES_TUPLES_OK || st == PGRES_COMMAND_OK) {
        q.succeeded = true;
      } else {
        q.failed = true;
        q.error = trimmed(PQresultErrorMessage(raw));
        if (q.error.empty()) q.error = trimmed(PQerrorMessage(pg));
      }
    }
    return q;
  }

  // Sends the jobs on conn as one transaction, pipelined (one round trip, one commit to wait
  // for). Sorted by principal, so two daemons' batches lock the principals' rows in the same
  // order (no deadlock); a principal's jobs keep their order. True when all were stored;
  // false, with nothing stored, when any failed (the caller sends them one by one).
  bool send_together(Conn& conn, std::vector<Job*> jobs) {
    std::stable_sort(jobs.begin(), jobs.end(),
                     [](const Job* a, const Job* b) { return a->principal < b->principal; });
    if (PQenterPipelineMode(conn.pg) != 1) return false;
    bool ok = PQsendQueryParams(conn.pg, "BEGIN", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    std::size_t queries = ok ? 1 : 0;
    for (Job* job : jobs) {
      if (!ok) break;
      std::vector<Param> params = remember_params(*job);
      Bound b(params);
      ok = PQsendQueryPrepared(conn.pg, "ws_remember", b.n(), b.values.data(), b.lengths.data(),
                               b.formats.data(), 0) == 1;
      queries += ok ? 1 : 0;
    }
    if (ok) {
      ok = PQsendQueryParams(conn.pg, "COMMIT", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
      queries += ok ? 1 : 0;
    }
    const bool sync_sent = PQpipelineSync(conn.pg) == 1;
    bool all = ok && sync_sent;
    bool synced = false;
    for (std::size_t i = 0; i < queries && sync_sent && !synced; ++i) {
      const QueryResults r = read_query(conn.pg);
      synced = r.synced;
      all = all && !r.failed && r.succeeded;
    }
    if (sync_sent && !synced) {
      Result sync(PQgetResult(conn.pg));
      synced = sync.get() && PQresultStatus(sync.get()) == PGRES_PIPELINE_SYNC;
    }
    PQexitPipelineMode(conn.pg);
    if (!synced || !conn.ok()) return false;
    // A failed transaction block stays open until rolled back.
    if (PQtransactionStatus(conn.pg) != PQTRANS_IDLE) {
      Result rollback(PQexec(conn.pg, "ROLLBACK"));
      return false;
    }
    return all;
  }

  // Sends the jobs on conn, pipelined (one round trip); each is its own transaction. Returns
  // each job's error ("" when stored). A connection lost midway fails the rest.
  std::vector<std::string> send_batch(Conn& conn, const std::vector<Job*>& jobs) {
    std::vector<std::string> errors(jobs.size(), "not sent");
    if (PQenterPipelineMode(conn.pg) != 1) {
      std::string e = "cannot enter pipeline mode: " + trimmed(PQerrorMessage(conn.pg));
      std::fill(errors.begin(), errors.end(), e);
      return errors;
    }
    std::size_t sent = 0;
    std::string send_error;
    for (Job* job : jobs) {
      std::vector<Param> params = remember_params(*job);
      Bound b(params);
      if (PQsendQueryPrepared(conn.pg, "ws_remember", b.n(), b.values.data(), b.lengths.data(),
                              b.formats.data(), 0) != 1 ||
          PQpipelineSync(conn.pg) != 1) {
        send_error = trimmed(PQerrorMessage(conn.pg));
        break;
      }
      ++sent;
    }
    for (std::size_t i = 0; i < sent; ++i) {
      // The query's results up to a NULL, then its sync.
      const QueryResults r = read_query(conn.pg);
      const std::string& error = r.error;
      const bool stored = r.succeeded;
      bool synced = r.synced;
      if (!synced) {
        Result sync(PQgetResult(conn.pg));
        synced = sync.get() && PQresultStatus(sync.get()) == PGRES_PIPELINE_SYNC;
      }
      if (!synced || !conn.ok()) {
        // The connection is gone: this job and the rest are not known to be stored.
        std::string lost = trimmed(PQerrorMessage(conn.pg));
        for (std::size_t j = i; j < jobs.size(); ++j) {
          errors[j] = lost.empty() ? "the connection was lost" : lost;
        }
        PQexitPipelineMode(conn.pg);
        return errors;
      }
      errors[i] = stored && error.empty() ? "" : (error.empty() ? "no result" : error);
    }
    for (std::size_t j = sent; j < jobs.size(); ++j) errors[j] = send_error;
    PQexitPipelineMode(conn.pg);
    return errors;
  }

  // ---- owed effects ----

  // Keeps a job whose effects could not be stored, for retry (mu held).
  void owe_locked(Job job) {
    job.done = nullptr;
    std::string key = job.skey;
    auto [it, fresh] = owed.try_emplace(key);
    if (fresh) owed_order.push_back(key);
    owed_effects += job.count;
    it->second.jobs.push_back(std::move(job));
    while (owed_effects > options.max_owed && !owed_order.empty()) {
      // Past the bound: the longest-owed session's effects are given up on, and that session
      // is refused here until its last lost effect would have expired.
      std::string victim = owed_order.front();
      owed_order.pop_front();
      auto v = owed.find(victim);
      if (v == owed.end()) continue;
      std::size_t n = 0;
      std::int64_t until = 0;
      for (const Job& j : v->second.jobs) {
        n += j.count;
        until = std::max(until, j.time + options.limits.ttl_seconds);
      }
      owed_effects -= n;
      owed.erase(v);
      lost_effects.fetch_add(n);
      if (lost.size() >= kMaxLostSessions) {
        auto soonest = std::min_element(lost.begin(), lost.end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        });
        lost.erase(soonest);
      }
      auto& mark = lost[victim];
      mark = std::max(mark, until);
      if (options.log) {
        options.log->error(
            "session store (postgres): {} effects of a session could not be stored and are "
            "given up on (more than {} owed); its decisions on this daemon fail closed until "
            "they would have expired",
            n, options.max_owed);
      }
    }
  }

  // Stores what the session owes, in order, on conn. Throws SessionHistoryError when it
  // cannot (what is left stays owed).
  void pay(Conn& conn, const std::string& skey) {
    std::vector<Job> jobs;
    {
      std::lock_guard lock(mu);
      auto it = owed.find(skey);
      if (it == owed.end()) return;
      // Copied out, to be stored unlocked (an owed job has no done: owe_locked cleared it).
      jobs.assign(it->second.jobs.begin(), it->second.jobs.end());
    }
    // Remembering is idempotent (identical effects are one row): a job paid twice by two
    // threads at once is stored once.
    for (const Job& job : jobs) run_prepared(conn.pg, "ws_remember", remember_params(job));
    std::lock_guard lock(mu);
    auto it = owed.find(skey);
    if (it == owed.end()) return;
    auto& pending = it->second.jobs;
    for (const Job& paid : jobs) {
      auto j = std::find_if(pending.begin(), pending.end(),
                            [&](const Job& p) { return p.id == paid.id; });
      if (j != pending.end()) {
        owed_effects -= j->count;
        pending.erase(j);
      }
    }
    if (pending.empty()) {
      owed.erase(it);
      owed_order.erase(std::remove(owed_order.begin(), owed_order.end(), skey), owed_order.end());
    }
  }

  bool owes(const std::string& skey) {
    std::lock_guard lock(mu);
    return owed.count(skey) != 0;
  }

  // Pays every session's debt; one session that cannot be paid does not hold up the others.
  // Throws the first failure once all were tried (the connection's loss at once).
  void pay_all(Conn& conn) {
    std::vector<std::string> keys;
    {
      std::lock_guard lock(mu);
      keys.assign(owed_order.begin(), owed_order.end());
    }
    std::optional<SessionHistoryError> first;
    for (const std::string& key : keys) {
      try {
        pay(conn, key);
      } catch (const SessionHistoryError& e) {
        if (!conn.ok()) throw;
        if (!first) first = e;
      }
    }
    if (first) throw *first;
  }

  // ---- writer threads ----

  void writer_loop() {
    std::unique_ptr<Conn> conn;
    for (;;) {
      std::vector<Job> batch;
      bool retry_owed = false;
      {
        std::unique_lock lock(mu);
        if (queue.empty() && !stopping) {
          if (owed.empty()) {
            wake.wait(lock, [&] { return !queue.empty() || stopping || !owed.empty(); });
          } else {
            wake.wait_for(lock, kRetryEvery, [&] { return !queue.empty() || stopping; });
          }
        }
        if (queue.empty() && stopping) return;
        std::size_t bytes = 0;
        while (!queue.empty() && batch.size() < kBatchJobs && bytes < kBatchBytes) {
          bytes += queue.front().entries.size() + queue.front().ekeys.size();
          batch.push_back(std::move(queue.front()));
          queue.pop_front();
        }
        retry_owed = !owed.empty();
      }
      write(conn, batch, retry_owed);
    }
  }

  // Stores the batch (and, first, what is owed), calling each job's done.
  void write(std::unique_ptr<Conn>& conn, std::vector<Job>& batch, bool retry_owed) {
    std::vector<std::string> errors(batch.size());
    std::vector<Job*> to_send;
    for (int attempt = 0; attempt < 2; ++attempt) {
      to_send.clear();
      for (std::size_t i = 0; i < batch.size(); ++i) {
        if (attempt == 0 || !errors[i].empty()) to_send.push_back(&batch[i]);
      }
      if (to_send.empty() && !retry_owed) break;
      std::string connect_error;
      if (!conn || !conn->ok()) {
        conn.reset();
        try {
          conn = connect_prepared(options.conninfo);
        } catch (const SessionHistoryError& e) {
          connect_error = e.what();
        }
      }
      if (conn && retry_owed) {
        try {
          pay_all(*conn);
          retry_owed = false;
        } catch (const SessionHistoryError& e) {
          connect_error = e.what();
        }
      }
      // A job of a session that still owes effects waits behind them, in order.
      std::vector<Job*> direct;
      for (Job* job : to_send) {
        std::size_t i = static_cast<std::size_t>(job - batch.data());
        if (!conn || owes(job->skey)) {
          errors[i] = conn ? "earlier effects of this session are not stored yet" : connect_error;
        } else {
          direct.push_back(job);
        }
      }
      if (direct.size() > 1 && send_together(*conn, direct)) {
        for (Job* job : direct) errors[static_cast<std::size_t>(job - batch.data())].clear();
      } else if (!direct.empty() && conn->ok()) {
        std::vector<std::string> sent = send_batch(*conn, direct);
        for (std::size_t k = 0; k < direct.size(); ++k) {
          errors[static_cast<std::size_t>(direct[k] - batch.data())] = sent[k];
        }
      } else if (!direct.empty()) {
        for (Job* job : direct) {
          errors[static_cast<std::size_t>(job - batch.data())] =
              "the connection was lost: " + trimmed(PQerrorMessage(conn->pg));
        }
      }
      bool any_failed = std::any_of(errors.begin(), errors.end(),
                                    [](const std::string& e) { return !e.empty(); });
      if (!any_failed) break;
      if (conn && conn->ok()) break;  // the statements failed, not the connection: no retry
    }
    for (std::size_t i = 0; i < batch.size(); ++i) {
      Job& job = batch[i];
      SessionHistory::Done done = std::move(job.done);
      std::string error = errors[i];
      if (error.empty()) {
        succeeded();
      } else {
        remember_failures.fetch_add(1);
        std::string what = "session store (postgres): " + error;
        failed(what);
        log(spdlog::level::err, "session-remember",
            "session store (postgres): the effects of an approved decision could not be stored "
            "(owed, retried; the session's decisions fail closed here until they are): " +
                error);
        std::lock_guard lock(mu);
        owe_locked(std::move(job));
      }
      if (done) {
        try {
          done(error.empty() ? std::string() : "session store (postgres): " + error);
        } catch (...) {
        }
      }
    }
  }

  void prune_loop() {
    std::unique_lock lock(prune_mu);
    for (;;) {
      if (prune_wake.wait_for(lock, options.prune_interval, [&] { return prune_stop; })) return;
      lock.unlock();
      try {
        prune(options.clock());
      } catch (const std::exception& e) {
        log(spdlog::level::warn, "session-prune",
            std::string("session store: pruning failed: ") + e.what());
      }
      lock.lock();
    }
  }

  std::size_t prune(std::int64_t now) {
    const std::int64_t cutoff = now - options.limits.ttl_seconds;
    {
      std::lock_guard lock(mu);
      for (auto it = lost.begin(); it != lost.end();) {
        it = it->second <= now ? lost.erase(it) : std::next(it);
      }
    }
    return with_conn([&](Conn& conn) -> std::size_t {
      std::size_t dropped = 0;
      for (int round = 0; round < 1000; ++round) {
        Result principals = run_sql(
            conn.pg,
            "SELECT DISTINCT principal FROM warden_sessions WHERE last_used <= $1::bigint LIMIT 100",
            {{std::to_string(cutoff)}});
        for (int i = 0; i < principals.rows(); ++i) {
          Result n = run_sql(conn.pg, "SELECT warden_session_prune_v1($1::text, $2::bigint)",
                             {{principals.text(i, 0)}, {std::to_string(cutoff)}});
          dropped += static_cast<std::size_t>(std::stoll(n.text(0, 0)));
        }
        if (principals.rows() < 100) break;
      }
      pay_all(conn);
      refresh_count(conn);
      return dropped;
    });
  }

  void stop() {
    {
      std::lock_guard lock(mu);
      if (stopped) return;
      stopped = true;
      stopping = true;
    }
    wake.notify_all();
    for (auto& t : writers) {
      if (t.joinable()) t.join();
    }
    {
      std::lock_guard lock(prune_mu);
      prune_stop = true;
    }
    prune_wake.notify_all();
    if (pruner.joinable()) pruner.join();
    std::lock_guard lock(mu);
    if (owed_effects > 0 && options.log) {
      options.log->error(
          "session store (postgres): {} effects of approved decisions could not be stored "
          "before the daemon stopped; they are lost",
          owed_effects);
    }
  }
};

PgSessionHistory::PgSessionHistory(PgSessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  impl_->create_schema();
  for (unsigned i = 0; i < impl_->options.writers; ++i) {
    impl_->writers.emplace_back([impl = impl_.get()] { impl->writer_loop(); });
  }
  if (impl_->options.prune_interval.count() > 0) {
    impl_->pruner = std::thread([impl = impl_.get()] { impl->prune_loop(); });
  }
}

PgSessionHistory::~PgSessionHistory() { impl_->stop(); }

void PgSessionHistory::close() { impl_->stop(); }

const PgSessionOptions& PgSessionHistory::options() const { return impl_->options; }

void PgSessionHistory::record_then(const std::string& principal, const std::string& session,
                                   const std::string& decision_id, std::int64_t time,
                                   const std::vector<EffectRecord>& effects, Done done) {
  if (session.empty() || effects.empty()) {
    if (done) done("");
    return;
  }
  Job job = impl_->make_job(principal, session, decision_id, time, effects);
  job.done = std::move(done);
  {
    std::lock_guard lock(impl_->mu);
    if (!impl_->stopping) {
      job.id = impl_->next_job++;
      impl_->queue.push_back(std::move(job));
      job.done = nullptr;
    }
  }
  if (job.done) {
    // Stopped: nothing stores it any more.
    impl_->remember_failures.fetch_add(1);
    job.done("session store (postgres): the daemon is stopping");
    return;
  }
  impl_->wake.notify_one();
}

void PgSessionHistory::record(const std::string& principal, const std::string& session,
                              const std::string& decision_id, std::int64_t time,
                              const std::vector<EffectRecord>& effects) {
  auto stored = std::make_shared<std::promise<std::string>>();
  auto result = stored->get_future();
  record_then(principal, session, decision_id, time, effects,
              [stored](const std::string& error) { stored->set_value(error); });
  std::string error = result.get();
  if (!error.empty()) throw SessionHistoryError(error);
}

std::vector<HistoryEntry> PgSessionHistory::snapshot(const std::string& principal,
                                                     const std::string& session, std::int64_t now) {
  if (session.empty()) return {};
  Impl& d = *impl_;
  const std::string skey = session_key_of(principal, session);
  try {
    {
      std::lock_guard lock(d.mu);
      auto lost = d.lost.find(skey);
      if (lost != d.lost.end() && lost->second > now) {
        fail(
            "effects of this session could not be stored and were given up on; its decisions "
            "on this daemon fail closed until " +
            std::to_string(lost->second));
      }
    }
    auto entries = d.with_conn([&](Conn& conn) {
      // What this session still owes goes first: its history is not whole without it.
      if (d.owes(skey)) d.pay(conn, skey);
      Result r = run_prepared(conn.pg, "ws_snapshot",
                              {{skey, true}, {std::to_string(now - d.options.limits.ttl_seconds)}},
                              /*result_format=*/1);
      std::vector<HistoryEntry> out;
      out.reserve(static_cast<std::size_t>(r.rows()));
      for (int i = 0; i < r.rows(); ++i) {
        if (PQgetlength(r.get(), i, 0) != 8) fail("a stored history time is malformed");
        out.push_back(decode_entry(PQgetvalue(r.get(), i, 1),
                                   static_cast<std::size_t>(PQgetlength(r.get(), i, 1)),
                                   be_int64(PQgetvalue(r.get(), i, 0))));
      }
      return out;
    });
    d.succeeded();
    return entries;
  } catch (const SessionHistoryError& e) {
    d.read_failures.fetch_add(1);
    d.failed(e.what());
    d.log(spdlog::level::err, "session-read",
          std::string(e.what()) + "; the session's decisions fail closed (E_SESSION_STORE)");
    throw;
  }
}

void PgSessionHistory::forget(const std::string& principal, const std::string& session) {
  const std::string skey = session_key_of(principal, session);
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->owed.find(skey);
    if (it != impl_->owed.end()) {
      for (const Job& j : it->second.jobs) impl_->owed_effects -= j.count;
      impl_->owed.erase(it);
      auto& order = impl_->owed_order;
      order.erase(std::remove(order.begin(), order.end(), skey), order.end());
    }
  }
  impl_->with_conn([&](Conn& conn) {
    run_prepared(conn.pg, "ws_forget", {{skey, true}, {principal}});
    return 0;
  });
}

std::size_t PgSessionHistory::session_count() const { return impl_->sessions.load(); }

SessionHistoryHealth PgSessionHistory::health() const {
  SessionHistoryHealth h;
  h.read_failures = impl_->read_failures.load();
  h.remember_failures = impl_->remember_failures.load();
  h.lost = impl_->lost_effects.load();
  std::lock_guard lock(impl_->mu);
  h.ok = impl_->ok.load();
  h.error = impl_->error;
  h.owed = impl_->owed_effects;
  return h;
}

std::size_t PgSessionHistory::prune(std::int64_t now) { return impl_->prune(now); }

std::unique_ptr<SessionHistory> open_session_history(const Config& config, unsigned workers,
                                                     Logger log,
                                                     std::function<std::int64_t()> clock_us) {
  const std::string store = effective_session_store(config);
  if (store.empty()) return nullptr;
  SessionMemoryOptions limits;
  limits.ttl_seconds = config.session.ttl_seconds;
  limits.max_entries = config.session.max_entries;
  limits.max_sessions = config.session.max_sessions;
  limits.max_bytes = config.session.max_bytes;
  if (store != "postgres") return std::make_unique<SessionMemory>(limits);
  PgSessionOptions o;
  o.conninfo = config.approvals.conninfo;
  if (o.conninfo.empty()) {
    const char* value = std::getenv(config.approvals.conninfo_env.c_str());
    if (!value || !*value) {
      fail("[session] store is postgres: set approvals.conninfo or $" +
           config.approvals.conninfo_env);
    }
    o.conninfo = value;
  }
  o.limits = limits;
  // A read per decision in a session, at most one per worker at a time; and a few for
  // approvers shown a session's history.
  o.max_connections = std::max(1u, workers) + 2;
  o.writers = workers > 4 ? 2 : 1;
  o.log = std::move(log);
  if (clock_us) {
    o.clock = [clock_us] {
      std::int64_t us = clock_us();
      return us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
    };
  }
  return std::make_unique<PgSessionHistory>(std::move(o));
}

}  // namespace warden::server
