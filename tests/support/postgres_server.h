// A real PostgreSQL server for the tests, from Debian's packages: initdb in a temporary
// directory and postgres on a free loopback port (run as the `postgres` user when the tests
// run as root, since PostgreSQL refuses root). Throws std::runtime_error naming what is
// missing when it cannot start: the test fails, never skips.
#pragma once

#include <string>

namespace warden::test {

class PostgresServer {
 public:
  PostgresServer();
  ~PostgresServer();  // stops the server and removes its directory
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

  int port() const { return port_; }
  // Creates a fresh database and returns its libpq conninfo
  // ("host=127.0.0.1 port=N user=postgres dbname=NAME").
  std::string create_database(const std::string& name);

  // Stops the server (fast shutdown: clients are disconnected), and starts it again on the
  // same port with the same data, for tests of a database that goes away and comes back.
  // start() throws std::runtime_error when the server does not come back.
  void stop();
  void start();

 private:
  std::string dir_;
  int port_ = 0;
};

// The test process's one server, started on first use (when it cannot start the test fails).
PostgresServer& shared_postgres();
// A new, empty database on `server` named PREFIX_PID_N; its conninfo.
std::string fresh_database(const std::string& prefix, PostgresServer& server = shared_postgres());

}  // namespace warden::test
