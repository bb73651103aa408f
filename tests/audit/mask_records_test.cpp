// Masked records pinned over thousands of them: every corpus proposal, and strings holding a
// secret at every position, a near miss of one, an encoded or split one, or a secret only in
// its context (a password after `-u user:`, a token after `TOKEN=`), each as a decision's
// input and action and again in its reasons, rule names, rewrites, allows, effects, groups and
// session, and as an approval record's. Records are hash-chained: how masking judges a string
// may get cheaper, what it writes may not move by one byte. The digests were taken from the
// records as masking wrote them before it remembered judged strings and skipped patterns on
// their literals.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "audit/mask.h"
#include "audit/record.h"
#include "bindings/digest.h"
#include "engine/decision.h"
#include "tests/build_paths.h"

using namespace warden;

namespace {

// Every string value and member name of a JSON value, in document order.
void strings_of(const rapidjson::Value& v, std::vector<std::string>* out) {
  if (v.IsString()) {
    out->emplace_back(v.GetString(), v.GetStringLength());
  } else if (v.IsArray()) {
    for (const auto& e : v.GetArray()) strings_of(e, out);
  } else if (v.IsObject()) {
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      out->emplace_back(m->name.GetString(), m->name.GetStringLength());
      strings_of(m->value, out);
    }
  }
}

std::string hex_id(std::size_t n) {
  static const char* const digits = "0123456789abcdef";
  std::string s;
  for (int shift = 28; shift >= 0; shift -= 4) s += digits[(n >> shift) & 15];
  return s;
}

// A decision that carries `strings` (a proposal's) in every string member the record masks,
// some of them twice, with `proposal` as its rewritten action when `n` is even.
Decision decision_carrying(const std::vector<std::string>& strings, std::size_t n,
                           std::string_view proposal) {
  const auto at = [&](std::size_t i) { return strings.empty() ? "" : strings[i % strings.size()]; };
  const std::size_t count = std::min<std::size_t>(strings.size(), 8);
  Decision d;
  d.decision_id = "d-" + hex_id(n);
  d.outcome = static_cast<Outcome>(n % 3);
  d.reason = at(n);
  d.rules_digest = "sha256:" + hex_id(n) + std::string(56, 'e');
  d.error_code = n % 7 == 0 ? at(n + 1) : "";
  for (std::size_t i = 0; i < count; ++i) {
    FiredRule r;
    r.rule = at(i);
    r.outcome = static_cast<Outcome>(i % 3);
    r.reason = at(i + 1);
    r.monitor = i % 2 == 1;
    d.rules.push_back(r);
  }
  d.rewrites = {{at(0), "payload." + at(1), at(2), at(3), at(4), false, n % 2 == 0, ""},
                {"watch", at(5), at(5), "", at(6), true, false, ""}};
  d.action_json = std::string(proposal);
  d.allows = {{at(1), "shell-syntax", at(2), false, ""}};
  for (std::size_t i = 0; i < count; ++i) {
    EffectRecord e;
    e.kind = i % 2 ? "write" : "exec";
    e.object = "path";
    e.target = at(i);
    e.program = at(i + 2);
    e.path_class = "none";
    e.subcommand = at(i + 3);
    e.via = "payload.command";
    d.effects.push_back(e);
  }
  d.elapsed_us = static_cast<std::int64_t>(n);
  return d;
}

audit::DecisionInput input_carrying(const std::vector<std::string>& strings,
                                    std::string_view proposal) {
  audit::DecisionInput in;
  in.proposal_json = proposal;
  in.principal = strings.empty() ? "alice" : strings.front();
  in.groups = {"dev"};
  if (!strings.empty()) in.groups.push_back(strings.back());
  in.session = strings.size() > 1 ? strings[1] : "s";
  return in;
}

audit::ApprovalEvent approval_carrying(const std::vector<std::string>& strings, std::size_t n,
                                       std::string_view proposal) {
  const auto at = [&](std::size_t i) { return strings.empty() ? "" : strings[i % strings.size()]; };
  audit::ApprovalEvent e;
  e.event = "created";
  e.approval_id = "apr_" + hex_id(n) + std::string(16, 'a');
  e.action_hash = "sha256:" + hex_id(n);
  e.decision_id = "d-" + hex_id(n);
  e.by = at(0);
  e.note = at(1);
  e.requester = at(2);
  e.session = at(3);
  e.agent = "coder-1";
  e.origin = "cli";
  e.action_json = std::string(proposal);
  e.rules = {at(4), at(5)};
  e.reason = at(6);
  e.approvers_needed = 1;
  e.expires_ms = 1795148900000;
  e.result_json = n % 2 ? R"({"exit":0,"stdout":")" + std::string(n % 3 ? "ok" : "x") + "\"}" : "";
  return e;
}

// What the records of these proposals (JSON texts, or not JSON) digest to, each one's decision
// record and approval record masked with a fixed key, and how many secrets they masked:
// "<sha256 hex> <masks>".
std::string digest_of_records(const std::vector<std::string>& proposals) {
  const audit::Masker masker(std::string(32, 'k'));
  std::string all;
  for (std::size_t n = 0; n < proposals.size(); ++n) {
    const std::string& proposal = proposals[n];
    std::vector<std::string> strings;
    rapidjson::Document doc;
    doc.Parse(proposal.data(), proposal.size());
    if (doc.HasParseError()) {
      strings.push_back(proposal);
    } else {
      strings_of(doc, &strings);
    }
    all += audit::decision_fields(input_carrying(strings, proposal),
                                  decision_carrying(strings, n, proposal), &masker);
    all += '\n';
    all += audit::approval_fields(approval_carrying(strings, n, proposal), &masker);
    all += '\n';
  }
  std::size_t masks = 0;
  for (std::size_t at = all.find("{\"field\":"); at != std::string::npos;
       at = all.find("{\"field\":", at + 1)) {
    ++masks;
  }
  return digest::sha256_hex(all) + " " + std::to_string(masks);
}

std::vector<std::string> corpus_proposals(const char* file) {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR "/tests/corpus/") + file);
  REQUIRE(in);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    rapidjson::Document doc;
    doc.Parse(line.data(), line.size());
    REQUIRE_FALSE(doc.HasParseError());
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    doc["proposal"].Accept(writer);
    out.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return out;
}

// A shell proposal whose command is `text`, with `text` as a member name and an array
// element as well.
std::string proposal_with(const std::string& text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("target");
  w.String("shell");
  w.Key("payload");
  w.StartObject();
  w.Key("command");
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  w.Key(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  w.StartArray();
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  w.String("ls");
  w.EndArray();
  w.EndObject();
  w.EndObject();
  return {buffer.GetString(), buffer.GetSize()};
}

// Secrets of every kind the masker knows, and text that is one only in its context.
const std::vector<std::string>& planted_secrets() {
  static const std::vector<std::string> secrets = {
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6\n"
      "-----END RSA PRIVATE KEY-----",
      "sk-ant-api03-Qx7Lm2Np9Rt4Vw6Yb1Cd3Ef5Gh8Jk0MnPqRsTuVwXyZ",
      "sk-proj-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPq",
      "sk-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPqRsTuVwXy",
      "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
      "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOPqrstuv",
      "AKIAIOSFODNN7EXAMPLE",
      "xoxb-2048576012-3901274856-Zq8Xw7Vu6Ts5Rq",
      "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "Zx9Kq2Lm8Np4Rt6Vw1Yb3Cd5Ef7Gh0Jp",
      "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
      "rk_live_4eC39HqLyjWDarjtT1zdp7dc",
      "glpat-xZ8kq3Lm7Np2Rt5Vw9Yb",
      "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
      "pypi-AgEIcHlwaS5vcmcCJGY0ZjBhYzEyLWVhNmQtNDk3ZS1iNTU2LTc4MzU3ZTg",
      "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeF",
      "dop_v1_" + std::string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
      "SG.aB3dE5fG7hJ9kL1mN3pQ5r.aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bC7dE9f",
      "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
      "https://bob:hunter22@example.com/repo.git",
      "PGPASSWORD=s3cr3tpw psql",
      "GITHUB_TOKEN='abc123def'",
      "api_key=zzz999",
      "curl -u bob:pa55word https://x",
      "mysql -uroot -ppassw0rd shop",
      "mysqldump --password=abc123 db",
      "sshpass -p letmein ssh host",
      "Authorization: Bearer abc.def.ghi",
      "authorization: basic dXNlcjpwYXNz",
      "X-Api-Key: k3yk3yk3y",
      "PRIVATE-TOKEN: tok123tok",
      "x-access-token: t0k3nt0k3n",
  };
  return secrets;
}

// Text near a secret that is not one (or is one only in another context), approval ids,
// digests, and encoded or split forms of secrets.
std::vector<std::string> near_misses() {
  std::vector<std::string> out = {
      "apr_0123456789abcdef01234567",
      "apr_0123456789abcdef0123456g",
      "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
      "0f8fad5b-d9cb-469f-a165-70867728950e",
      "PGPASSWORD s3cr3tpw",
      "PGPASSWORD=ab",
      "bob:pa55word",
      "curl -u bob:pw",
      "echo -ppassw0rd",
      "mysql -p",
      "--password",
      "sshpass letmein",
      "Authorization: Bearer ab",
      "Authorization Bearer abc.def",
      "https://bob@example.com",
      "https://bob:pw@example.com",
      "HTTPS://bob:hunter22@example.com",
      "npm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5x",
      "xnpm_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5",
      "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeF9",
      "dop_v1_0123456789abcdef",
      "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7",
      "risk-assessment-" + std::string("Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0Jk"),
      "sk%2Dproj%2DTz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPq",
      "'sk-pr''oj-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPq'",
      "\"gh\" + \"p_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\"",
      "\\x73k-ant-api03-Qx7Lm2Np9Rt4Vw6Yb1Cd3Ef5Gh8Jk0MnPqRsTuVwXyZ",
      "&#115;k-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPqRsTuVwXy",
      "AKIA\\\nIOSFODNN7EXAMPLE",
      "%2541KIAIOSFODNN7EXAMPLE",
      "ThisIsAVeryLongIdentifierName2024",
      "/tmp/run.iT1WyS/out/Zx9Kq2Lm8Np4Rt6Vw1Yb3Cd5Ef7Gh0Jp/log",
      "hardening-session-filled-then-script",
      "caf\xc3\xa9 \xff\xfe token",
      // 48 bytes, all of them in the literal (the digest below was pinned with these bytes).
      std::string("nul\0sk-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPq\0_", 48),
  };
  for (const std::string& s : planted_secrets()) {
    out.push_back(s.substr(0, s.size() - 1));
    out.push_back(s.substr(1));
    out.push_back("x" + s);
    out.push_back(s + "_");
    std::string upper;
    for (char c : s) upper += static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    out.push_back(upper);
  }
  return out;
}

}  // namespace

TEST_CASE("the corpus proposals' masked records are pinned", "[mask]") {
  // Proposals as the corpus holds them (tests/corpus): a change to the corpus moves these.
  CHECK(digest_of_records(corpus_proposals("benign.jsonl")) ==
        "a12d8cf40e923bb713f6649e065765a46a391e0c826a56c8237721ffae9c9e0a 0");
  CHECK(digest_of_records(corpus_proposals("dangerous.jsonl")) ==
        "da22e65ab760a2db12bd590d99311453edf28135031f4c9c88dab9f7b5b65e7f 193");
}

TEST_CASE("records holding a secret at every position are pinned", "[mask]") {
  const std::string carrier = "run a/b=c:d 'q' \"e\" %2F -u -p x\n";
  std::vector<std::string> proposals;
  for (const std::string& secret : planted_secrets()) {
    for (std::size_t at = 0; at <= carrier.size(); ++at) {
      std::string text = carrier;
      text.insert(at, secret);
      proposals.push_back(proposal_with(text));
      // Twice in one string, and glued to itself.
      proposals.push_back(proposal_with(text + " " + secret + secret));
    }
  }
  CHECK(proposals.size() == planted_secrets().size() * (carrier.size() + 1) * 2);
  CHECK(digest_of_records(proposals) ==
        "b64b3b0569527c9add561d999e71f8e7a0c275bc5cfddaeacb182a7c8d7f6164 96457");
}

TEST_CASE("records of near misses, encoded secrets and secrets in context are pinned", "[mask]") {
  std::vector<std::string> proposals;
  for (const std::string& text : near_misses()) {
    proposals.push_back(proposal_with(text));
    proposals.push_back(text);  // not JSON: the record's input is the text as a string
  }
  // A proposal whose strings repeat one another, and one of every string at once.
  std::string every;
  for (const std::string& s : planted_secrets()) every += s + " ";
  for (const std::string& s : near_misses()) every += s + " ";
  proposals.push_back(proposal_with(every));
  CHECK(digest_of_records(proposals) ==
        "a5ad977b3acb6e6cfec9393b4667f05703be24d593ffcdac922ff361bc9797fc 15164");
}
