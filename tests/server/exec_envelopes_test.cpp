// The decided shell actions `warden exec` may run (server/exec_envelopes.h) and the
// `envelope` reply body (server/exec_wire.h): once, by their principal, within the time to
// live, for the decided command only; the wire form reads back what was written.
#include "server/exec_envelopes.h"

#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include "protocol/json_text.h"
#include "server/exec_wire.h"

using namespace warden;
using namespace warden::server;

namespace {

Decision shell_decision(const std::string& id, Outcome outcome, const std::string& command,
                        const std::string& cwd_member = R"(,"cwd":"sub")") {
  Decision d;
  d.decision_id = id;
  d.outcome = outcome;
  d.action_json = R"({"target":"shell","action":"run","payload":{"command":)" +
                  json_string(command) + cwd_member + "}}";
  EffectRecord e;
  e.kind = "write";
  e.object = "path";
  e.target = "/ws/sub/out.txt";
  e.program = "echo";
  e.path_class = "none";
  e.in_workspace = true;
  e.via = "redirect";
  d.effects.push_back(e);
  return d;
}

}  // namespace

TEST_CASE("exec envelopes: an approved decision runs once, for its principal and command",
          "[server][exec]") {
  ExecEnvelopes store;
  const auto now = ExecEnvelopes::Clock::now();
  store.remember("alice", shell_decision("d1", Outcome::Approve, "echo hi > out.txt"), "/ws",
                 "/home/a", now);
  ExecRecord r;
  const std::string digest = exec_action_digest("echo hi > out.txt");
  CHECK(store.take("bob", "d1", digest, now, &r) == ExecTake::Unknown);
  CHECK(store.take("alice", "d2", digest, now, &r) == ExecTake::Unknown);
  CHECK(store.take("alice", "d1", exec_action_digest("echo hi > out.txt "), now, &r) ==
        ExecTake::Mismatch);
  // A mismatch does not use it up.
  REQUIRE(store.take("alice", "d1", digest, now, &r) == ExecTake::Ok);
  CHECK(r.command == "echo hi > out.txt");
  CHECK(r.cwd == "/ws/sub");
  CHECK(r.decision.effects.size() == 1);
  CHECK(store.take("alice", "d1", digest, now, &r) == ExecTake::Used);
}

TEST_CASE("exec envelopes: rejected, approval-required and expired decisions do not run",
          "[server][exec]") {
  ExecEnvelopes store;
  const auto now = ExecEnvelopes::Clock::now();
  store.remember("alice", shell_decision("r", Outcome::Reject, "x"), "/ws", "/h", now);
  store.remember("alice", shell_decision("a", Outcome::ApprovalRequired, "x"), "/ws", "/h", now);
  Decision failed = shell_decision("f", Outcome::Approve, "x");
  failed.error_code = "E_DEADLINE";  // failed closed: a reject whatever the outcome says
  store.remember("alice", failed, "/ws", "/h", now);
  store.remember("alice", shell_decision("e", Outcome::Approve, "x", ""), "/ws", "/h", now);
  ExecRecord r;
  const std::string digest = exec_action_digest("x");
  CHECK(store.take("alice", "r", digest, now, &r) == ExecTake::NotApproved);
  CHECK(store.take("alice", "a", digest, now, &r) == ExecTake::NotApproved);
  CHECK(store.take("alice", "f", digest, now, &r) == ExecTake::NotApproved);
  CHECK(store.take("alice", "e", digest, now + ExecEnvelopes::kTtl, &r) == ExecTake::Expired);
  // Once past its time it is forgotten altogether.
  store.remember("alice", shell_decision("later", Outcome::Approve, "y"), "/ws", "/h",
                 now + ExecEnvelopes::kTtl + std::chrono::seconds(1));
  CHECK(store.take("alice", "e", digest, now + ExecEnvelopes::kTtl + std::chrono::seconds(1), &r) ==
        ExecTake::Unknown);
}

TEST_CASE("exec envelopes: a person's grant turns the approval-required record into an approve",
          "[server][exec]") {
  ExecEnvelopes store;
  const auto now = ExecEnvelopes::Clock::now();
  store.remember("alice", shell_decision("g", Outcome::ApprovalRequired, "x"), "/ws", "/h", now);
  store.remember("alice", shell_decision("g", Outcome::Approve, "x"), "/ws", "/h", now);
  // Another principal cannot overwrite it, nor can a later reject-to-approve switch.
  store.remember("bob", shell_decision("r", Outcome::Reject, "x"), "/ws", "/h", now);
  store.remember("alice", shell_decision("r", Outcome::Approve, "x"), "/ws", "/h", now);
  ExecRecord r;
  CHECK(store.take("alice", "g", exec_action_digest("x"), now, &r) == ExecTake::Ok);
  CHECK(store.take("bob", "r", exec_action_digest("x"), now, &r) == ExecTake::NotApproved);
}

TEST_CASE("exec envelopes: only shell runs are kept; the store is bounded", "[server][exec]") {
  ExecEnvelopes store;
  const auto now = ExecEnvelopes::Clock::now();
  Decision file;
  file.decision_id = "w";
  file.outcome = Outcome::Approve;
  file.action_json =
      R"({"target":"file","action":"write","payload":{"path":"/ws/a","content":"x"}})";
  store.remember("alice", file, "/ws", "/h", now);
  ExecRecord r;
  CHECK(store.take("alice", "w", exec_action_digest(""), now, &r) == ExecTake::Unknown);
  for (std::size_t i = 0; i <= ExecEnvelopes::kMaxRecords; ++i) {
    store.remember("alice", shell_decision("n" + std::to_string(i), Outcome::Approve, "x"), "/ws",
                   "/h", now);
  }
  CHECK(store.take("alice", "n0", exec_action_digest("x"), now, &r) == ExecTake::Unknown);
  CHECK(store.take("alice", "n1", exec_action_digest("x"), now, &r) == ExecTake::Ok);
}

TEST_CASE("exec wire: the envelope reads back what the daemon wrote", "[server][exec]") {
  ExecEnvelopeWire w;
  w.decision = shell_decision("d1", Outcome::Approve, "echo \"q\" $(x)\n\xc3\xa9");
  Grant g;
  g.rule = "r";
  g.capability = "shell-syntax";
  w.decision.allows.push_back(g);
  w.command = "echo \"q\" $(x)\n\xc3\xa9";
  w.cwd = "/ws/sub";
  w.workspace_root = "/ws";
  w.home = "/home/a";
  w.inputs.workspace = "/ws";
  w.inputs.own_files = {"/etc/warden/tokens", "/var/lib/warden"};
  w.inputs.max_processes = 17;
  const std::string json = "{" + exec_envelope_fields(w) + "}";
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  REQUIRE_FALSE(d.HasParseError());
  ExecEnvelopeWire back;
  std::string error;
  REQUIRE(parse_exec_envelope(d, &back, &error));
  CHECK(back.decision.decision_id == "d1");
  CHECK(back.decision.outcome == Outcome::Approve);
  CHECK(back.command == w.command);
  CHECK(back.cwd == "/ws/sub");
  REQUIRE(back.decision.effects.size() == 1);
  CHECK(back.decision.effects[0].target == "/ws/sub/out.txt");
  CHECK(back.decision.effects[0].in_workspace);
  REQUIRE(back.decision.allows.size() == 1);
  CHECK(back.decision.allows[0].capability == "shell-syntax");
  CHECK(back.inputs.own_files == w.inputs.own_files);
  CHECK(back.inputs.max_processes == 17);

  // Anything missing or mistyped is refused (the exec then runs nothing).
  for (const char* bad : {R"({"envelope":{}})", R"({"envelope":[]})", R"({})"}) {
    rapidjson::Document b;
    b.Parse(bad);
    CHECK_FALSE(parse_exec_envelope(b, &back, &error));
  }
  d["envelope"]["inputs"]["max_processes"].SetInt(0);
  CHECK_FALSE(parse_exec_envelope(d, &back, &error));
}

TEST_CASE("exec envelopes: without a digest the decided command itself is taken",
          "[server][exec]") {
  ExecEnvelopes store;
  const auto now = ExecEnvelopes::Clock::now();
  store.remember("alice", shell_decision("d", Outcome::Approve, "make test"), "/ws", "/h", now);
  ExecRecord r;
  REQUIRE(store.take("alice", "d", "", now, &r) == ExecTake::Ok);
  CHECK(r.command == "make test");
  CHECK(store.take("alice", "d", "", now, &r) == ExecTake::Used);
}
