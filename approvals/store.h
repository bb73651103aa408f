// Pending approvals (SPEC §6): what approval-required leaves behind for a person to answer,
// kept in a durable store every daemon of a fleet shares — SQLite (one file, WAL; the
// default) or PostgreSQL (libpq) with the same schema and semantics.
//
// An approver answers an approval they have seen: approve() takes the approval's public id
// ("apr_…") together with the digest the approver was shown (Approval::digest: the
// action_hash, and what approving grants when it grants something), and refuses the vote when
// the digest is not the stored approval's (DigestMismatch). Whoever hands
// an approver an id cannot swap the action behind it: the digest binds the answer to what was
// shown. The requester also gets a token (32 bytes from the CSPRNG, base64url; only its
// SHA-256 is stored): a handle that can deny (withdraw) its approval, never approve it.
//
// Every state change is one transaction: two approvers racing, on one daemon or on two,
// cannot both move an approval out of pending — exactly one gets ApproveResult::Claimed.
//
//   pending ──approve (enough distinct approvers)──▶ approved ──finish──▶ executed | refused
//                                                      └──recover_claimed (interrupted)──▶ refused
//      ├──deny──▶ denied
//      └──expire_due (expires_ms passed)──▶ expired
//
// What approving grants. An approval-required decision may carry enforcing `allow` facts
// (docs/RULES.md "Capabilities": run through a shell, reach a private address): they are what
// its approval grants if a person says yes, stored with it (Approval::grants) and shown to the
// approver. The answer is then bound to the grants as well: an approver names the approval's
// `digest` (answer_digest: its action_hash when it grants nothing, else a digest of the
// action_hash and the grants), so grants other than those shown cannot be approved.
//
// Who asked. An approval keeps a derived id of the token its requester authenticated with
// (requester_token_id, never the token nor its stored hash): when that token is revoked,
// cancel_requester() closes what it started.
//
// Store errors (the file or server unreachable, a broken schema) throw StoreError: the
// caller fails closed. One principal holds at most NewApproval::max_pending live pending
// approvals: create() counts them in the transaction that inserts, so no number of daemons
// racing on one store exceeds it (PendingLimit). Closed approvals are deleted some time after
// they closed (prune), with their votes and the grants that ended. All methods are thread-safe (each implementation serializes on its own
// connection). Times are Unix milliseconds.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace warden::approvals {

struct StoreError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// create() found the requester already holding max_pending live pending approvals: nothing
// was stored. Not a store failure: the store answered.
struct PendingLimit : std::runtime_error {
  PendingLimit(std::int64_t pending_now, std::int64_t limit_now)
      : std::runtime_error("the requester already has " + std::to_string(pending_now) +
                           " pending approvals (the limit is " + std::to_string(limit_now) + ")"),
        pending(pending_now),
        limit(limit_now) {}
  std::int64_t pending;  // live pending approvals of the requester, as counted
  std::int64_t limit;
};

enum class Status { Pending, Approved, Denied, Expired, Executed, Refused };
std::string_view status_name(
    Status status);  // "pending" "approved" "denied" "expired" "executed" "refused"
std::optional<Status> parse_status(std::string_view name);

// One capability an approval grants if approved: an enforcing `allow` fact of the
// approval-required decision.
struct CapabilityGrant {
  std::string capability;  // "shell-syntax" or "private-network"
  std::string rule;        // the rule that asserted the allow
  std::string reason;
  bool operator==(const CapabilityGrant&) const = default;
};

// What the daemon stores when a decision is approval-required.
struct NewApproval {
  std::string action_json;    // the action exactly as the rules decided it (Decision::action_json)
  std::string proposal_json;  // the proposal as decided (re-decided on approve: the last mile)
  std::string principal;      // the requester (authenticated identity)
  std::vector<std::string> groups;
  std::string session;             // the requester's session id ("" when none)
  std::string agent;               // the proposal's agent ("" when none)
  std::vector<std::string> rules;  // the rules that asked for approval
  std::string reason;
  std::string decision_id;
  std::string origin;     // "decide" or "submit"
  std::string daemon_id;  // the daemon the requester is connected to
  std::int64_t created_ms = 0;
  std::int64_t expires_ms = 0;
  int approvers_needed = 1;  // distinct approvers (1 or 2)
  // > 0: refused (PendingLimit, nothing stored) when `principal` already has this many
  // pending approvals not yet past their expiry at created_ms; 0: no limit.
  std::int64_t max_pending = 0;
  std::vector<CapabilityGrant> grants;  // what approving grants, in assertion order
  std::string requester_token_id;       // token_id() of the requester's token; "" when none
};

struct Vote {
  std::string approver;
  std::string note;
  std::int64_t at_ms = 0;
  int scope_minutes = 0;  // the scope this approver asked for (0: this one use only)
};

// A stored approval (never its token).
struct Approval {
  std::string id;  // "apr_" + 24 hex characters
  Status status = Status::Pending;
  std::string action_hash;  // "sha256:" + hex of action_json
  std::string action_json, proposal_json, principal;
  std::vector<std::string> groups;
  std::string session, agent;
  std::vector<std::string> rules;
  std::string reason, decision_id, origin, daemon_id;
  std::int64_t created_ms = 0, expires_ms = 0;
  int approvers_needed = 1;
  std::vector<Vote> votes;  // in the order they were given
  std::string closed_by;    // who denied it ("" otherwise)
  std::string close_note;
  std::int64_t closed_ms = 0;  // when it left pending (0 while pending)
  std::string result_json;     // set by finish(): what happened on approval (a JSON object text)
  std::vector<CapabilityGrant> grants;  // what approving grants ([] for approvals made before)
  std::string requester_token_id;       // "" for approvals of callers without a token
  std::string digest;  // answer_digest(action_hash, grants): what approve() must be given
};

struct Created {
  Approval approval;
  std::string token;  // the secret, shown to the requester once; never stored
};

enum class ApproveResult {
  Claimed,          // this vote completed it: pending → approved (exactly one caller sees this)
  NeedMore,         // vote recorded, more distinct approvers are needed
  NotFound,         // no approval has this id
  Closed,           // no longer pending (approved, denied, expired, executed, refused): reuse
  Expired,          // still pending but past expires_ms (it is moved to expired)
  SelfApproval,     // the approver is the requester
  AlreadyApproved,  // this approver already voted on it
  DigestMismatch,   // the digest given is not the approval's digest: nothing was recorded
};
std::string_view approve_result_name(ApproveResult result);

struct ApproveOutcome {
  ApproveResult result = ApproveResult::NotFound;
  std::optional<Approval> approval;  // as it stands after this call, when found
};

enum class DenyResult { Denied, NotFound, Closed, Expired };
struct DenyOutcome {
  DenyResult result = DenyResult::NotFound;
  std::optional<Approval> approval;
};

// A place in a listing: list() is ordered by created_ms, then id; a cursor names the last
// approval a page held, and the next page starts after it.
struct Cursor {
  std::int64_t created_ms = 0;
  std::string id;
};

struct Filter {
  std::optional<Status> status = Status::Pending;  // nullopt: any
  std::string agent, session, rule, principal;     // "" : any
  std::int64_t min_age_ms = 0;                     // created at least this long before now
  std::int64_t now_ms = 0;
  std::size_t limit = 1000;
  std::optional<Cursor> after;  // only approvals after this place (keyset paging)
};

// What one prune() deleted.
struct Pruned {
  std::int64_t approvals = 0;  // closed approvals (with their votes)
  std::int64_t grants = 0;     // grants that had ended
};

// "Approve this exact request for this session": identical requests of the same principal
// and session are approved without asking again until expires_ms (uses_left > 0: that many
// uses; 0: any number until expiry). action_hash is the key the caller binds the grant to
// (the daemon: a digest of the whole request as decided, server/approval_service.cpp).
struct Grant {
  std::string approval_id;
  std::string principal, session, action_hash;
  std::int64_t expires_ms = 0;
  int uses_left = 1;
  std::string approver;
};

// A requester token with something open (Store::open_requesters).
struct TokenRequester {
  std::string token_id;
  std::string principal;
  bool operator==(const TokenRequester&) const = default;
};

// Notification kinds: "created", "closed" (left pending: approved/denied/expired),
// "finished" (executed/refused). PostgreSQL delivers them to every daemon (LISTEN/NOTIFY);
// SQLite to this process only.
using Listener = std::function<void(std::string_view kind, std::string_view approval_id)>;

class Store {
 public:
  virtual ~Store() = default;
  virtual std::string_view kind() const = 0;  // "sqlite" or "postgres"

  virtual Created create(const NewApproval& approval) = 0;
  virtual std::optional<Approval> get(std::string_view id) = 0;
  // The approval a token opens, or nullopt; does not change it.
  virtual std::optional<Approval> find_by_token(std::string_view token) = 0;
  // Oldest first (created_ms, then id), at most filter.limit; the database's indexes serve
  // every filter, so a page costs about the same whatever the table holds.
  virtual std::vector<Approval> list(const Filter& filter) = 0;

  // One approver's vote on approval `id`, bound to `digest` (the Approval::digest the approver
  // was shown): checked in the same transaction that records the vote. scope_minutes: the scope
  // this approver asks for (0: one use), kept with the vote (Vote::scope_minutes).
  // daemon_id: the daemon carrying out what this vote claims (kept with a claim, for
  // recover_claimed).
  virtual ApproveOutcome approve(std::string_view id, std::string_view digest,
                                 std::string_view approver, std::string_view note,
                                 std::int64_t now_ms, int scope_minutes = 0,
                                 std::string_view daemon_id = {}) = 0;
  // By token, or by id (denying is always safe). Self-denial is allowed (withdrawing).
  virtual DenyOutcome deny(std::string_view token_or_id, std::string_view by, std::string_view note,
                           std::int64_t now_ms) = 0;
  // approved → executed | refused with what happened; false when it was not approved (or
  // status is neither Executed nor Refused).
  virtual bool finish(std::string_view id, Status status, std::string_view result_json,
                      std::int64_t now_ms) = 0;
  // Approvals stuck in approved (claimed, never finished: the daemon carrying them out
  // stopped): those claimed by `daemon_id` (non-empty; called as that daemon starts, nothing
  // of its can still be running) or claimed before `claimed_before_ms` move to refused with
  // result_json, and the grants they left end. Returns them, each exactly once across a fleet.
  virtual std::vector<Approval> recover_claimed(std::string_view daemon_id,
                                                std::int64_t claimed_before_ms,
                                                std::string_view result_json,
                                                std::int64_t now_ms) = 0;
  // Moves every pending approval past its expiry to expired; returns those it moved (each
  // exactly once across a fleet).
  virtual std::vector<Approval> expire_due(std::int64_t now_ms) = 0;
  // Deletes every grant that ended (used up, or expired at now_ms), then every approval closed
  // (denied, expired, executed, refused) before closed_before_ms that no live grant still
  // names, with its votes. Pending and approved (being carried out) approvals are never
  // deleted. Works in bounded transactions (a batch at a time), so the store stays answerable
  // while a large backlog goes; any number of daemons may prune one store at once (each row is
  // deleted once; a row another daemon is deleting is skipped).
  virtual Pruned prune(std::int64_t closed_before_ms, std::int64_t now_ms) = 0;

  virtual void add_grant(const Grant& grant) = 0;
  // Consumes one use of a live grant for exactly this principal, session and action hash.
  // Returns the grant as it stood before this use (uses_left as it was), nullopt when none.
  virtual std::optional<Grant> use_grant(std::string_view principal, std::string_view session,
                                         std::string_view action_hash, std::int64_t now_ms) = 0;

  // Starts delivering notifications to listener (from a store thread). Call once.
  virtual void listen(Listener listener) = 0;

  // ---- requester tokens ----
  // Every requester (token id and principal, each pair once) with something still open: a
  // pending approval, or a live grant one of its approvals left. Approvals without a token id
  // are never listed.
  virtual std::vector<TokenRequester> open_requesters(std::int64_t now_ms) = 0;
  // Cancels what one requester token started (token_id non-empty): its pending approvals of
  // `principal` move to denied (closed_by `by`, close_note `note`) and every grant its
  // approvals left ends. Returns the approvals it moved, each exactly once across a fleet (an
  // approval another caller moved meanwhile is not returned). Idempotent.
  virtual std::vector<Approval> cancel_requester(std::string_view token_id,
                                                 std::string_view principal, std::string_view by,
                                                 std::string_view note, std::int64_t now_ms) = 0;
};

// Opens (creating the file and schema when missing) the SQLite store at path.
std::unique_ptr<Store> open_sqlite(const std::string& path);
// Connects to PostgreSQL (a libpq conninfo string) and creates the schema when missing.
std::unique_ptr<Store> open_postgres(const std::string& conninfo);

// "sha256:" + hex SHA-256 of the action's JSON text.
std::string action_hash(std::string_view action_json);

// The grants as stored and hashed: a compact JSON array of
// {"capability","rule","reason"} objects in their order.
std::string grants_json(const std::vector<CapabilityGrant>& grants);
// What an approver answers with: action_hash itself when the approval grants nothing (an
// approval made before grants existed included), else "sha256:" + hex SHA-256 of
// action_hash + "\n" + grants_json(grants).
std::string answer_digest(std::string_view action_hash, const std::vector<CapabilityGrant>& grants);

}  // namespace warden::approvals
