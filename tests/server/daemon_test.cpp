// The daemon over real sockets: handshake, auth, decide, roles, pipelining, status.
#include <catch2/catch.hpp>

#include "server/errors.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

struct Connected {
  Client client;
  explicit Connected(RunningDaemon& d, const std::string& token = {}) {
    std::string error;
    REQUIRE(client.connect(d.address(), 5000ms, &error));
    if (!token.empty()) {
      INFO(error);
      REQUIRE(client.authenticate(token, 5000ms, &error));
    }
  }
  std::string call(const std::string& message) {
    std::string error;
    REQUIRE(client.send_message(message, &error));
    return read_or_fail(client);
  }
};

}  // namespace

TEST_CASE("the server speaks first with the handshake", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d);
  auto hs = parse(c.client.handshake());
  CHECK(std::string(hs["type"].GetString()) == "event");
  CHECK(std::string(hs["payload"]["action"].GetString()) == "handshake");
  CHECK(std::string(hs["payload"]["version"].GetString()) == "1");
  CHECK(std::string(hs["payload"]["auth"].GetString()) == "token");
}

TEST_CASE("auth then decide returns the dry-run decision JSON", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  std::string reply = c.call(decide_request("d1", kShellProposal));
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto doc = parse(reply);
  CHECK(std::string(doc["id"].GetString()) == "d1");
  CHECK(std::string(doc["type"].GetString()) == "response");
  const auto& decision = doc["payload"]["decision"];
  CHECK(std::string(decision["outcome"].GetString()) == "reject");
  CHECK(std::string(decision["rules"][0]["rule"].GetString()) == "no-shell");
  CHECK(std::string(decision["rules_digest"].GetString()).rfind("sha256:", 0) == 0);
  // The authenticated principal is what the rules see, whatever the proposal claimed.
  std::string spoof =
      R"({"target":"reply","payload":{"text":"x"},"context":{"principal":"mallory"}})";
  auto approved = parse(c.call(decide_request("d2", spoof)));
  CHECK(std::string(approved["payload"]["decision"]["outcome"].GetString()) == "approve");
  CHECK(
      std::string(approved["payload"]["decision"]["action"]["context"]["principal"].GetString()) ==
      "alice");
  // The override also replaces a principal the proposal spelled as a non-string.
  std::string odd = R"({"target":"reply","payload":{"text":"x"},"context":{"principal":["m"]}})";
  auto replaced = parse(c.call(decide_request("d3", odd)));
  CHECK(
      std::string(replaced["payload"]["decision"]["action"]["context"]["principal"].GetString()) ==
      "alice");
}

namespace {

// Approves replies from alice only, and names any other principal the rules see.
const char* kPrincipalRules = R"CLP(
(defrule alice-may-reply
  (proposal (id ?id) (target reply) (principal "alice"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule alice-may-reply) (reason "alice"))))
(defrule others-may-not
  (proposal (id ?id) (target reply) (principal ?p&~"alice"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule others-may-not) (reason ?p))))
)CLP";

}  // namespace

TEST_CASE("rules see the authenticated principal, whatever the proposal claims",
          "[server][daemon]") {
  TempDir dir;
  Config config = test_config(dir);
  dir.write("rules/policy.clp", kPrincipalRules);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  const char* claims[] = {
      R"({"target":"reply","payload":{"text":"x"},"context":{"principal":"mallory"}})",
      R"({"target":"reply","payload":{"text":"x"},"context":{"agent":"a","principal":""}})",
      R"({"target":"reply","payload":{"text":"x"},"context":{"principal":{"name":"mallory"}}})",
      R"({"target":"reply","payload":{"text":"x"},"context":{"agent":"a"}})",
      R"({"target":"reply","payload":{"text":"x"}})",
  };
  for (const char* proposal : claims) {
    INFO(proposal);
    std::string reply = c.call(decide_request("p", proposal));
    REQUIRE(error_code(reply) == "");
    auto doc = parse(reply);
    const auto& decision = doc["payload"]["decision"];
    // The rules saw alice: only the alice rule fired.
    CHECK(std::string(decision["outcome"].GetString()) == "approve");
    REQUIRE(decision["rules"].Size() == 1);
    CHECK(std::string(decision["rules"][0]["rule"].GetString()) == "alice-may-reply");
    // And the action carries her name.
    CHECK(std::string(decision["action"]["context"]["principal"].GetString()) == "alice");
    CHECK(reply.find("mallory") == std::string::npos);
  }
}

TEST_CASE("repeated keys and keys differing only in case are refused anywhere in a request",
          "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  const std::string proposal = kReplyProposal;
  // Each would be read one way by find_member (first wins) and another by other parsers.
  const std::vector<std::string> ambiguous = {
      R"({"type":"request","id":"1","payload":{"action":"decide","proposal":)" + proposal +
          R"(},"payload":{"action":"status"}})",
      R"({"type":"request","id":"1","Payload":{"action":"status"},"payload":{"action":"decide","proposal":)" +
          proposal + "}}",
      R"({"type":"request","id":"1","payload":{"action":"decide","Action":"reload","proposal":)" +
          proposal + "}}",
      R"({"type":"request","id":"1","payload":{"action":"decide","proposal":)" + proposal +
          R"(,"proposal":{"target":"shell","payload":{"command":"rm -rf /"}}}})",
      R"({"type":"request","id":"1","payload":{"action":"decide","proposal":{"target":"reply",)"
      R"("payload":{"text":"x"},"context":{"principal":"mallory"},"context":{"principal":"eve"}}}})",
      R"({"type":"request","id":"1","payload":{"action":"decide","proposal":{"target":"reply",)"
      R"("payload":{"text":"x","Text":"y"}}}})",
      R"({"type":"request","id":"1","id":"2","payload":{"action":"decide","proposal":)" + proposal +
          "}}",
  };
  for (const std::string& request : ambiguous) {
    INFO(request);
    std::string reply = c.call(request);
    CHECK(error_code(reply) == err::kBadRequest);
    CHECK(reply.find("mallory") == std::string::npos);
  }
  // The connection stays usable.
  CHECK(error_code(c.call(decide_request("ok", kReplyProposal))) == "");
}

TEST_CASE("a reload that revokes or changes a token closes the sessions it authenticated",
          "[server][daemon]") {
  TempDir dir;
  Config config = test_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Tokens t;
  Connected agent(d, t.agent);
  Connected approver(d, t.approver);
  Connected admin(d, t.admin);
  CHECK(error_code(agent.call(decide_request("before", kShellProposal))) == "");
  // alice's token is removed; bob's token now names another principal; root's is kept.
  dir.write("tokens", "approver robert " + token_hash_text(t.approver) + "\nadmin root " +
                          token_hash_text(t.admin) + "\n");
  REQUIRE(error_code(admin.call(make_request("r", "reload"))) == "");
  for (Connected* revoked : {&agent, &approver}) {
    std::string error;
    revoked->client.send_message(decide_request("after", kShellProposal), &error);  // may fail
    std::vector<std::string> codes;
    std::string payload;
    while (revoked->client.read_message(&payload, 5000ms) == Client::ReadStatus::Ok) {
      codes.push_back(error_code(payload));
    }
    CHECK(codes == std::vector<std::string>{err::kAuthRevoked});
  }
  // The kept token's session goes on.
  CHECK(error_code(admin.call(make_request("s", "status"))) == "");
  // The removed token cannot authenticate again.
  Connected again(d);
  CHECK(error_code(again.call(make_request("a", "auth", "\"token\":\"" + t.agent + "\""))) ==
        err::kAuthFailed);
}

TEST_CASE("a proposal the engine refuses is an E_INPUT error, not a dropped connection",
          "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  CHECK(error_code(c.call(decide_request("bad", R"({"payload":{}})"))).rfind("E_INPUT", 0) == 0);
  CHECK(error_code(c.call(make_request("bad2", "decide"))) == err::kBadRequest);
  CHECK(error_code(c.call(decide_request("ok", kReplyProposal))) == "");
  // A lone surrogate escape inside the proposal cannot be passed on as UTF-8.
  CHECK(error_code(c.call(decide_request(
            "s", R"({"target":"reply","payload":{"text":"\udc3a"}})"))) == err::kBadJson);
}

TEST_CASE("a wrong token is refused and the connection closed", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d);
  std::string reply = c.call(make_request("a", "auth", "\"token\":\"wdn_guess\""));
  CHECK(error_code(reply) == err::kAuthFailed);
  CHECK(reply_id(reply) == "a");
  std::string payload;
  CHECK(c.client.read_message(&payload, 3000ms) == Client::ReadStatus::Closed);
}

TEST_CASE("requests before auth get E_AUTH_REQUIRED; health-check needs none", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d);
  CHECK(error_code(c.call(decide_request("1", kShellProposal))) == err::kAuthRequired);
  CHECK(error_code(c.call(make_request("2", "no-such-action"))) == err::kAuthRequired);
  std::string health = c.call(make_request("3", "health-check"));
  CHECK(error_code(health) == "");
  CHECK(std::string(parse(health)["payload"]["status"].GetString()) == "serving");
  // Still allowed to authenticate afterwards.
  CHECK(error_code(c.call(make_request("4", "auth", "\"token\":\"" + Tokens{}.agent + "\""))) ==
        "");
  CHECK(error_code(c.call(decide_request("5", kShellProposal))) == "");
}

TEST_CASE("roles: agent may not reload or status or approve; admin may; approver waits",
          "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Tokens t;
  Connected agent(d, t.agent);
  CHECK(error_code(agent.call(make_request("1", "reload"))) == err::kForbidden);
  CHECK(error_code(agent.call(make_request("2", "status"))) == err::kForbidden);
  CHECK(error_code(agent.call(make_request("3", "approve", "\"token\":\"x\""))) == err::kForbidden);
  CHECK(error_code(agent.call(make_request("4", "deny"))) == err::kForbidden);
  CHECK(error_code(agent.call(make_request("5", "frobnicate"))) == err::kUnknownAction);
  // The agent may submit: this daemon has no model provider.
  CHECK(error_code(agent.call(make_request("6", "submit", "\"text\":\"hi\""))) == err::kNoProvider);

  Connected approver(d, t.approver);
  CHECK(error_code(approver.call(make_request("1", "approve"))) == err::kBadRequest);
  CHECK(error_code(approver.call(decide_request("2", kShellProposal))) == err::kForbidden);

  Connected admin(d, t.admin);
  std::string status = admin.call(make_request("s", "status"));
  REQUIRE(error_code(status) == "");
  auto doc = parse(status);
  CHECK(doc["payload"]["connections"]["current"].GetUint64() >= 3);
  CHECK(doc["payload"]["counters"]["decisions"].GetUint64() == 0);
  CHECK(std::string(doc["payload"]["rules_digest"].GetString()).rfind("sha256:", 0) == 0);
  CHECK(doc["payload"].HasMember("uptime_s"));
}

TEST_CASE("a connection authenticates once", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  CHECK(error_code(c.call(make_request("x", "auth", "\"token\":\"" + Tokens{}.admin + "\""))) ==
        err::kBadRequest);
  CHECK(error_code(c.call(make_request("y", "reload"))) == err::kForbidden);
}

TEST_CASE("pipelined requests are answered in order", "[server][daemon]") {
  TempDir dir;
  Config config = test_config(dir);
  config.limits.max_in_flight = 16;  // the cap pauses reading; order must survive it
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Connected c(d, Tokens{}.agent);
  const int n = 300;
  std::string burst;
  for (int i = 0; i < n; ++i) {
    // Mix slow (decide on a worker) and immediate (health-check, errors) replies.
    std::string id = std::to_string(i);
    switch (i % 4) {
      case 0:
        burst += encode_frame(decide_request(id, kShellProposal));
        break;
      case 1:
        burst += encode_frame(make_request(id, "health-check"));
        break;
      case 2:
        burst += encode_frame(decide_request(id, kReplyProposal));
        break;
      default:
        burst += encode_frame(make_request(id, "status"));
        break;  // forbidden
    }
  }
  std::string error;
  REQUIRE(c.client.send_bytes(burst, &error));
  for (int i = 0; i < n; ++i) {
    std::string reply = read_or_fail(c.client);
    REQUIRE(reply_id(reply) == std::to_string(i));
    if (i % 4 == 3) {
      CHECK(error_code(reply) == err::kForbidden);
    } else {
      CHECK(error_code(reply) == "");
    }
  }
}

TEST_CASE("numeric and missing ids are echoed as given", "[server][daemon]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Connected c(d);
  auto numeric = parse(c.call(R"({"type":"request","id":17,"payload":{"action":"health-check"}})"));
  CHECK(numeric["id"].GetInt() == 17);
  auto none = parse(c.call(R"({"type":"request","payload":{"action":"health-check"}})"));
  CHECK(none["id"].IsNull());
}

TEST_CASE("--insecure-no-auth makes every connection an anonymous agent", "[server][daemon]") {
  TempDir dir;
  Config config = test_config(dir);
  config.tokens.clear();
  config.insecure_no_auth = true;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Connected c(d);
  CHECK(std::string(parse(c.client.handshake())["payload"]["auth"].GetString()) == "none");
  auto reply = parse(c.call(decide_request("1", kReplyProposal)));
  CHECK(std::string(reply["payload"]["decision"]["action"]["context"]["principal"].GetString()) ==
        "anonymous");
  CHECK(error_code(c.call(make_request("2", "reload"))) == err::kForbidden);
}

TEST_CASE("without a token file the daemon refuses to start", "[server][daemon]") {
  TempDir dir;
  Config config = test_config(dir);
  config.tokens.clear();
  RunningDaemon d(config);
  CHECK_FALSE(d.ok());
  CHECK(d.start_result().exit_code == 2);
  CHECK(d.start_result().step == "tokens");
}

TEST_CASE("startup stops at broken rules and bad token files with exit 2", "[server][daemon]") {
  TempDir dir;
  SECTION("rules") {
    Config config = test_config(dir);
    dir.write("rules/broken.clp", kBrokenRules);
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().step == "rules");
    CHECK(d.start_result().exit_code == 2);
  }
  SECTION("tokens") {
    Config config = test_config(dir);
    dir.write("tokens", "agent alice not-a-hash\n");
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().step == "tokens");
    CHECK(d.start_result().message.find(":1:") != std::string::npos);
  }
  SECTION("listen address in use") {
    RunningDaemon first(test_config(dir));
    REQUIRE(first.ok());
    Config config = test_config(dir);
    config.listen = first.address();
    RunningDaemon second(config);
    CHECK_FALSE(second.ok());
    CHECK(second.start_result().step == "listener");
    CHECK(second.start_result().exit_code == 4);
  }
}
