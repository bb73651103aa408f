// Reloads: by request, by SIGHUP-like trigger, by watched files; failures keep the old
// rules; decisions under load never fail while rules swap.
#include <atomic>
#include <catch2/catch.hpp>
#include <set>

#include "server/errors.h"
#include "server_fixture.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

std::string digest_of_decision(const std::string& reply) {
  auto doc = parse(reply);
  return doc["payload"]["decision"]["rules_digest"].GetString();
}

std::string reload_daemon(Client& admin, const std::string& id) {
  std::string error;
  REQUIRE(admin.send_message(make_request(id, "reload"), &error));
  return read_or_fail(admin, 20000ms);
}

std::string reload_status_digest(Client& admin) {
  std::string error;
  REQUIRE(admin.send_message(make_request("s", "status"), &error));
  return parse(read_or_fail(admin))["payload"]["rules_digest"].GetString();
}

}  // namespace

TEST_CASE("reload swaps the rules and decisions name the new digest", "[server][reload]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client admin, agent;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(agent.connect(d.address(), 5000ms, &error));
  REQUIRE(agent.authenticate(Tokens{}.agent, 5000ms, &error));

  REQUIRE(agent.send_message(decide_request("1", kShellProposal), &error));
  std::string before = digest_of_decision(read_or_fail(agent));
  CHECK(reload_status_digest(admin) == before);

  dir.write("rules/policy.clp", kRulesB);
  std::string reply = reload_daemon(admin, "r1");
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto doc = parse(reply);
  std::string after = doc["payload"]["rules_digest"].GetString();
  CHECK(after != before);
  CHECK(std::string(doc["payload"]["previous_digest"].GetString()) == before);
  CHECK(reply_id(reply) == "r1");

  REQUIRE(agent.send_message(decide_request("2", kShellProposal), &error));
  std::string decided = read_or_fail(agent);
  CHECK(digest_of_decision(decided) == after);
  CHECK(std::string(parse(decided)["payload"]["decision"]["rules"][0]["rule"].GetString()) ==
        "no-shell-b");
}

TEST_CASE("a failed reload keeps the old rules and reports every diagnostic", "[server][reload]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client admin;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  std::string before = reload_status_digest(admin);

  dir.write("rules/zz_broken.clp", kBrokenRules);
  std::string reply = reload_daemon(admin, "bad");
  INFO(reply);
  CHECK(error_code(reply) == err::kReloadFailed);
  auto doc = parse(reply);
  const auto& e = doc["payload"]["error"];
  REQUIRE(e["diagnostics"].IsArray());
  REQUIRE(e["diagnostics"].Size() >= 1);
  CHECK(std::string(e["diagnostics"][0]["file"].GetString()).find("zz_broken.clp") !=
        std::string::npos);
  CHECK(std::string(e["rules_digest"].GetString()) == before);
  CHECK(reload_status_digest(admin) == before);

  // A bad token file also fails the reload as a whole.
  std::filesystem::remove(dir.path() / "rules/zz_broken.clp");
  dir.write("tokens", "agent alice sha256:nothex\n");
  CHECK(error_code(reload_daemon(admin, "bad-tokens")) == err::kReloadFailed);
  CHECK(reload_status_digest(admin) == before);
}

TEST_CASE("reload under load: no request fails and the digest changes", "[server][reload]") {
  TempDir dir;
  Config config = test_config(dir);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string error;
  Client admin;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  std::string digest_a = reload_status_digest(admin);

  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::atomic<int> decided{0};
  std::vector<std::set<std::string>> digests(4);
  std::vector<std::thread> agents;
  for (int a = 0; a < 4; ++a) {
    agents.emplace_back([&, a] {
      Client c;
      std::string e;
      if (!c.connect(d.address(), 5000ms, &e) || !c.authenticate(Tokens{}.agent, 5000ms, &e)) {
        ++failures;
        return;
      }
      int i = 0;
      while (!stop) {
        // Keep 8 requests in flight.
        std::string burst;
        for (int k = 0; k < 8; ++k)
          burst += encode_frame(decide_request(std::to_string(i + k), kShellProposal));
        if (!c.send_bytes(burst, &e)) {
          ++failures;
          return;
        }
        for (int k = 0; k < 8; ++k) {
          std::string reply = read_or_fail(c);
          if (reply_code(reply) != "" || reply_id(reply) != std::to_string(i + k)) {
            ++failures;
            return;
          }
          digests[a].insert(digest_of_decision(reply));
          ++decided;
        }
        i += 8;
      }
    });
  }
  REQUIRE(eventually([&] { return decided >= 200 || failures > 0; }));
  for (int round = 0; round < 6; ++round) {
    dir.write("rules/policy.clp", round % 2 == 0 ? kRulesB : kRulesA);
    CHECK(error_code(reload_daemon(admin, "r" + std::to_string(round))) == "");
  }
  int at_end = decided;
  CHECK(eventually([&] { return decided >= at_end + 200 || failures > 0; }));
  stop = true;
  for (auto& t : agents) t.join();
  CHECK(failures == 0);
  std::set<std::string> all;
  for (auto& s : digests) all.insert(s.begin(), s.end());
  CHECK(all.size() == 2);
  CHECK(all.count(digest_a) == 1);
}

TEST_CASE("request_reload (the SIGHUP path) swaps the rules", "[server][reload]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  std::string before = d.daemon().context().policy.get()->digest();
  dir.write("rules/policy.clp", kRulesB);
  d.daemon().request_reload("SIGHUP");
  CHECK(eventually([&] { return d.daemon().context().policy.get()->digest() != before; }));
}

TEST_CASE("watched rule files reload on change", "[server][reload]") {
  TempDir dir;
  Config config = test_config(dir);
  config.watch_rules = true;
  config.watch_interval = std::chrono::milliseconds(100);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  std::string before = d.daemon().context().policy.get()->digest();
  dir.write("rules/policy.clp", kRulesB);
  // The rules are swapped just before the reload is counted: wait for both.
  CHECK(eventually([&] {
    return d.daemon().context().policy.get()->digest() != before &&
           Stats::get(d.daemon().context().stats.reloads) >= 1;
  }));
  CHECK(Stats::get(d.daemon().context().stats.reloads) == 1);
}

TEST_CASE("watched effects and path class tables reload on change", "[server][reload]") {
  TempDir dir;
  Config config = test_config(dir);
  config.watch_rules = true;
  config.watch_interval = std::chrono::milliseconds(100);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string before = d.daemon().context().policy.get()->digest();
  // A table is part of the rule set: adding or editing one swaps the rules like a .clp.
  dir.write("rules/effects.toml", "[program.cat]\noperands = [\"read...\"]\n");
  CHECK(eventually([&] {
    return d.daemon().context().policy.get()->digest() != before &&
           Stats::get(d.daemon().context().stats.reloads) >= 1;
  }));
  const std::string with_effects = d.daemon().context().policy.get()->digest();
  dir.write("rules/paths.toml", "[[class]]\nname = \"credential\"\npatterns = [\"**/.env\"]\n");
  CHECK(eventually([&] {
    return d.daemon().context().policy.get()->digest() != with_effects &&
           Stats::get(d.daemon().context().stats.reloads) >= 2;
  }));
}

namespace {

// Approves a reply whose text is on the data list "words"; others fall to the default.
const char* kDataRules = R"CLP(
(defrule listed-word
  (param (proposal ?id) (key "payload.text") (value ?t&:(data-member "words" ?t)))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule listed-word))))
)CLP";

std::string reload_outcome_of(Client& agent, const std::string& id, const std::string& text) {
  std::string error;
  REQUIRE(agent.send_message(
      decide_request(id, R"({"target":"reply","payload":{"text":")" + text + "\"}}"), &error));
  auto doc = parse(read_or_fail(agent));
  return doc["payload"]["decision"]["outcome"].GetString();
}

}  // namespace

TEST_CASE(
    "data files reload with the rules: the new list decides, under a new digest; a bad one keeps the old",
    "[server][reload][data]") {
  TempDir dir;
  Config config = test_config(dir);
  dir.write("rules/policy.clp", kDataRules);
  dir.write("rules/words.data.toml", "words = [\"hi\"]\n");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client admin, agent;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(agent.connect(d.address(), 5000ms, &error));
  REQUIRE(agent.authenticate(Tokens{}.agent, 5000ms, &error));
  CHECK(reload_outcome_of(agent, "1", "hi") == "approve");
  CHECK(reload_outcome_of(agent, "2", "hello") == "approval-required");
  const std::string before = reload_status_digest(admin);

  // The SIGHUP path: only the data changed.
  dir.write("rules/words.data.toml", "words = [\"hello\"]\n");
  d.daemon().request_reload("SIGHUP");
  REQUIRE(eventually([&] { return d.daemon().context().policy.get()->digest() != before; }));
  CHECK(reload_outcome_of(agent, "3", "hello") == "approve");
  CHECK(reload_outcome_of(agent, "4", "hi") == "approval-required");
  const std::string after = reload_status_digest(admin);
  CHECK(after != before);

  // A data file with an error fails the reload with its code and line; the old data stays.
  dir.write("rules/words.data.toml", "words = [\"hello\",\n  3]\n");
  std::string reply = reload_daemon(admin, "bad-data");
  INFO(reply);
  CHECK(error_code(reply) == err::kReloadFailed);
  auto doc = parse(reply);
  const auto& diagnostics = doc["payload"]["error"]["diagnostics"];
  REQUIRE(diagnostics.IsArray());
  REQUIRE(diagnostics.Size() >= 1);
  CHECK(std::string(diagnostics[0]["code"].GetString()) == "E_DATA");
  CHECK(diagnostics[0]["line"].GetInt() == 2);
  CHECK(reload_status_digest(admin) == after);
  CHECK(reload_outcome_of(agent, "5", "hello") == "approve");
}

TEST_CASE("watched data files reload on change", "[server][reload][data]") {
  TempDir dir;
  Config config = test_config(dir);
  config.watch_rules = true;
  config.watch_interval = std::chrono::milliseconds(100);
  dir.write("rules/policy.clp", kDataRules);
  dir.write("rules/words.data.json", R"({"words": ["hi"]})");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string before = d.daemon().context().policy.get()->digest();
  dir.write("rules/words.data.json", R"({"words": ["hi", "hello"]})");
  CHECK(eventually([&] {
    return d.daemon().context().policy.get()->digest() != before &&
           Stats::get(d.daemon().context().stats.reloads) >= 1;
  }));
}
