// The `approval` record (audit/record.h approval_fields): its members in the format's order,
// every string masked for secrets, no token; a log of decisions and approval records written by
// the Writer verifies, and query finds approval records by kind, id, event, requester,
// session, rule and target.
#include <rapidjson/document.h>

#include <catch2/catch.hpp>

#include <algorithm>

#include "audit/query.h"
#include "audit/reader.h"
#include "audit/record.h"
#include "audit/verify.h"
#include "audit/writer.h"
#include "bindings/secrets.h"
#include "tests/audit/record_fields.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::audit;
using namespace warden::audit::testing;
using warden::server::testing::TempDir;

namespace {

ApprovalEvent sample_event() {
  ApprovalEvent e;
  e.event = "created";
  e.approval_id = "ap-7";
  e.action_hash = "sha256:feed";
  e.decision_id = "d-42";
  e.requester = "agent-x";
  e.session = "s1";
  e.agent = "claude-code";
  e.origin = "decide";
  e.action_json = R"({"target":"shell","action":"run","payload":{"command":"deploy prod"}})";
  e.rules = {"deploys-need-two", "prod-is-special"};
  e.reason = "deploys need a person";
  e.approvers_needed = 2;
  e.votes = 0;
  e.expires_ms = 1795400300000;
  return e;
}

}  // namespace

TEST_CASE("approval_fields writes every member in order with the event's values",
          "[record][approval]") {
  const std::string fields = approval_fields(sample_event(), nullptr);
  const auto doc = parse_fields(fields);
  CHECK(member_names(doc) == std::vector<std::string>{"event", "approval_id", "action_hash",
                                                      "decision_id", "by", "note", "requester",
                                                      "session", "agent", "origin", "action",
                                                      "rules", "reason", "approvers_needed",
                                                      "votes", "expires_ms", "result", "masks"});
  CHECK(std::string(doc["event"].GetString()) == "created");
  CHECK(std::string(doc["approval_id"].GetString()) == "ap-7");
  CHECK(std::string(doc["action_hash"].GetString()) == "sha256:feed");
  CHECK(std::string(doc["decision_id"].GetString()) == "d-42");
  CHECK(std::string(doc["by"].GetString()).empty());
  CHECK(std::string(doc["requester"].GetString()) == "agent-x");
  CHECK(std::string(doc["agent"].GetString()) == "claude-code");
  CHECK(std::string(doc["origin"].GetString()) == "decide");
  CHECK(std::string(doc["action"]["payload"]["command"].GetString()) == "deploy prod");
  REQUIRE(doc["rules"].Size() == 2);
  CHECK(std::string(doc["rules"][1].GetString()) == "prod-is-special");
  CHECK(doc["approvers_needed"].GetInt() == 2);
  CHECK(doc["votes"].GetInt() == 0);
  CHECK(doc["expires_ms"].GetInt64() == 1795400300000);
  CHECK(doc["result"].IsNull());
  CHECK(doc["masks"].Empty());
  // The same with a masker and nothing secret: byte for byte.
  const Masker masker(std::string(32, 'm'));
  CHECK(approval_fields(sample_event(), &masker) == fields);
}

TEST_CASE("an approval's result is recorded as JSON; no action is null", "[record][approval]") {
  ApprovalEvent e = sample_event();
  e.event = "executed";
  e.by = "bob";
  e.note = "ok, ship it";
  e.votes = 2;
  e.result_json = R"({"exit_code":0,"stdout":"done\n"})";
  const auto doc = parse_fields(approval_fields(e, nullptr));
  CHECK(std::string(doc["by"].GetString()) == "bob");
  CHECK(std::string(doc["note"].GetString()) == "ok, ship it");
  CHECK(doc["result"]["exit_code"].GetInt() == 0);
  CHECK(std::string(doc["result"]["stdout"].GetString()) == "done\n");

  ApprovalEvent bare;
  bare.event = "expired";
  bare.approval_id = "ap-8";
  const auto empty = parse_fields(approval_fields(bare, nullptr));
  CHECK(empty["action"].IsNull());
  CHECK(empty["result"].IsNull());
  CHECK(empty["rules"].Empty());

  // Text that is not JSON is kept as a string, escaped.
  ApprovalEvent odd = sample_event();
  odd.result_json = "not \"json\"";
  const auto text = parse_fields(approval_fields(odd, nullptr));
  CHECK(std::string(text["result"].GetString()) == "not \"json\"");
}

TEST_CASE("what an approval grants and the token that asked are recorded when there are some",
          "[record][approval]") {
  ApprovalEvent e = sample_event();
  e.grants_json =
      R"([{"capability":"shell-syntax","rule":"build-pipelines","reason":"make | tee"}])";
  e.digest = "sha256:beef";
  e.requester_token_id = "0123456789abcdef0123456789abcdef";
  const auto doc = parse_fields(approval_fields(e, nullptr));
  CHECK(member_names(doc) == std::vector<std::string>{"event",       "approval_id",
                                                      "action_hash", "decision_id",
                                                      "by",          "note",
                                                      "requester",   "session",
                                                      "agent",       "origin",
                                                      "action",      "rules",
                                                      "reason",      "approvers_needed",
                                                      "votes",       "expires_ms",
                                                      "result",      "grants",
                                                      "digest",      "requester_token_id",
                                                      "masks"});
  REQUIRE(doc["grants"].Size() == 1);
  CHECK(std::string(doc["grants"][0]["capability"].GetString()) == "shell-syntax");
  CHECK(std::string(doc["grants"][0]["rule"].GetString()) == "build-pipelines");
  CHECK(std::string(doc["digest"].GetString()) == "sha256:beef");
  CHECK(std::string(doc["requester_token_id"].GetString()) == "0123456789abcdef0123456789abcdef");
  // A token id is a name, never masked as a secret.
  const Masker masker(std::string(32, 'm'));
  CHECK(approval_fields(e, &masker) == approval_fields(e, nullptr));
  // Granting nothing: no grants, no digest (it is the action_hash).
  e.grants_json = "[]";
  CHECK_FALSE(parse_fields(approval_fields(e, nullptr)).HasMember("grants"));
  CHECK_FALSE(parse_fields(approval_fields(e, nullptr)).HasMember("digest"));
}

TEST_CASE("secrets in an approval record are masked wherever they are, with their pointer",
          "[record][approval]") {
  const Masker masker(std::string(32, 'm'));
  const std::string token = kGithubToken;
  ApprovalEvent e = sample_event();
  e.event = "denied";
  e.by = "bob";
  e.note = "never paste " + token + " in a command";
  e.reason = "pushing with " + token;
  e.action_json = R"({"target":"shell","action":"run","payload":{"command":"git push https://x:)" +
                  token + R"(@github.com/y"}})";
  e.rules = {"rule-" + token};
  e.result_json = R"({"stdout":")" + token + R"("})";
  e.session = "s-" + token;
  const std::string fields = approval_fields(e, &masker);
  CHECK(fields.find("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5") == std::string::npos);
  const auto doc = parse_fields(fields);
  std::vector<std::string> where;
  for (const auto& m : doc["masks"].GetArray()) where.emplace_back(m["field"].GetString());
  CHECK(where == std::vector<std::string>{"/note", "/session", "/action/payload/command",
                                          "/rules/0", "/reason", "/result/stdout"});
  // Masked in place: the same length, still found as a token of the same kind.
  const std::string note = doc["note"].GetString();
  CHECK(note.size() == e.note.size());
  const auto found = secrets::find(note);
  REQUIRE(found.size() == 1);
  CHECK(found[0].kind == "github-token");
  // Unmasked without a masker (a daemon with masking off).
  CHECK(approval_fields(e, nullptr).find(token) != std::string::npos);
}

namespace {

struct ApprovalLog {
  TempDir dir;
  std::string live, priv, pub;
  std::shared_ptr<const SigningKey> key;
  std::unique_ptr<VerifyKey> verify_key;
  std::int64_t clock = 1795400000000000;

  ApprovalLog() {
    live = dir.str() + "/audit.jsonl";
    priv = dir.str() + "/signing.pem";
    pub = dir.str() + "/signing.pem.pub";
    std::string error;
    REQUIRE(generate_key(priv, pub, &error));
    key = SigningKey::load(priv, &error);
    REQUIRE(key);
    verify_key = VerifyKey::load(pub, &error);
    REQUIRE(verify_key);
  }

  std::unique_ptr<Writer> open() {
    WriterOptions o;
    o.path = live;
    o.daemon_id = "host-1";
    o.durability = Durability::Write;
    o.rotate_age = std::chrono::seconds(0);
    o.checkpoint_records = 3;
    o.checkpoint_age = std::chrono::seconds(60);
    o.key = key;
    o.start_fields =
        "\"version\":\"test\",\"pid\":1,\"rules_digest\":\"sha256:aa\",\"workspace_root\":\"/w\","
        "\"home\":\"/h\",\"default_outcome\":\"reject\",\"key_id\":\"" +
        key->key_id() + "\",\"every_records\":3,\"every_seconds\":60";
    o.clock_us = [this] { return clock; };
    std::string error;
    auto w = Writer::open(o, &error);
    INFO(error);
    REQUIRE(w);
    return w;
  }

  std::uint64_t decision(Writer& w, const std::string& principal, const std::string& command) {
    clock += 1000000;
    Decision d;
    d.decision_id = "d-" + command;
    d.outcome = Outcome::ApprovalRequired;
    d.reason = "needs a person";
    d.rules = {{.rule = "deploys",
                .outcome = d.outcome,
                .reason = "needs a person",
                .monitor = false,
                .overlay = {},
                .asserted_reason = {}}};
    d.rules_digest = "sha256:aa";
    const std::string proposal =
        R"({"target":"shell","action":"run","payload":{"command":")" + command + R"("}})";
    DecisionInput in{proposal, principal, {"dev"}, "s1", clock};
    AppendResult r = w.append_wait("decision", clock, decision_fields(in, d, nullptr));
    REQUIRE(r.ok);
    return r.seq;
  }

  std::uint64_t approval(Writer& w, ApprovalEvent e, const Masker* masker = nullptr) {
    clock += 1000000;
    AppendResult r = w.append_wait("approval", clock, approval_fields(e, masker));
    REQUIRE(r.ok);
    return r.seq;
  }
};

std::vector<std::uint64_t> seqs(const LogSet& set, const QueryFilter& f) {
  std::vector<std::uint64_t> out;
  run_query(set, f, [&](const QueryRow& r) { out.push_back(r.seq); });
  return out;
}

using Seqs = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("a log with approval records verifies, and query finds them", "[approval]") {
  ApprovalLog log;
  const Masker masker(std::string(32, 'm'));
  std::uint64_t created = 0, vote = 0, executed = 0, other = 0, denied = 0, d1 = 0, d2 = 0;
  {
    auto w = log.open();  // start: seq 1
    d1 = log.decision(*w, "agent-x", "deploy prod");
    ApprovalEvent e = sample_event();
    created = log.approval(*w, e);
    e.event = "vote";
    e.by = "bob";
    e.votes = 1;
    vote = log.approval(*w, e);
    e.event = "executed";
    e.by = "carol";
    e.votes = 2;
    e.note = "token " + std::string(kGithubToken);
    e.result_json = R"({"exit_code":0})";
    executed = log.approval(*w, e, &masker);
    d2 = log.decision(*w, "agent-y", "drop table");
    ApprovalEvent f;
    f.event = "created";
    f.approval_id = "ap-9";
    f.requester = "agent-y";
    f.session = "s2";
    f.action_json = R"({"target":"sql","action":"query","payload":{"text":"drop table"}})";
    f.rules = {"sql-ddl"};
    other = log.approval(*w, f);
    f.event = "denied";
    f.by = "bob";
    denied = log.approval(*w, f);
    w->close();
  }
  VerifyOptions o;
  o.key = log.verify_key.get();
  o.require_signed_tail = true;
  VerifyReport r = verify_paths({log.live}, o);
  INFO(report_to_json(r));
  CHECK(r.ok);
  CHECK(r.findings_total == 0);
  CHECK(r.signed_through == r.last_seq);

  LogSet set;
  std::string error;
  REQUIRE(LogSet::open(expand_log_paths({log.live}), &set, &error));

  QueryFilter decisions;  // the default kind is still decision
  CHECK(seqs(set, decisions) == Seqs{d1, d2});

  QueryFilter approvals;
  approvals.kind = "approval";
  CHECK(seqs(set, approvals) == Seqs{created, vote, executed, other, denied});

  QueryFilter by_id = approvals;
  by_id.approval_id = "ap-7";
  CHECK(seqs(set, by_id) == Seqs{created, vote, executed});

  QueryFilter by_event = approvals;
  by_event.event = "denied";
  CHECK(seqs(set, by_event) == Seqs{denied});

  QueryFilter by_rule = approvals;
  by_rule.rule = "sql-ddl";
  CHECK(seqs(set, by_rule) == Seqs{other, denied});

  QueryFilter by_target = approvals;
  by_target.target = "sql";
  CHECK(seqs(set, by_target) == Seqs{other, denied});

  // Requester and session match decisions and approvals alike across kinds.
  QueryFilter all_x;
  all_x.kind = "all";
  all_x.principal = "agent-x";
  CHECK(seqs(set, all_x) == Seqs{d1, created, vote, executed});
  QueryFilter all_s2;
  all_s2.kind = "all";
  all_s2.session = "s2";
  CHECK(seqs(set, all_s2) == Seqs{other, denied});
  // An approval filter matches approval records only, an outcome filter decisions only.
  QueryFilter all_id;
  all_id.kind = "all";
  all_id.approval_id = "ap-9";
  CHECK(seqs(set, all_id) == Seqs{other, denied});
  QueryFilter all_outcome;
  all_outcome.kind = "all";
  all_outcome.outcome = Outcome::ApprovalRequired;
  CHECK(seqs(set, all_outcome) == Seqs{d1, d2});

  // The rows: requester, session, rules, the event as outcome, a summary of the action.
  std::vector<QueryRow> rows;
  run_query(set, by_id, [&](const QueryRow& row) { rows.push_back(row); });
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].principal == "agent-x");
  CHECK(rows[0].session == "s1");
  CHECK(rows[0].outcome == "created");
  CHECK(rows[0].rules == std::vector<std::string>{"deploys-need-two", "prod-is-special"});
  CHECK(rows[0].summary == "ap-7 created: shell run: deploy prod");
  CHECK(rows[1].summary == "ap-7 vote by bob: shell run: deploy prod");
  CHECK_FALSE(rows[1].masked);
  CHECK(rows[2].outcome == "executed");
  CHECK(rows[2].masked);
  CHECK(rows[2].line.find("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5") == std::string_view::npos);

  // parse_decision refuses approval records; they are not decisions.
  std::uint64_t parsed = 0;
  set.for_each_line([&](const LogLine& line) {
    DecisionRecord d;
    std::string why;
    if (parse_decision(line.text, &d, &why)) ++parsed;
  });
  CHECK(parsed == 2);
}

TEST_CASE("a decision record carries the rules' approval terms only when a rule set them",
          "[record][approval]") {
  DecisionInput in;
  in.proposal_json = R"({"target":"shell","payload":{"command":"deploy"}})";
  Decision d;
  d.decision_id = "d-1";
  d.outcome = Outcome::ApprovalRequired;
  d.rules_digest = "sha256:aa";
  const auto plain = parse_fields(decision_fields(in, d, nullptr));
  CHECK_FALSE(plain.HasMember("approval"));
  d.approval_set = true;
  d.approval_expires_s = 300;
  d.approvers_needed = 2;
  const auto with = parse_fields(decision_fields(in, d, nullptr));
  REQUIRE(with.HasMember("approval"));
  CHECK(with["approval"]["expires_in_s"].GetInt64() == 300);
  CHECK(with["approval"]["approvers"].GetInt() == 2);
  // Its place: after rewrites (and allows), before effects.
  const auto names = member_names(with);
  const auto at = std::find(names.begin(), names.end(), "approval");
  REQUIRE(at != names.end());
  CHECK(*(at - 1) == "rewrites");
  CHECK(*(at + 1) == "effects");
}
