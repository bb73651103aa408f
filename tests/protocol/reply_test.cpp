// What a client reads: Message's views of a reply or an event, read_reply over a real Unix
// socket (events handed over, the response returned, malformed and closed streams), and the
// decide request's bytes.
#include "protocol/reply.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "protocol/frame.h"
#include "tests/support/temp_dir.h"

using namespace warden::protocol;
using namespace std::chrono_literals;

namespace {

// A listening Unix socket in a temporary directory, and the accepted end of one connection.
class ReplyPeer {
 public:
  ReplyPeer() {
    path_ = dir_.str() + "/s.sock";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, path_.c_str(), path_.size() + 1);
    REQUIRE(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(listener_, 1) == 0);
  }
  ~ReplyPeer() {
    if (peer_ >= 0) ::close(peer_);
    ::close(listener_);
  }
  // Connects `client` and accepts its connection.
  void connect(Client* client) {
    std::string error;
    REQUIRE(client->connect_raw("unix:" + path_, 2000ms, &error));
    peer_ = ::accept(listener_, nullptr, nullptr);
    REQUIRE(peer_ >= 0);
  }
  void send(const std::string& message) {
    const std::string frame = encode_frame(message);
    REQUIRE(::write(peer_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size()));
  }
  void close() {
    ::close(peer_);
    peer_ = -1;
  }
  std::string address() const { return "unix:" + path_; }
  // Accepts one connection and sends it `message` in a frame; false when that fails (for a
  // thread other than the test's).
  bool accept_and_send(const std::string& message) {
    peer_ = ::accept(listener_, nullptr, nullptr);
    const std::string frame = encode_frame(message);
    return peer_ >= 0 &&
           ::write(peer_, frame.data(), frame.size()) == static_cast<ssize_t>(frame.size());
  }

 private:
  warden::testing::TempDir dir_;
  std::string path_;
  int listener_ = -1;
  int peer_ = -1;
};

ReplyStatus read_with_events(Client& client, std::vector<std::string>* events, Message* reply) {
  return read_reply(
      client, [] { return Client::ms(2000); },
      [&](const Message& event) { events->push_back(to_json_text(event.payload())); }, reply);
}

}  // namespace

TEST_CASE("a message is a JSON object with an object payload", "[protocol][reply]") {
  Message m;
  REQUIRE(m.parse(R"({"type":"response","id":"3","payload":{"action":"decide","ok":true}})"));
  CHECK(m.type() == "response");
  CHECK(m.id() == "3");
  CHECK(m.ok());
  CHECK_FALSE(m.parse("[1]"));
  CHECK_FALSE(m.parse(R"({"type":"response","payload":[]})"));
  CHECK_FALSE(m.parse(R"({"type":"response"})"));
  CHECK_FALSE(m.parse("{\"type\":\"r\xff\",\"payload\":{}}"));  // not UTF-8
  REQUIRE(m.parse(R"({"type":"response","id":7,"payload":{"ok":"yes"}})"));
  CHECK(m.id().empty());  // only a string id is one of ours
  CHECK_FALSE(m.ok());
}

TEST_CASE("the error of a reply: payload.error, else the payload", "[protocol][reply]") {
  Message m;
  REQUIRE(m.parse(
      R"({"type":"response","id":null,"payload":{"ok":false,"error":{"code":"E_BUSY","message":"full"}}})"));
  CHECK(m.error_code() == "E_BUSY");
  CHECK(m.error_message() == "full");
  REQUIRE(m.parse(R"({"type":"response","payload":{"ok":false,"code":"E_X","message":"m"}})"));
  CHECK(m.error_code() == "E_X");
  REQUIRE(m.parse(R"({"type":"response","payload":{"ok":false,"error":"E_Y"}})"));
  CHECK(m.error_code().empty());
}

TEST_CASE("the approval a waiting decide names", "[protocol][reply]") {
  Message m;
  REQUIRE(m.parse(
      R"({"type":"event","id":"1","payload":{"event":"approval-required","approval":{"id":"apr_1","token":"t","how":"warden approve apr_1"}}})"));
  REQUIRE(m.waiting_approval());
  CHECK(string_member(*m.waiting_approval(), "how") == "warden approve apr_1");
  REQUIRE(m.parse(R"({"type":"event","id":"1","payload":{"approval":"apr_1"}})"));
  CHECK(m.waiting_approval() == nullptr);
}

TEST_CASE("decide_request: the proposal re-serialized, then explain and wait_s",
          "[protocol][reply]") {
  rapidjson::Document proposal;
  proposal.Parse(R"({ "target" : "shell", "action" : {"command":"ls"} })");
  CHECK(
      decide_request("4", proposal, false, 0) ==
      R"({"type":"request","id":"4","payload":{"action":"decide","proposal":{"target":"shell","action":{"command":"ls"}}}})");
  CHECK(
      decide_request("5", proposal, true, 30) ==
      R"({"type":"request","id":"5","payload":{"action":"decide","proposal":{"target":"shell","action":{"command":"ls"}},"explain":true,"wait_s":30}})");
}

TEST_CASE("read_reply hands over the events and returns the response", "[protocol][reply]") {
  ReplyPeer peer;
  Client client;
  peer.connect(&client);
  peer.send(R"({"type":"event","id":"1","payload":{"event":"approval-required"}})");
  peer.send(R"({"type":"handshake","payload":{}})");  // neither: passed over
  peer.send(R"({"type":"response","id":"1","payload":{"action":"decide","ok":true}})");
  std::vector<std::string> events;
  Message reply;
  REQUIRE(read_with_events(client, &events, &reply) == ReplyStatus::Ok);
  CHECK(reply.id() == "1");
  CHECK(reply.ok());
  REQUIRE(events.size() == 1);
  CHECK(events[0] == R"({"event":"approval-required"})");
}

TEST_CASE("read_reply: a malformed message, a closed stream, silence", "[protocol][reply]") {
  std::vector<std::string> events;
  Message reply;
  SECTION("malformed") {
    ReplyPeer peer;
    Client client;
    peer.connect(&client);
    peer.send(R"({"type":"response","payload":"no"})");
    CHECK(read_with_events(client, &events, &reply) == ReplyStatus::Malformed);
  }
  SECTION("closed after an event") {
    ReplyPeer peer;
    Client client;
    peer.connect(&client);
    peer.send(R"({"type":"event","id":"1","payload":{}})");
    peer.close();
    CHECK(read_with_events(client, &events, &reply) == ReplyStatus::Closed);
    CHECK(events.size() == 1);
  }
  SECTION("silence") {
    ReplyPeer peer;
    Client client;
    peer.connect(&client);
    CHECK(read_reply(
              client, [] { return Client::ms(50); }, {}, &reply) == ReplyStatus::Timeout);
  }
}

// The handshake is read with the shared parser (bindings/json.h): one with text after a NUL
// byte, which RapidJSON took for the end, is not a warden daemon's.
TEST_CASE("connect refuses a handshake with a NUL byte after its object", "[protocol][reply]") {
  using namespace std::string_literals;
  const std::string hello = R"({"type":"event","payload":{"action":"handshake","auth":"none"}})";
  for (const auto& [message, accepted] :
       {std::pair{hello, true}, std::pair{hello + "\0{\"x\":1}"s, false}}) {
    ReplyPeer peer;
    bool sent = false;
    std::thread daemon([&] { sent = peer.accept_and_send(message); });
    Client client;
    std::string error;
    const bool connected = client.connect(peer.address(), 2000ms, &error);
    daemon.join();
    REQUIRE(sent);
    CHECK(connected == accepted);
    if (!accepted)
      CHECK(error == "unexpected first message from " + peer.address() + " (not a warden daemon?)");
  }
}

// A reply to auth is outside text: whatever shape it has, the client answers with an error
// (it read `payload.error.code` and `message` as strings without asking, and `payload` as an
// object: undefined behaviour for a reply that is not one).
TEST_CASE("authenticate reads any reply to auth as a refusal or an acceptance",
          "[protocol][reply]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"type":"reply","payload":{"ok":true}})", ""},
      {R"({"type":"reply","payload":{"ok":false,"error":{"code":"E_AUTH","message":"bad token"}}})",
       "E_AUTH: bad token"},
      {R"({"type":"reply","payload":{"ok":false,"error":{"code":"E_AUTH"}}})", "E_AUTH: "},
      {R"({"type":"reply","payload":{"ok":false,"error":{"code":5,"message":[1]}}})",
       "auth refused"},
      {R"({"type":"reply","payload":{"ok":false,"error":{"code":"E_AUTH","message":{}}}})",
       "E_AUTH: "},
      {R"({"type":"reply","payload":{"ok":false,"error":"E_AUTH"}})", "auth refused"},
      {R"({"type":"reply","payload":5})", "malformed reply to auth"},
      {R"({"type":"reply","payload":[{"ok":true}]})", "malformed reply to auth"},
      {R"({"type":"reply","payload":{"ok":"true"}})", "auth refused"},
  };
  for (const auto& [reply, expected] : cases) {
    INFO(reply);
    ReplyPeer peer;
    Client client;
    peer.connect(&client);
    peer.send(reply);
    std::string error;
    const bool ok = client.authenticate("t", 2000ms, &error);
    CHECK(ok == expected.empty());
    CHECK(error == expected);
  }
}

TEST_CASE("a certificate pin is sha256: and 64 hex digits", "[protocol]") {
  const std::string hex(64, 'a');
  CHECK(valid_certificate_pin("sha256:" + hex));
  CHECK(valid_certificate_pin("sha256:" + std::string(32, 'F') + std::string(32, '0')));
  CHECK_FALSE(valid_certificate_pin(""));
  CHECK_FALSE(valid_certificate_pin(hex));
  CHECK_FALSE(valid_certificate_pin("SHA256:" + hex));
  CHECK_FALSE(valid_certificate_pin("sha256:" + hex.substr(1)));
  CHECK_FALSE(valid_certificate_pin("sha256:" + hex + "a"));
  CHECK_FALSE(valid_certificate_pin("sha256:" + hex.substr(1) + "g"));
  CHECK_FALSE(valid_certificate_pin("sha256:" + hex.substr(1) + ":"));
}
