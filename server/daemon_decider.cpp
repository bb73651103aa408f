#include "server/daemon_decider.h"

#include <future>

#include "server/approval_service.h"
#include "server/decider_pool.h"
#include "server/decision_record.h"
#include "server/errors.h"

namespace warden::server {

namespace {

// A decision the rules never made (queue full, daemon stopping): a reject naming why.
Decision not_decided(ServerContext& ctx, const std::string& proposal_json, const char* code,
                     std::string reason) {
  Decision d;
  d.decision_id = new_decision_id();
  d.outcome = Outcome::Reject;
  d.error_code = code;
  d.reason = std::move(reason);
  d.action_json = proposal_json;
  auto policy = ctx.policy.get();
  d.rules_digest = policy ? policy->digest() : "";
  return d;
}

}  // namespace

pipeline::Decider make_daemon_decider(ServerContext& context, Identity identity,
                                      std::shared_ptr<const std::atomic<bool>> closed,
                                      bool use_grants) {
  ServerContext* ctx = &context;
  return [ctx, identity = std::move(identity), closed = std::move(closed), use_grants](
             const std::string& proposal_json, const pipeline::Signal& signal,
             pipeline::DecideStage, int attempt) -> Decision {
    if (closed && closed->load()) {
      // Nobody will act on it: the requester is gone.
      return not_decided(*ctx, proposal_json, err::kShuttingDown,
                         "not decided: the requester's connection closed");
    }
    // The decision, and the session's turn: kept until a scoped grant's approval is
    // remembered, so the session's next decision sees it.
    auto promise = std::make_shared<std::promise<std::pair<Decision, SessionTurn>>>();
    auto future = promise->get_future();
    DecideJob job;
    job.proposal_json = proposal_json;
    // Who asks is the authenticated identity, never what the proposal says.
    job.principal = identity.principal;
    job.groups = identity.groups;
    job.session = signal.session;
    // The rules see where the proposal arrives: its feedback depth and its model attempt.
    job.depth = signal.depth;
    job.attempt = attempt;
    job.abandoned = closed;
    job.defer_remember = ctx->audit != nullptr;
    job.done = [ctx, promise,
                origin = DecisionOrigin{proposal_json, identity.principal, identity.groups,
                                        signal.session},
                principal = identity.principal, session = signal.session](
                   DecideResult&& result, std::int64_t time_us, SessionTurn turn) mutable {
      record_decision(
          *ctx, std::move(origin), std::move(result), time_us, std::move(turn), {},
          [ctx, promise, principal = std::move(principal), session = std::move(session)](
              const DecideResult& r, std::string, SessionTurn turn) {
            Decision d = r.ok ? r.decision : reject_for(*ctx, r);
            note_decision(*ctx, d, principal, session);
            promise->set_value({std::move(d), std::move(turn)});
          });
    };
    job.cancelled = [ctx, promise, closed = closed, proposal_json] {
      const bool gone = closed && closed->load();
      promise->set_value({not_decided(*ctx, proposal_json, err::kShuttingDown,
                                      gone ? "not decided: the requester's connection closed"
                                           : "not decided: the daemon is shutting down"),
                          SessionTurn()});
    };
    switch (ctx->pool->submit(std::move(job))) {
      case DeciderPool::Submitted::Queued: {
        auto [d, turn] = future.get();
        // A scoped approval of this exact action in this session stands for a person's yes.
        if (use_grants && d.outcome == Outcome::ApprovalRequired && ctx->approvals) {
          try {
            Requester who{identity.principal, identity.groups, signal.session, signal.agent,
                          identity.token_id};
            std::vector<std::string> approved;
            if (auto grant =
                    ctx->approvals->use_grant(who, d.action_json, d.decision_id, &approved)) {
              d = approved_by_grant(std::move(d), *grant, approved);
              remember_granted(*ctx, identity.principal, signal.session, d);
            }
          } catch (const std::exception& e) {
            ctx->log->warn("approvals: no scoped approval could be read: {}", e.what());
          }
        }
        return d;
      }
      case DeciderPool::Submitted::Busy:
        ctx->stats.add_failed_closed(err::kBusy);
        return not_decided(*ctx, proposal_json, err::kBusy,
                           "not decided: the decision queue is full (limits.max_queue, "
                           "limits.max_queue_per_principal)");
      case DeciderPool::Submitted::Stopped:
        break;
    }
    return not_decided(*ctx, proposal_json, err::kShuttingDown,
                       "not decided: the daemon is shutting down");
  };
}

}  // namespace warden::server
