// A Decision's JSON forms pinned byte for byte: the `decide` reply's "decision"
// (decision_to_json, with and without explain), the audit record's FIELDS (decision_fields,
// with and without a masker), the exec envelope and the pipeline's decision events — for
// decisions that set every member, every outcome, and strings and numbers at their edges
// (empty, control bytes, quotes, backslashes, NUL, invalid UTF-8, non-ASCII, secrets, the
// int64 extremes). Clients read the reply and the audit log is hash-chained: neither may move
// by one byte.
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "audit/mask.h"
#include "audit/record.h"
#include "engine/decision.h"
#include "pipeline/events.h"
#include "server/exec_wire.h"
#include "tests/audit/record_fields.h"

using namespace warden;
using namespace std::string_literals;

namespace {

// Quotes, a backslash, a slash, C0 controls (with their short escapes), DEL and a NUL.
const std::string kEdgeBytes = "q\"b\\s/ \x01\x1f\x7f\b\f\n\r\t nul\0end"s;
// A stray continuation byte, an overlong '/', a surrogate, past U+10FFFF, a cut sequence.
const std::string kBadUtf8 = "bad \xff \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 cut\xe2\x82"s;
// Two, three and four byte sequences and a C1 control (U+0085), all valid.
const std::string kNonAscii = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xc2\x85";
const std::string kToken = audit::testing::kGithubToken;

EffectRecord pinned_effect(std::string kind, std::string target, bool in_workspace, bool dynamic) {
  EffectRecord e;
  e.kind = std::move(kind);
  e.object = "path";
  e.target = std::move(target);
  e.program = "git";
  e.path_class = "workspace";
  e.in_workspace = in_workspace;
  e.subcommand = "push";
  e.via = "redirect";
  e.dynamic = dynamic;
  return e;
}

FiredRule pinned_rule(std::string rule, Outcome outcome, std::string reason, bool monitor) {
  FiredRule r;
  r.rule = std::move(rule);
  r.outcome = outcome;
  r.reason = std::move(reason);
  r.monitor = monitor;
  return r;
}

// Every member set, every string at an edge.
Decision pinned_full() {
  Decision d;
  d.decision_id = "d-" + kEdgeBytes;
  d.outcome = Outcome::ApprovalRequired;
  d.reason = kEdgeBytes + kBadUtf8 + kNonAscii + " token " + kToken;
  FiredRule plain = pinned_rule("rule-plain", Outcome::Approve, "", false);
  FiredRule disabled = pinned_rule("watch \"q\"", Outcome::Reject, kNonAscii, true);
  disabled.overlay = "team/overlay.toml:3";
  disabled.asserted = Outcome::Reject;
  disabled.disabled = true;
  FiredRule replaced = pinned_rule("leak-" + kToken, Outcome::ApprovalRequired, kBadUtf8, false);
  replaced.overlay = "o.toml:9";
  replaced.asserted = Outcome::Approve;
  replaced.asserted_reason = "was \\ said " + kToken;
  d.rules = {plain, disabled, replaced};
  Rewrite strip{
      "strip", "payload.command", "git push --force " + kToken, "git push", kEdgeBytes, false, true,
      ""};
  Rewrite watched{"watch-rw", "payload.\"k\"", "", "", "", true, false, "o.toml:12"};
  d.rewrites = {strip, watched};
  d.action_json = R"({"target":"shell","payload":{"command":"git push","token":")" + kToken +
                  R"(","n":1.50e3}})";
  d.rules_digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  d.elapsed_us = INT64_MAX;
  d.history_asserted = 7;  // not part of any JSON form
  d.defaulted = true;
  d.error_code = "E_RUN_LIMIT";
  d.facts_json = R"([{"template":"effect","slots":{"kind":"exec"}}])";
  d.effects = {pinned_effect("write", "/w/" + kEdgeBytes + kNonAscii, true, false),
               pinned_effect("", kToken + kBadUtf8, false, true), EffectRecord{}};
  d.allows = {{"pipes", "shell-syntax", "pipes are fine", false, ""},
              {"net", "private-network", kEdgeBytes, true, "o.toml:20"},
              {"leak-" + kToken, "shell-syntax", kToken, false, ""}};
  d.hints = {{"hint-rule", "say \"please\"\n" + kNonAscii}, {"", ""}};
  d.approval_set = true;
  d.approval_expires_s = INT64_MAX;
  d.approvers_needed = 2;
  return d;
}

// A failed-closed reject at the other numeric extremes.
Decision pinned_failed() {
  Decision d;
  d.decision_id = "d-failed";
  d.outcome = Outcome::Reject;
  d.reason = "the rules ran past their limit";
  d.error_code = "E_DEADLINE";
  d.rules_digest = "sha256:ff";
  d.elapsed_us = INT64_MIN;
  d.approval_set = true;
  d.approval_expires_s = INT64_MIN;
  d.approvers_needed = INT_MIN;
  d.effects = {EffectRecord{}};
  return d;
}

// An approve whose only rewrite was not applied (the record then has no "action").
Decision pinned_approve() {
  Decision d;
  d.decision_id = "d-" + kNonAscii;
  d.outcome = Outcome::Approve;
  d.reason = kBadUtf8;
  d.rules = {pinned_rule("write-in-workspace", Outcome::Approve, "in the workspace", false)};
  d.rewrites = {{"note", "payload.path", "a", "b", "monitor only", true, false, ""}};
  d.action_json = R"({"target":"file","action":"write","payload":{"path":"/w/a"}})";
  d.rules_digest = "sha256:00";
  d.elapsed_us = 0;
  d.allows = {{"pipes", "shell-syntax", "", false, ""}};
  d.effects = {pinned_effect("write", "/w/a", true, true)};
  d.approval_set = false;
  d.approval_expires_s = 99;  // not written: no rule set approval terms
  d.approvers_needed = 2;
  return d;
}

audit::DecisionInput pinned_input(std::string_view proposal) {
  audit::DecisionInput in;
  in.proposal_json = proposal;
  in.principal = "agent-" + kEdgeBytes;
  in.groups = {"", kNonAscii, kToken};
  in.session = "s-" + kBadUtf8 + kToken;
  in.time_us = 1795148900000000;
  return in;
}

const std::string kProposal =
    " {\"target\" : \"shell\",\"payload\":{\"command\":\"curl -H 'token " + kToken +
    "'\",\"n\":1.50e3,\"big\":123456789012345678901234567890,\"neg\":-0.0e-7,"
    "\"esc\":\"\\u0001\\\"\\\\\\u00e9\\ud83d\\ude00\\/\",\"raw\":\"" +
    kBadUtf8 + kNonAscii + "\",\"" + kToken + "\":true},\"list\":[null,false,[],{},\"\"]} ";

server::ExecEnvelopeWire pinned_wire(const Decision& d) {
  server::ExecEnvelopeWire w;
  w.decision = d;
  w.command = "git push " + kEdgeBytes;
  w.cwd = "/w/" + kNonAscii;
  w.workspace_root = "/w";
  w.home = "/home/" + kBadUtf8;
  w.inputs.workspace = "/w";
  w.inputs.own_files = {"/etc/warden/token", kEdgeBytes};
  w.inputs.hide = {};
  w.inputs.writable_roots = {"/tmp"};
  w.inputs.read = {"/root/.rustup"};
  w.inputs.cache_dir = "";
  w.inputs.max_processes = UINT64_MAX;
  return w;
}

// Every form of `d` in one text, each form on its own line after its name.
std::string all_forms(const Decision& d, std::string_view proposal) {
  const audit::Masker masker(std::string(32, 'm'));
  const audit::DecisionInput in = pinned_input(proposal);
  std::string out;
  auto form = [&](const char* name, const std::string& text) {
    out += name;
    out += ": ";
    out += text;
    out += '\n';
  };
  form("reply", decision_to_json(d));
  form("reply explain", decision_to_json(d, true));
  form("record", audit::decision_fields(in, d, nullptr));
  form("record masked", audit::decision_fields(in, d, &masker));
  form("envelope", server::exec_envelope_fields(pinned_wire(d)));
  form("event", pipeline::events::decision(d, "reason", 3));
  form("event approval", pipeline::events::approval_required(d));
  return out;
}

// The pinned text with its markers replaced, so that it stays readable: <DEL> is the byte 0x7f
// and <U+XXXX> that code point in UTF-8 (<U+FFFD> is what each byte that is not UTF-8 becomes).
std::string expand_markers(std::string_view pinned) {
  std::string text;
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    if (pinned.compare(i, 5, "<DEL>") == 0) {
      text += '\x7f';
      i += 4;
    } else if (pinned.compare(i, 3, "<U+") == 0) {
      const std::size_t end = pinned.find('>', i);
      const auto cp = std::stoul(std::string(pinned.substr(i + 3, end - i - 3)), nullptr, 16);
      if (cp < 0x800) {
        text += static_cast<char>(0xc0 | cp >> 6);
      } else {
        if (cp < 0x10000) {
          text += static_cast<char>(0xe0 | cp >> 12);
        } else {
          text += static_cast<char>(0xf0 | cp >> 18);
          text += static_cast<char>(0x80 | (cp >> 12 & 0x3f));
        }
        text += static_cast<char>(0x80 | (cp >> 6 & 0x3f));
      }
      text += static_cast<char>(0x80 | (cp & 0x3f));
      i = end;
    } else {
      text += pinned[i];
    }
  }
  return text;
}

// Form by form, so a failure names the form that moved.
void check_forms(const std::string& actual, const char* pinned) {
  const std::string expected = expand_markers(pinned);
  auto lines = [](const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = text.find('\n', at);
      out.push_back(text.substr(at, end - at));
      at = end == std::string::npos ? text.size() : end + 1;
    }
    return out;
  };
  const std::vector<std::string> got = lines(actual), want = lines(expected);
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == want[i]);
  CHECK(actual == expected);
}

// Every member set: every form, one a line.
const char* const kFullForms =
    R"golden(reply: {"decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor","overlay":{"at":"team/overlay.toml:3","disabled":true}},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce","overlay":{"at":"o.toml:9","was":"approve","was_reason":"was \\ said ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}}],"rewrites":[{"rule":"strip","key":"payload.command","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"enforce","applied":true},{"rule":"watch-rw","key":"payload.\"k\"","reason":"","mode":"monitor","applied":false,"overlay":"o.toml:12"}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"pipes are fine","mode":"enforce"},{"rule":"net","capability":"private-network","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"monitor","overlay":"o.toml:20"},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","capability":"shell-syntax","reason":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","mode":"enforce"}],"hints":[{"rule":"hint-rule","text":"say \"please\"\ncaf<U+00E9> <U+20AC> <U+1F600> <U+0085>"},{"rule":"","text":""}],"approval":{"expires_in_s":9223372036854775807,"approvers":2},"action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}},"rules_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","elapsed_us":9223372036854775807,"error":"E_RUN_LIMIT"}
)golden"
    R"golden(reply explain: {"decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor","overlay":{"at":"team/overlay.toml:3","disabled":true}},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce","overlay":{"at":"o.toml:9","was":"approve","was_reason":"was \\ said ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}}],"rewrites":[{"rule":"strip","key":"payload.command","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"enforce","applied":true},{"rule":"watch-rw","key":"payload.\"k\"","reason":"","mode":"monitor","applied":false,"overlay":"o.toml:12"}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"pipes are fine","mode":"enforce"},{"rule":"net","capability":"private-network","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"monitor","overlay":"o.toml:20"},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","capability":"shell-syntax","reason":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","mode":"enforce"}],"hints":[{"rule":"hint-rule","text":"say \"please\"\ncaf<U+00E9> <U+20AC> <U+1F600> <U+0085>"},{"rule":"","text":""}],"approval":{"expires_in_s":9223372036854775807,"approvers":2},"action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}},"rules_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","elapsed_us":9223372036854775807,"error":"E_RUN_LIMIT","defaulted":true,"facts":[{"template":"effect","slots":{"kind":"exec"}}]}
)golden"
    R"golden(record: "decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","rules_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","input":{"target":"shell","payload":{"command":"curl -H 'token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'","n":1.50e3,"big":123456789012345678901234567890,"neg":-0.0e-7,"esc":"\u0001\"\\<U+00E9><U+1F600>/","raw":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5":true},"list":[null,false,[],{},""]},"outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","defaulted":true,"error_code":"E_RUN_LIMIT","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor"},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce"}],"rewrites":[{"rule":"strip","key":"payload.command","old":"git push --force ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","new":"git push","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"enforce","applied":true},{"rule":"watch-rw","key":"payload.\"k\"","old":"","new":"","reason":"","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"pipes are fine","mode":"enforce"},{"rule":"net","capability":"private-network","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"monitor"},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","capability":"shell-syntax","reason":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","mode":"enforce"}],"approval":{"expires_in_s":9223372036854775807,"approvers":2},"action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}},"effects":[{"kind":"write","object":"path","target":"/w/q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endcaf<U+00E9> <U+20AC> <U+1F600> <U+0085>","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":false},{"kind":"","object":"path","target":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","program":"git","class":"workspace","in_workspace":false,"subcommand":"push","via":"redirect","dynamic":true},{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"elapsed_us":9223372036854775807,"masks":[]
)golden"
    R"golden(record masked: "decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","rules_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","input":{"target":"shell","payload":{"command":"curl -H 'token ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5'","n":1.50e3,"big":123456789012345678901234567890,"neg":-0.0e-7,"esc":"\u0001\"\\<U+00E9><U+1F600>/","raw":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5":true},"list":[null,false,[],{},""]},"outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","defaulted":true,"error_code":"E_RUN_LIMIT","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor"},{"rule":"amrh-ghp_oP1fY0yV0gY6oI7zN2kE3bQ9xY7iF3nI9xQ8","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce"}],"rewrites":[{"rule":"strip","key":"payload.command","old":"git push --force ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","new":"git push","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"enforce","applied":true},{"rule":"watch-rw","key":"payload.\"k\"","old":"","new":"","reason":"","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"pipes are fine","mode":"enforce"},{"rule":"net","capability":"private-network","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","mode":"monitor"},{"rule":"amrh-ghp_oP1fY0yV0gY6oI7zN2kE3bQ9xY7iF3nI9xQ8","capability":"shell-syntax","reason":"ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","mode":"enforce"}],"approval":{"expires_in_s":9223372036854775807,"approvers":2},"action":{"target":"shell","payload":{"command":"git push","token":"ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","n":1.50e3}},"effects":[{"kind":"write","object":"path","target":"/w/q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endcaf<U+00E9> <U+20AC> <U+1F600> <U+0085>","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":false},{"kind":"","object":"path","target":"ghp_aK7cS3yO3xL7yZ1vK4dL6yH4kE8oO2sJ8wH2skx <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","program":"git","class":"workspace","in_workspace":false,"subcommand":"push","via":"redirect","dynamic":true},{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"elapsed_us":9223372036854775807,"masks":[{"field":"/groups/2","offset":0,"length":40,"kind":"github-token"},{"field":"/session","offset":25,"length":40,"kind":"github-token"},{"field":"/input/payload/command","offset":15,"length":40,"kind":"github-token"},{"field":"/input/payload/ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","offset":0,"length":40,"kind":"github-token"},{"field":"/reason","offset":70,"length":40,"kind":"github-token"},{"field":"/rules/2/rule","offset":0,"length":45,"kind":"github-token"},{"field":"/rewrites/0/old","offset":17,"length":40,"kind":"github-token"},{"field":"/allows/2/rule","offset":0,"length":45,"kind":"github-token"},{"field":"/allows/2/reason","offset":0,"length":40,"kind":"github-token"},{"field":"/action/payload/token","offset":0,"length":40,"kind":"github-token"},{"field":"/effects/1/target","offset":0,"length":43,"kind":"github-token"}]
)golden"
    R"golden(envelope: "envelope":{"decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","error_code":"E_RUN_LIMIT","action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}},"rules_digest":"sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef","effects":[{"kind":"write","object":"path","target":"/w/q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endcaf<U+00E9> <U+20AC> <U+1F600> <U+0085>","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":false},{"kind":"","object":"path","target":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","program":"git","class":"workspace","in_workspace":false,"subcommand":"push","via":"redirect","dynamic":true},{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","mode":"enforce"},{"rule":"net","capability":"private-network","mode":"monitor"},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","capability":"shell-syntax","mode":"enforce"}],"command":"git push q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","cwd":"/w/caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","workspace_root":"/w","home":"/home/bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","inputs":{"workspace":"/w","own_files":["/etc/warden/token","q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end"],"hide":[],"writable_roots":["/tmp"],"read":["/root/.rustup"],"cache_dir":"","path":["/usr/local/bin","/usr/bin","/bin"],"max_processes":18446744073709551615}}
)golden"
    R"golden(event: {"event":"decision","stage":"reason","attempt":3,"decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","outcome":"approval-required","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","error_code":"E_RUN_LIMIT","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor","overlay":{"at":"team/overlay.toml:3","disabled":true}},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce","overlay":{"at":"o.toml:9","was":"approve","was_reason":"was \\ said ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}}],"action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}}}
)golden"
    R"golden(event approval: {"event":"approval-required","decision_id":"d-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","reason":"q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000endbad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>caf<U+00E9> <U+20AC> <U+1F600> <U+0085> token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","rules":[{"rule":"rule-plain","outcome":"approve","reason":"","mode":"enforce"},{"rule":"watch \"q\"","outcome":"reject","reason":"caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","mode":"monitor","overlay":{"at":"team/overlay.toml:3","disabled":true}},{"rule":"leak-ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"approval-required","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","mode":"enforce","overlay":{"at":"o.toml:9","was":"approve","was_reason":"was \\ said ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"}}],"action":{"target":"shell","payload":{"command":"git push","token":"ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","n":1.50e3}}}
)golden";

// A default Decision: every form, one a line.
const char* const kEmptyForms =
    R"golden(reply: {"decision_id":"","outcome":"reject","reason":"","rules":[],"action":null,"rules_digest":"","elapsed_us":0}
)golden"
    R"golden(reply explain: {"decision_id":"","outcome":"reject","reason":"","rules":[],"action":null,"rules_digest":"","elapsed_us":0,"defaulted":false,"facts":[]}
)golden"
    R"golden(record: "decision_id":"","rules_digest":"","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","input":"","outcome":"reject","reason":"","defaulted":false,"error_code":"","rules":[],"rewrites":[],"effects":[],"elapsed_us":0,"masks":[]
)golden"
    R"golden(record masked: "decision_id":"","rules_digest":"","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","input":"","outcome":"reject","reason":"","defaulted":false,"error_code":"","rules":[],"rewrites":[],"effects":[],"elapsed_us":0,"masks":[{"field":"/groups/2","offset":0,"length":40,"kind":"github-token"},{"field":"/session","offset":25,"length":40,"kind":"github-token"}]
)golden"
    R"golden(envelope: "envelope":{"decision_id":"","outcome":"reject","reason":"","error_code":"","action":{},"rules_digest":"","effects":[],"allows":[],"command":"git push q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","cwd":"/w/caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","workspace_root":"/w","home":"/home/bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","inputs":{"workspace":"/w","own_files":["/etc/warden/token","q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end"],"hide":[],"writable_roots":["/tmp"],"read":["/root/.rustup"],"cache_dir":"","path":["/usr/local/bin","/usr/bin","/bin"],"max_processes":18446744073709551615}}
)golden"
    R"golden(event: {"event":"decision","stage":"reason","attempt":3,"decision_id":"","outcome":"reject","reason":"","rules":[],"action":null}
)golden"
    R"golden(event approval: {"event":"approval-required","decision_id":"","reason":"","rules":[],"action":null}
)golden";

// The failed-closed reject: every form, one a line.
const char* const kFailedForms =
    R"golden(reply: {"decision_id":"d-failed","outcome":"reject","reason":"the rules ran past their limit","rules":[],"approval":{"expires_in_s":-9223372036854775808,"approvers":-2147483648},"action":null,"rules_digest":"sha256:ff","elapsed_us":-9223372036854775808,"error":"E_DEADLINE"}
)golden"
    R"golden(reply explain: {"decision_id":"d-failed","outcome":"reject","reason":"the rules ran past their limit","rules":[],"approval":{"expires_in_s":-9223372036854775808,"approvers":-2147483648},"action":null,"rules_digest":"sha256:ff","elapsed_us":-9223372036854775808,"error":"E_DEADLINE","defaulted":false,"facts":[]}
)golden"
    R"golden(record: "decision_id":"d-failed","rules_digest":"sha256:ff","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","input":"not json <U+FFFD> ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","outcome":"reject","reason":"the rules ran past their limit","defaulted":false,"error_code":"E_DEADLINE","rules":[],"rewrites":[],"approval":{"expires_in_s":-9223372036854775808,"approvers":-2147483648},"effects":[{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"elapsed_us":-9223372036854775808,"masks":[]
)golden"
    R"golden(record masked: "decision_id":"d-failed","rules_digest":"sha256:ff","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","input":"not json <U+FFFD> ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","outcome":"reject","reason":"the rules ran past their limit","defaulted":false,"error_code":"E_DEADLINE","rules":[],"rewrites":[],"approval":{"expires_in_s":-9223372036854775808,"approvers":-2147483648},"effects":[{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"elapsed_us":-9223372036854775808,"masks":[{"field":"/groups/2","offset":0,"length":40,"kind":"github-token"},{"field":"/session","offset":25,"length":40,"kind":"github-token"},{"field":"/input","offset":11,"length":40,"kind":"github-token"}]
)golden"
    R"golden(envelope: "envelope":{"decision_id":"d-failed","outcome":"reject","reason":"the rules ran past their limit","error_code":"E_DEADLINE","action":{},"rules_digest":"sha256:ff","effects":[{"kind":"","object":"","target":"","program":"","class":"","in_workspace":false,"subcommand":"","via":"","dynamic":false}],"allows":[],"command":"git push q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","cwd":"/w/caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","workspace_root":"/w","home":"/home/bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","inputs":{"workspace":"/w","own_files":["/etc/warden/token","q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end"],"hide":[],"writable_roots":["/tmp"],"read":["/root/.rustup"],"cache_dir":"","path":["/usr/local/bin","/usr/bin","/bin"],"max_processes":18446744073709551615}}
)golden"
    R"golden(event: {"event":"decision","stage":"reason","attempt":3,"decision_id":"d-failed","outcome":"reject","reason":"the rules ran past their limit","error_code":"E_DEADLINE","rules":[],"action":null}
)golden"
    R"golden(event approval: {"event":"approval-required","decision_id":"d-failed","reason":"the rules ran past their limit","rules":[],"action":null}
)golden";

// The approve: every form, one a line.
const char* const kApproveForms =
    R"golden(reply: {"decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"rewrites":[{"rule":"note","key":"payload.path","reason":"monitor only","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"","mode":"enforce"}],"action":{"target":"file","action":"write","payload":{"path":"/w/a"}},"rules_digest":"sha256:00","elapsed_us":0}
)golden"
    R"golden(reply explain: {"decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"rewrites":[{"rule":"note","key":"payload.path","reason":"monitor only","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"","mode":"enforce"}],"action":{"target":"file","action":"write","payload":{"path":"/w/a"}},"rules_digest":"sha256:00","elapsed_us":0,"defaulted":false,"facts":[]}
)golden"
    R"golden(record: "decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","rules_digest":"sha256:00","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5","input":{"target":"file","action":"write","payload":{"path":"/w/a"}},"outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","defaulted":false,"error_code":"","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"rewrites":[{"rule":"note","key":"payload.path","old":"a","new":"b","reason":"monitor only","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"","mode":"enforce"}],"effects":[{"kind":"write","object":"path","target":"/w/a","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":true}],"elapsed_us":0,"masks":[]
)golden"
    R"golden(record masked: "decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","rules_digest":"sha256:00","principal":"agent-q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","groups":["","caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5"],"session":"s-bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>ghp_iY5uM7cO0iS5wS3vB3tG2yZ1vE1oB4lF2lQ5","input":{"target":"file","action":"write","payload":{"path":"/w/a"}},"outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","defaulted":false,"error_code":"","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"rewrites":[{"rule":"note","key":"payload.path","old":"a","new":"b","reason":"monitor only","mode":"monitor","applied":false}],"allows":[{"rule":"pipes","capability":"shell-syntax","reason":"","mode":"enforce"}],"effects":[{"kind":"write","object":"path","target":"/w/a","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":true}],"elapsed_us":0,"masks":[{"field":"/groups/2","offset":0,"length":40,"kind":"github-token"},{"field":"/session","offset":25,"length":40,"kind":"github-token"}]
)golden"
    R"golden(envelope: "envelope":{"decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","error_code":"","action":{"target":"file","action":"write","payload":{"path":"/w/a"}},"rules_digest":"sha256:00","effects":[{"kind":"write","object":"path","target":"/w/a","program":"git","class":"workspace","in_workspace":true,"subcommand":"push","via":"redirect","dynamic":true}],"allows":[{"rule":"pipes","capability":"shell-syntax","mode":"enforce"}],"command":"git push q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end","cwd":"/w/caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","workspace_root":"/w","home":"/home/bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","inputs":{"workspace":"/w","own_files":["/etc/warden/token","q\"b\\s/ \u0001\u001f<DEL>\u0008\u000c\n\r\t nul\u0000end"],"hide":[],"writable_roots":["/tmp"],"read":["/root/.rustup"],"cache_dir":"","path":["/usr/local/bin","/usr/bin","/bin"],"max_processes":18446744073709551615}}
)golden"
    R"golden(event: {"event":"decision","stage":"reason","attempt":3,"decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","outcome":"approve","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"action":{"target":"file","action":"write","payload":{"path":"/w/a"}}}
)golden"
    R"golden(event approval: {"event":"approval-required","decision_id":"d-caf<U+00E9> <U+20AC> <U+1F600> <U+0085>","reason":"bad <U+FFFD> <U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD> <U+FFFD><U+FFFD><U+FFFD><U+FFFD> cut<U+FFFD><U+FFFD>","rules":[{"rule":"write-in-workspace","outcome":"approve","reason":"in the workspace","mode":"enforce"}],"action":{"target":"file","action":"write","payload":{"path":"/w/a"}}}
)golden";

}  // namespace

TEST_CASE("every JSON form of a decision with every member set is pinned", "[decision-json]") {
  const std::string forms = all_forms(pinned_full(), kProposal);
  check_forms(forms, kFullForms);
}

TEST_CASE("every JSON form of an empty decision is pinned", "[decision-json]") {
  const std::string forms = all_forms(Decision{}, "");
  check_forms(forms, kEmptyForms);
}

TEST_CASE("every JSON form of a failed-closed reject is pinned", "[decision-json]") {
  const std::string forms = all_forms(pinned_failed(), "not json \xff " + kToken);
  check_forms(forms, kFailedForms);
}

TEST_CASE("every JSON form of an approve is pinned", "[decision-json]") {
  const std::string forms = all_forms(
      pinned_approve(), R"({"target":"file","action":"write","payload":{"path":"/w/a"}})");
  check_forms(forms, kApproveForms);
}
