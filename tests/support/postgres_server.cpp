// Starts a throwaway PostgreSQL server from Debian's packaged binaries for the tests.
#include "tests/support/postgres_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace warden::test {
namespace {

std::string find_bin_dir() {
  std::error_code ec;
  std::string best;
  int best_version = -1;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string name = entry.path().filename().string();
    int version = std::atoi(name.c_str());
    fs::path bin = entry.path() / "bin";
    if (version > best_version && fs::exists(bin / "initdb") && fs::exists(bin / "postgres") &&
        fs::exists(bin / "pg_ctl")) {
      best_version = version;
      best = bin.string();
    }
  }
  if (best.empty()) {
    throw std::runtime_error("PostgreSQL server binaries not found: apt-get install postgresql");
  }
  return best;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("PostgresServer: socket() failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("PostgresServer: cannot find a free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs argv (as the postgres user when we are root) in dir with output to log; returns the
// exit status (or -1 when it did not exit normally).
int run(std::vector<std::string> argv, const std::string& dir, const std::string& log) {
  if (::geteuid() == 0) argv.insert(argv.begin(), {"runuser", "-u", "postgres", "--"});
  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("PostgresServer: fork failed");
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    if (::chdir(dir.c_str()) != 0) _exit(126);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string conninfo(int port, const std::string& db) {
  return "host=127.0.0.1 port=" + std::to_string(port) + " user=postgres dbname=" + db;
}

}  // namespace

PostgresServer::PostgresServer() {
  const std::string bin = find_bin_dir();
  char tmpl[] = "/tmp/warden-pg-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("PostgresServer: mkdtemp failed");
  dir_ = tmpl;
  const std::string data = dir_ + "/data";
  const std::string log = dir_ + "/commands.log";
  const std::string server_log = dir_ + "/server.log";
  try {
    if (::geteuid() == 0) {
      passwd* pw = ::getpwnam("postgres");
      if (!pw) {
        throw std::runtime_error(
            "PostgresServer: running as root and there is no `postgres` user to run the server");
      }
      if (::chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        throw std::runtime_error("PostgresServer: cannot chown " + dir_ + " to postgres");
      }
    }
    if (run({bin + "/initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E",
             "UTF8", "--locale=C"},
            dir_, log) != 0) {
      throw std::runtime_error("PostgresServer: initdb failed:\n" + read_file(log));
    }
    bool started = false;
    for (int attempt = 0; attempt < 5 && !started; ++attempt) {
      port_ = free_port();
      const std::string options = "-k " + dir_ + " -p " + std::to_string(port_) +
                                  " -c listen_addresses=127.0.0.1 -c fsync=off"
                                  " -c max_connections=200";
      started = run({bin + "/pg_ctl", "-D", data, "-l", server_log, "-w", "-t", "60", "-o", options,
                     "start"},
                    dir_, log) == 0;
    }
    if (!started) {
      throw std::runtime_error("PostgresServer: the server did not start:\n" + read_file(log) +
                               "\n--- server log ---\n" + read_file(server_log));
    }
    std::string last_error;
    for (int i = 0; i < 100; ++i) {
      PGconn* c = PQconnectdb(conninfo(port_, "postgres").c_str());
      bool ok = PQstatus(c) == CONNECTION_OK;
      if (!ok) last_error = PQerrorMessage(c);
      PQfinish(c);
      if (ok) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    throw std::runtime_error("PostgresServer: cannot connect to the server on port " +
                             std::to_string(port_) + ": " + last_error + "\n--- server log ---\n" +
                             read_file(server_log));
  } catch (...) {
    run({bin + "/pg_ctl", "-D", data, "stop", "-m", "immediate", "-w"}, dir_, "/dev/null");
    std::error_code ec;
    fs::remove_all(dir_, ec);
    throw;
  }
}

PostgresServer::~PostgresServer() {
  try {
    const std::string bin = find_bin_dir();
    run({bin + "/pg_ctl", "-D", dir_ + "/data", "stop", "-m", "immediate", "-w"}, dir_,
        "/dev/null");
  } catch (...) {
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

std::string PostgresServer::create_database(const std::string& name) {
  if (name.empty() || !std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
      })) {
    throw std::runtime_error("PostgresServer: bad database name '" + name + "'");
  }
  PGconn* c = PQconnectdb(conninfo(port_, "postgres").c_str());
  if (PQstatus(c) != CONNECTION_OK) {
    std::string err = PQerrorMessage(c);
    PQfinish(c);
    throw std::runtime_error("PostgresServer: cannot connect: " + err);
  }
  char* ident = PQescapeIdentifier(c, name.c_str(), name.size());
  std::string sql = std::string("CREATE DATABASE ") + ident;
  PQfreemem(ident);
  PGresult* r = PQexec(c, sql.c_str());
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  std::string err = ok ? "" : PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  if (!ok) throw std::runtime_error("PostgresServer: CREATE DATABASE " + name + ": " + err);
  return conninfo(port_, name);
}

void PostgresServer::stop() {
  const std::string bin = find_bin_dir();
  run({bin + "/pg_ctl", "-D", dir_ + "/data", "stop", "-m", "fast", "-w", "-t", "60"}, dir_,
      dir_ + "/commands.log");
}

void PostgresServer::start() {
  const std::string bin = find_bin_dir();
  const std::string options = "-k " + dir_ + " -p " + std::to_string(port_) +
                              " -c listen_addresses=127.0.0.1 -c fsync=off"
                              " -c max_connections=200";
  if (run({bin + "/pg_ctl", "-D", dir_ + "/data", "-l", dir_ + "/server.log", "-w", "-t", "60",
           "-o", options, "start"},
          dir_, dir_ + "/commands.log") != 0) {
    throw std::runtime_error("PostgresServer: the server did not start again:\n" +
                             read_file(dir_ + "/commands.log"));
  }
  for (int i = 0; i < 100; ++i) {
    PGconn* c = PQconnectdb(conninfo(port_, "postgres").c_str());
    bool ok = PQstatus(c) == CONNECTION_OK;
    PQfinish(c);
    if (ok) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("PostgresServer: the restarted server accepts no connection");
}

PostgresServer& shared_postgres() {
  static PostgresServer server;
  return server;
}

std::string fresh_database(const std::string& prefix, PostgresServer& server) {
  static int n = 0;
  return server.create_database(prefix + "_" + std::to_string(::getpid()) + "_" +
                                std::to_string(++n));
}

}  // namespace warden::test
