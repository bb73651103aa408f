// The one table of stable error codes: well formed, and holding every code the engine and
// the daemon report (the server tests' error_code() also checks each code it reads).
#include "server/errors.h"

#include <catch2/catch.hpp>
#include <set>

#include "engine/engine.h"
#include "protocol/message.h"
#include "server_fixture.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

TEST_CASE("the code table has unique codes, each with a meaning", "[server][errors]") {
  std::set<std::string> seen;
  for (const code::Entry& e : code::kTable) {
    std::string c = e.code;
    INFO(c);
    CHECK(c.rfind("E_", 0) == 0);
    CHECK(seen.insert(c).second);
    CHECK(std::string(e.meaning).size() > 10);
  }
  CHECK_FALSE(code::is_known("E_NO_SUCH_CODE"));
  CHECK_FALSE(code::is_known(""));
}

TEST_CASE("fail-closed decisions name codes from the table", "[server][errors]") {
  auto loaded = Policy::compile({{"policy.clp", R"CLP(
(defrule chain (proposal (id ?id) (target tool) (action chain))
  => (assert (decision (proposal ?id) (outcome approve) (rule chain) (reason "start"))))
(defrule grow (decision (proposal ?id) (rule chain|grow) (reason ?r&:(< (str-length ?r) 100000)))
  => (assert (decision (proposal ?id) (outcome approve) (rule grow) (reason (str-cat ?r "x")))))
(defrule spin (proposal (id ?id) (target tool) (action spin))
  => (while TRUE do (+ 1 1)))
(defrule divide (proposal (id ?id) (target tool) (action divide))
  => (assert (decision (proposal ?id) (outcome approve) (rule divide) (reason (str-cat (/ 1 (- 1 1)))))))
)CLP"}});
  REQUIRE(loaded.policy);
  EngineOptions options;
  options.run_limit = 50;
  options.deadline = std::chrono::milliseconds(50);
  Engine engine(loaded.policy, options);
  const std::pair<const char*, const char*> cases[] = {
      {R"({"target":"tool","action":"chain"})", code::kRunLimit},
      {R"({"target":"tool","action":"spin"})", code::kDeadline},
      {R"({"target":"tool","action":"divide"})", code::kRuntime},
  };
  for (const auto& [proposal, expected] : cases) {
    DecideResult r = engine.decide(proposal);
    INFO(proposal << " -> " << r.decision.error_code << ": " << r.decision.reason);
    REQUIRE(r.ok);
    CHECK(r.decision.outcome == Outcome::Reject);
    CHECK(r.decision.error_code == expected);
    CHECK(code::is_known(r.decision.error_code));
  }
  DecideResult bad = engine.decide("{");
  REQUIRE_FALSE(bad.ok);
  CHECK(bad.error.code == code::kInputJson);
  CHECK(code::is_known(bad.error.code));
}

TEST_CASE("every error reply has the one shape", "[server][errors]") {
  for (const code::Entry& e : code::kTable) {
    std::string reply = error_response("\"x\"", "decide", {e.code, e.meaning});
    CHECK(error_code(reply) == e.code);
    auto doc = parse(reply);
    const auto& p = doc["payload"];
    CHECK(std::string(p["action"].GetString()) == "decide");
    CHECK_FALSE(p["ok"].GetBool());
    CHECK(p["error"]["diagnostics"].IsArray());
    CHECK(p["error"]["message"].IsString());
  }
}
