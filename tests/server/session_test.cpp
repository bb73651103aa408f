// Session memory in the daemon: a decision sees what earlier approved decisions of the same
// (principal, session) did, as `history` facts; another principal using the same session id
// sees nothing of it; [session] keys are read from warden.toml.
#include <catch2/catch.hpp>
#include <map>

#include "server/config.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

// File writes are approved; reading a file this session wrote earlier is rejected and names
// the decision that wrote it; other reads are approved.
const char* kSessionRules = R"CLP(
(defrule writes-ok
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule writes-ok))))
(defrule reads-ok
  (proposal (id ?id) (target file) (action read))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule reads-ok))))
(defrule no-read-of-what-this-session-wrote
  (proposal (id ?id) (target file) (action read))
  (effect (proposal ?id) (kind read) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t) (decision ?d))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-read-of-what-this-session-wrote) (reason ?d))))
)CLP";

// Any effects table turns on effect facts; file and http proposals need no program entry.
const char* kSessionEffects = R"TOML(
[program.true]
operands = []
)TOML";

const char* kWrite =
    R"({"target":"file","action":"write","payload":{"path":"/work/ws/Makefile","content":"all:"},"context":{"session":"s1"}})";
const char* kRead =
    R"({"target":"file","action":"read","payload":{"path":"/work/ws/Makefile"},"context":{"session":"s1"}})";
const char* kReadOtherSession =
    R"({"target":"file","action":"read","payload":{"path":"/work/ws/Makefile"},"context":{"session":"s2"}})";
const char* kReadNoSession =
    R"({"target":"file","action":"read","payload":{"path":"/work/ws/Makefile"}})";

const std::string kSecondAgent = "wdn_test_second_agent_token";

struct Agent {
  Client client;
  Agent(RunningDaemon& d, const std::string& token) {
    std::string error;
    REQUIRE(client.connect(d.address(), 5000ms, &error));
    INFO(error);
    REQUIRE(client.authenticate(token, 5000ms, &error));
  }
  // The decision of one proposal: outcome, and the rules that fired joined by ",".
  std::pair<std::string, std::string> decide(const std::string& proposal) {
    std::string error;
    REQUIRE(client.send_message(decide_request("r", proposal), &error));
    std::string reply = read_or_fail(client);
    INFO(reply);
    REQUIRE(error_code(reply) == "");
    auto doc = parse(reply);
    const auto& decision = doc["payload"]["decision"];
    std::string rules;
    for (const auto& r : decision["rules"].GetArray()) {
      rules += rules.empty() ? "" : ",";
      rules += r["rule"].GetString();
      rules += std::string(":") + r["reason"].GetString();
    }
    return {decision["outcome"].GetString(), rules};
  }
  std::string decision_id(const std::string& proposal) {
    std::string error;
    REQUIRE(client.send_message(decide_request("r", proposal), &error));
    auto doc = parse(read_or_fail(client));
    return doc["payload"]["decision"]["decision_id"].GetString();
  }
};

Config session_config(const TempDir& dir) {
  Config c = test_config(dir);
  c.workspace_root = "/work/ws";
  dir.write("rules/policy.clp", kSessionRules);
  dir.write("rules/effects.toml", kSessionEffects);
  // alice (the fixture's agent) and a second agent, carol.
  c.tokens = dir.write(
      "tokens", Tokens{}.file_text() + "agent carol " + token_hash_text(kSecondAgent) + "\n");
  fs::permissions(c.tokens, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  return c;
}

}  // namespace

TEST_CASE("a later decision of a session sees the effects of its earlier approved ones",
          "[server][session]") {
  TempDir dir;
  RunningDaemon d(session_config(dir));
  REQUIRE(d.ok());
  Agent alice(d, Tokens{}.agent);

  // Before any write, the read is fine.
  CHECK(alice.decide(kRead).first == "approve");
  const std::string write_id = alice.decision_id(kWrite);
  // Now the session wrote the Makefile: reading it back is refused, naming the write.
  auto [outcome, rules] = alice.decide(kRead);
  CHECK(outcome == "reject");
  CHECK(rules.find("no-read-of-what-this-session-wrote:" + write_id) != std::string::npos);
  // Another session of the same principal, and no session at all, have no such history.
  CHECK(alice.decide(kReadOtherSession).first == "approve");
  CHECK(alice.decide(kReadNoSession).first == "approve");

  // A second connection of the same principal continues the same session.
  Agent alice_again(d, Tokens{}.agent);
  CHECK(alice_again.decide(kRead).first == "reject");
}

TEST_CASE("another principal with the same session id neither sees nor adds to the history",
          "[server][session]") {
  TempDir dir;
  RunningDaemon d(session_config(dir));
  REQUIRE(d.ok());
  Agent alice(d, Tokens{}.agent);
  Agent carol(d, kSecondAgent);

  CHECK(alice.decide(kWrite).first == "approve");
  // carol claims alice's session id (and even alice's name): no history reaches her.
  std::string spoof =
      R"({"target":"file","action":"read","payload":{"path":"/work/ws/Makefile"},"context":{"session":"s1","principal":"alice"}})";
  CHECK(carol.decide(kRead).first == "approve");
  CHECK(carol.decide(spoof).first == "approve");
  CHECK(alice.decide(kRead).first == "reject");

  // carol's own write in "s1" is hers only: alice's "s1" is unchanged by it, and carol now
  // sees her own write.
  std::string other_file_write =
      R"({"target":"file","action":"write","payload":{"path":"/work/ws/notes.txt"},"context":{"session":"s1"}})";
  std::string other_file_read =
      R"({"target":"file","action":"read","payload":{"path":"/work/ws/notes.txt"},"context":{"session":"s1"}})";
  CHECK(carol.decide(other_file_write).first == "approve");
  CHECK(carol.decide(other_file_read).first == "reject");
  CHECK(alice.decide(other_file_read).first == "approve");
}

TEST_CASE("requests of one session sent together are decided in order, each seeing the last",
          "[server][session]") {
  TempDir dir;
  Config c = session_config(dir);
  c.workers = 2;  // two workers could take the write and the read at once
  RunningDaemon d(c);
  REQUIRE(d.ok());
  Agent alice(d, Tokens{}.agent);
  // Write then read, pipelined in one send, in twenty fresh sessions: every read sees the
  // write before it, whichever worker takes it.
  const int rounds = 20;
  std::string bytes;
  for (int i = 0; i < rounds; ++i) {
    const std::string session = "pipelined-" + std::to_string(i);
    std::string write = kWrite, read = kRead;
    write.replace(write.find("\"s1\""), 4, "\"" + session + "\"");
    read.replace(read.find("\"s1\""), 4, "\"" + session + "\"");
    bytes += encode_frame(decide_request("w" + std::to_string(i), write));
    bytes += encode_frame(decide_request("r" + std::to_string(i), read));
  }
  std::string error;
  REQUIRE(alice.client.send_bytes(bytes, &error));
  std::map<std::string, std::string> outcomes;
  for (int i = 0; i < 2 * rounds; ++i) {
    auto doc = parse(read_or_fail(alice.client));
    REQUIRE(doc["payload"].HasMember("decision"));
    outcomes[doc["id"].GetString()] = doc["payload"]["decision"]["outcome"].GetString();
  }
  for (int i = 0; i < rounds; ++i) {
    INFO("round " << i);
    CHECK(outcomes["w" + std::to_string(i)] == "approve");
    CHECK(outcomes["r" + std::to_string(i)] == "reject");
  }
}

TEST_CASE("a rejected decision leaves no history", "[server][session]") {
  TempDir dir;
  Config c = session_config(dir);
  // Writes to secret.txt are rejected; they must not count as done.
  dir.write("rules/deny.clp", R"CLP(
(defrule no-secret-writes
  (proposal (id ?id) (target file) (action write))
  (path (proposal ?id) (key "payload.path") (normalized "/work/ws/secret.txt"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-secret-writes))))
)CLP");
  RunningDaemon d(c);
  REQUIRE(d.ok());
  Agent alice(d, Tokens{}.agent);
  std::string write_secret =
      R"({"target":"file","action":"write","payload":{"path":"/work/ws/secret.txt"},"context":{"session":"s1"}})";
  std::string read_secret =
      R"({"target":"file","action":"read","payload":{"path":"/work/ws/secret.txt"},"context":{"session":"s1"}})";
  CHECK(alice.decide(write_secret).first == "reject");
  CHECK(alice.decide(read_secret).first == "approve");
}

TEST_CASE("with [session] ttl_seconds = 0 the daemon remembers nothing", "[server][session]") {
  TempDir dir;
  Config c = session_config(dir);
  c.session.ttl_seconds = 0;
  RunningDaemon d(c);
  REQUIRE(d.ok());
  Agent alice(d, Tokens{}.agent);
  CHECK(alice.decide(kWrite).first == "approve");
  CHECK(alice.decide(kRead).first == "approve");
}

TEST_CASE("[session] keys are read from warden.toml and checked", "[server][session][config]") {
  Config c;
  ConfigErrors errors = parse_config(
      "[session]\nttl_seconds = 600\nmax_entries = 64\nmax_sessions = 100\nmax_bytes = 1048576\n",
      "", &c);
  REQUIRE(errors.empty());
  CHECK(c.session.ttl_seconds == 600);
  CHECK(c.session.max_entries == 64);
  CHECK(c.session.max_sessions == 100);
  CHECK(c.session.max_bytes == 1048576);

  Config defaults;
  CHECK(defaults.session.ttl_seconds == 3600);
  CHECK(defaults.session.max_entries == 512);
  CHECK(defaults.session.max_sessions == 10000);

  Config bad;
  errors = parse_config(
      "[session]\nttl_seconds = -1\nmax_entries = 0\nmax_sessions = \"many\"\nbogus = 1\n", "",
      &bad);
  REQUIRE(errors.size() == 4);
  std::vector<std::string> keys;
  for (const auto& e : errors) keys.push_back(e.key);
  CHECK(std::count(keys.begin(), keys.end(), "session.ttl_seconds") == 1);
  CHECK(std::count(keys.begin(), keys.end(), "session.max_entries") == 1);
  CHECK(std::count(keys.begin(), keys.end(), "session.max_sessions") == 1);
  CHECK(std::count(keys.begin(), keys.end(), "session.bogus") == 1);
  CHECK(bad.session.ttl_seconds == 3600);  // an invalid file changes nothing

  // A session keeps at most 4096 entries: each one a rule may match is a fact of a decision.
  Config capped;
  CHECK(parse_config("[session]\nmax_entries = 4096\n", "", &capped).empty());
  CHECK(capped.session.max_entries == 4096);
  errors = parse_config("[session]\nmax_entries = 4097\n", "", &capped);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "session.max_entries");
}
