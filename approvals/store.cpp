// The parts of the approval store both backends share: names, the schema, hashing, tokens
// and ids, and the JSON array columns.
#include "approvals/store.h"

#include <openssl/rand.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <charconv>
#include <stdexcept>

#include "approvals/internal.h"
#include "bindings/digest.h"
#include "bindings/json.h"
#include "bindings/text.h"

namespace warden::approvals {

std::string_view status_name(Status status) {
  switch (status) {
    case Status::Pending:
      return "pending";
    case Status::Approved:
      return "approved";
    case Status::Denied:
      return "denied";
    case Status::Expired:
      return "expired";
    case Status::Executed:
      return "executed";
    case Status::Refused:
      return "refused";
  }
  return "pending";
}

std::optional<Status> parse_status(std::string_view name) {
  for (Status s : {Status::Pending, Status::Approved, Status::Denied, Status::Expired,
                   Status::Executed, Status::Refused}) {
    if (status_name(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view approve_result_name(ApproveResult result) {
  switch (result) {
    case ApproveResult::Claimed:
      return "claimed";
    case ApproveResult::NeedMore:
      return "need-more";
    case ApproveResult::NotFound:
      return "not-found";
    case ApproveResult::Closed:
      return "closed";
    case ApproveResult::Expired:
      return "expired";
    case ApproveResult::SelfApproval:
      return "self-approval";
    case ApproveResult::AlreadyApproved:
      return "already-approved";
    case ApproveResult::DigestMismatch:
      return "digest-mismatch";
  }
  return "not-found";
}

std::string action_hash(std::string_view action_json) {
  return "sha256:" + detail::sha256_hex(action_json);
}

std::string grants_json(const std::vector<CapabilityGrant>& grants) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  auto string = [&w](const std::string& s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  w.StartArray();
  for (const CapabilityGrant& g : grants) {
    w.StartObject();
    w.Key("capability");
    string(g.capability);
    w.Key("rule");
    string(g.rule);
    w.Key("reason");
    string(g.reason);
    w.EndObject();
  }
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

std::string answer_digest(std::string_view action_hash,
                          const std::vector<CapabilityGrant>& grants) {
  if (grants.empty()) return std::string(action_hash);
  std::string bound(action_hash);
  bound += '\n';
  bound += grants_json(grants);
  return "sha256:" + detail::sha256_hex(bound);
}

namespace detail {

const char* const kSchema[] = {
    "CREATE TABLE IF NOT EXISTS approvals ("
    " id TEXT PRIMARY KEY,"
    " token_hash TEXT UNIQUE NOT NULL,"
    " status TEXT NOT NULL,"
    " action_hash TEXT NOT NULL,"
    " action_json TEXT NOT NULL,"
    " proposal_json TEXT NOT NULL,"
    " principal TEXT NOT NULL,"
    " groups_json TEXT NOT NULL,"
    " session TEXT NOT NULL,"
    " agent TEXT NOT NULL,"
    " rules_json TEXT NOT NULL,"
    " reason TEXT NOT NULL,"
    " decision_id TEXT NOT NULL,"
    " origin TEXT NOT NULL,"
    " daemon_id TEXT NOT NULL,"
    " created_ms BIGINT NOT NULL,"
    " expires_ms BIGINT NOT NULL,"
    " approvers_needed INTEGER NOT NULL,"
    " closed_by TEXT NOT NULL DEFAULT '',"
    " close_note TEXT NOT NULL DEFAULT '',"
    " closed_ms BIGINT NOT NULL DEFAULT 0,"
    " result_json TEXT NOT NULL DEFAULT '',"
    " claimed_by TEXT NOT NULL DEFAULT '',"
    " grants_json TEXT NOT NULL DEFAULT '',"
    " requester_token_id TEXT NOT NULL DEFAULT '')",
    "CREATE INDEX IF NOT EXISTS approvals_status_expires ON approvals (status, expires_ms)",
    "CREATE TABLE IF NOT EXISTS approval_votes ("
    " approval_id TEXT NOT NULL REFERENCES approvals (id),"
    " approver TEXT NOT NULL,"
    " note TEXT NOT NULL,"
    " at_ms BIGINT NOT NULL,"
    " seq INTEGER NOT NULL,"
    " scope_minutes INTEGER NOT NULL DEFAULT 0,"
    " PRIMARY KEY (approval_id, approver))",
    "CREATE TABLE IF NOT EXISTS approval_grants ("
    " id TEXT PRIMARY KEY,"
    " approval_id TEXT NOT NULL REFERENCES approvals (id),"
    " principal TEXT NOT NULL,"
    " session TEXT NOT NULL,"
    " action_hash TEXT NOT NULL,"
    " expires_ms BIGINT NOT NULL,"
    " uses_left INTEGER NOT NULL,"  // > 0: uses remaining; 0: unlimited until expiry; -1: used up
    " approver TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS approval_grants_match"
    " ON approval_grants (principal, session, action_hash)",
    // Listing a page (status, then the list's order), counting a principal's pending ones
    // against the limit, and finding closed ones to prune, without reading the whole table.
    "CREATE INDEX IF NOT EXISTS approvals_status_created ON approvals (status, created_ms, id)",
    "CREATE INDEX IF NOT EXISTS approvals_principal_status"
    " ON approvals (principal, status, expires_ms)",
    "CREATE INDEX IF NOT EXISTS approvals_status_closed ON approvals (status, closed_ms)",
    "CREATE INDEX IF NOT EXISTS approval_grants_approval ON approval_grants (approval_id)",
};
const std::size_t kSchemaCount = sizeof(kSchema) / sizeof(kSchema[0]);

const char* const kSchemaProbes[] = {
    "SELECT id, token_hash, status, action_hash, action_json, proposal_json, principal,"
    " groups_json, session, agent, rules_json, reason, decision_id, origin, daemon_id,"
    " created_ms, expires_ms, approvers_needed, closed_by, close_note, closed_ms, result_json,"
    " claimed_by, grants_json, requester_token_id FROM approvals WHERE 1 = 0",
    "SELECT approval_id, approver, note, at_ms, seq, scope_minutes FROM approval_votes"
    " WHERE 1 = 0",
    "SELECT id, approval_id, principal, session, action_hash, expires_ms, uses_left, approver"
    " FROM approval_grants WHERE 1 = 0",
};
const std::size_t kSchemaProbeCount = sizeof(kSchemaProbes) / sizeof(kSchemaProbes[0]);

std::int64_t parse_int(std::string_view text, const char* what) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) {
    throw StoreError(std::string("approval store: column ") + what + " is not an integer");
  }
  return v;
}

Approval approval_from_row(const std::function<std::string(int)>& column) {
  Approval a;
  a.id = column(0);
  const std::string status = column(1);
  auto s = parse_status(status);
  if (!s) throw StoreError("approval store: unknown status '" + status + "' on " + a.id);
  a.status = *s;
  a.action_hash = column(2);
  a.action_json = column(3);
  a.proposal_json = column(4);
  a.principal = column(5);
  a.groups = parse_json_array(column(6));
  a.session = column(7);
  a.agent = column(8);
  a.rules = parse_json_array(column(9));
  a.reason = column(10);
  a.decision_id = column(11);
  a.origin = column(12);
  a.daemon_id = column(13);
  a.created_ms = parse_int(column(14), "created_ms");
  a.expires_ms = parse_int(column(15), "expires_ms");
  a.approvers_needed = static_cast<int>(parse_int(column(16), "approvers_needed"));
  a.closed_by = column(17);
  a.close_note = column(18);
  a.closed_ms = parse_int(column(19), "closed_ms");
  a.result_json = column(20);
  a.grants = parse_grants(column(21), a.id);
  a.requester_token_id = column(22);
  a.digest = answer_digest(a.action_hash, a.grants);
  return a;
}

std::vector<CapabilityGrant> parse_grants(std::string_view text, const std::string& id) {
  std::vector<CapabilityGrant> out;
  if (text.empty()) return out;
  auto broken = [&id]() {
    return StoreError("approval store: the grants of " + id + " are not a list of capabilities");
  };
  // The store's own column (a row edited on disk with a NUL or a misread zero is refused).
  rapidjson::Document doc;
  if (json::parse_stored(text, &doc) || !doc.IsArray()) throw broken();
  for (const auto& v : doc.GetArray()) {
    if (!v.IsObject()) throw broken();
    CapabilityGrant g;
    for (auto [name, field] : {std::pair{"capability", &g.capability}, std::pair{"rule", &g.rule},
                               std::pair{"reason", &g.reason}}) {
      auto m = v.FindMember(name);
      if (m == v.MemberEnd() || !m->value.IsString()) throw broken();
      field->assign(m->value.GetString(), m->value.GetStringLength());
    }
    if (g.capability.empty()) throw broken();
    out.push_back(std::move(g));
  }
  return out;
}

namespace {

void random_bytes(unsigned char* out, int n) {
  if (RAND_bytes(out, n) != 1) throw StoreError("approval store: the CSPRNG failed");
}

}  // namespace

Created new_approval(const NewApproval& n) {
  Created out;
  out.token = new_token();
  Approval& a = out.approval;
  a.id = new_id("apr_");
  a.status = Status::Pending;
  a.action_hash = action_hash(n.action_json);
  a.action_json = n.action_json;
  a.proposal_json = n.proposal_json;
  a.principal = n.principal;
  a.groups = n.groups;
  a.session = n.session;
  a.agent = n.agent;
  a.rules = n.rules;
  a.reason = n.reason;
  a.decision_id = n.decision_id;
  a.origin = n.origin;
  a.daemon_id = n.daemon_id;
  a.created_ms = n.created_ms;
  a.expires_ms = n.expires_ms;
  a.approvers_needed = n.approvers_needed;
  a.grants = n.grants;
  a.requester_token_id = n.requester_token_id;
  a.digest = answer_digest(a.action_hash, a.grants);
  return out;
}

std::string new_token() {
  unsigned char raw[32];
  random_bytes(raw, sizeof raw);
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out = "wapr_";
  std::uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : raw) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

std::string new_id(std::string_view prefix) {
  unsigned char raw[12];
  random_bytes(raw, sizeof raw);
  return std::string(prefix) + text::hex(raw, sizeof raw);
}

std::string sha256_hex(std::string_view data) {
  try {
    return digest::sha256_hex(data);
  } catch (const std::runtime_error&) {
    throw StoreError("approval store: SHA-256 failed");
  }
}

std::string rule_needle(std::string_view rule) {
  if (rule.empty()) return {};
  std::string one = json_array({std::string(rule)});
  return one.substr(1, one.size() - 2);  // ["rule"] → "rule"
}

bool has_rule(const Approval& a, std::string_view rule) {
  if (rule.empty()) return true;
  for (const auto& r : a.rules) {
    if (r == rule) return true;
  }
  return false;
}

std::int32_t principal_key(std::string_view principal) {
  const std::string hex = sha256_hex(principal);
  std::uint32_t v = 0;
  for (int i = 0; i < 8; ++i)
    v = (v << 4) | static_cast<std::uint32_t>(text::hex_value(hex[static_cast<std::size_t>(i)]));
  return static_cast<std::int32_t>(v);
}

std::string json_array(const std::vector<std::string>& items) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartArray();
  for (const auto& s : items) w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  w.EndArray();
  return std::string(buf.GetString(), buf.GetSize());
}

std::vector<std::string> parse_json_array(std::string_view text) {
  std::vector<std::string> out;
  rapidjson::Document doc;  // the store's own column, read as parse_grants reads one
  if (json::parse_stored(text, &doc) || !doc.IsArray()) return out;
  for (const auto& v : doc.GetArray()) {
    if (v.IsString()) out.emplace_back(v.GetString(), v.GetStringLength());
  }
  return out;
}

}  // namespace detail
}  // namespace warden::approvals
