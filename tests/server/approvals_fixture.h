// Daemons with approvals for the approval tests: rules that ask for approval (one approver,
// two approvers, a short expiry), tokens for two agents and three approvers (one of them the
// same principal as an agent: self-approval), a workspace the shell actuator runs in, and a
// connected client per party. The store is SQLite in the state directory unless the test
// gives a PostgreSQL conninfo.
#pragma once

#include <catch2/catch.hpp>
#include <string>

#include "engine/json_writer.h"
#include "server_fixture.h"

namespace warden::server::testing {

// touch: approval by one person; chmod: by two distinct people; mkdir: the approval expires
// after 1 s; ls: approved; rm: refused; replies approved.
inline const char* kApprovalRules = R"CLP(
(defrule touch-needs-approval
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "touch"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule touch-needs-approval)
                    (reason "touch creates files"))))
(defrule chmod-needs-two
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "chmod"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule chmod-needs-two)
                    (reason "chmod changes permissions")))
  (assert (approval (proposal ?id) (rule chmod-needs-two) (approvers 2))))
(defrule mkdir-quick
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "mkdir"))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule mkdir-quick)
                    (reason "mkdir needs a quick yes")))
  (assert (approval (proposal ?id) (rule mkdir-quick) (expires-in 1))))
(defrule ls-ok
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "ls"))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule ls-ok) (reason "listing is harmless"))))
(defrule no-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-rm) (reason "rm deletes files"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

// The same, except that touch is now refused.
inline const char* kTouchRefusedRules = R"CLP(
(defrule touch-refused
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "touch"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule touch-refused)
                    (reason "touch is no longer allowed"))))
)CLP";

struct ApprovalTokens {
  std::string alice = "wdn_test_alice_agent";              // agent alice
  std::string dave = "wdn_test_dave_agent";                // agent dave
  std::string bob = "wdn_test_bob_approver";               // approver bob
  std::string carol = "wdn_test_carol_approver";           // approver carol
  std::string alice_approver = "wdn_test_alice_approver";  // approver alice (self-approval)
  std::string admin = "wdn_test_root_admin";
  std::string file_text() const {
    return "agent alice " + token_hash_text(alice) + "\nagent dave " + token_hash_text(dave) +
           "\napprover bob " + token_hash_text(bob) + "\napprover carol " + token_hash_text(carol) +
           "\napprover alice " + token_hash_text(alice_approver) + "\nadmin root " +
           token_hash_text(admin) + "\n";
  }
};

// A daemon config over `dir` (rules in dir/rules, state in dir/STATE). conninfo: PostgreSQL
// store; empty: SQLite.
inline Config approvals_config(const TempDir& dir, const std::string& state = "state",
                               const std::string& conninfo = "") {
  Config c = test_config(dir);
  dir.write("rules/policy.clp", kApprovalRules);
  c.tokens = dir.write("tokens", ApprovalTokens{}.file_text(), 0600);
  c.state_dir = (dir.path() / state).string();
  c.workspace_root = (dir.path() / "workspace").string();
  c.home = (dir.path() / "home").string();
  fs::create_directories(c.workspace_root);
  fs::create_directories(c.home);
  c.limits.idle_timeout = 60000ms;
  c.limits.deadline = 2000ms;
  c.audit.daemon_id = state;
  if (!conninfo.empty()) {
    c.approvals.store = "postgres";
    c.approvals.conninfo = conninfo;
  }
  return c;
}

struct Party {
  Client client;
  Party(const std::string& address, const std::string& token) {
    std::string error;
    REQUIRE(client.connect(address, 5000ms, &error));
    INFO(error);
    REQUIRE(client.authenticate(token, 5000ms, &error));
  }
  std::string call(const std::string& message, std::chrono::milliseconds timeout = 20000ms) {
    std::string error;
    REQUIRE(client.send_message(message, &error));
    return read_or_fail(client, timeout);
  }
  void send(const std::string& message) {
    std::string error;
    REQUIRE(client.send_message(message, &error));
  }
  std::string read(std::chrono::milliseconds timeout = 20000ms) {
    return read_or_fail(client, timeout);
  }
};

// One request on a connection of its own, for threads racing each other: no Catch assertion
// (Catch is not thread-safe); a failure to connect, authenticate or send is the reply
// "<unconnected: …>", which has no error code of the protocol's.
inline std::string call_on_thread(const std::string& address, const std::string& token,
                                  const std::string& message) {
  Client client;
  std::string error;
  if (!client.connect(address, 5000ms, &error) || !client.authenticate(token, 5000ms, &error) ||
      !client.send_message(message, &error)) {
    return "<unconnected: " + error + ">";
  }
  return read_or_fail(client, 20000ms);
}

inline std::string shell_action(const std::string& command, const std::string& session = "s1",
                                const std::string& explanation = "needed") {
  return "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":" +
         json_string(command) + "},\"explanation\":" + json_string(explanation) +
         ",\"context\":{\"session\":" + json_string(session) + ",\"agent\":\"coder\"}}";
}

inline std::string str(const rapidjson::Value& v, const char* key) {
  return v.IsObject() && v.HasMember(key) && v[key].IsString() ? v[key].GetString() : "";
}

// decide → the reply's payload as a document.
inline rapidjson::Document payload_of(const std::string& reply) {
  rapidjson::Document doc = parse(reply);
  rapidjson::Document out;
  if (doc.IsObject() && doc.HasMember("payload")) out.CopyFrom(doc["payload"], out.GetAllocator());
  return out;
}

// An approval as its requester learns of it (the "approval" member of a decide reply or an
// approval-required event): its id, the digest of its action, and the requester's token.
struct ApprovalRef {
  std::string id, token, hash;
};
inline ApprovalRef approval_ref(const rapidjson::Value& approval) {
  return ApprovalRef{str(approval, "id"), str(approval, "token"), str(approval, "action_hash")};
}

// agent decides `proposal`: the decision's outcome ("<none>" on an error reply).
inline std::string outcome_of_decide(Party& agent, const std::string& proposal) {
  auto p = payload_of(agent.call(decide_request("o", proposal)));
  return p.IsObject() && p.HasMember("decision") ? str(p["decision"], "outcome") : "<none>";
}

// An approver's approve of `a`, having been shown its action (its digest).
inline std::string approve_request(const ApprovalRef& a, const std::string& extra = "") {
  return make_request("a", "approve",
                      "\"id\":" + json_string(a.id) + ",\"digest\":" + json_string(a.hash) + extra);
}

// approvals_config whose `script` model proposes running `command`, every turn.
inline Config scripted_config(const TempDir& dir, const std::string& command) {
  Config c = approvals_config(dir);
  const std::string proposal =
      "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":" + json_string(command) +
      "},\"explanation\":\"the user asked\"}";
  const std::string script =
      dir.write("model.jsonl", "{\"text\":" + json_string(proposal) + ",\"repeat\":true}\n");
  ConfigErrors errors =
      parse_config("[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\nscript = " +
                       json_string(script) + "\n",
                   dir.str(), &c);
  REQUIRE(errors.empty());
  return c;
}

// The approval a submit's run stops at (its approval-required event's `approval`). `fields`
// follow the submit's text and session (e.g. ",\"wait_s\":60").
inline rapidjson::Document submit_until_approval(Party& agent, const std::string& session = "s1",
                                                 const std::string& fields = "",
                                                 const std::string& id = "run") {
  agent.send(
      make_request(id, "submit", "\"text\":\"go\",\"session\":" + json_string(session) + fields));
  for (;;) {
    auto doc = parse(agent.read(60000ms));
    INFO(to_json_text(doc));
    REQUIRE(str(doc, "type") == "event");
    if (str(doc["payload"], "event") == "approval-required") {
      rapidjson::Document approval;
      approval.CopyFrom(doc["payload"]["approval"], approval.GetAllocator());
      return approval;
    }
  }
}

}  // namespace warden::server::testing
