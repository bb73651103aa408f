// Connection limits per principal and the room kept for approvers and admins: one agent
// token cannot take every connection of the daemon, on TCP or on the Unix socket.
#include <catch2/catch.hpp>
#include <memory>
#include <vector>

#include "server/connections.h"
#include "server/errors.h"
#include "server_fixture.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// Opens a connection to `address` and authenticates with `token`; "" when admitted, else the
// error ("CODE: message").
std::string open_as(std::vector<std::unique_ptr<Client>>* held, const std::string& address,
                    const std::string& token) {
  auto c = std::make_unique<Client>();
  std::string error;
  if (!c->connect(address, 5000ms, &error)) return "connect: " + error;
  if (!c->authenticate(token, 5000ms, &error)) return error;
  // Still served after the others were admitted.
  if (!c->send_message(make_request("s", "health-check"), &error)) return "send: " + error;
  std::string reply = read_or_fail(*c);
  if (error_code(reply) != "") return "health-check: " + reply;
  held->push_back(std::move(c));
  return "";
}

}  // namespace

TEST_CASE("one principal holds at most max_connections_per_principal connections",
          "[server][limits]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_connections = 40;
  config.limits.max_connections_per_principal = 6;
  config.limits.reserved_connections = 4;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string tcp = d.address();
  const std::string unix_socket = "unix:" + d.daemon().unix_path();
  REQUIRE(!d.daemon().unix_path().empty());
  std::vector<std::unique_ptr<Client>> held;

  // The agent's connections, over both transports, count together.
  for (int i = 0; i < 6; ++i) {
    INFO("connection " << i);
    REQUIRE(open_as(&held, i % 2 ? unix_socket : tcp, Tokens{}.agent) == "");
  }
  for (const std::string& address : {tcp, unix_socket}) {
    INFO(address);
    std::string refused = open_as(&held, address, Tokens{}.agent);
    CHECK(starts_with(refused, std::string(err::kTooManyConnections) + ": principal 'alice'"));
    CHECK(refused.find("limits.max_connections_per_principal = 6") != std::string::npos);
  }
  // Everyone else still gets in, on both transports.
  CHECK(open_as(&held, tcp, Tokens{}.approver) == "");
  CHECK(open_as(&held, unix_socket, Tokens{}.admin) == "");

  // A closed connection gives its slot back.
  held.front().reset();
  held.erase(held.begin());
  REQUIRE(eventually([&] { return open_as(&held, tcp, Tokens{}.agent) == ""; }));
}

TEST_CASE("agents leave reserved_connections to approvers and admins", "[server][limits]") {
  TempDir dir;
  Config config = test_config(dir);
  // Four agents of their own, besides the fixture's alice, bob (approver) and root (admin).
  std::string tokens = Tokens{}.file_text();
  for (int i = 1; i <= 4; ++i) {
    tokens += "agent agent" + std::to_string(i) + " " +
              token_hash_text("wdn_test_agent_" + std::to_string(i)) + "\n";
  }
  dir.write("tokens", tokens);
  fs::permissions(config.tokens, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  config.limits.max_connections = 12;
  config.limits.max_connections_per_principal = 3;
  config.limits.reserved_connections = 3;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::vector<std::unique_ptr<Client>> held;

  // 9 = 12 - 3 agent connections: agent1..agent3, three each.
  for (int i = 1; i <= 3; ++i) {
    for (int n = 0; n < 3; ++n) {
      INFO("agent" << i << " connection " << n);
      REQUIRE(open_as(&held, d.address(), "wdn_test_agent_" + std::to_string(i)) == "");
    }
  }
  std::string refused = open_as(&held, d.address(), "wdn_test_agent_4");
  CHECK(starts_with(refused, err::kTooManyConnections));
  CHECK(refused.find("limits.reserved_connections") != std::string::npos);
  // The reserve: approvers and admins.
  CHECK(open_as(&held, d.address(), Tokens{}.approver) == "");
  CHECK(open_as(&held, d.address(), Tokens{}.admin) == "");
  CHECK(open_as(&held, "unix:" + d.daemon().unix_path(), Tokens{}.admin) == "");
}

TEST_CASE("limits: per-principal and reserved connections in the config",
          "[server][limits][config]") {
  Config parsed;
  ConfigErrors parse_errors = parse_config(
      "[limits]\nmax_connections_per_principal = 10\nreserved_connections = 5\n", "", &parsed);
  CHECK(parse_errors.empty());
  CHECK(parsed.limits.max_connections_per_principal == 10);
  CHECK(parsed.limits.reserved_connections == 5);
  CHECK(Config{}.limits.max_connections_per_principal == 64);
  CHECK(reserved_connections(Config{}.limits) == 16);
  // At most a quarter of max_connections: a small daemon still serves its agents.
  Limits small;
  small.max_connections = 3;
  CHECK(reserved_connections(small) == 0);
  small.max_connections = 40;
  CHECK(reserved_connections(small) == 10);
}
