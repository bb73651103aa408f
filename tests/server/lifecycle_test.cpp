// Many concurrent connections and graceful shutdown.
#include <atomic>
#include <catch2/catch.hpp>

#include "server/errors.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

TEST_CASE("500 concurrent connections are all served", "[server][lifecycle]") {
  raise_fd_limit(4096);
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_connections = 1000;
  config.limits.max_queue_per_principal = 1000;  // all 500 are the same principal
  config.limits.max_connections_per_principal = 1000;
  config.limits.auth_timeout = 60000ms;  // 500 handshakes at once, under a sanitizer
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const int n = 500;
  std::vector<std::unique_ptr<Client>> clients;
  std::string error;
  for (int i = 0; i < n; ++i) {
    clients.push_back(std::make_unique<Client>());
    REQUIRE(clients.back()->connect(d.address(), 10000ms, &error));
  }
  // Everyone authenticates and sends before anyone reads: all 500 are open at once.
  std::string auth =
      encode_frame(make_request("a", "auth", "\"token\":\"" + Tokens{}.agent + "\""));
  for (int i = 0; i < n; ++i) {
    REQUIRE(clients[i]->send_bytes(
        auth + encode_frame(decide_request(std::to_string(i), kShellProposal)), &error));
  }
  int served = 0;
  std::string first_failure;  // shown when not all were served
  for (int i = 0; i < n; ++i) {
    std::string a = read_or_fail(*clients[i], 10000ms);
    std::string r = read_or_fail(*clients[i], 10000ms);
    if (error_code(a) == "" && error_code(r) == "" && reply_id(r) == std::to_string(i)) {
      ++served;
    } else if (first_failure.empty()) {
      first_failure = a + " / " + r;
    }
  }
  CAPTURE(first_failure);
  CHECK(served == n);
  Client admin;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(admin.send_message(make_request("s", "status"), &error));
  auto status = parse(read_or_fail(admin));
  CHECK(status["payload"]["connections"]["current"].GetUint64() == n + 1);
  CHECK(status["payload"]["counters"]["decisions"].GetUint64() == n);
}

TEST_CASE("graceful shutdown answers every request already read, then exits 0",
          "[server][lifecycle]") {
  TempDir dir;
  Config config = test_config(dir);
  config.workers = 1;
  config.limits.shutdown_timeout = 60000ms;  // the drain, not the deadline, must end it
  // The only worker is held inside a rebuild, so all 50 requests are read before the stop.
  HeldRebuild held;
  RunningDaemon d(config, held.options());
  REQUIRE(d.ok());
  ServerContext& context = d.daemon().context();
  Client c;
  std::string error;
  connect_agent(c, d);
  held.arm(d);  // the next decision rebuilds, and waits
  std::string burst;
  for (int i = 0; i < 50; ++i)
    burst += encode_frame(decide_request(std::to_string(i), kShellProposal));
  REQUIRE(c.send_bytes(burst, &error));
  REQUIRE(held.entered.wait());
  REQUIRE(eventually([&] { return context.pool->queue_depth() == 49; }));
  int exit_code = -1;
  std::thread stopper([&] { exit_code = d.stop(); });
  REQUIRE(eventually([&] { return context.draining.load(); }));
  held.release.open();
  int answered = 0;
  for (;;) {
    std::string payload;
    auto status = c.read_message(&payload, 20000ms);
    if (status != Client::ReadStatus::Ok) {
      CHECK(status == Client::ReadStatus::Closed);
      break;
    }
    CHECK(reply_id(payload) == std::to_string(answered));
    CHECK(error_code(payload) == "");
    ++answered;
  }
  stopper.join();
  CHECK(exit_code == 0);
  CHECK(answered == 50);  // every request read before the stop was decided and answered
  // The port no longer accepts.
  Client late;
  CHECK_FALSE(late.connect(d.address(), 1000ms, &error));
}

TEST_CASE("shutdown closes idle connections at once", "[server][lifecycle]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.shutdown_timeout = 60000ms;  // waiting for it would fail the reads below
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::vector<std::unique_ptr<Client>> idle;
  std::string error;
  for (int i = 0; i < 20; ++i) {
    idle.push_back(std::make_unique<Client>());
    REQUIRE(idle.back()->connect(d.address(), 5000ms, &error));
  }
  int exit_code = -1;
  std::thread stopper([&] { exit_code = d.stop(); });
  for (auto& c : idle) {
    std::string payload;
    CHECK(c->read_message(&payload, 20000ms) == Client::ReadStatus::Closed);
  }
  stopper.join();
  CHECK(exit_code == 0);
}
