// Through the real `warden serve`: a submit that names no session still has session memory
// for its whole run (a private session id of its own); the rules see the real depth and
// model attempt of every proposal the pipeline decides; a `decide` envelope's depth reaches
// the rules, so the shipped malformed-depth rule fires.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <sstream>

#include "submit_daemon.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

std::string depth_member_of(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

struct DepthRun {
  std::vector<std::string> events;  // event payloads, in order
  std::string status;
  std::string dump() const {
    std::string out;
    for (const auto& e : events) out += e + "\n";
    return out + "status " + status;
  }
  std::vector<rapidjson::Document> decisions() const {
    std::vector<rapidjson::Document> out;
    for (const auto& e : events) {
      auto doc = parse(e);
      if (depth_member_of(doc, "event") == "decision") out.push_back(std::move(doc));
    }
    return out;
  }
};

DepthRun submit(const std::string& address, const std::string& fields) {
  Client client;
  std::string error;
  REQUIRE(client.connect(address, 5000ms, &error));
  REQUIRE(client.authenticate(Tokens{}.agent, 5000ms, &error));
  REQUIRE(client.send_message(make_request("run", "submit", fields), &error));
  DepthRun out;
  for (;;) {
    std::string message = read_or_fail(client, 60000ms);
    auto doc = parse(message);
    INFO(message);
    REQUIRE(doc.IsObject());
    if (depth_member_of(doc, "type") == "event") {
      out.events.push_back(to_json_text(doc["payload"]));
      continue;
    }
    REQUIRE(error_code(message) == "");
    out.status = depth_member_of(doc["payload"], "status");
    return out;
  }
}

std::string depth_read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string depth_script_provider(const std::string& path) {
  return "[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
         json_string(path) + "\n";
}

std::string file_write_proposal(const std::string& path, const std::string& content) {
  return "{\"target\":\"file\",\"action\":\"write\",\"payload\":{\"path\":" + json_string(path) +
         ",\"content\":" + json_string(content) + "},\"explanation\":\"needed for the task\"}";
}

// The rules each decision event names, "rule:reason" joined by "|".
std::string rules_of(const rapidjson::Value& decision) {
  std::string out;
  for (const auto& r : decision["rules"].GetArray())
    out +=
        (out.empty() ? "" : "|") + depth_member_of(r, "rule") + ":" + depth_member_of(r, "reason");
  return out;
}

}  // namespace

TEST_CASE("submit without a session: the run has session memory of its own",
          "[server][submit][session]") {
  TempDir dir;
  // File writes and bash are approved; running a file this session wrote is refused.
  dir.write("rules/effects.toml", depth_read_file(WARDEN_SOURCE_DIR "/rules/effects.toml"));
  dir.write("rules/session.clp", R"CLP(
(defrule writes-ok
  (proposal (id ?id) (target file) (action write))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule writes-ok) (reason "fine"))))
(defrule bash-ok
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "bash"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule bash-ok) (reason "fine"))))
(defrule runs-what-this-session-wrote
  (effect (proposal ?id) (kind exec) (object path) (target ?t))
  (history (proposal ?id) (kind write) (object path) (target ?t))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule runs-what-this-session-wrote)
                    (reason (str-cat "runs " ?t ", which this session wrote")))))
)CLP");
  // Asked to write one, the model writes build.sh; then (or when only asked to run it) it
  // runs build.sh; then it answers.
  std::string script = dir.write(
      "model.jsonl", script_line(file_write_proposal("build.sh", "echo built > built.txt\n"),
                                 "\"match\":\"write a build script\"") +
                         script_line(shell_proposal("bash build.sh")) +
                         script_line(reply_proposal("done")));
  SubmitDaemon daemon(dir, depth_script_provider(script));
  INFO(daemon.err());
  REQUIRE(daemon.serving());

  // No "session" in the request.
  DepthRun run = submit(daemon.address(), "\"text\":\"write a build script and run it\"");
  INFO(run.dump());
  auto decisions = run.decisions();
  REQUIRE(decisions.size() >= 3);
  // The write was approved and done; running it in the same run is refused, naming the rule.
  CHECK(depth_member_of(decisions[0], "outcome") == "approve");
  CHECK(fs::exists(fs::path(daemon.workspace()) / "build.sh"));
  bool refused = false;
  std::set<std::string> sessions;
  for (const auto& d : decisions) {
    const std::string command = depth_member_of(d["action"]["payload"], "command");
    if (command == "bash build.sh") {
      CHECK(depth_member_of(d, "outcome") == "reject");
      CHECK(rules_of(d).find("runs-what-this-session-wrote") != std::string::npos);
      refused = true;
    }
    sessions.insert(depth_member_of(d["action"]["context"], "session"));
  }
  CHECK(refused);
  CHECK_FALSE(fs::exists(fs::path(daemon.workspace()) / "built.txt"));
  // One session for the whole run: a private id ("run-" and 32 hex digits).
  REQUIRE(sessions.size() == 1);
  const std::string session = *sessions.begin();
  CHECK(session.size() == 36);
  CHECK(session.rfind("run-", 0) == 0);
  CHECK(session.find_first_not_of("0123456789abcdef", 4) == std::string::npos);

  // The next run without a session gets another id, and nothing of the first run is its
  // history: running the script it did not write is approved, and runs.
  DepthRun second = submit(daemon.address(), "\"text\":\"run the build script\"");
  INFO(second.dump());
  auto later = second.decisions();
  REQUIRE_FALSE(later.empty());
  CHECK(depth_member_of(later[0]["action"]["payload"], "command") == "bash build.sh");
  CHECK(depth_member_of(later[0], "outcome") == "approve");
  const std::string other = depth_member_of(later[0]["action"]["context"], "session");
  CHECK(other.rfind("run-", 0) == 0);
  CHECK(other != session);
  CHECK(second.status == "done");
  CHECK(fs::exists(fs::path(daemon.workspace()) / "built.txt"));
}

TEST_CASE("submit: the rules see each proposal's real depth and model attempt",
          "[server][submit][depth]") {
  TempDir dir;
  dir.write("rules/where.clp", R"CLP(
(defrule where
  (proposal (id ?id) (target shell) (depth ?d) (attempt ?a))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule where)
                    (reason (str-cat "depth " ?d " attempt " ?a)))))
(defrule no-shell-at-depth-2
  (proposal (id ?id) (target shell) (depth ?d&:(>= ?d 2)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell-at-depth-2) (reason "too deep"))))
)CLP");
  // rm refused (attempt 1), ls run (attempt 2); fed back at depth 1: ls again (attempt 1);
  // at depth 2 the shell is refused three times; nothing deeper runs.
  std::string script = dir.write(
      "model.jsonl", script_line(shell_proposal("rm -rf ~")) + script_line(shell_proposal("ls")) +
                         script_line(shell_proposal("ls")) +
                         script_line(shell_proposal("ls"), "\"repeat\":true"));
  SubmitDaemon daemon(dir, depth_script_provider(script));
  INFO(daemon.err());
  REQUIRE(daemon.serving());
  DepthRun run = submit(daemon.address(), "\"text\":\"list\",\"session\":\"s1\"");
  INFO(run.dump());
  CHECK(run.status == "rejected");
  std::vector<std::string> seen;
  for (const auto& d : run.decisions()) {
    const std::string rules = rules_of(d);
    const auto at = rules.find("where:");
    REQUIRE(at != std::string::npos);
    seen.push_back(depth_member_of(d, "stage") + " " +
                   rules.substr(at + 6, rules.find('|', at) - at - 6) + " " +
                   depth_member_of(d, "outcome"));
  }
  CHECK(seen == std::vector<std::string>{
                    "reason depth 0 attempt 1 reject",   // rm -rf ~
                    "reason depth 0 attempt 2 approve",  // ls
                    "last-mile depth 0 attempt 2 approve",
                    "reason depth 1 attempt 1 approve",  // ls, after the output
                    "last-mile depth 1 attempt 1 approve",
                    "reason depth 2 attempt 1 reject",  // refused for its depth
                    "reason depth 2 attempt 2 reject",
                    "reason depth 2 attempt 3 reject",
                });
}

TEST_CASE("decide: the envelope's depth reaches the rules; the shipped malformed-depth fires",
          "[server][decide][depth]") {
  TempDir dir;
  Config config = test_config(dir);
  dir.write("rules/policy.clp", depth_read_file(WARDEN_SOURCE_DIR "/rules/malformed.clp") + R"CLP(
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP");
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client client;
  connect_agent(client, d);
  auto decide_at = [&](const std::string& depth_json) {
    std::string message =
        "{\"type\":\"request\",\"id\":\"d\"" +
        (depth_json.empty() ? std::string() : ",\"depth\":" + depth_json) +
        ",\"payload\":{\"action\":\"decide\",\"proposal\":" + std::string(kReplyProposal) + "}}";
    std::string error;
    REQUIRE(client.send_message(message, &error));
    return read_or_fail(client);
  };
  auto outcome_rules = [](const std::string& reply) {
    auto doc = parse(reply);
    const auto& decision = doc["payload"]["decision"];
    return depth_member_of(decision, "outcome") + " " + rules_of(decision);
  };
  CHECK(outcome_rules(decide_at("")) == "approve replies-ok:fine");
  CHECK(outcome_rules(decide_at("10")) == "approve replies-ok:fine");
  // Both rules fire; the decision lists them in the order they fired, which is the engine's.
  const std::string deep = outcome_rules(decide_at("11"));
  CHECK(deep.rfind("reject ", 0) == 0);
  CHECK(deep.find("malformed-depth:proposal depth 11 exceeds the limit of 10") !=
        std::string::npos);
  CHECK(deep.find("replies-ok:fine") != std::string::npos);
  // Not a depth: refused with its code.
  for (const char* bad : {"-1", "\"11\"", "1.5", "1000001", "null"}) {
    INFO(bad);
    std::string reply = decide_at(bad);
    CHECK(error_code(reply) == "E_BAD_REQUEST");
    CHECK(reply.find("\\\"depth\\\" must be an integer from 0 to 1000000") != std::string::npos);
  }
}
