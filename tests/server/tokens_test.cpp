// Token file parsing (groups too), its required modes, constant-time authentication, the
// rights table, and what rules learn about the caller.
#include "server/tokens.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "server/errors.h"
#include "server/roles.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

TEST_CASE("token file lines map tokens to principals and roles", "[server][tokens]") {
  std::string text = "# comment\n\nagent alice " + token_hash_text("t1") +
                     "  # trailing comment\r\nadmin root " + token_hash_text("t2");
  TokenStore store;
  std::vector<std::string> errors;
  REQUIRE(TokenStore::parse(text, "tokens", &store, &errors));
  CHECK(errors.empty());
  CHECK(store.size() == 2);
  auto alice = store.authenticate("t1");
  REQUIRE(alice);
  CHECK(alice->principal == "alice");
  CHECK(alice->role == Role::Agent);
  CHECK(store.authenticate("t2")->role == Role::Admin);
  CHECK_FALSE(store.authenticate("t3"));
  CHECK_FALSE(store.authenticate(""));
}

TEST_CASE("token file errors name their line", "[server][tokens]") {
  std::string good = token_hash_text("x");
  std::string text = "agent alice " + good + "\nroot bob " + token_hash_text("y") +
                     "\nagent carol sha256:abc\nagent dave\nagent erin " + good + "\n";
  TokenStore store;
  std::vector<std::string> errors;
  CHECK_FALSE(TokenStore::parse(text, "tokens", &store, &errors));
  REQUIRE(errors.size() == 4);
  CHECK(errors[0].rfind("tokens:2:", 0) == 0);
  CHECK(errors[1].rfind("tokens:3:", 0) == 0);
  CHECK(errors[2].rfind("tokens:4:", 0) == 0);
  CHECK(errors[3].rfind("tokens:5:", 0) == 0);  // duplicate hash
  CHECK(store.size() == 0);
}

TEST_CASE("a token hash is 64 hex digits of either case, read once the line is good so far",
          "[server][tokens]") {
  const std::string hash = token_hash_text("t1");  // "sha256:" and 64 lowercase digits
  std::string upper = hash;
  for (std::size_t i = 7; i < upper.size(); ++i)
    if (upper[i] >= 'a' && upper[i] <= 'f') upper[i] = static_cast<char>(upper[i] - 'a' + 'A');
  {
    TokenStore store;
    std::vector<std::string> errors;
    REQUIRE(TokenStore::parse("agent alice " + upper + "\n", "tokens", &store, &errors));
    const auto alice = store.authenticate("t1");
    REQUIRE(alice);
    CHECK(alice->principal == "alice");
  }
  const std::string bad = hash.substr(0, hash.size() - 1) + "g";  // the last digit
  TokenStore store;
  std::vector<std::string> errors;
  CHECK_FALSE(TokenStore::parse("agent alice " + bad + "\nroot bob " + bad + "\n", "tokens", &store,
                                &errors));
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "tokens:1: token hash must be sha256: followed by 64 hex digits");
  // The unknown role refuses line 2: its hash is not read, one error for the line.
  CHECK(errors[1].rfind("tokens:2: unknown role 'root'", 0) == 0);
  CHECK(store.size() == 0);
}

TEST_CASE("generated tokens are random, prefixed and url-safe", "[server][tokens]") {
  std::string a = generate_token();
  std::string b = generate_token();
  CHECK(a != b);
  CHECK(a.rfind("wdn_", 0) == 0);
  CHECK(a.size() == 4 + 43);
  CHECK(
      a.find_first_not_of("wdn_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-") ==
      std::string::npos);
  CHECK(token_hash_text(a).size() == 7 + 64);
}

TEST_CASE("rights: each action belongs to one role; an agent never approves", "[server][tokens]") {
  CHECK(role_allows(Role::Agent, "decide"));
  CHECK(role_allows(Role::Agent, "submit"));
  CHECK_FALSE(role_allows(Role::Agent, "approve"));
  CHECK_FALSE(role_allows(Role::Agent, "deny"));
  CHECK_FALSE(role_allows(Role::Agent, "pending"));
  CHECK_FALSE(role_allows(Role::Agent, "reload"));
  CHECK_FALSE(role_allows(Role::Agent, "status"));
  CHECK(role_allows(Role::Approver, "approve"));
  CHECK_FALSE(role_allows(Role::Approver, "decide"));
  CHECK(role_allows(Role::Admin, "reload"));
  CHECK(role_allows(Role::Admin, "status"));
  CHECK_FALSE(role_allows(Role::Admin, "approve"));
  for (Role r : {Role::Agent, Role::Approver, Role::Admin}) {
    CHECK(role_allows(r, "health-check"));
    CHECK_FALSE(role_allows(r, "no-such-action"));
  }
}

TEST_CASE("token lines may carry the principal's groups", "[server][tokens][groups]") {
  std::string text = "agent alice " + token_hash_text("t1") + " groups=ops,dev\n" + "agent alice " +
                     token_hash_text("t2") + " groups=dev,ops  # rotated\n" + "agent bob " +
                     token_hash_text("t3") + "\n";
  TokenStore store;
  std::vector<std::string> errors;
  REQUIRE(TokenStore::parse(text, "tokens", &store, &errors));
  CHECK(store.authenticate("t1")->groups == std::vector<std::string>{"dev", "ops"});
  CHECK(store.authenticate("t2")->groups == std::vector<std::string>{"dev", "ops"});
  CHECK(store.authenticate("t3")->groups.empty());
}

TEST_CASE("group errors name their line", "[server][tokens][groups]") {
  auto line_of_error = [](const std::string& text) {
    TokenStore store;
    std::vector<std::string> errors;
    CHECK_FALSE(TokenStore::parse(text, "tokens", &store, &errors));
    CHECK(store.size() == 0);
    return errors.size() == 1 ? errors[0].substr(0, errors[0].find(' '))
                              : "<" + std::to_string(errors.size()) + " errors>";
  };
  const std::string h1 = token_hash_text("a"), h2 = token_hash_text("b");
  CHECK(line_of_error("agent alice " + h1 + " groups=\n") == "tokens:1:");
  CHECK(line_of_error("agent alice " + h1 + " groups=a,,b\n") == "tokens:1:");
  CHECK(line_of_error("agent alice " + h1 + " groups=a,a\n") == "tokens:1:");
  CHECK(line_of_error("agent alice " + h1 + " groups=ops/x\n") == "tokens:1:");
  CHECK(line_of_error("agent alice " + h1 + " teams=ops\n") == "tokens:1:");
  CHECK(line_of_error("agent alice " + h1 + " groups=a groups=b\n") == "tokens:1:");
  // Every token of a principal names the same groups.
  CHECK(line_of_error("agent alice " + h1 + " groups=ops\n\nagent alice " + h2 + "\n") ==
        "tokens:3:");
  std::string many = "agent alice " + h1 + " groups=g0";
  for (int i = 1; i <= 32; ++i) many += ",g" + std::to_string(i);
  CHECK(line_of_error(many + "\n") == "tokens:1:");
  CHECK(valid_group_name("ops.team_2-a"));
  CHECK_FALSE(valid_group_name(std::string(65, 'g')));
  CHECK_FALSE(valid_group_name("a#b"));
}

TEST_CASE("the token file must be private to its owner", "[server][tokens]") {
  TempDir dir;
  std::string path = dir.write("tokens", "agent alice " + token_hash_text("t1") + "\n");
  TokenStore store;
  for (mode_t bad : {0644, 0640, 0604, 0620, 0602}) {
    REQUIRE(::chmod(path.c_str(), bad) == 0);
    std::vector<std::string> errors;
    CHECK_FALSE(TokenStore::load(path, &store, &errors));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].rfind(path + ": mode 0", 0) == 0);
    CHECK(store.size() == 0);
  }
  for (mode_t good : {0600, 0400}) {
    REQUIRE(::chmod(path.c_str(), good) == 0);
    std::vector<std::string> errors;
    CHECK(TokenStore::load(path, &store, &errors));
    CHECK(store.size() == 1);
  }
}

namespace {

// Rules that show what the engine was told about the caller.
const char* kGroupRules = R"CLP(
(defrule ops-may-reply
  (proposal (id ?id) (target reply) (groups $? "ops" $?))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule ops-may-reply) (reason "ops"))))
(defrule claimed-group
  (proposal (id ?id) (groups $? "admins" $?))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule claimed-group) (reason "claimed"))))
(defrule claimed-principal
  (proposal (id ?id) (principal "mallory"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule claimed-principal) (reason "claimed"))))
)CLP";

}  // namespace

TEST_CASE("rules see the token's groups and principal, never the client's claims",
          "[server][tokens][groups]") {
  TempDir dir;
  Config config = test_config(dir);
  dir.write("rules/policy.clp", kGroupRules);
  Tokens t;
  dir.write("tokens",
            t.file_text() + "agent carol " + token_hash_text("wdn_carol") + " groups=ops,dev\n");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string claims = R"({"target":"reply","payload":{"text":"x"},)"
                             R"("context":{"principal":"mallory","groups":["admins","ops"]}})";
  std::string error;

  Client carol;
  REQUIRE(carol.connect(d.address(), 5000ms, &error));
  REQUIRE(carol.authenticate("wdn_carol", 5000ms, &error));
  REQUIRE(carol.send_message(decide_request("1", claims), &error));
  std::string reply = read_or_fail(carol);
  INFO(reply);
  auto doc = parse(reply);
  const auto& decision = doc["payload"]["decision"];
  CHECK(std::string(decision["outcome"].GetString()) == "approve");
  REQUIRE(decision["rules"].Size() == 1);
  CHECK(std::string(decision["rules"][0]["rule"].GetString()) == "ops-may-reply");
  CHECK(std::string(decision["action"]["context"]["principal"].GetString()) == "carol");

  // alice has no groups: a group she claims in the proposal grants nothing.
  Client alice;
  connect_agent(alice, d);
  REQUIRE(alice.send_message(decide_request("2", claims), &error));
  reply = read_or_fail(alice);
  auto doc2 = parse(reply);
  CHECK(std::string(doc2["payload"]["decision"]["outcome"].GetString()) == "approval-required");
  CHECK(doc2["payload"]["decision"]["rules"].Size() == 0);
}

TEST_CASE("auth replies name the principal's groups", "[server][tokens][groups]") {
  TempDir dir;
  Config config = test_config(dir);
  dir.write("tokens",
            Tokens{}.file_text() + "agent carol " + token_hash_text("wdn_carol") + " groups=ops\n");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client c;
  std::string error;
  REQUIRE(c.connect(d.address(), 5000ms, &error));
  REQUIRE(c.send_message(make_request("a", "auth", "\"token\":\"wdn_carol\""), &error));
  auto doc = parse(read_or_fail(c));
  REQUIRE(doc["payload"]["groups"].IsArray());
  REQUIRE(doc["payload"]["groups"].Size() == 1);
  CHECK(std::string(doc["payload"]["groups"][0].GetString()) == "ops");
}

TEST_CASE("a reload that changes a principal's groups ends its live sessions",
          "[server][tokens][groups]") {
  TempDir dir;
  Config config = test_config(dir);
  const std::string base = Tokens{}.file_text();
  dir.write("tokens", base + "agent carol " + token_hash_text("wdn_carol") + " groups=ops\n");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string error;
  Client carol, admin;
  REQUIRE(carol.connect(d.address(), 5000ms, &error));
  REQUIRE(carol.authenticate("wdn_carol", 5000ms, &error));
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));

  // Same token, fewer groups: the session must not keep deciding as a member of ops.
  dir.write("tokens", base + "agent carol " + token_hash_text("wdn_carol") + " groups=dev\n");
  REQUIRE(admin.send_message(make_request("r", "reload"), &error));
  REQUIRE(error_code(read_or_fail(admin, 20000ms)) == "");
  carol.send_message(decide_request("1", kReplyProposal), &error);
  CHECK(error_code(read_or_fail(carol)) == err::kAuthRevoked);
}
