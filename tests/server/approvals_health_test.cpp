// Operators are told when the approvals store fails: health-check says degraded (not
// serving), status says failing with the cause, the daemon's log says so once, and all of it
// clears when the store works again. A real daemon with its real SQLite store, broken under it.

#include <catch2/catch.hpp>

#include "server/errors.h"
#include "server_fixture.h"
#include "sqlite_exec.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

rapidjson::Document health_ask(Client& client, const std::string& action) {
  std::string error;
  REQUIRE(client.send_message(make_request("q", action), &error));
  return parse(read_or_fail(client, 20000ms));
}

// A proposal no rule of kRulesA decides: the default outcome, approval-required, which
// needs the store.
const char* kNeedsApproval = R"({"target":"deploy","action":"run","payload":{"env":"prod"}})";

}  // namespace

TEST_CASE("health-check and status report a failing approvals store",
          "[server][approvals][health]") {
  TempDir dir;
  Config config = test_config(dir);
  auto log_text = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(log_text);
  RunningDaemon d(config, options);
  REQUIRE(d.ok());
  const std::string db = (dir.path() / "state/state.db").string();
  Client admin, agent;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  connect_agent(agent, d);

  auto health = health_ask(admin, "health-check");
  CHECK(std::string(health["payload"]["status"].GetString()) == "serving");
  auto status = health_ask(admin, "status");
  CHECK(status["payload"]["approvals"]["ok"].GetBool());
  CHECK(std::string(status["payload"]["approvals"]["store"].GetString()) == "sqlite");

  // The store's table goes away under the daemon: every call fails, and the decision that
  // needed it is answered with the store's error.
  sqlite_exec(db, "ALTER TABLE approvals RENAME TO approvals_moved");
  REQUIRE(agent.send_message(decide_request("1", kNeedsApproval), &error));
  std::string reply = read_or_fail(agent, 20000ms);
  INFO(reply);
  CHECK(error_code(reply) == err::kApprovalStore);
  REQUIRE(eventually([&] {
    return std::string(health_ask(admin, "health-check")["payload"]["status"].GetString()) ==
           "degraded";
  }));
  health = health_ask(admin, "health-check");
  CHECK(std::string(health["payload"]["approvals"].GetString()).rfind("failing: ", 0) == 0);
  CHECK(std::string(health["payload"]["approvals"].GetString()).find("approvals") !=
        std::string::npos);
  status = health_ask(admin, "status");
  const auto& approvals = status["payload"]["approvals"];
  CHECK_FALSE(approvals["ok"].GetBool());
  CHECK(approvals["failures"].GetUint64() >= 1);
  CHECK(std::string(approvals["error"].GetString()).find("no such table") != std::string::npos);

  // Back: the next call succeeds and the state clears. Each decision is answered (a read
  // that gets no reply fails the wait).
  sqlite_exec(db, "ALTER TABLE approvals_moved RENAME TO approvals");
  REQUIRE(eventually([&] {
    std::string e;
    agent.send_message(decide_request("2", kNeedsApproval), &e);
    if (reply_code(read_or_fail(agent, 20000ms)) == "<not json>") return false;
    return std::string(health_ask(admin, "health-check")["payload"]["status"].GetString()) ==
           "serving";
  }));
  CHECK(health_ask(admin, "status")["payload"]["approvals"]["ok"].GetBool());
  d.stop();
  const std::string logged = log_text->str();
  INFO(logged);
  CHECK(logged.find("error approvals store: failing: ") != std::string::npos);
  CHECK(logged.find("approvals store: reachable again") != std::string::npos);
}
