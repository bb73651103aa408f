// Runs one SQL statement on a daemon's SQLite approvals file from outside the daemon (tests
// that damage or repair the store under it). Fails the test, naming the statement, if SQLite
// refuses.
#pragma once

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <string>

namespace warden::server::testing {

inline void sqlite_exec(const std::string& db, const std::string& statement) {
  sqlite3* handle = nullptr;
  REQUIRE(sqlite3_open(db.c_str(), &handle) == SQLITE_OK);
  sqlite3_busy_timeout(handle, 5000);
  char* message = nullptr;
  int rc = sqlite3_exec(handle, statement.c_str(), nullptr, nullptr, &message);
  INFO(statement << ": " << (message ? message : ""));
  sqlite3_free(message);
  sqlite3_close(handle);
  REQUIRE(rc == SQLITE_OK);
}

}  // namespace warden::server::testing
