// The approval commands against a scripted stand-in for the daemon on a Unix socket: what
// `warden pending --watch`, `approve`, `deny` and `decide --wait` send, and what they print
// and exit with for each reply. (The real daemon's side is tested with the server.)
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rapidjson/document.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/frame.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using warden::cli::testing::Child;
using warden::cli::testing::run_warden;

namespace {

// Accepts one connection, sends the handshake (no auth), reads the first request and answers
// it with `replies` (whole messages); with hold_open the connection stays open until the
// client closes it.
class ScriptedDaemon {
 public:
  ScriptedDaemon(std::vector<std::string> replies, bool hold_open = false)
      : replies_(std::move(replies)), hold_open_(hold_open) {
    path_ = dir_ / "d.sock";
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 4) == 0);
    thread_ = std::thread([this] { serve(); });
  }
  ~ScriptedDaemon() {
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (thread_.joinable()) thread_.join();
  }
  const std::string& path() const { return path_; }
  std::string request() {
    std::lock_guard<std::mutex> lock(mutex_);
    return request_;
  }
  rapidjson::Document request_payload() {
    rapidjson::Document doc;
    const std::string r = request();
    doc.Parse(r.c_str(), r.size());
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc.HasMember("payload"));
    rapidjson::Document p;
    p.CopyFrom(doc["payload"], p.GetAllocator());
    return p;
  }

 private:
  static void send_all(int fd, const std::string& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
      ssize_t n = ::send(fd, bytes.data() + at, bytes.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return;
      at += static_cast<std::size_t>(n);
    }
  }
  void serve() {
    int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    send_all(c, protocol::encode_frame(
                    R"({"type":"event","payload":{"action":"handshake","auth":"none"}})"));
    protocol::FrameDecoder decoder(1 << 20);
    char buffer[4096];
    bool answered = false;
    for (;;) {
      auto r = decoder.next();
      if (r.status == protocol::FrameDecoder::Status::Good && !answered) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          request_.assign(r.payload.data(), r.payload.size());
        }
        for (const auto& reply : replies_) send_all(c, protocol::encode_frame(reply));
        answered = true;
        if (!hold_open_) break;
        continue;
      }
      if (r.status == protocol::FrameDecoder::Status::Bad) break;
      ssize_t n = ::recv(c, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      decoder.feed(buffer, static_cast<std::size_t>(n));
    }
    ::close(c);
  }

  std::vector<std::string> replies_;
  bool hold_open_;
  warden::testing::TempDir dir_{"warden-approval"};
  std::string path_;
  int fd_ = -1;
  std::thread thread_;
  std::mutex mutex_;
  std::string request_;
};

const std::string kToken = "TOKSECRETaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

std::string approval_json(const std::string& id, const std::string& status, bool with_token) {
  return R"({"id":")" + id + R"(","status":")" + status +
         R"(","principal":"alice","session":"s-41","agent":"claude-code","origin":"decide",)"
         R"("action":{"target":"shell","action":"run","payload":{"command":"deploy prod"}},)"
         R"("action_hash":"sha256:ab","rules":["deploys"],"reason":"deploys need a person","decision_id":"d-1",)"
         R"("created_ms":1,"expires_ms":99999999999999,"approvers_needed":1,"votes":[],"closed_by":"","close_note":"",)"
         R"("result":null)" +
         (with_token ? R"(,"token":")" + kToken + R"(")" : std::string()) + "}";
}

std::string event(const std::string& payload) {
  return R"({"type":"event","payload":)" + payload + "}";
}
std::string response(const std::string& id, const std::string& payload) {
  return R"({"type":"response","id":")" + id + R"(","payload":)" + payload + "}";
}

}  // namespace

TEST_CASE("pending --watch prints each event as it arrives until interrupted",
          "[cli][approval][client]") {
  const std::string a = "apr_0123456789abcdef01234567", b = "apr_fedcba9876543210fedcba98";
  ScriptedDaemon daemon(
      {event(R"({"event":"approvals","approvals":[)" + approval_json(a, "pending", true) + "]}"),
       event(R"({"event":"approval-created","approval":)" + approval_json(b, "pending", true) +
             "}"),
       event(R"({"event":"approval-closed","approval":)" + approval_json(a, "denied", true) + "}")},
      true);
  Child child({"pending", "--watch", "--agent", "claude-code", "--unix", daemon.path()});
  const std::string first = child.read_line(), second = child.read_line(),
                    third = child.read_line();
  REQUIRE_FALSE(child.timed_out);
  CHECK(first.rfind(
            "= " + a + "  pending  alice/s-41/claude-code  [deploys]  shell run: deploy prod", 0) ==
        0);
  CHECK(second.rfind("+ " + b + "  pending", 0) == 0);
  CHECK(third == "- " + a + "  denied  (alice/s-41/claude-code)");
  child.terminate();  // the user's Ctrl-C
  CHECK(child.finish() == 0);
  CHECK(child.out().find("TOKSECRET") == std::string::npos);
  auto p = daemon.request_payload();
  CHECK(std::string(p["action"].GetString()) == "pending");
  CHECK(p["watch"].GetBool());
  CHECK(std::string(p["agent"].GetString()) == "claude-code");
}

TEST_CASE("pending --watch --format json prints the event JSON per line, without tokens",
          "[cli][approval][client]") {
  const std::string a = "apr_0123456789abcdef01234567";
  ScriptedDaemon daemon({event(R"({"event":"approvals","approvals":[]})"),
                         event(R"({"event":"approval-created","approval":)" +
                               approval_json(a, "pending", true) + "}")},
                        true);
  Child child({"pending", "--watch", "--format", "json", "--unix", daemon.path()});
  const std::string first = child.read_line(), second = child.read_line();
  REQUIRE_FALSE(child.timed_out);
  CHECK(first == R"({"event":"approvals","approvals":[]})");
  rapidjson::Document created;
  created.Parse(second.c_str());
  REQUIRE_FALSE(created.HasParseError());
  CHECK(std::string(created["event"].GetString()) == "approval-created");
  CHECK(std::string(created["approval"]["id"].GetString()) == a);
  CHECK_FALSE(created["approval"].HasMember("token"));
  child.terminate();
  CHECK(child.finish() == 0);
}

TEST_CASE("pending lists approvals; a refused watch is an error", "[cli][approval][client]") {
  {
    ScriptedDaemon daemon({response(
        "pending", R"({"action":"pending","ok":true,"approvals":[)" +
                       approval_json("apr_0123456789abcdef01234567", "pending", true) + "]}")});
    auto r =
        run_warden({"pending", "--min-age", "60", "--rule", "deploys", "--unix", daemon.path()});
    CHECK(r.code == 0);
    CHECK(r.out.find("apr_0123456789abcdef01234567  pending") == 0);
    CHECK(r.out.find("  action shell run: deploy prod\n") != std::string::npos);
    CHECK(r.out.find("TOKSECRET") == std::string::npos);
    auto p = daemon.request_payload();
    CHECK(p["min_age_s"].GetInt64() == 60);
    CHECK(std::string(p["rule"].GetString()) == "deploys");
    CHECK_FALSE(p.HasMember("watch"));
  }
  {
    ScriptedDaemon daemon(
        {response("pending", R"({"action":"pending","ok":false,"error":{"code":"E_FORBIDDEN",)"
                             R"("message":"pending needs the approver role"}})")},
        true);
    auto r = run_warden({"pending", "--watch", "--unix", daemon.path()});
    CHECK(r.code == 4);
    CHECK(r.err.find("warden: E_FORBIDDEN: pending needs the approver role") == 0);
  }
}

const std::string kId = "apr_0123456789abcdef01234567";
const std::string kDigest = "sha256:" + std::string(64, 'a');

TEST_CASE("approve sends the id, the digest, note and scope and prints the outcome",
          "[cli][approval][client]") {
  const std::string a = approval_json(kId, "executed", false);
  {
    ScriptedDaemon daemon(
        {response("approve", R"({"action":"approve","ok":true,"status":"executed","approval":)" +
                                 a + R"(,"result":{"exit_code":0}})")});
    auto r = run_warden({"approve", kId, "--digest", kDigest, "--note", "ship it",
                         "--scope-minutes", "30", "--unix", daemon.path()});
    CHECK(r.code == 0);
    CHECK(
        r.out ==
        "approved apr_0123456789abcdef01234567; it ran\n  action shell run: deploy prod\n  exit 0\n");
    auto p = daemon.request_payload();
    CHECK(std::string(p["action"].GetString()) == "approve");
    CHECK(std::string(p["id"].GetString()) == kId);
    CHECK(std::string(p["digest"].GetString()) == kDigest);
    CHECK_FALSE(p.HasMember("token"));
    CHECK(std::string(p["note"].GetString()) == "ship it");
    CHECK(p["scope_minutes"].GetInt() == 30);
  }
  {
    ScriptedDaemon daemon(
        {response("approve", R"({"action":"approve","ok":false,"error":{"code":"E_SELF_APPROVAL",)"
                             R"("message":"you asked for this action"}})")});
    auto r = run_warden({"approve", kId, "--digest", kDigest, "--unix", daemon.path()});
    CHECK(r.code == 4);
    CHECK(r.err == "warden: E_SELF_APPROVAL: you asked for this action\n");
    CHECK_FALSE(daemon.request_payload().HasMember("scope_minutes"));
  }
  {
    ScriptedDaemon daemon({response(
        "approve", R"({"action":"approve","ok":false,"error":{"code":"E_APPROVAL_REFUSED",)"
                   R"("message":"the rules reject it now"}})")});
    auto r = run_warden({"approve", kId, "--digest", kDigest, "--unix", daemon.path()});
    CHECK(r.code == 1);
    CHECK(r.err == "warden: E_APPROVAL_REFUSED: the rules reject it now\n");
  }
  {
    ScriptedDaemon daemon({response(
        "approve", R"({"action":"approve","ok":false,"error":{"code":"E_APPROVAL_DIGEST",)"
                   R"("message":"not the digest of its action"}})")});
    auto r = run_warden({"approve", kId, "--digest", kDigest, "--unix", daemon.path()});
    CHECK(r.code == 4);
    CHECK(r.err == "warden: E_APPROVAL_DIGEST: not the digest of its action\n");
  }
}

TEST_CASE("approve answers only what was seen: no token, no blind yes", "[cli][approval][client]") {
  // A token (or anything but an approval id) is refused before any request.
  for (const std::string& which : {kToken, std::string("-"), std::string("apr_0123")}) {
    auto r = run_warden(
        {"approve", which, "--digest", kDigest, "--unix", "/nonexistent/warden-test.sock"});
    CHECK(r.code == 2);
    CHECK(r.err.find("E_BAD_REQUEST") != std::string::npos);
  }
  auto bad_digest = run_warden(
      {"approve", kId, "--digest", "sha256:xyz", "--unix", "/nonexistent/warden-test.sock"});
  CHECK(bad_digest.code == 2);
  // Without --digest it must show the approval and ask on a terminal; with none, it refuses.
  auto unseen = run_warden({"approve", kId, "--unix", "/nonexistent/warden-test.sock"}, "yes\n");
  CHECK(unseen.code == 2);
  CHECK(unseen.err.find("warden: E_APPROVAL_UNSEEN: ") == 0);
}

TEST_CASE("deny sends an id as id and a token as token", "[cli][approval][client]") {
  const std::string a = approval_json("apr_0123456789abcdef01234567", "denied", false);
  for (const std::string& which : {std::string("apr_0123456789abcdef01234567"), kToken}) {
    ScriptedDaemon daemon(
        {response("deny", R"({"action":"deny","ok":true,"approval":)" + a + "}")});
    auto r = run_warden({"deny", which, "--note", "not today", "--unix", daemon.path()});
    CHECK(r.code == 0);
    CHECK(r.out == "denied apr_0123456789abcdef01234567\n  action shell run: deploy prod\n");
    auto p = daemon.request_payload();
    const bool id = which.rfind("apr_", 0) == 0;
    CHECK(p.HasMember(id ? "id" : "token"));
    CHECK_FALSE(p.HasMember(id ? "token" : "id"));
    CHECK(std::string(p["note"].GetString()) == "not today");
  }
}

TEST_CASE("decide --wait sends wait_s and prints how to approve a pending request",
          "[cli][approval][client]") {
  const std::string decision =
      R"({"decision_id":"d-1","outcome":"approval-required","reason":"deploys need a person","rules":[{"rule":"deploys",)"
      R"("outcome":"approval-required","reason":"deploys need a person","mode":"enforce"}],)"
      R"("approval":{"expires_in_s":300,"approvers":1},"action":{"target":"shell"},"rules_digest":"sha256:x","elapsed_us":1})";
  const std::string approval =
      R"({"id":"apr_0123456789abcdef01234567","token":")" + kToken +
      R"(","status":"pending","expires_ms":5,"approvers_needed":1,"how":"warden approve )" +
      "apr_0123456789abcdef01234567" + R"("})";
  const std::string reply = response("0", R"({"action":"decide","ok":true,"decision":)" + decision +
                                              R"(,"approval":)" + approval + "}");
  {
    ScriptedDaemon daemon({reply});
    auto r = run_warden({"decide", "--wait", "30", "--format", "text", "--unix", daemon.path()},
                        R"({"target":"shell","action":"run","payload":{"command":"deploy"}})"
                        "\n");
    CHECK(r.code == 3);
    CHECK(r.out ==
          "line 1: approval-required  deploys need a person\n"
          "  deploys: approval-required (deploys need a person)\n"
          "  approval apr_0123456789abcdef01234567: pending; approve with: warden approve "
          "apr_0123456789abcdef01234567\n");
    auto p = daemon.request_payload();
    CHECK(p["wait_s"].GetInt() == 30);
  }
  {
    ScriptedDaemon daemon({reply});
    auto r = run_warden({"decide", "--unix", daemon.path()}, R"({"target":"shell"})"
                                                             "\n");
    CHECK(r.code == 3);
    rapidjson::Document d;
    d.Parse(r.out.c_str());
    REQUIRE_FALSE(d.HasParseError());
    CHECK(d["approval"]["expires_in_s"].GetInt() == 300);
    CHECK(std::string(d["approval_request"]["token"].GetString()) == kToken);
    CHECK_FALSE(daemon.request_payload().HasMember("wait_s"));
  }
}

TEST_CASE("deny - reads the token from stdin", "[cli][approval][client]") {
  {
    ScriptedDaemon daemon({response("deny", R"({"action":"deny","ok":true,"approval":)" +
                                                approval_json(kId, "denied", false) + "}")});
    auto r = run_warden({"deny", "-", "--unix", daemon.path()}, kToken + "\n");
    CHECK(r.code == 0);
    CHECK(std::string(daemon.request_payload()["token"].GetString()) == kToken);
  }
  auto none = run_warden({"deny", "-", "--unix", "/nonexistent/warden-test.sock"}, "");
  CHECK(none.code == 2);
  CHECK(none.err == "warden: no token on stdin\n");
}
