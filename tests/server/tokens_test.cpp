// Token file parsing, constant-time authentication and the rights table.
#include "server/tokens.h"

#include <catch2/catch.hpp>

#include "server/roles.h"

using namespace warden::server;

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
