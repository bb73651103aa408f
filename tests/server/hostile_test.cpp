// Limits and hostile clients: each gets its error (where possible) and is closed; other
// clients keep being served.
#include <atomic>
#include <catch2/catch.hpp>

#include "server/errors.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

// Reads until the server closes; returns the error codes of everything received.
std::vector<std::string> codes_until_closed(Client& c, std::chrono::milliseconds timeout) {
  std::vector<std::string> codes;
  for (;;) {
    std::string payload;
    auto status = c.read_message(&payload, timeout);
    if (status == Client::ReadStatus::Ok) {
      codes.push_back(error_code(payload));
      continue;
    }
    if (status == Client::ReadStatus::Timeout) codes.push_back("<timeout>");
    return codes;
  }
}

// A second client, decided end to end, proves the daemon still serves.
void check_still_serving(RunningDaemon& d) {
  Client other;
  std::string error;
  REQUIRE(other.connect(d.address(), 5000ms, &error));
  REQUIRE(other.authenticate(Tokens{}.agent, 5000ms, &error));
  REQUIRE(other.send_message(decide_request("ok", kShellProposal), &error));
  CHECK(error_code(read_or_fail(other)) == "");
}

}  // namespace

TEST_CASE("an oversized frame gets E_FRAME_TOO_LARGE and a closed connection",
          "[server][hostile]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));  // max_frame_bytes = 64 KiB
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  // Announce 16 MiB - 1 and start sending it: refused at the prefix.
  REQUIRE(c.send_bytes("ffffff" + std::string(200000, 'x'), &error));
  CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kFrameTooLarge});
  check_still_serving(d);
}

TEST_CASE("garbage bytes get E_FRAME_PREFIX and a closed connection", "[server][hostile]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  for (std::string garbage : {std::string("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
                              std::string("\x00\x01\x02\xff\xfe", 5), std::string("00001")}) {
    Client c;
    std::string error;
    REQUIRE(c.connect(d.address(), 5000ms, &error));
    REQUIRE(c.send_bytes(garbage, &error));
    if (garbage == "00001") {
      // An incomplete prefix followed by EOF is a truncated frame.
      c.shutdown_write();
      CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kFrameTruncated});
    } else {
      CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kFramePrefix});
    }
  }
  check_still_serving(d);
}

TEST_CASE("a truncated frame gets E_FRAME_TRUNCATED when the client half-closes",
          "[server][hostile]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client c;
  std::string error;
  connect_agent(c, d);
  std::string frame = encode_frame(decide_request("t", kShellProposal));
  REQUIRE(c.send_bytes(frame.substr(0, frame.size() / 2), &error));
  c.shutdown_write();
  CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kFrameTruncated});
  check_still_serving(d);
}

TEST_CASE("complete requests before a half-close are still answered", "[server][hostile]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client c;
  std::string error;
  connect_agent(c, d);
  REQUIRE(c.send_message(decide_request("1", kShellProposal), &error));
  REQUIRE(c.send_message(decide_request("2", kReplyProposal), &error));
  c.shutdown_write();
  CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{"", ""});
}

TEST_CASE("invalid JSON and invalid UTF-8 are answered; the connection stays usable",
          "[server][hostile]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client c;
  std::string error;
  connect_agent(c, d);
  REQUIRE(c.send_message("{not json", &error));
  CHECK(error_code(read_or_fail(c)) == err::kBadJson);
  REQUIRE(c.send_message(std::string("{\"type\":\"request\",\"id\":\"\xff\"}"), &error));
  CHECK(error_code(read_or_fail(c)) == err::kBadJson);
  REQUIRE(c.send_message(std::string(10000, '[') + std::string(10000, ']'), &error));
  CHECK(error_code(read_or_fail(c)) == err::kTooDeep);
  // Deep nesting inside a proposal, under the frame limit.
  std::string deep = std::string(200, '[') + std::string(200, ']');
  REQUIRE(
      c.send_message(decide_request("deep", "{\"target\":\"shell\",\"x\":" + deep + "}"), &error));
  CHECK(error_code(read_or_fail(c)) == err::kTooDeep);
  REQUIRE(c.send_message(decide_request("after", kShellProposal), &error));
  std::string reply = read_or_fail(c);
  CHECK(error_code(reply) == "");
  CHECK(reply_id(reply) == "after");
}

TEST_CASE("a silent client is closed at the auth deadline", "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.auth_timeout = 300ms;
  config.limits.idle_timeout = 600000ms;  // only the auth deadline can close it in time
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  CHECK(codes_until_closed(c, 20000ms) == std::vector<std::string>{err::kAuthTimeout});
}

TEST_CASE("a client trickling bytes cannot outlive the auth deadline", "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.auth_timeout = 300ms;
  config.limits.idle_timeout = 600000ms;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  // A valid auth, one byte per 50 ms: it would succeed if every byte extended the deadline.
  std::string frame =
      encode_frame(make_request("a", "auth", "\"token\":\"" + Tokens{}.agent + "\""));
  std::vector<std::string> codes;
  for (std::size_t i = 0; i < frame.size() && codes.empty(); ++i) {
    if (!c.send_bytes(frame.substr(i, 1), &error)) break;
    std::string payload;
    auto status = c.read_message(&payload, 50ms);
    if (status == Client::ReadStatus::Ok) codes.push_back(error_code(payload));
    if (status == Client::ReadStatus::Closed) codes.push_back("<closed>");
  }
  CHECK(codes == std::vector<std::string>{err::kAuthTimeout});
}

TEST_CASE("an idle authenticated client is closed after the idle timeout", "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.idle_timeout = 300ms;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  connect_agent(c, d);
  CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kIdleTimeout});
}

TEST_CASE("connections over max_connections are refused once every slot is authenticated",
          "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_connections = 3;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::vector<std::unique_ptr<Client>> held;
  std::string error;
  for (int i = 0; i < 3; ++i) {
    held.push_back(std::make_unique<Client>());
    connect_agent(*held.back(), d);
  }
  Client extra;
  REQUIRE(extra.connect_raw(d.address(), 5000ms, &error));
  CHECK(codes_until_closed(extra, 5000ms) == std::vector<std::string>{err::kTooManyConnections});
  REQUIRE(held[0]->send_message(decide_request("x", kShellProposal), &error));
  CHECK(error_code(read_or_fail(*held[0])) == "");
  // A slot frees when a client leaves (the close is processed asynchronously).
  held[2]->close();
  ServerContext& context = d.daemon().context();
  REQUIRE(eventually([&] { return Stats::get(context.stats.connections_current) == 2; }));
  Client again;
  CHECK(again.connect(d.address(), 5000ms, &error));
  CHECK(again.authenticate(Tokens{}.agent, 5000ms, &error));
}

TEST_CASE("a client that does not read its replies is held at the in-flight cap",
          "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.workers = 1;
  config.limits.max_in_flight = 4;
  // The only worker is held inside a rebuild: nothing is answered, so only the cap stops
  // the daemon from reading (and queueing) everything the client sends.
  HeldRebuild held;
  RunningDaemon d(config, held.options());
  REQUIRE(d.ok());
  ServerContext& context = d.daemon().context();
  Client greedy;
  connect_agent(greedy, d);
  held.arm(d);
  std::string burst;
  for (int i = 0; i < 200; ++i)
    burst += encode_frame(decide_request(std::to_string(i), kShellProposal));
  std::string error;
  REQUIRE(greedy.send_bytes(burst, &error));  // ~20 KB: fits the socket buffers
  REQUIRE(held.entered.wait());
  REQUIRE(eventually([&] { return context.pool->queue_depth() == 3; }));  // 1 running + 3
  // The I/O thread is free: another client is served, and after that round trip the
  // greedy connection still has exactly the cap in flight (it is not being read).
  Client other;
  REQUIRE(other.connect(d.address(), 5000ms, &error));
  REQUIRE(other.send_message(make_request("h", "health-check"), &error));
  CHECK(error_code(read_or_fail(other)) == "");
  CHECK(context.pool->queue_depth() == 3);
  CHECK(Stats::get(context.stats.requests) == 1 + 4 + 1);  // auth, the cap, health-check
  held.release.open();
  // Nothing was lost: every request is answered, in order, once the client reads.
  for (int i = 0; i < 200; ++i) {
    std::string reply = read_or_fail(greedy, 20000ms);
    REQUIRE(reply_id(reply) == std::to_string(i));
    CHECK(error_code(reply) == "");
  }
}
