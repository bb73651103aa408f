// Transports and pre-auth defences over real sockets: the Unix socket (peer credentials, file
// mode, directory and stale-socket checks, uid allowlist), TLS (verified server certificate,
// host name, pin; a client that cannot verify the server never sends its token), the refusal
// of unprotected non-loopback TCP, and the budgets of connections that have not
// authenticated (slots, frame size, log lines).
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>

#include "server/errors.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

// Runs a shell command; fails the test loudly (with its output) if it does not succeed.
void run(const std::string& command) {
  std::string full = command + " 2>&1";
  FILE* pipe = ::popen(full.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  int status = ::pclose(pipe);
  INFO("command: " << command << "\noutput: " << output);
  REQUIRE(status == 0);
}

// A test CA, a server certificate it signed (for localhost and 127.0.0.1), and a second CA
// that signed nothing the server uses. Made with the openssl command; missing openssl fails.
struct TestPki {
  std::string ca, other_ca, cert, key;
  explicit TestPki(const TempDir& dir) {
    run("command -v openssl");
    fs::path p = dir.path() / "pki";
    fs::create_directories(p);
    auto q = [&](const char* name) { return "'" + (p / name).string() + "'"; };
    const std::string ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509 " + ec + " -keyout " + q("ca.key") + " -out " + q("ca.pem") +
        " -subj /CN=warden-test-ca -days 2");
    run("openssl req -x509 " + ec + " -keyout " + q("other.key") + " -out " + q("other.pem") +
        " -subj /CN=someone-else -days 2");
    run("openssl req " + ec + " -keyout " + q("server.key") + " -out " + q("server.csr") +
        " -subj /CN=localhost");
    std::ofstream(p / "ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    run("openssl x509 -req -in " + q("server.csr") + " -CA " + q("ca.pem") + " -CAkey " +
        q("ca.key") + " -CAcreateserial -out " + q("server.pem") + " -days 2 -extfile " +
        q("ext.cnf"));
    ca = (p / "ca.pem").string();
    other_ca = (p / "other.pem").string();
    cert = (p / "server.pem").string();
    key = (p / "server.key").string();
  }
};

// The SHA-256 pin of a PEM certificate, as `--pin` takes it.
std::string pin_of(const std::string& cert_pem) {
  std::string out;
  FILE* pipe =
      ::popen(("openssl x509 -in '" + cert_pem + "' -outform DER | sha256sum").c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[128] = {};
  REQUIRE(std::fgets(buffer, sizeof buffer, pipe) != nullptr);
  ::pclose(pipe);
  return "sha256:" + std::string(buffer, 64);
}

std::vector<std::string> transport_codes_until_closed(Client& c) {
  std::vector<std::string> codes;
  std::string payload;
  Client::ReadStatus status;
  while ((status = c.read_message(&payload, 5000ms)) == Client::ReadStatus::Ok) {
    codes.push_back(error_code(payload));
  }
  if (status == Client::ReadStatus::Timeout) codes.push_back("<timeout>");
  return codes;
}

}  // namespace

TEST_CASE("the Unix socket serves like TCP and reports the peer's uid", "[server][transport]") {
  TempDir dir;
  Config config = test_config(dir);
  auto lines = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(lines, spdlog::level::debug);
  std::string path;
  {
    RunningDaemon d(config, options);
    REQUIRE(d.ok());
    path = d.daemon().unix_path();
    REQUIRE(path == (dir.path() / "state" / "warden.sock").string());
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    CHECK(S_ISSOCK(st.st_mode));
    CHECK((st.st_mode & 0777) == 0600);
    Client c;
    std::string error;
    REQUIRE(c.connect("unix:" + path, 5000ms, &error));
    REQUIRE(c.authenticate(Tokens{}.agent, 5000ms, &error));
    REQUIRE(c.send_message(decide_request("u", kShellProposal), &error));
    std::string reply = read_or_fail(c);
    CHECK(error_code(reply) == "");
    CHECK(std::string(parse(reply)["payload"]["decision"]["outcome"].GetString()) == "reject");
    d.stop();
  }
  std::string expected = "unix uid=" + std::to_string(::getuid()) +
                         " gid=" + std::to_string(::getgid()) +
                         " pid=" + std::to_string(::getpid());
  INFO(lines->str());
  CHECK(lines->str().find(expected) != std::string::npos);
  // The daemon removes its socket when it stops.
  CHECK_FALSE(fs::exists(fs::symlink_status(path)));
}

TEST_CASE("a uid outside unix.allow_uids is refused", "[server][transport]") {
  TempDir dir;
  Config config = test_config(dir);
  config.unix_socket.allow_uids = {static_cast<unsigned>(::getuid()) + 1};
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect_raw("unix:" + d.daemon().unix_path(), 5000ms, &error));
  CHECK(transport_codes_until_closed(c) == std::vector<std::string>{err::kPeerNotAllowed});
}

TEST_CASE("the Unix socket path is checked before binding", "[server][transport]") {
  TempDir dir;
  Config config = test_config(dir);
  SECTION("a directory others can write is refused") {
    fs::create_directories(dir.path() / "open");
    fs::permissions(dir.path() / "open", fs::perms::all);
    config.unix_socket.path = (dir.path() / "open" / "w.sock").string();
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().step == "listener");
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find("writable by group or others") != std::string::npos);
  }
  SECTION("a file that is not a socket is not replaced") {
    config.unix_socket.path = dir.write("private/not-a-socket", "keep me");
    fs::permissions(dir.path() / "private", fs::perms::owner_all);
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().message.find("is not a socket") != std::string::npos);
    CHECK(fs::is_regular_file(config.unix_socket.path));
  }
  SECTION("a stale socket is replaced; a live one is not") {
    fs::create_directories(dir.path() / "private");
    fs::permissions(dir.path() / "private", fs::perms::owner_all);
    std::string path = (dir.path() / "private" / "w.sock").string();
    // A socket file nobody listens on, as a daemon that died leaves behind.
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    ::close(fd);
    config.unix_socket.path = path;
    RunningDaemon first(config);
    REQUIRE(first.ok());
    Client c;
    std::string error;
    CHECK(c.connect("unix:" + path, 5000ms, &error));
    Config second_config = test_config(dir);
    second_config.unix_socket.path = path;
    RunningDaemon second(second_config);
    CHECK_FALSE(second.ok());
    CHECK(second.start_result().message.find("another process is listening") != std::string::npos);
  }
}

TEST_CASE("TLS: the daemon refuses a private key others can read or change",
          "[server][transport][files]") {
  TempDir dir;
  TestPki pki(dir);
  Config config = test_config(dir);
  config.tls.cert = pki.cert;
  config.tls.key = pki.key;
  SECTION("world-readable") {
    fs::permissions(pki.key,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                        fs::perms::others_read,
                    fs::perm_options::replace);
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().step == "own-state");
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find(pki.key + ": error E_FILE_MODE: TLS key: mode 0644 "
                                                  "lets others read it") != std::string::npos);
  }
  SECTION("group-writable") {
    fs::permissions(pki.key,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_write,
                    fs::perm_options::replace);
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().message.find("TLS key: mode 0620 is group-writable") !=
          std::string::npos);
  }
  SECTION("owner-only") {
    fs::permissions(pki.key, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    RunningDaemon d(config);
    CHECK(d.ok());
  }
}

TEST_CASE("TLS: a client that verifies the server certificate talks as over TCP",
          "[server][transport]") {
  TempDir dir;
  TestPki pki(dir);
  Config config = test_config(dir);
  config.tls.cert = pki.cert;
  config.tls.key = pki.key;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string error;
  SECTION("CA file and the address's IP") {
    Client c;
    c.set_tls({true, pki.ca, "", ""});
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    CHECK(c.peer_certificate_sha256() == pin_of(pki.cert));
    REQUIRE(c.authenticate(Tokens{}.agent, 5000ms, &error));
    REQUIRE(c.send_message(decide_request("t", kShellProposal), &error));
    CHECK(error_code(read_or_fail(c)) == "");
  }
  SECTION("pipelined requests with large replies, in order") {
    Client c;
    c.set_tls({true, pki.ca, "localhost", ""});
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    REQUIRE(c.authenticate(Tokens{}.agent, 5000ms, &error));
    std::string burst;
    const int n = 40;
    for (int i = 0; i < n; ++i) {
      burst += encode_frame(make_request(std::to_string(i), "decide",
                                         std::string("\"explain\":true,\"proposal\":") +
                                             (i % 2 ? kShellProposal : kReplyProposal)));
    }
    REQUIRE(c.send_bytes(burst, &error));
    for (int i = 0; i < n; ++i) {
      std::string reply = read_or_fail(c);
      REQUIRE(reply_id(reply) == std::to_string(i));
      CHECK(error_code(reply) == "");
    }
    c.shutdown_write();
    std::string payload;
    CHECK(c.read_message(&payload, 5000ms) == Client::ReadStatus::Closed);
  }
  SECTION("CA file, host name and the right pin") {
    Client c;
    c.set_tls({true, pki.ca, "localhost", pin_of(pki.cert)});
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    CHECK(c.authenticate(Tokens{}.agent, 5000ms, &error));
  }
  SECTION("the pin alone (no CA file)") {
    Client c;
    c.set_tls({true, "", "", pin_of(pki.cert)});
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    CHECK(c.authenticate(Tokens{}.agent, 5000ms, &error));
  }
  SECTION("a plain client gets no handshake") {
    Client c;
    CHECK_FALSE(c.connect(d.address(), 2000ms, &error));
  }
}

TEST_CASE("TLS: a client that cannot verify the server never sends its token",
          "[server][transport]") {
  TempDir dir;
  TestPki pki(dir);
  Config config = test_config(dir);
  config.tls.cert = pki.cert;
  config.tls.key = pki.key;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string wrong_pin = "sha256:" + std::string(64, '0');
  struct Case {
    const char* name;
    ClientTls tls;
    const char* error;
  };
  for (const Case& k : {Case{"untrusted CA", {true, pki.other_ca, "", ""}, "not trusted"},
                        Case{"wrong host name", {true, pki.ca, "evil.example", ""}, "not trusted"},
                        Case{"wrong pin", {true, pki.ca, "", wrong_pin}, "does not match the pin"},
                        Case{"wrong pin alone", {true, "", "", wrong_pin}, "does not match"}}) {
    INFO(k.name);
    Client c;
    c.set_tls(k.tls);
    std::string error;
    CHECK_FALSE(c.connect(d.address(), 5000ms, &error));
    CHECK(error.find(k.error) != std::string::npos);
    INFO(error);
    // Nothing was sent: connect() failed before the handshake event, let alone auth.
    CHECK(c.fd() < 0);
  }
  CHECK(Stats::get(d.daemon().context().stats.requests) == 0);
  CHECK(Stats::get(d.daemon().context().stats.auth_failures) == 0);
}

TEST_CASE("unprotected non-loopback TCP is refused at start", "[server][transport]") {
  TempDir dir;
  SECTION("--insecure-no-auth") {
    Config config = test_config(dir);
    config.listen = "0.0.0.0:0";
    config.tokens.clear();
    config.insecure_no_auth = true;
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find("--insecure-no-auth is refused") != std::string::npos);
  }
  SECTION("plain TCP without tls.allow_plaintext") {
    Config config = test_config(dir);
    config.listen = "0.0.0.0:0";
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find("tls.allow_plaintext") != std::string::npos);
  }
  SECTION("plain TCP with tls.allow_plaintext starts, with a warning") {
    Config config = test_config(dir);
    config.listen = "0.0.0.0:0";
    config.tls.allow_plaintext = true;
    auto lines = std::make_shared<std::ostringstream>();
    Daemon::Options options;
    options.logger = capture_logger(lines, spdlog::level::warn);
    {
      RunningDaemon d(config, options);
      CHECK(d.ok());
    }
    CHECK(lines->str().find("PLAINTEXT") != std::string::npos);
  }
  SECTION("--insecure-no-auth on loopback still starts") {
    Config config = test_config(dir);
    config.tokens.clear();
    config.insecure_no_auth = true;
    RunningDaemon d(config);
    CHECK(d.ok());
  }
}

TEST_CASE("one uid's unauthenticated sockets are capped per peer; its oldest make room",
          "[server][transport]") {
  TempDir dir;
  Config config = test_config(dir);
  config.preauth.max_per_peer = 4;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string address = "unix:" + d.daemon().unix_path();
  std::vector<std::unique_ptr<Client>> held;
  std::string error;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<Client>());
    REQUIRE(held.back()->connect(address, 5000ms, &error));
  }
  Client fifth;
  REQUIRE(fifth.connect(address, 5000ms, &error));
  // The oldest was closed to make room (with E_TOO_MANY_CONNECTIONS); the others are open.
  CHECK(transport_codes_until_closed(*held[0]) ==
        std::vector<std::string>{err::kTooManyConnections});
  CHECK(d.daemon().context().stats.connections_current.load() == 4);
  REQUIRE(fifth.authenticate(Tokens{}.agent, 5000ms, &error));
  REQUIRE(held[1]->authenticate(Tokens{}.agent, 5000ms, &error));
}

TEST_CASE("transport keys are read from warden.toml", "[server][transport]") {
  Config c;
  ConfigErrors errors = parse_config(R"(
[unix]
path = "run/w.sock"
mode = 0o660
allow_uids = [1000, 1001]
[tls]
cert = "tls/cert.pem"
key = "tls/key.pem"
allow_plaintext = true
[preauth]
max_connections = 100
max_per_peer = 10
max_frame_bytes = 2048
)",
                                     "/etc/warden", &c);
  REQUIRE(errors.empty());
  CHECK(c.unix_socket.path == "/etc/warden/run/w.sock");
  CHECK(c.unix_socket.mode == 0660);
  CHECK(c.unix_socket.allow_uids == std::vector<unsigned>{1000, 1001});
  CHECK(c.tls.cert == "/etc/warden/tls/cert.pem");
  CHECK(c.tls.key == "/etc/warden/tls/key.pem");
  CHECK(c.tls.allow_plaintext);
  CHECK(c.preauth.max_connections == 100);
  CHECK(c.preauth.max_per_peer == 10);
  CHECK(c.preauth.max_frame_bytes == 2048);
  Config bad;
  auto keys = [](const ConfigErrors& errors) {
    std::vector<std::string> out;
    for (const auto& e : errors) out.push_back(e.key);
    return out;
  };
  CHECK(keys(parse_config("[unix]\nmode = 0o666\n", "", &bad)) ==
        std::vector<std::string>{"unix.mode"});
  CHECK(keys(parse_config("[tls]\ncert = \"c.pem\"\n", "", &bad)) ==
        std::vector<std::string>{"tls.key"});
  CHECK(keys(parse_config("[preauth]\nmax_frame_bytes = 10\n", "", &bad)) ==
        std::vector<std::string>{"preauth.max_frame_bytes"});
}

TEST_CASE("unauthenticated sockets cannot lock authenticated clients out", "[server][preauth]") {
  raise_fd_limit(4096);
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_connections = 32;
  config.preauth.max_connections = 16;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  // Far more silent sockets than there are slots, each holding a partial frame.
  std::vector<std::unique_ptr<Client>> squatters;
  std::string error;
  for (int i = 0; i < 200; ++i) {
    squatters.push_back(std::make_unique<Client>());
    REQUIRE(squatters.back()->connect_raw(d.address(), 5000ms, &error));
    REQUIRE(squatters.back()->send_bytes("000fff{\"type\":", &error));
  }
  // An agent still connects, authenticates and decides, several times over.
  for (int i = 0; i < 5; ++i) {
    Client agent;
    connect_agent(agent, d);
    REQUIRE(agent.send_message(decide_request("ok", kShellProposal), &error));
    CHECK(error_code(read_or_fail(agent)) == "");
  }
  // At most the pre-auth budget of squatters is still open: the rest were closed.
  std::size_t open = 0;
  for (auto& s : squatters) {
    std::string payload;
    Client::ReadStatus status;
    do {
      status = s->read_message(&payload, 200ms);  // handshake, maybe an error, then close
    } while (status == Client::ReadStatus::Ok);
    if (status == Client::ReadStatus::Timeout) ++open;
  }
  CHECK(open <= 16);
}

TEST_CASE("before auth, frames over the small pre-auth limit get E_FRAME_TOO_LARGE",
          "[server][preauth]") {
  TempDir dir;
  Config config = test_config(dir);  // max_frame_bytes = 64 KiB; preauth 4 KiB
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string error;
  {
    Client c;
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    CHECK(parse(c.handshake())["payload"]["max_preauth_frame_bytes"].GetUint64() == 4096);
    // 8 KiB announced before auth: refused at the prefix, whatever follows.
    REQUIRE(c.send_bytes("002000" + std::string(100, ' '), &error));
    CHECK(transport_codes_until_closed(c) == std::vector<std::string>{err::kFrameTooLarge});
  }
  {
    // After auth the full limit applies.
    Client c;
    connect_agent(c, d);
    std::string big = R"({"target":"reply","payload":{"text":")" + std::string(8000, 'a') + "\"}}";
    REQUIRE(c.send_message(decide_request("big", big), &error));
    CHECK(error_code(read_or_fail(c)) == "");
  }
}

TEST_CASE("repeated failures are logged a few times per interval, with the peer address",
          "[server][preauth]") {
  TempDir dir;
  Config config = test_config(dir);
  config.log_level = "info";
  auto lines = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(lines);
  const int attempts = 100;
  {
    RunningDaemon d(config, options);
    REQUIRE(d.ok());
    for (int i = 0; i < attempts; ++i) {
      Client c;
      std::string error;
      REQUIRE(c.connect(d.address(), 5000ms, &error));
      CHECK_FALSE(c.authenticate("wdn_wrong_" + std::to_string(i), 5000ms, &error));
    }
    CHECK(Stats::get(d.daemon().context().stats.auth_failures) == attempts);
    d.stop();
  }
  std::string text = lines->str();
  INFO(text);
  std::size_t failure_lines = 0;
  std::size_t lines_serving = 0;  // the log once serving: start-up steps are not the flood
  bool serving = false;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (serving) ++lines_serving;
    if (line.find("serving on ") != std::string::npos) serving = true;
    if (line.find("authentication failed") != std::string::npos) {
      ++failure_lines;
      CHECK(line.find("from 127.0.0.1:") != std::string::npos);
    }
  }
  CHECK(failure_lines >= 1);
  CHECK(failure_lines <= 5);
  CHECK(text.find("more in the last") != std::string::npos);  // the summary line
  CHECK(serving);
  CHECK(lines_serving < 15);
}
