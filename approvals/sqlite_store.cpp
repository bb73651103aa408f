// The SQLite approval store: one file in WAL mode, shared by every process that opens it.
// Each state change is one BEGIN IMMEDIATE transaction, so two stores on the same file (two
// daemons on one host) serialize on SQLite's write lock; within a process a mutex guards
// the connection. Listeners are called after the change committed, outside that mutex.
#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>

#include "approvals/internal.h"
#include "approvals/store.h"

namespace warden::approvals {
namespace {

using detail::kApprovalColumns;

// How long a connection waits for another's lock before the call fails.
constexpr int kBusyTimeoutMs = 5000;

// The connection's prepared statements, by their SQL (constant text; values are bound):
// SQLite parses a statement's text at every prepare, which was most of what recording an
// approval cost. Used under the store's mutex, or before the store is shared.
class StatementCache {
 public:
  struct Entry {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;  // handed to a live Statement: a nested use prepares its own
  };
  StatementCache() = default;
  StatementCache(const StatementCache&) = delete;
  StatementCache& operator=(const StatementCache&) = delete;
  ~StatementCache() { clear(); }
  // Finalizes every statement (the connection cannot close while one is left).
  void clear() {
    for (auto& [sql, entry] : entries_) sqlite3_finalize(entry.stmt);
    entries_.clear();
  }
  sqlite3* db = nullptr;

 private:
  friend class Statement;
  std::unordered_map<std::string, Entry> entries_;  // node-based: entries stay where they are
};

class Statement {
 public:
  Statement(StatementCache& cache, std::string_view sql) : db_(cache.db) {
    auto it = cache.entries_.find(std::string(sql));
    if (it != cache.entries_.end() && !it->second.in_use) {
      entry_ = &it->second;
      entry_->in_use = true;
      stmt_ = entry_->stmt;
      return;
    }
    if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt_, nullptr) != SQLITE_OK) {
      sqlite3_finalize(stmt_);
      throw StoreError(std::string("approval store (sqlite): ") + sqlite3_errmsg(db_));
    }
    if (it == cache.entries_.end()) {
      entry_ = &cache.entries_.emplace(std::string(sql), StatementCache::Entry{stmt_, true})
                    .first->second;
    }
  }
  // A cached statement goes back reset, its values unbound (a statement left stepping would
  // hold its read transaction open); another is finalized.
  ~Statement() {
    if (entry_) {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
      entry_->in_use = false;
    } else {
      sqlite3_finalize(stmt_);
    }
  }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int i, std::string_view text) {
    // A null data pointer would bind SQL NULL; an empty string stays an empty string.
    check(sqlite3_bind_text(stmt_, i, text.data() ? text.data() : "", static_cast<int>(text.size()),
                            SQLITE_TRANSIENT));
    return *this;
  }
  Statement& bind(int i, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, i, v));
    return *this;
  }
  // True while there is a row.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    throw StoreError(std::string("approval store (sqlite): ") + sqlite3_errmsg(db_));
  }
  void run() {
    while (step()) {
    }
  }
  std::string text(int col) const {
    const unsigned char* p = sqlite3_column_text(stmt_, col);
    if (!p) return {};
    return std::string(reinterpret_cast<const char*>(p),
                       static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)));
  }
  std::int64_t integer(int col) const { return sqlite3_column_int64(stmt_, col); }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) {
      throw StoreError(std::string("approval store (sqlite): ") + sqlite3_errmsg(db_));
    }
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  StatementCache::Entry* entry_ = nullptr;  // the cache's, or null: finalized when done
};

// Notifications gathered during a call and delivered once it returned its lock.
using Pending = std::vector<std::pair<std::string, std::string>>;

class SqliteStore final : public Store {
 public:
  explicit SqliteStore(const std::string& path) {
    // A new file is readable by its owner only: it holds the actions people are asked about.
    if (path != ":memory:" && !path.empty()) {
      int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);  // on failure sqlite3_open_v2 reports why below
    }
    int rc =
        sqlite3_open_v2(path.c_str(), &db_,
                        SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
      std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close(db_);
      db_ = nullptr;
      throw StoreError("approval store (sqlite): cannot open " + path + ": " + msg);
    }
    try {
      statements_.db = db_;
      sqlite3_busy_timeout(db_, kBusyTimeoutMs);
      exec("PRAGMA foreign_keys = ON");
      switch_to_wal(path);
      exec("BEGIN IMMEDIATE");
      try {
        for (std::size_t i = 0; i < detail::kSchemaCount; ++i) exec(detail::kSchema[i]);
        // A store created before votes carried their scope gains the column (existing votes:
        // 0, one use).
        {
          Statement has(statements_,
                        "SELECT 1 FROM pragma_table_info('approval_votes') "
                        "WHERE name = 'scope_minutes'");
          if (!has.step()) {
            exec(
                "ALTER TABLE approval_votes ADD COLUMN scope_minutes INTEGER NOT NULL "
                "DEFAULT 0");
          }
        }
        // ... and before claims named their daemon.
        {
          Statement has(statements_,
                        "SELECT 1 FROM pragma_table_info('approvals') WHERE name = 'claimed_by'");
          if (!has.step())
            exec("ALTER TABLE approvals ADD COLUMN claimed_by TEXT NOT NULL DEFAULT ''");
        }
        // ... and before approvals kept what they grant and the token that asked (existing
        // approvals: they grant nothing, asked by no known token).
        {
          Statement has(statements_,
                        "SELECT 1 FROM pragma_table_info('approvals') WHERE name = 'grants_json'");
          if (!has.step())
            exec("ALTER TABLE approvals ADD COLUMN grants_json TEXT NOT NULL DEFAULT ''");
        }
        {
          Statement has(statements_,
                        "SELECT 1 FROM pragma_table_info('approvals') "
                        "WHERE name = 'requester_token_id'");
          if (!has.step())
            exec("ALTER TABLE approvals ADD COLUMN requester_token_id TEXT NOT NULL DEFAULT ''");
        }
        for (std::size_t i = 0; i < detail::kSchemaProbeCount; ++i) {
          Statement(statements_, detail::kSchemaProbes[i]).run();
        }
        exec("COMMIT");
      } catch (...) {
        sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
        throw;
      }
    } catch (...) {
      statements_.clear();
      sqlite3_close(db_);
      db_ = nullptr;
      throw;
    }
  }
  ~SqliteStore() override {
    statements_.clear();
    sqlite3_close(db_);
  }

  std::string_view kind() const override { return "sqlite"; }

  Created create(const NewApproval& n) override {
    Created out;
    Pending notes;
    {
      std::lock_guard lock(mu_);
      out = detail::new_approval(n);
      Approval& a = out.approval;
      Transaction tx(*this);
      if (n.max_pending > 0) {
        // Counted under the write lock the insert takes (BEGIN IMMEDIATE): no other
        // connection, in this process or another, inserts in between.
        Statement c(statements_,
                    "SELECT count(*) FROM approvals WHERE principal = ?1 AND status = 'pending' "
                    "AND expires_ms > ?2");
        c.bind(1, a.principal).bind(2, a.created_ms);
        const std::int64_t pending = c.step() ? c.integer(0) : 0;
        if (pending >= n.max_pending) throw PendingLimit(pending, n.max_pending);
      }
      Statement s(statements_,
                  "INSERT INTO approvals (id, token_hash, status, action_hash, action_json, "
                  "proposal_json, principal, groups_json, session, agent, rules_json, reason, "
                  "decision_id, origin, daemon_id, created_ms, expires_ms, approvers_needed, "
                  "grants_json, requester_token_id) "
                  "VALUES (?1, ?2, 'pending', ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, "
                  "?14, ?15, ?16, ?17, ?18, ?19)");
      s.bind(1, a.id).bind(2, detail::token_hash(out.token)).bind(3, a.action_hash);
      s.bind(4, a.action_json).bind(5, a.proposal_json).bind(6, a.principal);
      s.bind(7, detail::json_array(a.groups)).bind(8, a.session).bind(9, a.agent);
      s.bind(10, detail::json_array(a.rules)).bind(11, a.reason).bind(12, a.decision_id);
      s.bind(13, a.origin).bind(14, a.daemon_id).bind(15, a.created_ms).bind(16, a.expires_ms);
      s.bind(17, static_cast<std::int64_t>(a.approvers_needed));
      s.bind(18, grants_json(a.grants)).bind(19, a.requester_token_id);
      s.run();
      tx.commit();
      notes.emplace_back("created", a.id);
    }
    deliver(notes);
    return out;
  }

  std::optional<Approval> get(std::string_view id) override {
    std::lock_guard lock(mu_);
    return load("id", id);
  }

  std::optional<Approval> find_by_token(std::string_view token) override {
    std::lock_guard lock(mu_);
    return load("token_hash", detail::token_hash(token));
  }

  std::vector<Approval> list(const Filter& f) override {
    std::lock_guard lock(mu_);
    // Only the filters given become conditions (constant SQL; every value is bound), so the
    // index on (status, created_ms, id) serves the page.
    std::string sql = std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE 1 = 1";
    int n = 0;
    auto cond = [&](const char* before, const char* after = "") {
      sql += before;
      sql += "?" + std::to_string(++n);
      sql += after;
      return n;
    };
    const int status_at = f.status ? cond(" AND status = ") : 0;
    const int agent_at = !f.agent.empty() ? cond(" AND agent = ") : 0;
    const int session_at = !f.session.empty() ? cond(" AND session = ") : 0;
    const int principal_at = !f.principal.empty() ? cond(" AND principal = ") : 0;
    const int age_at = f.min_age_ms > 0 ? cond(" AND created_ms <= ") : 0;
    const int rule_at = !f.rule.empty() ? cond(" AND instr(rules_json, ", ") > 0") : 0;
    const int after_at = cond(" AND (created_ms, id) > (", ", ");
    cond("", ")");
    const int limit_at = cond(" ORDER BY created_ms, id LIMIT ");
    const std::string needle = detail::rule_needle(f.rule);
    Cursor after = f.after ? *f.after : Cursor{INT64_MIN, ""};
    std::vector<Approval> out;
    while (out.size() < f.limit) {
      const std::size_t want = f.rule.empty() ? f.limit - out.size() : detail::kListBatch;
      Statement s(statements_, sql);
      if (status_at) s.bind(status_at, status_name(*f.status));
      if (agent_at) s.bind(agent_at, f.agent);
      if (session_at) s.bind(session_at, f.session);
      if (principal_at) s.bind(principal_at, f.principal);
      if (age_at) s.bind(age_at, f.now_ms - f.min_age_ms);
      if (rule_at) s.bind(rule_at, needle);
      s.bind(after_at, after.created_ms).bind(after_at + 1, after.id);
      s.bind(limit_at, static_cast<std::int64_t>(std::min<std::size_t>(want, INT64_MAX)));
      std::size_t rows = 0;
      while (out.size() < f.limit && s.step()) {
        ++rows;
        Approval a = row(s);
        after = Cursor{a.created_ms, a.id};
        if (detail::has_rule(a, f.rule)) out.push_back(std::move(a));
      }
      if (rows < want) break;
    }
    for (auto& a : out) a.votes = votes(a.id);
    return out;
  }

  ApproveOutcome approve(std::string_view id, std::string_view digest, std::string_view approver,
                         std::string_view note, std::int64_t now_ms, int scope_minutes,
                         std::string_view daemon_id) override {
    ApproveOutcome out;
    Pending notes;
    {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      auto a = load_bare("id", id);
      if (!a) {
        out.result = ApproveResult::NotFound;
      } else if (digest != a->digest) {
        out.result = ApproveResult::DigestMismatch;
      } else if (a->status != Status::Pending) {
        out.result = ApproveResult::Closed;
      } else if (now_ms >= a->expires_ms) {
        mark_expired(a->id, now_ms);
        notes.emplace_back("closed", a->id);
        out.result = ApproveResult::Expired;
      } else if (approver == a->principal) {
        out.result = ApproveResult::SelfApproval;
      } else if (has_vote(a->id, approver)) {
        out.result = ApproveResult::AlreadyApproved;
      } else {
        std::int64_t count = vote_count(a->id);
        Statement ins(statements_,
                      "INSERT INTO approval_votes (approval_id, approver, note, at_ms, seq, "
                      "scope_minutes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        ins.bind(1, a->id).bind(2, approver).bind(3, note).bind(4, now_ms).bind(5, count + 1);
        ins.bind(6, static_cast<std::int64_t>(scope_minutes < 0 ? 0 : scope_minutes));
        ins.run();
        if (count + 1 >= a->approvers_needed) {
          Statement up(statements_,
                       "UPDATE approvals SET status = 'approved', closed_ms = ?2, "
                       "claimed_by = ?3 WHERE id = ?1 AND status = 'pending'");
          up.bind(1, a->id).bind(2, now_ms).bind(3, daemon_id);
          up.run();
          if (sqlite3_changes(db_) != 1) {
            throw StoreError("approval store (sqlite): " + a->id + " left pending meanwhile");
          }
          notes.emplace_back("closed", a->id);
          out.result = ApproveResult::Claimed;
        } else {
          out.result = ApproveResult::NeedMore;
        }
      }
      tx.commit();
      if (a) out.approval = load("id", a->id);
    }
    deliver(notes);
    return out;
  }

  DenyOutcome deny(std::string_view token_or_id, std::string_view by, std::string_view note,
                   std::int64_t now_ms) override {
    DenyOutcome out;
    Pending notes;
    {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      auto a = load_bare("token_hash", detail::token_hash(token_or_id));
      if (!a) a = load_bare("id", token_or_id);
      if (!a) {
        out.result = DenyResult::NotFound;
      } else if (a->status != Status::Pending) {
        out.result = DenyResult::Closed;
      } else if (now_ms >= a->expires_ms) {
        mark_expired(a->id, now_ms);
        notes.emplace_back("closed", a->id);
        out.result = DenyResult::Expired;
      } else {
        Statement up(statements_,
                     "UPDATE approvals SET status = 'denied', closed_by = ?2, close_note = ?3, "
                     "closed_ms = ?4 WHERE id = ?1 AND status = 'pending'");
        up.bind(1, a->id).bind(2, by).bind(3, note).bind(4, now_ms);
        up.run();
        out.result = sqlite3_changes(db_) == 1 ? DenyResult::Denied : DenyResult::Closed;
        if (out.result == DenyResult::Denied) notes.emplace_back("closed", a->id);
      }
      tx.commit();
      if (a) out.approval = load("id", a->id);
    }
    deliver(notes);
    return out;
  }

  bool finish(std::string_view id, Status status, std::string_view result_json,
              std::int64_t now_ms) override {
    (void)now_ms;
    if (status != Status::Executed && status != Status::Refused) return false;
    bool done = false;
    Pending notes;
    {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      Statement up(statements_,
                   "UPDATE approvals SET status = ?2, result_json = ?3 "
                   "WHERE id = ?1 AND status = 'approved'");
      up.bind(1, id).bind(2, status_name(status)).bind(3, result_json);
      up.run();
      done = sqlite3_changes(db_) == 1;
      tx.commit();
      if (done) notes.emplace_back("finished", std::string(id));
    }
    deliver(notes);
    return done;
  }

  std::vector<Approval> expire_due(std::int64_t now_ms) override {
    return move_approvals("closed", [&] {
      return returned_ids(
          "UPDATE approvals SET status = 'expired', closed_ms = ?1 "
          "WHERE status = 'pending' AND expires_ms <= ?1 RETURNING id",
          [&](Statement& s) { s.bind(1, now_ms); });
    });
  }

  Pruned prune(std::int64_t closed_before_ms, std::int64_t now_ms) override {
    Pruned out;
    {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      Statement g(statements_,
                  "DELETE FROM approval_grants WHERE uses_left = -1 OR expires_ms <= ?1");
      g.bind(1, now_ms);
      g.run();
      out.grants = sqlite3_changes(db_);
      tx.commit();
    }
    // A batch per transaction, so other calls get the lock in between: the batch's ids are
    // picked once (into this connection's temporary table), then their votes and they go.
    for (;;) {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      exec("CREATE TEMP TABLE IF NOT EXISTS prune_batch (id TEXT PRIMARY KEY)");
      exec("DELETE FROM prune_batch");
      Statement pick(statements_,
                     "INSERT INTO prune_batch (id) SELECT id FROM approvals WHERE status IN "
                     "('denied', 'expired', 'executed', 'refused') AND closed_ms < ?1 AND NOT "
                     "EXISTS (SELECT 1 FROM approval_grants g WHERE g.approval_id = approvals.id) "
                     "LIMIT ?2");
      pick.bind(1, closed_before_ms).bind(2, detail::kPruneBatch);
      pick.run();
      const int picked = sqlite3_changes(db_);
      exec("DELETE FROM approval_votes WHERE approval_id IN (SELECT id FROM prune_batch)");
      exec("DELETE FROM approvals WHERE id IN (SELECT id FROM prune_batch)");
      const int deleted = sqlite3_changes(db_);
      exec("DELETE FROM prune_batch");
      tx.commit();
      out.approvals += deleted;
      if (picked < detail::kPruneBatch) break;
    }
    return out;
  }

  std::vector<Approval> recover_claimed(std::string_view daemon_id, std::int64_t claimed_before_ms,
                                        std::string_view result_json,
                                        std::int64_t now_ms) override {
    (void)now_ms;
    return move_approvals("finished", [&] {
      std::vector<std::string> ids = returned_ids(
          "UPDATE approvals SET status = 'refused', result_json = ?3 "
          "WHERE status = 'approved' AND ((?1 <> '' AND claimed_by = ?1) OR "
          "closed_ms < ?2) RETURNING id",
          [&](Statement& s) {
            s.bind(1, daemon_id).bind(2, claimed_before_ms).bind(3, result_json);
          });
      for (const auto& id : ids) {
        Statement g(statements_,
                    "UPDATE approval_grants SET uses_left = -1 WHERE approval_id = ?1");
        g.bind(1, id);
        g.run();
      }
      return ids;
    });
  }

  void add_grant(const Grant& g) override {
    std::lock_guard lock(mu_);
    Transaction tx(*this);
    Statement s(statements_,
                "INSERT INTO approval_grants (id, approval_id, principal, session, action_hash, "
                "expires_ms, uses_left, approver) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    s.bind(1, detail::new_id("grt_")).bind(2, g.approval_id).bind(3, g.principal);
    s.bind(4, g.session).bind(5, g.action_hash).bind(6, g.expires_ms);
    s.bind(7, static_cast<std::int64_t>(g.uses_left < 0 ? 1 : g.uses_left)).bind(8, g.approver);
    s.run();
    tx.commit();
  }

  std::optional<Grant> use_grant(std::string_view principal, std::string_view session,
                                 std::string_view hash, std::int64_t now_ms) override {
    std::lock_guard lock(mu_);
    Transaction tx(*this);
    std::string id;
    Grant g;
    {
      Statement s(statements_,
                  "SELECT id, approval_id, principal, session, action_hash, expires_ms, "
                  "uses_left, approver FROM approval_grants WHERE principal = ?1 AND "
                  "session = ?2 AND action_hash = ?3 AND expires_ms > ?4 AND uses_left >= 0 "
                  "ORDER BY expires_ms, rowid LIMIT 1");
      s.bind(1, principal).bind(2, session).bind(3, hash).bind(4, now_ms);
      if (!s.step()) return std::nullopt;
      id = s.text(0);
      g.approval_id = s.text(1);
      g.principal = s.text(2);
      g.session = s.text(3);
      g.action_hash = s.text(4);
      g.expires_ms = s.integer(5);
      g.uses_left = static_cast<int>(s.integer(6));
      g.approver = s.text(7);
    }
    Statement up(statements_,
                 "UPDATE approval_grants SET uses_left = CASE WHEN uses_left = 1 THEN -1 "
                 "WHEN uses_left > 1 THEN uses_left - 1 ELSE uses_left END "
                 "WHERE id = ?1 AND uses_left >= 0");
    up.bind(1, id);
    up.run();
    if (sqlite3_changes(db_) != 1) return std::nullopt;
    tx.commit();
    return g;
  }

  void listen(Listener listener) override {
    std::lock_guard lock(listener_mu_);
    listener_ = std::move(listener);
  }

  std::vector<TokenRequester> open_requesters(std::int64_t now_ms) override {
    std::lock_guard lock(mu_);
    Statement s(statements_,
                "SELECT DISTINCT a.requester_token_id, a.principal FROM approvals a "
                "WHERE a.requester_token_id <> '' AND (a.status = 'pending' OR EXISTS "
                "(SELECT 1 FROM approval_grants g WHERE g.approval_id = a.id AND "
                "g.uses_left >= 0 AND g.expires_ms > ?1)) "
                "ORDER BY a.requester_token_id, a.principal");
    s.bind(1, now_ms);
    std::vector<TokenRequester> out;
    while (s.step()) out.push_back(TokenRequester{s.text(0), s.text(1)});
    return out;
  }

  std::vector<Approval> cancel_requester(std::string_view token_id, std::string_view principal,
                                         std::string_view by, std::string_view note,
                                         std::int64_t now_ms) override {
    if (token_id.empty()) return {};
    return move_approvals("closed", [&] {
      std::vector<std::string> ids = returned_ids(
          "UPDATE approvals SET status = 'denied', closed_by = ?3, close_note = ?4, "
          "closed_ms = ?5 WHERE status = 'pending' AND requester_token_id = ?1 AND "
          "principal = ?2 RETURNING id",
          [&](Statement& s) {
            s.bind(1, token_id).bind(2, principal).bind(3, by).bind(4, note).bind(5, now_ms);
          });
      Statement g(statements_,
                  "UPDATE approval_grants SET uses_left = -1 WHERE uses_left >= 0 AND "
                  "approval_id IN (SELECT id FROM approvals WHERE requester_token_id = ?1 AND "
                  "principal = ?2)");
      g.bind(1, token_id).bind(2, principal);
      g.run();
      return ids;
    });
  }

 private:
  // One transaction in which `change` moves approvals and returns their ids; then those
  // approvals as they are now, each heard as `kind` once the mutex is released.
  template <typename Change>
  std::vector<Approval> move_approvals(const char* kind, Change change) {
    std::vector<Approval> out;
    Pending notes;
    {
      std::lock_guard lock(mu_);
      Transaction tx(*this);
      std::vector<std::string> ids = change();
      tx.commit();
      for (const auto& id : ids) {
        if (auto a = load("id", id)) out.push_back(std::move(*a));
        notes.emplace_back(kind, id);
      }
    }
    deliver(notes);
    return out;
  }

  // The ids an UPDATE … RETURNING id returns, its values bound by `bind`.
  template <typename Bind>
  std::vector<std::string> returned_ids(std::string_view sql, Bind bind) {
    std::vector<std::string> ids;
    Statement s(statements_, sql);
    bind(s);
    while (s.step()) ids.push_back(s.text(0));
    return ids;
  }

  class Transaction {
   public:
    explicit Transaction(SqliteStore& s) : s_(s) { s_.exec("BEGIN IMMEDIATE"); }
    ~Transaction() {
      if (!done_) sqlite3_exec(s_.db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    void commit() {
      s_.exec("COMMIT");
      done_ = true;
    }

   private:
    SqliteStore& s_;
    bool done_ = false;
  };

  // Switching a file to WAL takes its write lock from within a read transaction, where SQLite
  // answers SQLITE_BUSY without calling the busy handler: a daemon opening the file while
  // another holds it (or is switching it) retries here, as long as the busy timeout, then
  // fails.
  void switch_to_wal(const std::string& path) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
    for (;;) {
      std::string mode;
      char* err = nullptr;
      int rc = sqlite3_exec(
          db_, "PRAGMA journal_mode = WAL",
          [](void* out, int n, char** values, char**) {
            if (n > 0 && values[0]) *static_cast<std::string*>(out) = values[0];
            return 0;
          },
          &mode, &err);
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      if (rc == SQLITE_OK) {
        if (mode != "wal") {
          throw StoreError("approval store (sqlite): cannot switch " + path + " to WAL");
        }
        return;
      }
      const int primary = rc & 0xff;
      if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) ||
          std::chrono::steady_clock::now() >= deadline) {
        throw StoreError("approval store (sqlite): " + msg);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }

  void exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
      std::string msg = err ? err : sqlite3_errmsg(db_);
      sqlite3_free(err);
      throw StoreError("approval store (sqlite): " + msg);
    }
  }

  static Approval row(const Statement& s) {
    return detail::approval_from_row([&](int i) { return s.text(i); });
  }

  // column is a constant column name, never data.
  std::optional<Approval> load_bare(const char* column, std::string_view value) {
    Statement s(statements_, std::string("SELECT ") + kApprovalColumns + " FROM approvals WHERE " +
                                 column + " = ?1");
    s.bind(1, value);
    if (!s.step()) return std::nullopt;
    return row(s);
  }

  std::optional<Approval> load(const char* column, std::string_view value) {
    auto a = load_bare(column, value);
    if (a) a->votes = votes(a->id);
    return a;
  }

  std::vector<Vote> votes(const std::string& id) {
    Statement s(statements_,
                "SELECT approver, note, at_ms, scope_minutes FROM approval_votes "
                "WHERE approval_id = ?1 ORDER BY seq");
    s.bind(1, id);
    std::vector<Vote> out;
    while (s.step()) {
      out.push_back(Vote{s.text(0), s.text(1), s.integer(2), static_cast<int>(s.integer(3))});
    }
    return out;
  }

  bool has_vote(const std::string& id, std::string_view approver) {
    Statement s(statements_,
                "SELECT 1 FROM approval_votes WHERE approval_id = ?1 AND approver = ?2");
    s.bind(1, id).bind(2, approver);
    return s.step();
  }

  std::int64_t vote_count(const std::string& id) {
    Statement s(statements_, "SELECT count(*) FROM approval_votes WHERE approval_id = ?1");
    s.bind(1, id);
    return s.step() ? s.integer(0) : 0;
  }

  void mark_expired(const std::string& id, std::int64_t now_ms) {
    Statement s(statements_,
                "UPDATE approvals SET status = 'expired', closed_ms = ?2 "
                "WHERE id = ?1 AND status = 'pending'");
    s.bind(1, id).bind(2, now_ms);
    s.run();
  }

  void deliver(const Pending& notes) {
    if (notes.empty()) return;
    Listener l;
    {
      std::lock_guard lock(listener_mu_);
      l = listener_;
    }
    if (!l) return;
    for (const auto& [kind, id] : notes) {
      try {
        l(kind, id);
      } catch (...) {
        // A listener's failure is its own; the change is committed either way.
      }
    }
  }

  sqlite3* db_ = nullptr;
  StatementCache statements_;
  std::mutex mu_;
  std::mutex listener_mu_;
  Listener listener_;
};

}  // namespace

std::unique_ptr<Store> open_sqlite(const std::string& path) {
  return std::make_unique<SqliteStore>(path);
}

}  // namespace warden::approvals
