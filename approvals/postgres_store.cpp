// The PostgreSQL approval store: every daemon of a fleet connects to the same database.
// Commands run on one connection guarded by a mutex, always with bound parameters
// (PQexecParams). approve/deny lock the approval's row (SELECT … FOR UPDATE), so racing
// approvers on any number of daemons serialize and exactly one moves it out of pending.
// Every change sends pg_notify('warden_approvals', 'kind:id') inside its transaction;
// listen() opens a second connection that LISTENs and calls the listener from its thread.
#include <libpq-fe.h>
#include <poll.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "approvals/internal.h"
#include "approvals/store.h"

namespace warden::approvals {
namespace {

using detail::kApprovalColumns;

constexpr const char* kChannel = "warden_approvals";
// Serializes schema creation between daemons starting at the same moment.
constexpr const char* kSchemaLockKey = "727001";
// With a principal's key: serializes counting and inserting that principal's approvals.
constexpr const char* kPendingLockKey = "727002";

[[noreturn]] void fail(const std::string& what) {
  throw StoreError("approval store (postgres): " + what);
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

class Result {
 public:
  explicit Result(PGresult* r) : r_(r) {}
  ~Result() { PQclear(r_); }
  Result(Result&& o) noexcept : r_(std::exchange(o.r_, nullptr)) {}
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  int rows() const { return PQntuples(r_); }
  std::string text(int row, int col) const {
    return std::string(PQgetvalue(r_, row, col),
                       static_cast<std::size_t>(PQgetlength(r_, row, col)));
  }
  std::int64_t integer(int row, int col) const {
    return detail::parse_int(text(row, col), PQfname(r_, col));
  }
  int affected() const {
    const char* n = PQcmdTuples(r_);
    return (n && *n) ? std::atoi(n) : 0;
  }

 private:
  PGresult* r_;
};

std::string num(std::int64_t v) { return std::to_string(v); }

// A PostgreSQL array literal of texts ({"a","b"}), bound as one parameter: each element
// quoted, with its quotes and backslashes escaped.
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

// Defaults the operator's conninfo may override (it is expanded after them): a bounded
// connection attempt, and TCP keepalives so a dead server is noticed by the listening
// connection too.
constexpr const char* kDefaultKeys[] = {
    "connect_timeout",  "keepalives_idle", "keepalives_interval",
    "keepalives_count", "dbname",          nullptr};

PGconn* start_connect(const std::string& conninfo, bool blocking) {
  const char* values[] = {"10", "30", "10", "3", conninfo.c_str(), nullptr};
  PGconn* c = blocking ? PQconnectdbParams(kDefaultKeys, values, 1)
                       : PQconnectStartParams(kDefaultKeys, values, 1);
  if (!c) fail("out of memory connecting");
  // Server notices ("relation already exists, skipping") are not the daemon's output.
  PQsetNoticeProcessor(
      c, [](void*, const char*) {}, nullptr);
  return c;
}

PGconn* connect(const std::string& conninfo) {
  PGconn* c = start_connect(conninfo, true);
  if (PQstatus(c) != CONNECTION_OK) {
    std::string msg = trimmed(PQerrorMessage(c));
    PQfinish(c);
    fail("cannot connect: " + msg);
  }
  if (PQsetClientEncoding(c, "UTF8") != 0) {
    std::string msg = trimmed(PQerrorMessage(c));
    PQfinish(c);
    fail("cannot set the client encoding: " + msg);
  }
  return c;
}

// Connects without blocking for longer than a poll interval at a time, giving up as soon
// as stop is set; nullptr when it could not connect.
PGconn* connect_interruptible(const std::string& conninfo, const std::atomic<bool>& stop) {
  PGconn* c = nullptr;
  try {
    c = start_connect(conninfo, false);
  } catch (const StoreError&) {
    return nullptr;
  }
  if (PQstatus(c) == CONNECTION_BAD) {
    PQfinish(c);
    return nullptr;
  }
  PostgresPollingStatusType st = PGRES_POLLING_WRITING;
  while (!stop.load()) {
    if (st == PGRES_POLLING_OK) return c;
    if (st == PGRES_POLLING_FAILED) break;
    pollfd p{PQsocket(c), static_cast<short>(st == PGRES_POLLING_READING ? POLLIN : POLLOUT), 0};
    if (p.fd < 0) break;
    int n = ::poll(&p, 1, 100);
    if (n > 0) {
      st = PQconnectPoll(c);
    } else if (n < 0 && errno != EINTR) {
      break;
    }
  }
  PQfinish(c);
  return nullptr;
}

Result run(PGconn* c, const std::string& sql, const std::vector<std::string>& params) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  for (const auto& p : params) {
    // libpq passes text parameters as C strings: a NUL would silently cut the value.
    if (p.find('\0') != std::string::npos) fail("a value contains a NUL character");
    values.push_back(p.c_str());
    lengths.push_back(static_cast<int>(p.size()));
  }
  PGresult* r = PQexecParams(c, sql.c_str(), static_cast<int>(params.size()), nullptr,
                             values.data(), lengths.data(), nullptr, 0);
  if (!r) fail(trimmed(PQerrorMessage(c)));
  ExecStatusType st = PQresultStatus(r);
  if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
    std::string msg = trimmed(PQresultErrorMessage(r));
    if (msg.empty()) msg = trimmed(PQerrorMessage(c));
    PQclear(r);
    fail(msg);
  }
  return Result(r);
}

class PostgresStore final : public Store {
 public:
  explicit PostgresStore(std::string conninfo) : conninfo_(std::move(conninfo)) {
    conn_ = connect(conninfo_);
    try {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      exec(std::string("SELECT pg_advisory_xact_lock(") + kSchemaLockKey + ")", {});
      for (std::size_t i = 0; i < detail::kSchemaCount; ++i) exec(detail::kSchema[i], {});
      // A store created before votes carried their scope gains the column (existing votes:
      // 0, one use).
      exec(
          "ALTER TABLE approval_votes ADD COLUMN IF NOT EXISTS scope_minutes INTEGER NOT NULL "
          "DEFAULT 0",
          {});
      // ... and before claims named their daemon.
      exec("ALTER TABLE approvals ADD COLUMN IF NOT EXISTS claimed_by TEXT NOT NULL DEFAULT ''",
           {});
      // ... and before approvals kept what they grant and the token that asked (existing
      // approvals: they grant nothing, asked by no known token).
      exec("ALTER TABLE approvals ADD COLUMN IF NOT EXISTS grants_json TEXT NOT NULL DEFAULT ''",
           {});
      exec(
          "ALTER TABLE approvals ADD COLUMN IF NOT EXISTS requester_token_id TEXT NOT NULL "
          "DEFAULT ''",
          {});
      for (std::size_t i = 0; i < detail::kSchemaProbeCount; ++i) {
        exec(detail::kSchemaProbes[i], {});
      }
      tx.commit();
    } catch (...) {
      PQfinish(conn_);
      throw;
    }
  }

  ~PostgresStore() override {
    stop_.store(true);
    if (listen_thread_.joinable()) listen_thread_.join();
    if (listen_conn_) PQfinish(listen_conn_);
    PQfinish(conn_);
  }

  std::string_view kind() const override { return "postgres"; }

  Created create(const NewApproval& n) override {
    return with_connection([&] {
      Created out;
      out = detail::new_approval(n);
      Approval& a = out.approval;
      Transaction tx(*this);
      if (n.max_pending > 0) {
        // Every daemon creating for this principal takes the same transaction-scoped lock
        // first, so the count below sees every insert that committed before this one and none
        // can commit between the count and this insert.
        exec("SELECT pg_advisory_xact_lock($1::integer, $2::integer)",
             {kPendingLockKey, num(detail::principal_key(a.principal))});
        const std::int64_t pending =
            exec(
                "SELECT count(*) FROM approvals WHERE principal = $1 AND status = 'pending' "
                "AND expires_ms > $2::bigint",
                {a.principal, num(a.created_ms)})
                .integer(0, 0);
        if (pending >= n.max_pending) throw PendingLimit(pending, n.max_pending);
      }
      exec(
          "INSERT INTO approvals (id, token_hash, status, action_hash, action_json, "
          "proposal_json, principal, groups_json, session, agent, rules_json, reason, "
          "decision_id, origin, daemon_id, created_ms, expires_ms, approvers_needed, "
          "grants_json, requester_token_id) "
          "VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, "
          "$15, $16, $17, $18, $19)",
          {a.id, detail::token_hash(out.token), a.action_hash, a.action_json, a.proposal_json,
           a.principal, detail::json_array(a.groups), a.session, a.agent,
           detail::json_array(a.rules), a.reason, a.decision_id, a.origin, a.daemon_id,
           num(a.created_ms), num(a.expires_ms), num(a.approvers_needed), grants_json(a.grants),
           a.requester_token_id});
      notify("created", a.id);
      tx.commit();
      return out;
    });
  }

  std::optional<Approval> get(std::string_view id) override {
    return with_connection([&] { return load("id", std::string(id)); });
  }

  std::optional<Approval> find_by_token(std::string_view token) override {
    return with_connection([&] { return load("token_hash", detail::token_hash(token)); });
  }

  std::vector<Approval> list(const Filter& f) override {
    // Only the filters given become conditions (constant SQL; every value is bound), so the
    // index on (status, created_ms, id) serves the page.
    std::string sql = std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE true";
    std::vector<std::string> params;
    auto cond = [&](const char* before, std::string value, const char* after = "") {
      params.push_back(std::move(value));
      sql += before;
      sql += "$" + std::to_string(params.size());
      sql += after;
    };
    if (f.status) cond(" AND status = ", std::string(status_name(*f.status)));
    if (!f.agent.empty()) cond(" AND agent = ", f.agent);
    if (!f.session.empty()) cond(" AND session = ", f.session);
    if (!f.principal.empty()) cond(" AND principal = ", f.principal);
    if (f.min_age_ms > 0) cond(" AND created_ms <= ", num(f.now_ms - f.min_age_ms), "::bigint");
    if (!f.rule.empty()) cond(" AND strpos(rules_json, ", detail::rule_needle(f.rule), ") > 0");
    const std::size_t after_at = params.size();
    cond(" AND (created_ms, id) > (", "", "::bigint, ");
    cond("", "", ")");
    cond(" ORDER BY created_ms, id LIMIT ", "", "::bigint");
    Cursor after = f.after ? *f.after : Cursor{INT64_MIN, ""};
    return with_connection([&] {
      std::vector<Approval> out;
      Cursor at = after;
      while (out.size() < f.limit) {
        const std::size_t want = f.rule.empty() ? f.limit - out.size() : detail::kListBatch;
        params[after_at] = num(at.created_ms);
        params[after_at + 1] = at.id;
        params[after_at + 2] =
            num(static_cast<std::int64_t>(std::min<std::size_t>(want, INT64_MAX)));
        Result r = exec(sql, params);
        for (int i = 0; i < r.rows() && out.size() < f.limit; ++i) {
          Approval a = row(r, i);
          at = Cursor{a.created_ms, a.id};
          if (detail::has_rule(a, f.rule)) out.push_back(std::move(a));
        }
        if (static_cast<std::size_t>(r.rows()) < want) break;
      }
      attach_votes(out);
      return out;
    });
  }

  ApproveOutcome approve(std::string_view id_view, std::string_view digest_view,
                         std::string_view approver_view, std::string_view note_view,
                         std::int64_t now_ms, int scope_minutes,
                         std::string_view daemon_view) override {
    const std::string daemon(daemon_view);
    const std::string id(id_view), digest(digest_view);
    const std::string approver(approver_view), note(note_view);
    return with_connection([&] {
      ApproveOutcome out;
      Transaction tx(*this);
      Result r = exec(
          std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE id = $1 FOR UPDATE",
          {id});
      if (r.rows() == 0) {
        tx.commit();
        out.result = ApproveResult::NotFound;
        return out;
      }
      const Approval a = row(r, 0);
      if (digest != a.digest) {
        out.result = ApproveResult::DigestMismatch;
      } else if (a.status != Status::Pending) {
        out.result = ApproveResult::Closed;
      } else if (now_ms >= a.expires_ms) {
        mark_expired(a.id, now_ms);
        out.result = ApproveResult::Expired;
      } else if (approver == a.principal) {
        out.result = ApproveResult::SelfApproval;
      } else if (exec("SELECT 1 FROM approval_votes WHERE approval_id = $1 AND approver = $2",
                      {a.id, approver})
                     .rows() > 0) {
        out.result = ApproveResult::AlreadyApproved;
      } else {
        std::int64_t count =
            exec("SELECT count(*) FROM approval_votes WHERE approval_id = $1", {a.id})
                .integer(0, 0);
        exec(
            "INSERT INTO approval_votes (approval_id, approver, note, at_ms, seq, "
            "scope_minutes) VALUES ($1, $2, $3, $4, $5, $6)",
            {a.id, approver, note, num(now_ms), num(count + 1),
             num(scope_minutes < 0 ? 0 : scope_minutes)});
        if (count + 1 >= a.approvers_needed) {
          Result up = exec(
              "UPDATE approvals SET status = 'approved', closed_ms = $2, "
              "claimed_by = $3 WHERE id = $1 AND status = 'pending'",
              {a.id, num(now_ms), daemon});
          if (up.affected() != 1) fail(a.id + " left pending meanwhile");
          notify("closed", a.id);
          out.result = ApproveResult::Claimed;
        } else {
          out.result = ApproveResult::NeedMore;
        }
      }
      tx.commit();
      out.approval = load("id", a.id);
      return out;
    });
  }

  DenyOutcome deny(std::string_view token_or_id, std::string_view by_view,
                   std::string_view note_view, std::int64_t now_ms) override {
    const std::string key(token_or_id), hash = detail::token_hash(token_or_id);
    const std::string by(by_view), note(note_view);
    return with_connection([&] {
      DenyOutcome out;
      Transaction tx(*this);
      Result r = exec(std::string("SELECT ") + kApprovalColumns +
                          " FROM approvals WHERE token_hash = $1 OR id = $2 FOR UPDATE",
                      {hash, key});
      if (r.rows() == 0) {
        tx.commit();
        out.result = DenyResult::NotFound;
        return out;
      }
      const Approval a = row(r, 0);
      if (a.status != Status::Pending) {
        out.result = DenyResult::Closed;
      } else if (now_ms >= a.expires_ms) {
        mark_expired(a.id, now_ms);
        out.result = DenyResult::Expired;
      } else {
        Result up = exec(
            "UPDATE approvals SET status = 'denied', closed_by = $2, "
            "close_note = $3, closed_ms = $4 WHERE id = $1 AND status = 'pending'",
            {a.id, by, note, num(now_ms)});
        if (up.affected() == 1) {
          notify("closed", a.id);
          out.result = DenyResult::Denied;
        } else {
          out.result = DenyResult::Closed;
        }
      }
      tx.commit();
      out.approval = load("id", a.id);
      return out;
    });
  }

  bool finish(std::string_view id_view, Status status, std::string_view result_view,
              std::int64_t now_ms) override {
    (void)now_ms;
    if (status != Status::Executed && status != Status::Refused) return false;
    const std::string id(id_view), result(result_view);
    return with_connection([&] {
      Transaction tx(*this);
      Result up = exec(
          "UPDATE approvals SET status = $2, result_json = $3 "
          "WHERE id = $1 AND status = 'approved'",
          {id, std::string(status_name(status)), result});
      const bool done = up.affected() == 1;
      if (done) notify("finished", id);
      tx.commit();
      return done;
    });
  }

  std::vector<Approval> expire_due(std::int64_t now_ms) override {
    return with_connection([&] {
      std::vector<std::string> ids;
      {
        Transaction tx(*this);
        // Under READ COMMITTED a row another daemon expired meanwhile is re-checked and
        // skipped, so each approval is returned by exactly one caller.
        // The notifications go in the same statement: one round trip however many expire.
        Result r = exec(
            "WITH expired AS (UPDATE approvals SET status = 'expired', "
            "closed_ms = $1::bigint WHERE status = 'pending' AND "
            "expires_ms <= $1::bigint RETURNING id) "
            "SELECT id, pg_notify($2, 'closed:' || id) FROM expired",
            {num(now_ms), kChannel});
        for (int i = 0; i < r.rows(); ++i) ids.push_back(r.text(i, 0));
        tx.commit();
      }
      return load_many(ids);
    });
  }

  Pruned prune(std::int64_t closed_before_ms, std::int64_t now_ms) override {
    Pruned out;
    out.grants = with_connection([&] {
      Transaction tx(*this);
      Result g =
          exec("DELETE FROM approval_grants WHERE uses_left = -1 OR expires_ms <= $1::bigint",
               {num(now_ms)});
      tx.commit();
      return static_cast<std::int64_t>(g.affected());
    });
    struct Batch {
      std::int64_t deleted = 0;
      bool last = true;  // fewer than a whole batch were due: nothing more to do
    };
    for (;;) {
      // A batch per transaction; rows another daemon is pruning at this moment are locked by
      // it and skipped here, so daemons pruning at once never wait on or delete the same row.
      const Batch batch = with_connection([&] {
        Transaction tx(*this);
        Result doomed = exec(
            "SELECT id FROM approvals WHERE status IN ('denied', 'expired', 'executed', "
            "'refused') AND closed_ms < $1::bigint AND NOT EXISTS (SELECT 1 FROM approval_grants "
            "g WHERE g.approval_id = approvals.id) LIMIT $2::bigint "
            "FOR UPDATE SKIP LOCKED",
            {num(closed_before_ms), num(detail::kPruneBatch)});
        Batch b;
        b.last = doomed.rows() < detail::kPruneBatch;
        if (doomed.rows() > 0) {
          std::vector<std::string> ids;
          for (int i = 0; i < doomed.rows(); ++i) ids.push_back(doomed.text(i, 0));
          const std::string array = text_array(ids);
          exec("DELETE FROM approval_votes WHERE approval_id = ANY($1::text[])", {array});
          b.deleted = exec("DELETE FROM approvals WHERE id = ANY($1::text[])", {array}).affected();
        }
        tx.commit();
        return b;
      });
      out.approvals += batch.deleted;
      if (batch.last) break;
    }
    return out;
  }

  std::vector<Approval> recover_claimed(std::string_view daemon_view,
                                        std::int64_t claimed_before_ms,
                                        std::string_view result_view,
                                        std::int64_t now_ms) override {
    (void)now_ms;
    const std::string daemon(daemon_view), result(result_view);
    return with_connection([&] {
      std::vector<std::string> ids;
      {
        Transaction tx(*this);
        // As expire_due: a row another daemon recovered meanwhile is re-checked and skipped.
        Result r = exec(
            "UPDATE approvals SET status = 'refused', result_json = $3 "
            "WHERE status = 'approved' AND (($1 <> '' AND claimed_by = $1) OR "
            "closed_ms < $2::bigint) RETURNING id",
            {daemon, num(claimed_before_ms), result});
        for (int i = 0; i < r.rows(); ++i) {
          ids.push_back(r.text(i, 0));
          exec("UPDATE approval_grants SET uses_left = -1 WHERE approval_id = $1", {ids.back()});
          notify("finished", ids.back());
        }
        tx.commit();
      }
      return load_many(ids);
    });
  }

  void add_grant(const Grant& g) override {
    with_connection([&] {
      Transaction tx(*this);
      exec(
          "INSERT INTO approval_grants (id, approval_id, principal, session, action_hash, "
          "expires_ms, uses_left, approver) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
          {detail::new_id("grt_"), g.approval_id, g.principal, g.session, g.action_hash,
           num(g.expires_ms), num(g.uses_left < 0 ? 1 : g.uses_left), g.approver});
      tx.commit();
      return 0;
    });
  }

  std::optional<Grant> use_grant(std::string_view principal_view, std::string_view session_view,
                                 std::string_view hash_view, std::int64_t now_ms) override {
    const std::string principal(principal_view), session(session_view), hash(hash_view);
    return with_connection([&]() -> std::optional<Grant> {
      Transaction tx(*this);
      Result r = exec(
          "SELECT id, approval_id, principal, session, action_hash, expires_ms, "
          "uses_left, approver FROM approval_grants WHERE principal = $1 AND "
          "session = $2 AND action_hash = $3 AND expires_ms > $4::bigint AND "
          "uses_left >= 0 ORDER BY expires_ms, id LIMIT 1 FOR UPDATE",
          {principal, session, hash, num(now_ms)});
      if (r.rows() == 0) {
        tx.commit();
        return std::nullopt;
      }
      Grant g;
      const std::string id = r.text(0, 0);
      g.approval_id = r.text(0, 1);
      g.principal = r.text(0, 2);
      g.session = r.text(0, 3);
      g.action_hash = r.text(0, 4);
      g.expires_ms = r.integer(0, 5);
      g.uses_left = static_cast<int>(r.integer(0, 6));
      g.approver = r.text(0, 7);
      Result up = exec(
          "UPDATE approval_grants SET uses_left = CASE WHEN uses_left = 1 THEN -1 "
          "WHEN uses_left > 1 THEN uses_left - 1 ELSE uses_left END "
          "WHERE id = $1 AND uses_left >= 0 AND expires_ms > $2::bigint",
          {id, num(now_ms)});
      if (up.affected() != 1) {
        tx.commit();
        return std::nullopt;
      }
      tx.commit();
      return g;
    });
  }

  void listen(Listener listener) override {
    {
      std::lock_guard lock(listener_mu_);
      listener_ = std::move(listener);
    }
    if (listen_thread_.joinable()) return;
    listen_conn_ = connect(conninfo_);
    try {
      run(listen_conn_, std::string("LISTEN ") + kChannel, {});
    } catch (...) {
      PQfinish(listen_conn_);
      listen_conn_ = nullptr;
      throw;
    }
    listen_thread_ = std::thread([this] { listen_loop(); });
  }

  std::vector<TokenRequester> open_requesters(std::int64_t now_ms) override {
    return with_connection([&] {
      Result r = exec(
          "SELECT DISTINCT a.requester_token_id, a.principal FROM approvals a "
          "WHERE a.requester_token_id <> '' AND (a.status = 'pending' OR EXISTS "
          "(SELECT 1 FROM approval_grants g WHERE g.approval_id = a.id AND "
          "g.uses_left >= 0 AND g.expires_ms > $1::bigint)) "
          "ORDER BY a.requester_token_id, a.principal",
          {num(now_ms)});
      std::vector<TokenRequester> out;
      for (int i = 0; i < r.rows(); ++i) out.push_back(TokenRequester{r.text(i, 0), r.text(i, 1)});
      return out;
    });
  }

  std::vector<Approval> cancel_requester(std::string_view token_view,
                                         std::string_view principal_view, std::string_view by_view,
                                         std::string_view note_view, std::int64_t now_ms) override {
    const std::string token(token_view), principal(principal_view), by(by_view), note(note_view);
    if (token.empty()) return {};
    return with_connection([&] {
      std::vector<std::string> ids;
      {
        Transaction tx(*this);
        // As expire_due: a row another daemon cancelled (or answered) meanwhile is re-checked
        // and skipped, so each approval is returned by exactly one caller.
        Result r = exec(
            "UPDATE approvals SET status = 'denied', closed_by = $3, close_note = $4, "
            "closed_ms = $5::bigint WHERE status = 'pending' AND requester_token_id = $1 AND "
            "principal = $2 RETURNING id",
            {token, principal, by, note, num(now_ms)});
        for (int i = 0; i < r.rows(); ++i) {
          ids.push_back(r.text(i, 0));
          notify("closed", ids.back());
        }
        exec(
            "UPDATE approval_grants SET uses_left = -1 WHERE uses_left >= 0 AND approval_id IN "
            "(SELECT id FROM approvals WHERE requester_token_id = $1 AND principal = $2)",
            {token, principal});
        tx.commit();
      }
      std::vector<Approval> out;
      for (const auto& id : ids) {
        if (auto a = load("id", id)) out.push_back(std::move(*a));
      }
      return out;
    });
  }

 private:
  class Transaction {
   public:
    explicit Transaction(PostgresStore& s) : s_(s) { s_.exec("BEGIN", {}); }
    ~Transaction() {
      if (!done_ && PQstatus(s_.conn_) == CONNECTION_OK &&
          PQtransactionStatus(s_.conn_) != PQTRANS_IDLE) {
        PQclear(PQexec(s_.conn_, "ROLLBACK"));
      }
    }
    void commit() {
      s_.commit_sent_ = true;
      s_.exec("COMMIT", {});
      done_ = true;
    }

   private:
    PostgresStore& s_;
    bool done_ = false;
  };

  Result exec(const std::string& sql, const std::vector<std::string>& params) {
    return run(conn_, sql, params);
  }

  // Runs f under the connection mutex. A connection found broken, before or during f, is
  // reset once and f run again — unless it broke after f sent COMMIT: then whether the
  // change was made is unknown and the caller gets StoreError (it fails closed; the next
  // call uses the new connection). When the reset fails too the caller gets StoreError.
  template <class F>
  auto with_connection(F f) -> decltype(f()) {
    std::lock_guard lock(mu_);
    if (PQstatus(conn_) != CONNECTION_OK) reset();
    commit_sent_ = false;
    try {
      return f();
    } catch (const StoreError& e) {
      if (PQstatus(conn_) == CONNECTION_OK) throw;
      reset();
      if (commit_sent_) {
        fail(std::string("the connection was lost after a change was sent; it may or may not "
                         "have been made: ") +
             e.what());
      }
      return f();
    }
  }

  void reset() {
    PQreset(conn_);
    if (PQstatus(conn_) != CONNECTION_OK) {
      fail("lost the connection and cannot reconnect: " + trimmed(PQerrorMessage(conn_)));
    }
    PQsetClientEncoding(conn_, "UTF8");
  }

  void notify(const char* kind, const std::string& id) {
    exec("SELECT pg_notify($1, $2)", {kChannel, std::string(kind) + ":" + id});
  }

  void mark_expired(const std::string& id, std::int64_t now_ms) {
    Result up = exec(
        "UPDATE approvals SET status = 'expired', closed_ms = $2 "
        "WHERE id = $1 AND status = 'pending'",
        {id, num(now_ms)});
    if (up.affected() == 1) notify("closed", id);
  }

  static Approval row(const Result& r, int i) {
    return detail::approval_from_row([&](int col) { return r.text(i, col); });
  }

  // column is a constant column name, never data.
  std::optional<Approval> load(const char* column, const std::string& value) {
    Result r = exec(
        std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE " + column + " = $1",
        {value});
    if (r.rows() == 0) return std::nullopt;
    Approval a = row(r, 0);
    a.votes = votes(a.id);
    return a;
  }

  // The approvals with these ids (those that exist, in this order) with their votes: a few
  // queries for any number of them.
  std::vector<Approval> load_many(const std::vector<std::string>& ids) {
    std::vector<Approval> out;
    constexpr std::size_t kChunk = 1000;
    for (std::size_t from = 0; from < ids.size(); from += kChunk) {
      const std::vector<std::string> chunk(
          ids.begin() + static_cast<std::ptrdiff_t>(from),
          ids.begin() + static_cast<std::ptrdiff_t>(std::min(ids.size(), from + kChunk)));
      Result r = exec(
          std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE id = ANY($1::text[])",
          {text_array(chunk)});
      std::map<std::string, Approval> found;
      for (int i = 0; i < r.rows(); ++i) {
        Approval a = row(r, i);
        std::string id = a.id;
        found.emplace(std::move(id), std::move(a));
      }
      std::vector<Approval> part;
      for (const auto& id : chunk) {
        auto it = found.find(id);
        if (it != found.end()) part.push_back(std::move(it->second));
      }
      attach_votes(part);
      for (auto& a : part) out.push_back(std::move(a));
    }
    return out;
  }

  // Each approval's votes, in one query for all of them.
  void attach_votes(std::vector<Approval>& approvals) {
    if (approvals.empty()) return;
    std::vector<std::string> ids;
    std::map<std::string, Approval*> by_id;
    for (auto& a : approvals) {
      ids.push_back(a.id);
      by_id[a.id] = &a;
      a.votes.clear();
    }
    Result r = exec(
        "SELECT approval_id, approver, note, at_ms, scope_minutes FROM approval_votes "
        "WHERE approval_id = ANY($1::text[]) ORDER BY approval_id, seq",
        {text_array(ids)});
    for (int i = 0; i < r.rows(); ++i) {
      auto it = by_id.find(r.text(i, 0));
      if (it == by_id.end()) continue;
      it->second->votes.push_back(
          Vote{r.text(i, 1), r.text(i, 2), r.integer(i, 3), static_cast<int>(r.integer(i, 4))});
    }
  }

  std::vector<Vote> votes(const std::string& id) {
    Result r = exec(
        "SELECT approver, note, at_ms, scope_minutes FROM approval_votes "
        "WHERE approval_id = $1 ORDER BY seq",
        {id});
    std::vector<Vote> out;
    for (int i = 0; i < r.rows(); ++i) {
      out.push_back(
          Vote{r.text(i, 0), r.text(i, 1), r.integer(i, 2), static_cast<int>(r.integer(i, 3))});
    }
    return out;
  }

  void listen_loop() {
    while (!stop_.load()) {
      if (!listen_conn_ || PQstatus(listen_conn_) != CONNECTION_OK) {
        // Reconnect and listen again; notifications sent meanwhile are lost (callers that
        // must not miss a change re-read the store, e.g. list() after a reconnect).
        if (listen_conn_) PQfinish(listen_conn_);
        listen_conn_ = connect_interruptible(conninfo_, stop_);
        bool ok = listen_conn_ != nullptr;
        if (ok) {
          try {
            run(listen_conn_, std::string("LISTEN ") + kChannel, {});
          } catch (const StoreError&) {
            ok = false;
          }
        }
        if (!ok) {
          for (int i = 0; i < 10 && !stop_.load(); ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
          }
          continue;
        }
      }
      pollfd p{PQsocket(listen_conn_), POLLIN, 0};
      if (p.fd < 0) continue;
      int n = ::poll(&p, 1, 100);
      if (stop_.load()) break;
      if (n <= 0) continue;
      if (PQconsumeInput(listen_conn_) == 0) continue;  // the status check above resets
      while (PGnotify* note = PQnotifies(listen_conn_)) {
        std::string extra = note->extra ? note->extra : "";
        PQfreemem(note);
        // Anyone who may connect to the database can NOTIFY on this channel: the payload is
        // handed on as it came, for the listener to check and to re-read the store about.
        auto colon = extra.find(':');
        if (colon == std::string::npos) colon = extra.size();
        Listener l;
        {
          std::lock_guard lock(listener_mu_);
          l = listener_;
        }
        if (!l) continue;
        try {
          l(std::string_view(extra).substr(0, colon),
            std::string_view(extra).substr(std::min(colon + 1, extra.size())));
        } catch (...) {
          // A listener's failure is its own.
        }
      }
    }
  }

  const std::string conninfo_;
  std::mutex mu_;
  PGconn* conn_ = nullptr;
  bool commit_sent_ = false;  // during with_connection: f has sent a COMMIT (under mu_)

  std::mutex listener_mu_;
  Listener listener_;
  PGconn* listen_conn_ = nullptr;
  std::atomic<bool> stop_{false};
  std::thread listen_thread_;
};

}  // namespace

std::unique_ptr<Store> open_postgres(const std::string& conninfo) {
  return std::make_unique<PostgresStore>(conninfo);
}

}  // namespace warden::approvals
