// Human approvals (SPEC §6) as the CLI speaks and shows them (docs/PROTOCOL.md: pending,
// approve, deny; the "approval" member of decide replies and submit events): the request
// payloads `warden pending|approve|deny` send, and the text a person reads. An approver
// answers an approval they have seen: `approve` sends its id and the digest of the action
// shown (action_hash), never a token. A requester's token (a handle that can deny its own
// approval) is never shown for a listed approval (pending lists and watch events carry none;
// a token member there is dropped, not shown). Every string from the daemon goes through
// printable(). Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace warden::cli {

inline constexpr int kMaxWaitSeconds = 3600;   // "wait_s" of decide and submit: 0..3600
inline constexpr int kMaxScopeMinutes = 1440;  // "scope_minutes" of approve: 1..1440

struct PendingQuery {
  std::string agent, session, rule;
  std::int64_t min_age_s = -1;  // < 0: not sent
  bool watch = false;
  std::int64_t limit = 0;  // the page size asked for; 0: not sent (the daemon's default)
  std::string after;       // the page after this cursor (a reply's "next"); "": the first
};

// `pending` pages hold at most this many approvals (the daemon's own limit).
inline constexpr std::int64_t kMaxPendingPage = 500;

// The request payloads' fields (after "action"), as protocol::make_request takes them.
std::string pending_fields(const PendingQuery& q);
// `pending` for one approval by its id (any state): what `warden approve ID` shows.
std::string show_fields(std::string_view approval_id);
std::string approve_fields(std::string_view approval_id, std::string_view digest,
                           std::string_view note, std::optional<int> scope_minutes);
// "sha256:" followed by 64 lowercase hex digits.
bool is_action_digest(std::string_view text);
// An approval id ("apr_" + 24 hex) is sent as "id", anything else as "token".
std::string deny_fields(std::string_view token_or_id, std::string_view note);
bool is_approval_id(std::string_view text);

// What a capability an approval grants lets its action do, in words: "run its command line
// through /bin/sh (…)" for shell-syntax, … (docs/RULES.md "Capabilities").
std::string capability_text(std::string_view capability);
// The digest an approver answers an APPROVAL with: its "digest" (the action and what approving
// it grants), else its "action_hash" (a daemon from before grants).
std::string answer_digest_of(const rapidjson::Value& approval);

// "4m12s", "2h05m", "3d04h" for a duration in ms (negative: "0s").
std::string duration_text(std::int64_t ms);

// The action an approval is for, in full (a person approves exactly this): "shell run: CMD",
// "file write: PATH", "http POST: URL", "tool call: NAME ARGS" …, else the compact JSON.
std::string approval_action_text(const rapidjson::Value& action);

// The action of a listed approval (an APPROVAL object): approval_action_text of its action,
// or, when the listing left the action out ("truncated"), that it did, its size, its
// preview, and how to see it whole ("warden approve ID").
std::string listed_action_text(const rapidjson::Value& approval);

// One approval (an APPROVAL object) as a block of lines for `warden pending`:
//   apr_…  pending  age 4m12s  expires in 55m48s  approvals 0 of 2
//     requested by alice  session s1  agent claude-code  via decide
//     rules deploys-need-two: deploys need a person
//     action shell run: deploy prod
// then what approving it grants, in words, when it grants something:
//     if approved it may also:
//       run its command line through /bin/sh (…) (shell-syntax, rule build-pipelines: REASON)
// plus one line per vote already given ("approved by bob 1m ago: note").
std::string approval_block(const rapidjson::Value& approval, std::int64_t now_ms);

// Everything an approver looks at before answering (`warden approve ID`): approval_block, the
// action's digest, the action exactly as it will run (its JSON, indented) and the requester
// session's recent history as the daemon remembers it.
std::string approval_detail(const rapidjson::Value& approval, std::int64_t now_ms);

// One line for one approval (watch events, the initial list): "apr_…  pending  alice/s1/agent
// [rules]  shell run: …  (expires in …)" or, closed, "apr_…  denied by bob: note".
std::string approval_line(const rapidjson::Value& approval, std::int64_t now_ms);

// The text of one `pending --watch` event (a JSON object text): "" for events that show
// nothing, else lines ending in '\n': "+ " line for approval-created, "- " for approval-closed,
// "= " per approval of the initial list.
std::string watch_event_text(std::string_view event_json, std::int64_t now_ms);

// The same event as a JSON line with any "token" member of its approvals removed.
std::string watch_event_json(std::string_view event_json);

// The reply to approve (its payload) in words, e.g. "approved apr_…; it ran: shell run: make
// (exit 0)" or "your approval of apr_… is counted: 1 of 2; another approver must approve".
std::string approve_reply_text(const rapidjson::Value& payload);
// The reply to deny: "denied apr_…: shell run: …".
std::string deny_reply_text(const rapidjson::Value& payload);

// A payload with every "token" member of "approval"/"approvals" objects removed, as JSON.
std::string without_tokens(const rapidjson::Value& payload);

// The requester's approval request (the "approval" member of a decide reply or an
// approval-required event): "approve with: warden approve ID" while it is pending, ""
// otherwise (no id, or a person already answered). The approver looks it up by its id.
std::string approve_with_line(const rapidjson::Value& approval);

// What a decide reply's "approval" says once the wait is over, for text output:
// "approval apr_…: approved", "approval apr_…: still pending after the wait; approve with: …".
// "" when the reply has no approval.
std::string decide_approval_text(const rapidjson::Value& payload);

}  // namespace warden::cli
