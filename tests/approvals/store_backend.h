// What the approval store tests share: a fresh location per test case on either backend
// (SQLite in a temporary file, or a database of the one real PostgreSQL server a test binary
// run starts) and a typical new approval.
#pragma once

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "approvals/store.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_dir.h"

namespace warden::approvals::testing {

inline constexpr std::int64_t kNow = 1795148900000;  // 2026-11-20
inline constexpr std::int64_t kHour = 3600 * 1000;

inline warden::test::PostgresServer& pg_server() {
  static warden::test::PostgresServer server;
  return server;
}

// One backend's location for one test case: a fresh SQLite file or a fresh database.
class Backend {
 public:
  explicit Backend(std::string kind) : kind_(std::move(kind)) {
    static int counter = 0;
    ++counter;
    if (kind_ == "sqlite") {
      tmp_ = std::make_unique<warden::testing::TempDir>("warden-approvals");
      dir_ = tmp_->str();
      location_ = dir_ + "/approvals.db";
    } else {
      location_ = pg_server().create_database("approvals_" + std::to_string(::getpid()) + "_" +
                                              std::to_string(counter));
    }
  }
  const std::string& kind() const { return kind_; }
  const std::string& location() const { return location_; }
  const std::string& dir() const { return dir_; }
  std::unique_ptr<Store> open() const {
    return kind_ == "sqlite" ? open_sqlite(location_) : open_postgres(location_);
  }

 private:
  std::string kind_, location_, dir_;
  std::unique_ptr<warden::testing::TempDir> tmp_;  // sqlite: the file's directory
};

inline NewApproval request(std::string principal = "alice", std::string session = "s1",
                           std::string agent = "claude",
                           std::vector<std::string> rules = {"ask-rm"}) {
  NewApproval n;
  n.action_json = R"({"type":"shell","payload":{"command":"rm -rf build"}})";
  n.proposal_json = R"({"agent":"claude","action":{"type":"shell"}})";
  n.principal = std::move(principal);
  n.groups = {"dev", "ops"};
  n.session = std::move(session);
  n.agent = std::move(agent);
  n.rules = std::move(rules);
  n.reason = "deleting a build tree needs a person";
  n.decision_id = "dec_1";
  n.origin = "decide";
  n.daemon_id = "host-1:1";
  n.created_ms = kNow;
  n.expires_ms = kNow + kHour;
  n.approvers_needed = 1;
  return n;
}

#define BACKENDS GENERATE(as<std::string>{}, "sqlite", "postgres")

// Runs one SQL statement on the backend's database directly (to tamper with or inspect a
// store behind its back); fails the test when it does not succeed.
inline void exec_sql(const Backend& b, const char* sql) {
  if (b.kind() == "sqlite") {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(b.location().c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    INFO((err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
  } else {
    PGconn* c = PQconnectdb(b.location().c_str());
    REQUIRE(PQstatus(c) == CONNECTION_OK);
    PGresult* r = PQexec(c, sql);
    const bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    INFO(PQresultErrorMessage(r));
    PQclear(r);
    PQfinish(c);
    REQUIRE(ok);
  }
}

// The ids of `list`, in order.
inline std::vector<std::string> ids(const std::vector<Approval>& list) {
  std::vector<std::string> out;
  for (const auto& a : list) out.push_back(a.id);
  return out;
}

}  // namespace warden::approvals::testing
