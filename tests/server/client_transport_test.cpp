// The client does not hand its token to whoever answers on a port: over plain TCP it sends
// it only to a loopback address (E_PLAINTEXT_TOKEN otherwise, unless told so in so many
// words), and without an address the CLI prefers the daemon's Unix socket. A fake server the
// test starts on a non-loopback address of this host records what it receives.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

#include "protocol/frame.h"
#include "server/errors.h"
#include "server_fixture.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

// A non-loopback IPv4 address of this host, or "" when it has none.
std::string non_loopback_ipv4() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string out;
  for (ifaddrs* i = list; i && out.empty(); i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (!is_loopback_ip(text)) out = text;
  }
  ::freeifaddrs(list);
  return out;
}

// Pretends to be a daemon on ip:ephemeral: sends the handshake, then keeps what it reads.
class FakeServer {
 public:
  explicit FakeServer(const std::string& ip) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    REQUIRE(::inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) == 1);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    address_ = ip + ":" + std::to_string(ntohs(addr.sin_port));
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeServer() {
    stop_ = true;
    thread_.join();
    ::close(fd_);
  }
  const std::string& address() const { return address_; }
  std::string received() {
    std::lock_guard lock(mutex_);
    return received_;
  }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) != 1) continue;
      int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      std::string hello = encode_frame(
          R"({"type":"event","id":null,"payload":{"action":"handshake","protocol":1,"auth":"token"}})");
      (void)!::write(c, hello.data(), hello.size());
      while (!stop_) {
        pollfd q{c, POLLIN, 0};
        if (::poll(&q, 1, 50) != 1) continue;
        char buffer[4096];
        ssize_t n = ::read(c, buffer, sizeof buffer);
        if (n <= 0) break;
        std::lock_guard lock(mutex_);
        received_.append(buffer, static_cast<std::size_t>(n));
      }
      ::close(c);
    }
  }

  int fd_ = -1;
  std::string address_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::string received_;
};

}  // namespace

TEST_CASE("loopback addresses", "[server][client][transport]") {
  for (const char* ip : {"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"}) {
    INFO(ip);
    CHECK(is_loopback_ip(ip));
  }
  for (const char* ip : {"10.0.0.1", "192.0.2.2", "::ffff:10.0.0.1", "fe80::1", "localhost", "",
                         "128.0.0.1", "0.0.0.0"}) {
    INFO(ip);
    CHECK_FALSE(is_loopback_ip(ip));
  }
}

TEST_CASE("the client sends no token in clear text to another host",
          "[server][client][transport]") {
  const std::string ip = non_loopback_ipv4();
  INFO("this host needs a non-loopback IPv4 address for the fake server");
  REQUIRE(!ip.empty());
  FakeServer fake(ip);
  const std::string token = "wdn_secret_agent_token_do_not_leak";

  SECTION("refused, nothing sent") {
    Client c;
    std::string error;
    REQUIRE(c.connect(fake.address(), 5000ms, &error));
    CHECK(c.plaintext_remote());
    CHECK_FALSE(c.authenticate(token, 2000ms, &error));
    CHECK(error.rfind(std::string(code::kPlaintextToken) + ": ", 0) == 0);
    c.close();
    std::this_thread::sleep_for(100ms);  // what was sent has arrived (none is expected)
    CHECK(fake.received().find(token) == std::string::npos);
    CHECK(fake.received().empty());
  }
  SECTION("the opt-out sends it") {
    Client c;
    std::string error;
    c.set_allow_plaintext_token(true);
    REQUIRE(c.connect(fake.address(), 5000ms, &error));
    CHECK_FALSE(c.authenticate(token, 300ms, &error));  // the fake never answers
    REQUIRE(eventually([&] { return fake.received().find(token) != std::string::npos; }));
  }
  SECTION("warden status refuses with the code and exits non-zero") {
    TempDir dir;
    const std::string err_file = (dir.path() / "err").string();
    const std::string command = "WARDEN_TOKEN=" + token +
                                " timeout 30 '" WARDEN_BINARY_DIR "/cli/warden' status --addr " +
                                fake.address() + " </dev/null >/dev/null 2>'" + err_file + "'";
    int status = std::system(command.c_str());
    std::ifstream in(err_file);
    std::stringstream text;
    text << in.rdbuf();
    INFO(text.str());
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) != 0);
    CHECK(text.str().find("E_PLAINTEXT_TOKEN") != std::string::npos);
    std::this_thread::sleep_for(100ms);
    CHECK(fake.received().find(token) == std::string::npos);
  }
}

TEST_CASE("a loopback daemon still takes the token over plain TCP", "[server][client][transport]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  CHECK_FALSE(c.plaintext_remote());
  CHECK(c.authenticate(Tokens{}.agent, 5000ms, &error));
}

TEST_CASE("without an address the CLI uses the daemon's Unix socket",
          "[server][client][transport]") {
  TempDir dir;
  Config config = test_config(dir);
  // The default state directory of a client whose $XDG_STATE_HOME is xdg.
  config.state_dir = (dir.path() / "xdg/warden").string();
  RunningDaemon d(config);
  REQUIRE(d.ok());
  REQUIRE(d.daemon().unix_path() == config.state_dir + "/warden.sock");
  const std::string err_file = (dir.path() / "err").string();
  const std::string command = "env -u WARDEN_ADDR XDG_STATE_HOME='" +
                              (dir.path() / "xdg").string() + "' WARDEN_TOKEN=" + Tokens{}.admin +
                              " timeout 30 '" WARDEN_BINARY_DIR
                              "/cli/warden' status --format json </dev/null >'" +
                              (dir.path() / "out").string() + "' 2>'" + err_file + "'";
  int status = std::system(command.c_str());
  std::ifstream out(dir.path() / "out");
  std::stringstream text;
  text << out.rdbuf();
  std::ifstream err(err_file);
  std::stringstream err_text;
  err_text << err.rdbuf();
  INFO(text.str() << err_text.str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // This daemon's own rules: the status came from it, over its socket.
  CHECK(text.str().find(d.daemon().context().policy.get()->digest()) != std::string::npos);
}
