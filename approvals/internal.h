// What the SQLite and PostgreSQL stores share: the schema, the column list they read an
// approval from, token/id generation, hashing and the JSON array columns.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "approvals/store.h"

namespace warden::approvals::detail {

// CREATE TABLE/INDEX IF NOT EXISTS statements, valid in both SQLite and PostgreSQL.
extern const char* const kSchema[];
extern const std::size_t kSchemaCount;

// Statements that read every column the stores use and match no row: run at open, they
// turn a table of another shape into a StoreError then rather than on first use.
extern const char* const kSchemaProbes[];
extern const std::size_t kSchemaProbeCount;

// The columns an approval is read from, in the order approval_from_row expects them.
// Never the token hash.
inline constexpr const char* kApprovalColumns =
    "id, status, action_hash, action_json, proposal_json, principal, groups_json, session, "
    "agent, rules_json, reason, decision_id, origin, daemon_id, created_ms, expires_ms, "
    "approvers_needed, closed_by, close_note, closed_ms, result_json, grants_json, "
    "requester_token_id";

// Builds an approval (without votes) from kApprovalColumns read as text; column(i) is the
// text of column i. Throws StoreError on a row that does not parse (a broken store).
Approval approval_from_row(const std::function<std::string(int)>& column);

// A new pending approval of n with a fresh id and token (not stored yet).
Created new_approval(const NewApproval& n);
std::string new_token();                      // "wapr_" + base64url(32 random bytes), no padding
std::string new_id(std::string_view prefix);  // prefix + 24 hex characters (12 random bytes)
std::string sha256_hex(std::string_view data);
inline std::string token_hash(std::string_view token) { return sha256_hex(token); }

std::string json_array(const std::vector<std::string>& items);
// The strings of a JSON array; anything else (not JSON, not an array, non-string items)
// is skipped rather than trusted.
std::vector<std::string> parse_json_array(std::string_view text);
// The grants_json column: "" (a row from before grants) or "[]" is none; anything that is not
// an array of {"capability","rule","reason"} strings throws StoreError (what an approval
// grants is never guessed).
std::vector<CapabilityGrant> parse_grants(std::string_view text, const std::string& id);

std::int64_t parse_int(std::string_view text, const char* what);

// What a rule's name looks like inside rules_json (its JSON string, quotes included): a
// listing filtered by rule asks the database for rows whose rules_json holds it, then keeps
// those whose rules really name it (has_rule). "" for "".
std::string rule_needle(std::string_view rule);
bool has_rule(const Approval& a, std::string_view rule);  // true for ""

// A 32-bit key for a principal (from its SHA-256): PostgreSQL's advisory lock that makes
// counting a principal's pending approvals and inserting one atomic across daemons.
std::int32_t principal_key(std::string_view principal);

// Approvals deleted per prune transaction.
inline constexpr std::int64_t kPruneBatch = 500;

// Rows read per query while filling a listing filtered by rule (the database matches the
// rule's text, has_rule the rule itself).
inline constexpr std::size_t kListBatch = 256;

}  // namespace warden::approvals::detail
