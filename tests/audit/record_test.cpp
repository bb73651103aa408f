// The decision record's FIELDS: every member in the format's order with the decision's values,
// the input re-serialized and masked, action only when a rewrite was applied, masks listed.
#include "audit/record.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <iostream>

#include "audit/chain.h"
#include "bindings/secrets.h"
#include "engine/engine.h"
#include "engine/json_writer.h"
#include "engine/rule_files.h"
#include "tests/audit/record_fields.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::audit;
using namespace warden::audit::testing;

namespace {

Decision sample_decision() {
  Decision d;
  d.decision_id = "d-42";
  d.outcome = Outcome::ApprovalRequired;
  d.reason = "pushing with token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5 needs a human";
  d.rules = {{.rule = "git-push",
              .outcome = Outcome::ApprovalRequired,
              .reason = "push needs approval",
              .monitor = false,
              .overlay = {},
              .asserted_reason = {}},
             {.rule = "watch-tokens",
              .outcome = Outcome::Reject,
              .reason = "token in command",
              .monitor = true,
              .overlay = {},
              .asserted_reason = {}}};
  d.rewrites = {{"strip-flag",
                 "payload.command",
                 "git push --force",
                 "git push",
                 "no force",
                 false,
                 true,
                 {}}};
  d.action_json = R"({"target":"shell","payload":{"command":"git push"}})";
  d.rules_digest = "sha256:abc";
  d.elapsed_us = 137;
  d.defaulted = false;
  d.error_code = "";
  EffectRecord e;
  e.kind = "exec";
  e.object = "program";
  e.target = "git";
  e.program = "git";
  e.path_class = "none";
  e.in_workspace = true;
  e.subcommand = "push";
  e.via = "argv";
  e.dynamic = false;
  d.effects = {e};
  return d;
}

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return buffer.GetString();
}

}  // namespace

TEST_CASE("decision_fields writes every member in order with the decision's values", "[record]") {
  DecisionInput in;
  in.proposal_json =
      R"( {"target":"shell", "payload":{"command":"git push --force","n":1.50e3,"ok":true,"none":null},"list":[1,"a",[]]} )";
  in.principal = "agent-7";
  in.groups = {"agents", "ci"};
  in.session = "s-1";
  in.time_us = 1;
  const Decision d = sample_decision();
  const std::string fields = decision_fields(in, d, nullptr);
  const auto doc = parse_fields(fields);
  CHECK(member_names(doc) ==
        std::vector<std::string>{"decision_id", "rules_digest", "principal", "groups", "session",
                                 "input", "outcome", "reason", "defaulted", "error_code", "rules",
                                 "rewrites", "action", "effects", "elapsed_us", "masks"});
  CHECK(doc["decision_id"] == "d-42");
  CHECK(doc["rules_digest"] == "sha256:abc");
  CHECK(doc["principal"] == "agent-7");
  REQUIRE(doc["groups"].Size() == 2);
  CHECK(doc["groups"][0] == "agents");
  CHECK(doc["groups"][1] == "ci");
  CHECK(doc["session"] == "s-1");
  // The input as sent, whitespace dropped, numbers verbatim.
  CHECK(
      fields.find(
          R"("input":{"target":"shell","payload":{"command":"git push --force","n":1.50e3,"ok":true,"none":null},"list":[1,"a",[]]},)") !=
      std::string::npos);
  CHECK(doc["outcome"] == "approval-required");
  CHECK(std::string(doc["reason"].GetString()) == d.reason);  // no masker: as decided
  CHECK(doc["defaulted"].IsFalse());
  CHECK(doc["error_code"] == "");
  REQUIRE(doc["rules"].Size() == 2);
  CHECK(member_names(doc["rules"][0]) ==
        std::vector<std::string>{"rule", "outcome", "reason", "mode"});
  CHECK(doc["rules"][0]["rule"] == "git-push");
  CHECK(doc["rules"][0]["outcome"] == "approval-required");
  CHECK(doc["rules"][0]["reason"] == "push needs approval");
  CHECK(doc["rules"][0]["mode"] == "enforce");
  CHECK(doc["rules"][1]["outcome"] == "reject");
  CHECK(doc["rules"][1]["mode"] == "monitor");
  REQUIRE(doc["rewrites"].Size() == 1);
  CHECK(member_names(doc["rewrites"][0]) ==
        std::vector<std::string>{"rule", "key", "old", "new", "reason", "mode", "applied"});
  CHECK(doc["rewrites"][0]["rule"] == "strip-flag");
  CHECK(doc["rewrites"][0]["key"] == "payload.command");
  CHECK(doc["rewrites"][0]["old"] == "git push --force");
  CHECK(doc["rewrites"][0]["new"] == "git push");
  CHECK(doc["rewrites"][0]["reason"] == "no force");
  CHECK(doc["rewrites"][0]["mode"] == "enforce");
  CHECK(doc["rewrites"][0]["applied"].IsTrue());
  CHECK(to_text(doc["action"]) == d.action_json);
  REQUIRE(doc["effects"].Size() == 1);
  CHECK(member_names(doc["effects"][0]) ==
        std::vector<std::string>{"kind", "object", "target", "program", "class", "in_workspace",
                                 "subcommand", "via", "dynamic"});
  CHECK(doc["effects"][0]["kind"] == "exec");
  CHECK(doc["effects"][0]["object"] == "program");
  CHECK(doc["effects"][0]["target"] == "git");
  CHECK(doc["effects"][0]["program"] == "git");
  CHECK(doc["effects"][0]["class"] == "none");
  CHECK(doc["effects"][0]["in_workspace"].IsTrue());
  CHECK(doc["effects"][0]["subcommand"] == "push");
  CHECK(doc["effects"][0]["via"] == "argv");
  CHECK(doc["effects"][0]["dynamic"].IsFalse());
  CHECK(doc["elapsed_us"].GetInt64() == 137);
  CHECK(doc["masks"].IsArray());
  CHECK(doc["masks"].Size() == 0);

  // The FIELDS seal into a line parse_head reads back.
  Envelope env{1, std::string(kGenesis), "decision", 1795148900123456, "host"};
  const std::string line = seal(env, fields, nullptr);
  const std::string_view text(line.data(), line.size() - 1);
  Head h;
  std::string error;
  REQUIRE(parse_head(text, &h, &error));
  CHECK(h.fields == fields);
  CHECK(hash_matches(h));
}

TEST_CASE("action only when a rewrite was applied; error_code and defaulted as decided",
          "[record]") {
  DecisionInput in;
  in.proposal_json = R"({"target":"reply"})";
  Decision d = sample_decision();
  d.rewrites[0].applied = false;
  d.rewrites[0].monitor = true;
  d.defaulted = true;
  d.error_code = "E_DEADLINE";
  d.outcome = Outcome::Reject;
  const auto doc = parse_fields(decision_fields(in, d, nullptr));
  CHECK_FALSE(doc.HasMember("action"));
  CHECK(doc["rewrites"][0]["applied"].IsFalse());
  CHECK(doc["rewrites"][0]["mode"] == "monitor");
  CHECK(doc["defaulted"].IsTrue());
  CHECK(doc["error_code"] == "E_DEADLINE");
  CHECK(doc["outcome"] == "reject");
  CHECK(doc["principal"] == "");
  CHECK(doc["groups"].Size() == 0);

  d.rewrites.clear();
  const auto none = parse_fields(decision_fields(in, d, nullptr));
  CHECK_FALSE(none.HasMember("action"));
  CHECK(none["rewrites"].Size() == 0);
}

TEST_CASE("secrets from the proposal are masked everywhere and listed in masks", "[record]") {
  const Masker masker(std::string(32, 'm'));
  const std::string command = std::string("curl -H 'Authorization: token ") + kGithubToken + "' x";
  const std::string proposal = R"({"target":"shell","payload":{"command":")" + command +
                               R"(","env":["A=1","AWS=AKIAIOSFODNN7EXAMPLE"]}})";
  DecisionInput in;
  in.proposal_json = proposal;
  Decision d = sample_decision();
  d.rewrites[0].old_value = command;
  d.rewrites[0].new_value = "curl x";
  d.action_json = R"({"target":"shell","payload":{"command":"curl x","t":")" +
                  std::string(kGithubToken) + R"("}})";
  d.effects[0].target = "https://x/?t=" + std::string(kGithubToken);
  const std::string fields = decision_fields(in, d, &masker);
  CHECK(fields.find("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5") == std::string::npos);
  CHECK(fields.find("AKIAIOSFODNN7EXAMPLE") == std::string::npos);
  const auto doc = parse_fields(fields);
  const auto& masks = doc["masks"];
  std::vector<std::string> where;
  for (const auto& m : masks.GetArray()) {
    where.push_back(std::string(m["field"].GetString()) + "@" +
                    std::to_string(m["offset"].GetUint()) + ":" +
                    std::to_string(m["length"].GetUint()) + "=" + m["kind"].GetString());
  }
  CHECK(where == std::vector<std::string>{
                     "/input/payload/command@30:40=github-token",
                     "/input/payload/env/1@4:20=aws-access-key",
                     "/reason@19:40=github-token",
                     "/rewrites/0/old@30:40=github-token",
                     "/action/payload/t@0:40=github-token",
                     "/effects/0/target@13:40=github-token",
                 });
  // The masked input is still the proposal's shape, and its secret still detected as such.
  const std::string masked_command = doc["input"]["payload"]["command"].GetString();
  CHECK(masked_command.size() == command.size());
  CHECK(masked_command.starts_with("curl -H 'Authorization: token ghp_"));
  const auto found = secrets::find(masked_command);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "github-token");
  // The same token masks the same way wherever it appears.
  CHECK(std::string(doc["action"]["payload"]["t"].GetString()) == masked_command.substr(30, 40));
  CHECK(doc["input"]["payload"]["env"][0] == "A=1");
}

TEST_CASE("a proposal that is not JSON is recorded as its text", "[record]") {
  DecisionInput in;
  in.proposal_json = "{\"target\": oops";
  const auto doc = parse_fields(decision_fields(in, sample_decision(), nullptr));
  CHECK(doc["input"] == "{\"target\": oops");
}

TEST_CASE("invalid UTF-8 from a \\u escape is written as U+FFFD", "[record]") {
  DecisionInput in;
  in.proposal_json = R"({"t":"a\udc00b"})";
  const std::string fields = decision_fields(in, sample_decision(), nullptr);
  const auto doc = parse_fields(fields);
  REQUIRE(doc["input"].IsObject());
}

// The input is re-serialized after the shared parser's checks (bindings/json.h): RapidJSON
// took a NUL byte for the end of the text and recorded only what came before it; the whole
// text is now recorded as a string. Numbers are kept as written, so no zero is refused.
TEST_CASE("a proposal with a NUL byte after its object is recorded whole, as its text",
          "[record]") {
  using namespace std::string_literals;
  const std::string hidden = "{\"target\":\"x\"}\0{\"hidden\":1}"s;
  DecisionInput in;
  in.proposal_json = hidden;
  const std::string fields = decision_fields(in, sample_decision(), nullptr);
  const auto doc = parse_fields(fields);
  REQUIRE(doc["input"].IsString());
  CHECK(std::string(doc["input"].GetString(), doc["input"].GetStringLength()) == hidden);
  in.proposal_json = R"({"n":[0e66,0.0e60,1.50]})";
  CHECK(
      decision_fields(in, sample_decision(), nullptr).find(R"("input":{"n":[0e66,0.0e60,1.50]})") !=
      std::string::npos);
}

TEST_CASE("strings are escaped exactly as the engine's JSON writer escapes them", "[record]") {
  Decision d = sample_decision();
  d.reason = std::string("q\"b\\n\nr\rt\tc\x01\x1f del\x7f é € 😀 bad\xff\xc3 end");
  DecisionInput in;
  in.proposal_json = "{\"s\":\"raw \xff byte\"}";
  const std::string fields = decision_fields(in, d, nullptr);
  CHECK(fields.find("\"reason\":" + json_string(d.reason) + ",") != std::string::npos);
  CHECK(fields.find("\"input\":{\"s\":" + json_string("raw \xff byte") + "}") != std::string::npos);
  parse_fields(fields);
}

TEST_CASE("start and reload FIELDS in the format's order", "[record]") {
  StartInfo info;
  info.version = "0.9.0";
  info.pid = 4242;
  info.rules_digest = "sha256:ab";
  info.workspace_root = "/work/\"q\"";
  info.home = "/root";
  info.default_outcome = "approval-required";
  info.key_id = "ed25519:0123";
  info.every_records = 1000;
  info.every_seconds = 60;
  info.session = {3600, 200, 10000, 67108864};
  CHECK(
      start_fields(info) ==
      R"("version":"0.9.0","pid":4242,"rules_digest":"sha256:ab","workspace_root":"/work/\"q\"",)"
      R"("home":"/root","default_outcome":"approval-required","key_id":"ed25519:0123",)"
      R"("every_records":1000,"every_seconds":60,)"
      R"("session":{"ttl_seconds":3600,"max_entries":200,"max_sessions":10000,"max_bytes":67108864})");
  CHECK(reload_fields("sha256:new", "sha256:old", "sighup") ==
        R"("rules_digest":"sha256:new","previous_digest":"sha256:old","by":"sighup")");
}

TEST_CASE("decision_fields cost per record (measured, not asserted)", "[.bench]") {
  const Masker masker(std::string(32, 'm'));
  DecisionInput in;
  const std::string proposal =
      R"({"target":"shell","action":"run","payload":{"command":"git -C /home/user/project log --oneline -n 20 | head -5","cwd":"/home/user/project","env":{"PATH":"/usr/bin:/bin","HOME":"/home/user"}},"context":{"agent":"claude-code","tool":"Bash","session_id":"8f14e45f-ceea-467f-a0e6-d2bbfe3b5b8e"}})";
  in.proposal_json = proposal;
  in.principal = "agent-7";
  in.groups = {"agents"};
  in.session = "8f14e45f-ceea-467f-a0e6-d2bbfe3b5b8e";
  Decision d = sample_decision();
  d.rewrites.clear();
  d.reason = "reading the repository is fine";
  const int n = 100000;
  for (const Masker* m : {static_cast<const Masker*>(nullptr), &masker}) {
    std::size_t bytes = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) bytes += decision_fields(in, d, m).size();
    const auto t1 = std::chrono::steady_clock::now();
    std::cout << "decision_fields " << (m ? "with" : "without")
              << " masking: " << std::chrono::duration<double, std::micro>(t1 - t0).count() / n
              << " us/record (" << bytes / n << " bytes)\n";
  }
}

// Every string of the decision record goes through the masker, whatever member it is in:
// a rule may copy proposal text into any STRING slot (its name, a rewrite's key, an effect's
// via), and session, principal and groups come from the client. Each mask names its member.
TEST_CASE("a secret in any string member of the record is masked, with its pointer", "[record]") {
  const Masker masker(std::string(32, 'm'));
  const std::string t = kGithubToken;
  const std::string url = "postgres://admin:Zq8vK2mP9xL4tR7w@db.internal/prod";
  DecisionInput in;
  in.proposal_json = R"({"target":"shell","payload":{"command":"ls"}})";
  in.principal = "p-" + t;
  in.groups = {"ok", "g-" + t};
  in.session = t;
  Decision d;
  d.decision_id = "id-" + t;
  d.rules_digest = "sha256:" + t;
  d.outcome = Outcome::Reject;
  d.reason = "r " + url;
  d.error_code = "E_" + t;
  d.rules = {{.rule = "rule-" + t,
              .outcome = Outcome::Reject,
              .reason = "why " + t,
              .monitor = false,
              .overlay = {},
              .asserted_reason = {}}};
  d.rewrites = {
      {"rw-" + t, "payload." + t, "old " + t, "new " + t, "because " + t, false, false, {}}};
  EffectRecord e;
  e.kind = "k " + t;
  e.object = "o " + t;
  e.target = "t " + t;
  e.program = "p " + t;
  e.path_class = "c " + t;
  e.subcommand = "s " + t;
  e.via = "v " + t;
  d.effects = {e};
  const std::string fields = decision_fields(in, d, &masker);
  CHECK(fields.find(t.substr(4)) == std::string::npos);
  CHECK(fields.find("Zq8vK2mP9xL4tR7w") == std::string::npos);
  const auto doc = parse_fields(fields);
  std::vector<std::string> pointers;
  for (const auto& m : doc["masks"].GetArray()) pointers.emplace_back(m["field"].GetString());
  const std::vector<std::string> expected = {"/decision_id",      "/rules_digest",
                                             "/principal",        "/groups/1",
                                             "/session",          "/reason",
                                             "/error_code",       "/rules/0/rule",
                                             "/rules/0/reason",   "/rewrites/0/rule",
                                             "/rewrites/0/key",   "/rewrites/0/old",
                                             "/rewrites/0/new",   "/rewrites/0/reason",
                                             "/effects/0/kind",   "/effects/0/object",
                                             "/effects/0/target", "/effects/0/program",
                                             "/effects/0/class",  "/effects/0/subcommand",
                                             "/effects/0/via"};
  CHECK(pointers == expected);
  // Each mask's offset/length points at a same-length masked secret in that member.
  CHECK(std::string(doc["session"].GetString()).size() == t.size());
  CHECK(std::string(doc["session"].GetString()).starts_with("ghp_"));
  CHECK(doc["masks"][5]["kind"] == "url-password");
  // Without a masker nothing changes.
  CHECK(decision_fields(in, d, nullptr).find(t) != std::string::npos);
}

// The masked record still decides as the daemon did with the shipped pack: a password in a
// URL and the other formats secrets-outbound-other-format finds are masked in /input, and the
// rule fires on the recorded input as on the proposal.
TEST_CASE("the shipped pack finds the masked secrets of a recorded proposal", "[record]") {
  const Masker masker(std::string(32, 'm'));
  warden::LoadedPolicy loaded = warden::load_policy({WARDEN_SOURCE_DIR "/rules"});
  REQUIRE(loaded.policy);
  warden::EngineOptions eo;
  eo.workspace_root = "/home/user/project";
  eo.home = "/home/user";
  warden::Engine engine(loaded.policy, eo);
  auto fires = [&](const std::string& proposal) {
    warden::DecideRequest req;
    req.proposal_json = proposal;
    req.principal = std::string("alice");
    const warden::DecideResult r = engine.decide(req);
    REQUIRE(r.ok);
    for (const auto& f : r.decision.rules) {
      if (f.rule == "secrets-outbound-other-format") return true;
    }
    return false;
  };
  const std::vector<std::pair<std::string, std::string>> tokens = {
      {"postgres://admin:Zq8vK2mP9xL4tR7w@db.internal:5432/prod", "Zq8vK2mP9xL4tR7w"},
      {"redis://default:hunter2hunter2@cache.internal:6379/0", "hunter2hunter2"},
      {"hf_abcdefghijklmnopqrstuvwxyzabcdefgh", "abcdefghijklmnopqrstuvwxyzabcdefgh"},
      {"dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
      {"npm_abcdefghijklmnopqrstuvwxyzabcdefghij", "abcdefghijklmnopqrstuvwxyzabcdefghij"},
  };
  for (const auto& [token, secret] : tokens) {
    const std::string proposal = R"({"target":"reply","action":"send","payload":{"text":"use )" +
                                 token + R"("},"context":{"session":"s1"}})";
    INFO(token);
    REQUIRE(fires(proposal));
    DecisionInput in;
    in.proposal_json = proposal;
    in.principal = "alice";
    warden::Decision d;
    d.decision_id = "d1";
    const std::string fields = decision_fields(in, d, &masker);
    CHECK(fields.find(secret) == std::string::npos);
    const auto doc = parse_fields(fields);
    const std::string recorded = to_text(doc["input"]);
    INFO(recorded);
    CHECK(fires(recorded));
  }
}
