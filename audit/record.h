// The `decision` record's FIELDS (docs/AUDIT.md): what the daemon decided, on what input, for
// whom, by which rules — with every string that came from the proposal masked for secrets.
// Runs once per decision on the deciding thread: one pass over the proposal text (a SAX
// parse written straight back out), no DOM. Pure function: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "audit/mask.h"
#include "engine/decision.h"

namespace warden::audit {

struct DecisionInput {
  std::string_view proposal_json;  // what the client sent (the proposal object as decided)
  std::string principal;
  std::vector<std::string> groups;
  std::string session;
  std::int64_t time_us = 0;  // the decision's clock (the record's "time"; not in FIELDS)
};

// The decision record's FIELDS, members in this order:
//   "decision_id","rules_digest","principal","groups":[…],"session","input":{…},"outcome",
//   "reason","defaulted","error_code","rules":[{"rule","outcome","reason","mode"}],
//   "rewrites":[{"rule","key","old","new","reason","mode","applied"}],"allows":[…] (only when a
//   rule asserted one),"approval":{"expires_in_s","approvers"} (only when a rule asserted
//   approval terms),"action":{…} (only when a
//   rewrite was applied),"effects":[{"kind","object","target","program","class","in_workspace",
//   "subcommand","via","dynamic"}],"elapsed_us","masks":[{"field","offset","length","kind"}]
// "input" is the proposal re-serialized (whitespace dropped; numbers, member order and
// duplicates as sent; invalid UTF-8 as U+FFFD). Should proposal_json not be JSON at all, "input"
// is its text as a JSON string. With a masker, every string of the record (and every member
// name in input and action) is masked for secrets (find_secrets) — the proposal's text can
// reach any of them (session, groups, a rule's name or a rewrite's key a rule built from it);
// "masks" lists each (field = JSON pointer into the record, e.g. /session or /rules/0/rule,
// offset/length in bytes).
std::string decision_fields(const DecisionInput& in, const Decision& d, const Masker* masker);

// One event in the life of a human approval (SPEC §6): the `approval` record's input.
//   event: created approved denied expired executed refused scoped-use vote limited
struct ApprovalEvent {
  std::string event;
  std::string approval_id, action_hash, decision_id, by, note, requester, session, agent, origin;
  std::string action_json;  // the action as approved or asked for (JSON object text)
  std::vector<std::string> rules;
  std::string reason;
  int approvers_needed = 0, votes = 0;
  std::int64_t expires_ms = 0;
  std::string result_json;  // an actuator's result (JSON object text), "" when none
  // What approving grants (a JSON array text of {"capability","rule","reason"}), "" or "[]"
  // when nothing; and the digest an approver answers with, recorded with the grants.
  std::string grants_json;
  std::string digest;
  std::string requester_token_id;  // the requester's token id, "" when no token asked
};

// The approval record's FIELDS, members in this order:
//   "event","approval_id","action_hash","decision_id","by","note","requester","session",
//   "agent","origin","action":{…}|null,"rules":[…],"reason","approvers_needed","votes",
//   "expires_ms","result":{…}|null,["grants":[…],"digest",]["requester_token_id",]
//   "masks":[{"field","offset","length","kind"}]
// "grants" and "digest" only when the approval grants something; "requester_token_id" only
// when a token asked.
// "action" and "result" are re-serialized like a decision's "input" (text that is not JSON
// becomes a JSON string; "" becomes null). With a masker every string of the record (and every
// member name in action and result) is masked for secrets, as in decision_fields: a note, a
// reason, the action and its result may all carry user data. The approval's token is never
// part of it.
std::string approval_fields(const ApprovalEvent& e, const Masker* masker);

// The `start` record's FIELDS (the writer appends "torn" itself when it cut a torn line):
//   "version","pid","rules_digest","workspace_root","home","default_outcome","key_id",
//   "every_records","every_seconds",
//   "session":{"ttl_seconds","max_entries","max_sessions","max_bytes"}
// "session" is the daemon's session-memory config ([session] in the daemon's config): replay
// needs it to rebuild each session's history as the daemon kept it.
struct SessionConfig {
  std::uint64_t ttl_seconds = 0, max_entries = 0, max_sessions = 0, max_bytes = 0;
};
struct StartInfo {
  std::string version;
  std::int64_t pid = 0;
  std::string rules_digest, workspace_root, home, default_outcome, key_id;
  std::uint64_t every_records = 0, every_seconds = 0;
  SessionConfig session;
};
std::string start_fields(const StartInfo& s);

// The `reload` record's FIELDS: "rules_digest","previous_digest","by".
std::string reload_fields(std::string_view rules_digest, std::string_view previous_digest,
                          std::string_view by);

}  // namespace warden::audit
