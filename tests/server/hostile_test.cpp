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
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  auto started = std::chrono::steady_clock::now();
  CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kAuthTimeout});
  CHECK(std::chrono::steady_clock::now() - started < 3000ms);
}

TEST_CASE("a client trickling bytes cannot outlive the auth deadline", "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.auth_timeout = 300ms;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  std::string frame = encode_frame(make_request("a", "auth", "\"token\":\"x\""));
  bool closed = false;
  auto started = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < frame.size() && !closed; ++i) {
    if (!c.send_bytes(frame.substr(i, 1), &error)) closed = true;
    std::string payload;
    if (c.read_message(&payload, 50ms) != Client::ReadStatus::Timeout) closed = true;
  }
  CHECK(closed);
  CHECK(std::chrono::steady_clock::now() - started < 3000ms);
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
  // A slot frees when a client leaves.
  held[2]->close();
  bool admitted = false;
  auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!admitted && std::chrono::steady_clock::now() < deadline) {
    Client again;
    if (again.connect(d.address(), 5000ms, &error) &&
        again.authenticate(Tokens{}.agent, 5000ms, &error)) {
      admitted = true;
    } else {
      std::this_thread::sleep_for(10ms);  // the close is processed asynchronously
    }
  }
  CHECK(admitted);
}

TEST_CASE("a client that never reads is bounded by the in-flight cap", "[server][hostile]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_in_flight = 4;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client greedy;
  std::string error;
  REQUIRE(greedy.connect(d.address(), 5000ms, &error));
  REQUIRE(greedy.authenticate(Tokens{}.agent, 5000ms, &error));
  // Large explain replies so socket buffers fill; the sender must block, not the daemon.
  std::string frame = encode_frame(decide_request("g", kShellProposal));
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::string e;
    // Non-blocking send loop; stops when the daemon stops reading (buffers full).
    int fd = greedy.fd();
    for (int i = 0; i < 200000 && !stop; ++i) {
      ssize_t n = ::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0) std::this_thread::sleep_for(1ms);
    }
  });
  std::this_thread::sleep_for(300ms);
  check_still_serving(d);
  stop = true;
  writer.join();
}
