// Human approvals in the daemon (SPEC §6, docs/PROTOCOL.md "Approvals"): what
// approval-required leaves behind, who may answer it and what happens then.
//
//   requester side  decide/submit → approval-required → create(): a pending approval in the
//                   store (its id, action digest and a token to the requester — the token can
//                   deny it, never approve it —, `approval created` in the audit log).
//                   decide: a live scoped grant for this exact action and session turns the
//                   answer into approve instead (use_grant, `approval scoped-use`).
//   approver side   pending (list, one by id, or watch: events as approvals arrive and close),
//                   approve ID DIGEST: the approver answers what they were shown (its digest:
//                   the action, and the capabilities approving grants — the enforcing allows of
//                   the decision that asked; another digest is E_APPROVAL_DIGEST, nothing
//                   recorded); one
//                   store transaction claims it — exactly one approver
//                   across the fleet; then the last mile (the rules in force decide the stored
//                   action again, as its requester); a reject or a changed action means it is
//                   not run (refused). A submit's action is then dispatched here, with the
//                   capabilities both the approval and the last mile allow; a decide's becomes a
//                   grant for its requester's session (one use, or scope_minutes), which
//                   carries the same limit.
//   revocation      the token that asked is recorded by its id: when the daemon's token set no
//                   longer accepts it, its pending approvals are cancelled (revoke_missing_tokens
//                   at reload and start), and nothing of it is approved, run or granted.
//                   deny TOKEN|ID closes it. Every transition is an `approval` audit record.
//   delivery        followers (connections still open, waiting clients) hear of the final state
//                   through the store's notifications — PostgreSQL's LISTEN/NOTIFY reaches the
//                   requester's daemon wherever the approver answered. A notification is only
//                   a hint that an approval may have changed (anyone who may connect to the
//                   database can send one): the approval is read from the store and what the
//                   store says is acted on. Notifications for one approval coalesce while its
//                   re-read is due, malformed ones are dropped, at most kMaxDueNotes approvals
//                   wait for a re-read, and one worker at a time re-reads, a batch at a time.
//   limits          one principal holds at most [approvals] max_pending_per_principal pending
//                   approvals (counted by the store as it inserts); past it approval-required
//                   becomes a reject, E_TOO_MANY_APPROVALS, nothing stored (`approval limited`
//                   in the audit log). `pending` lists a page at a time (limit, after), each
//                   reply within kListBudget bytes. Closed approvals are pruned [approvals]
//                   retain_days after they closed.
//   notification    every transition recorded here is also posted to the webhook of
//                   [approvals.notify] (server/notifier.h) by this daemon, the one that made it.
//
// One class, one file per side: approval_service.cpp (threads, start, stop, records),
// approval_requester.cpp, approval_answer.cpp, approval_delivery.cpp (waits, watchers,
// notifications, the sweeper), approval_listing.cpp (`pending`, the JSON views),
// approval_decisions.cpp (the free functions below); approval_text.h is what they share.
//
// Store work runs on the service's own threads, never on the I/O thread; approved submit
// actions run on runner threads of their own, so a long one holds no thread that decides,
// lists or answers; the sweeper thread expires approvals, prunes closed ones and ends waits
// that ran out.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "actuators/actuator.h"
#include "approvals/store.h"
#include "engine/decision.h"
#include "pipeline/pipeline.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "server/request_handler.h"
#include "server/roles.h"
#include "server/server_context.h"

namespace warden::server {

// Who asked for an action that needs approval.
struct Requester {
  std::string principal;
  std::vector<std::string> groups;
  std::string session;
  std::string agent;
  std::string token_id;  // the token it authenticated with (Identity::token_id), "" for none
};

// What an approval grants (approvals::Approval::grants) for an approval-required decision:
// its enforcing `allow` facts, each (capability, rule, reason) once, in assertion order.
std::vector<approvals::CapabilityGrant> approval_grants(const Decision& decision);
// The capabilities a set of grants names. Sorted, unique.
std::vector<std::string> capabilities_of(const std::vector<approvals::CapabilityGrant>& grants);
// The capabilities both lists name (both sorted, unique): what a person approved and what the
// rules in force allow. Sorted.
std::vector<std::string> intersect_capabilities(const std::vector<std::string>& approved,
                                                const std::vector<std::string>& allowed);

// The decision a live scoped grant turns an approval-required decision into: approve, its
// reason naming the approval and its approver (the rules' own decision stays in the log).
// Its enforcing allows keep only the capabilities in `approved` (what the approval granted):
// the rules now may narrow what a person approved, never widen it.
Decision approved_by_grant(Decision decision, const approvals::Grant& grant,
                           const std::vector<std::string>& approved);
// Why a final approval did not let its action through (denied by whom, expired, refused).
std::string answer_reason(const approvals::Approval& approval);

// The decision an approval-required decision becomes when its requester is at the limit of
// pending approvals: a reject, E_TOO_MANY_APPROVALS, saying why and what to do.
Decision too_many_approvals(Decision decision, const approvals::PendingLimit& limit,
                            const std::string& principal);

class ApprovalService {
 public:
  using Clock = std::chrono::steady_clock;

  // What the service counted since it started (`status`: approvals).
  struct Counters {
    std::uint64_t notes_received = 0;   // store notifications heard
    std::uint64_t notes_ignored = 0;    // not "created|closed|finished:apr_…": dropped unread
    std::uint64_t notes_coalesced = 0;  // for an approval already due a re-read
    std::uint64_t notes_dropped = 0;    // over kMaxDueNotes approvals due: dropped unread
    std::uint64_t rereads = 0;          // approvals read back from the store for a notification
    std::uint64_t limited = 0;          // approval-required refused at max_pending_per_principal
    std::uint64_t pruned_approvals = 0, pruned_grants = 0;  // deleted by prune passes
  };
  Counters counters() const;

  // `pending` pages: at most kMaxPageLimit approvals (default kDefaultPageLimit), and a reply
  // of at most kListBudget bytes; a listed approval whose action's JSON is over
  // kListedActionBytes shows a preview of it instead ("truncated"), one still over
  // kMaxListedBytes only its id, state and digest: `pending {"id"}` shows either in full.
  static constexpr std::int64_t kDefaultPageLimit = 100;
  static constexpr std::int64_t kMaxPageLimit = 500;
  static constexpr std::size_t kListBudget = 1000 * 1000;
  static constexpr std::size_t kListedActionBytes = 8 * 1024;
  static constexpr std::size_t kMaxListedBytes = 64 * 1024;
  // Approvals waiting for a re-read after a notification; past it notifications are dropped
  // (waits still poll the store, kPollEvery in the .cpp).
  static constexpr std::size_t kMaxDueNotes = 16384;
  // Called once with the approval in a final state (denied, expired, executed, refused), or
  // with nullopt when the wait ran out or the follower's connection closed.
  using Answer = std::function<void(std::optional<approvals::Approval>)>;

  // actuators: where a submit's approved actions are dispatched (null: they are refused with
  // E_ACT_NO_ACTUATOR as a result).
  ApprovalService(ServerContext& context, std::unique_ptr<approvals::Store> store,
                  actuators::Registry* actuators);
  ~ApprovalService();
  ApprovalService(const ApprovalService&) = delete;
  ApprovalService& operator=(const ApprovalService&) = delete;

  std::string start();  // threads and the store's notifications; an error text on failure
  void stop();          // idempotent; ends every wait with nullopt

  approvals::Store& store() { return *store_; }

  // ---- requester side (any thread; blocking store calls) ----
  // Stores a pending approval of action_json for the decision; appends `approval created`.
  // Throws approvals::StoreError (or std::runtime_error when the audit log fails), and
  // approvals::PendingLimit when the requester holds max_pending_per_principal pending
  // approvals (nothing stored; `approval limited` appended).
  approvals::Created create(const Requester& who, const Decision& decision,
                            const std::string& action_json, const std::string& origin);
  // {"id","token","action_hash","status":"pending","expires_ms","approvers_needed","how"}:
  // "how" is "warden approve ID"; the token only denies
  static std::string requester_json(const approvals::Created& created);
  // A live grant for this principal, session and request (grant_key), consumed (one use); appends
  // `approval scoped-use` naming the decision it approved. *capabilities: what the approval
  // that left the grant granted (capabilities_of its grants). A grant left by an approval whose
  // requester's token is no longer valid approves nothing: what that token started is cancelled
  // and nullopt returned. Throws like create().
  std::optional<approvals::Grant> use_grant(const Requester& who, const std::string& action_json,
                                            const std::string& decision_id,
                                            std::vector<std::string>* capabilities);
  // A submit's run reached approval-required (pipeline::Options::on_approval_required): stores
  // the pending approval, sends the approval-required event with its id, waits for the
  // answer when the requester asked to (signal.approval_wait_s), and otherwise lets the
  // result reach the requester's connection later. Returns the run's final status.
  std::string suspend(const Identity& identity, std::shared_ptr<const std::atomic<bool>> closed,
                      const Decision& decision, const std::string& action_json,
                      const pipeline::Signal& signal, const pipeline::EventSink& sink);
  // Calls answer once the approval reaches a final state, or with nullopt at deadline or when
  // *closed becomes true (checked by the sweeper). Any thread; answer runs on a service thread.
  void wait(const std::string& approval_id, Clock::time_point deadline,
            std::shared_ptr<const std::atomic<bool>> closed, Answer answer);
  // The connection a submit came from, so an approval's result can reach it after the run
  // ended: push sends a message outside any request (SessionAuth::push). Kept while *closed
  // is false.
  using Push = std::function<void(std::string json)>;
  void attach(std::shared_ptr<const std::atomic<bool>> closed, Push push);
  Push pusher(const std::atomic<bool>* closed);
  // Runs fn on a service thread (false when stopped).
  bool post(std::function<void()> fn);

  // ---- revoked tokens ----
  // Whether the token that asked for an approval (token_id, principal) is still one the
  // daemon's token set accepts, for the same principal, with a role that may ask: an approval
  // without a token id always is.
  bool requester_valid(std::string_view token_id, std::string_view principal) const;
  // Cancels what every token no longer valid started (the token set was replaced: a reload,
  // a start): their pending approvals close denied by "warden" (kRevokedNote), each recorded
  // once across a fleet, their waits answered; the grants their approvals left end. Returns
  // how many approvals it closed. Throws approvals::StoreError.
  std::size_t revoke_missing_tokens();
  static constexpr const char* kRevokedNote =
      "cancelled: the token that asked for it was revoked; it never runs";

  // ---- approver side: requests from the I/O thread; replies through later() ----
  std::optional<Reply> pending(const Request& request, const Identity& identity,
                               std::shared_ptr<const std::atomic<bool>> closed, ReplyFn later);
  std::optional<Reply> approve(const Request& request, const Identity& identity, ReplyFn later);
  std::optional<Reply> deny(const Request& request, const Identity& identity, ReplyFn later);

  // The `approval-result` event payload for an approval in a final state.
  static std::string result_event(const approvals::Approval& approval);
  // APPROVAL: an approval as the protocol shows it (never a token).
  static std::string approval_json(const approvals::Approval& approval);
  // The same as a listing shows it: within kMaxListedBytes, "truncated":true when something
  // was left out (see kListedActionBytes).
  std::string listed_json(const approvals::Approval& approval) const;
  // The `after` of the page following `approval` ("CREATED_MS:ID"), and back.
  static std::string cursor_text(const approvals::Approval& approval);
  static std::optional<approvals::Cursor> parse_cursor(std::string_view text);
  // The same with "history": the requester session's recent history as this daemon's session
  // memory holds it (empty when it holds none): what `pending` shows an approver.
  std::string shown_json(const approvals::Approval& approval) const;

 private:
  struct Waiter {
    std::string approval_id;
    Clock::time_point deadline;
    std::shared_ptr<const std::atomic<bool>> closed;
    Answer answer;
    Clock::time_point next_poll;
  };
  struct Watcher {
    std::shared_ptr<const std::atomic<bool>> closed;
    ReplyFn send;
    std::string id_json;
  };

  // As the daemon starts: approvals left in approved (claimed by this daemon before it
  // stopped, or by any daemon longer ago than a bound) are refused, once, and recorded.
  void recover_interrupted();
  void run_worker();
  void run_sweeper();
  // A store notification (any thread): checked, then the approval is due a re-read.
  void on_notification(std::string_view kind, std::string_view approval_id);
  void reread_due();                             // a batch of due re-reads (a worker)
  void refresh(const std::string& approval_id);  // re-read; tell watchers and waits what changed
  void settle(const approvals::Approval& approval);  // ends the waits of a final approval
  void broadcast(std::string_view event, const approvals::Approval& approval);
  // The approve reply, or nullopt when a runner thread sends it through *send.
  std::optional<Reply> approve_now(const std::string& id_json, const Identity& identity,
                                   const std::string& approval_id, const std::string& digest,
                                   const std::string& note, int scope_minutes,
                                   std::shared_ptr<ReplyFn> send);
  // The last mile and what follows a claimed approval: the approve reply, or nullopt when a
  // submit's action was handed to a runner thread (run_action), which sends it.
  std::optional<Reply> carry_out(const std::string& id_json, const Identity& identity,
                                 const approvals::Approval& approval, int scope_minutes,
                                 std::shared_ptr<ReplyFn> send);
  // On a runner thread: the submit's approved action dispatched to its actuator.
  Reply dispatch(const std::string& id_json, const Identity& approver,
                 const approvals::Approval& approval, int scope_minutes, const Decision& last,
                 const std::string& decision_json);
  // Approved, never run (no actuator, the actuator did not start it, the daemon stopping):
  // closed refused with what happened, said to both sides.
  Reply refuse_unrun(const std::string& id_json, const Identity& approver,
                     const approvals::Approval& approval, const Decision& last,
                     const std::string& decision_json, const std::string& target,
                     const actuators::Result& result);
  // Closes the approval refused with `result` (audited with `reason`) and answers the approver
  // E_APPROVAL_REFUSED with `message`, the approval and the decision (then `extra` members).
  Reply close_refused(const std::string& id_json, const Identity& approver,
                      const approvals::Approval& approval, const Decision& last,
                      const std::string& decision_json, const std::string& reason,
                      const std::string& result, const std::string& message,
                      const std::string& extra);
  Reply refuse_stopped(const std::string& id_json, const Identity& approver,
                       const approvals::Approval& approval, const Decision& last,
                       const std::string& decision_json);
  // Closes a carried-out approval executed (granted, for a decide): its grant, the audit
  // record, the reply.
  Reply conclude(const std::string& id_json, const Identity& approver,
                 const approvals::Approval& approval, int scope_minutes, const Decision& last,
                 const std::string& decision_json, const std::string& status, std::string result,
                 std::string recorded);
  // Queues fn for a runner thread (started when none is idle, up to a bound); fn(true) when
  // the daemon stops before it starts. False when stopping.
  bool run_action(std::function<void(bool stopping)> fn);
  void run_runner();
  // An approval transition: appended to the audit log (throws when it cannot be), then
  // posted to the webhook when one is configured ([approvals.notify]).
  // store_->cancel_requester, each approval it closed recorded; returns how many.
  std::size_t cancel_requester(const std::string& token_id, const std::string& principal);
  void record(std::string_view event, const approvals::Approval& approval, std::string_view by,
              std::string_view note, std::string_view decision_id = {},
              std::string_view result_json = {});
  void append_record(std::string_view event, const approvals::Approval& approval,
                     std::string_view by, std::string_view note, std::string_view decision_id,
                     std::string_view result_json);
  Reply fail(const std::string& id_json, std::string_view action, std::string_view code,
             std::string message);

  ServerContext& context_;
  std::unique_ptr<approvals::Store> store_;
  actuators::Registry* actuators_;

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable sweeper_wake_;
  std::deque<std::function<void()>> work_;
  std::vector<std::thread> workers_;
  std::condition_variable action_ready_;
  std::deque<std::function<void(bool)>> actions_;  // approved submit actions, to run
  std::vector<std::thread> runners_;
  std::size_t idle_runners_ = 0;
  std::thread sweeper_;
  bool stopping_ = false;
  std::multimap<std::string, Waiter> waiters_;  // by approval id
  std::vector<Watcher> watchers_;
  std::vector<std::pair<std::shared_ptr<const std::atomic<bool>>, Push>> connections_;
  // What watchers were last told of each approval (its status then), so a notification that
  // changes nothing tells them nothing.
  struct Announced {
    approvals::Status status;
    Clock::time_point at;
  };
  std::map<std::string, Announced> announced_;

  // Notifications: approvals due a re-read, in arrival order, each once.
  std::mutex notes_mutex_;
  std::deque<std::string> due_;
  std::set<std::string> due_ids_;
  bool rereading_ = false;  // a reread_due() is queued or running

  mutable std::mutex counters_mutex_;
  Counters counters_;
};

}  // namespace warden::server
