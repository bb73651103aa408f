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

 private:
  std::string dir_;
  int port_ = 0;
};

}  // namespace warden::test
