// Limits and hostile clients: each gets its error (where possible) and is closed; other
// clients keep being served.
#include <atomic>
#include <sstream>
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

TEST_CASE("unauthenticated sockets cannot lock authenticated clients out", "[server][hostile]") {
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
          "[server][hostile]") {
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
    CHECK(codes_until_closed(c, 5000ms) == std::vector<std::string>{err::kFrameTooLarge});
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
          "[server][hostile]") {
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
  std::size_t all_lines = 0;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    ++all_lines;
    if (line.find("authentication failed") != std::string::npos) {
      ++failure_lines;
      CHECK(line.find("from 127.0.0.1:") != std::string::npos);
    }
  }
  CHECK(failure_lines >= 1);
  CHECK(failure_lines <= 5);
  CHECK(text.find("more in the last") != std::string::npos);  // the summary line
  CHECK(all_lines < 40);
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
