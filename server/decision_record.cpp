#include "server/decision_record.h"

#include <chrono>
#include <memory>

#include "audit/record.h"
#include "audit/writer.h"
#include "engine/decision.h"
#include "engine/session_memory.h"
#include "server/audit_setup.h"
#include "server/decider_pool.h"
#include "server/errors.h"

namespace warden::server {

namespace {

// The reject a decision becomes when its audit record cannot be built or written (E_AUDIT):
// nothing is used without a record.
DecideResult unrecorded(ServerContext& ctx, const DecideResult& r, const std::string& proposal_json,
                        std::string reason) {
  DecideResult failed;
  failed.ok = true;
  Decision& d = failed.decision;
  d.decision_id = r.ok ? r.decision.decision_id : new_decision_id();
  d.outcome = Outcome::Reject;
  d.error_code = err::kAudit;
  d.reason = std::move(reason);
  d.action_json = proposal_json;
  d.rules_digest = r.decision.rules_digest;
  if (d.rules_digest.empty()) {
    auto policy = ctx.policy.get();
    d.rules_digest = policy ? policy->digest() : "";
  }
  return failed;
}

}  // namespace

Decision reject_for(ServerContext& ctx, const DecideResult& r) {
  Decision d;
  d.decision_id = r.decision.decision_id.empty() ? new_decision_id() : r.decision.decision_id;
  d.outcome = Outcome::Reject;
  d.error_code = r.error.code.empty() ? err::kInternal : r.error.code;
  d.reason = r.error.message;
  auto policy = ctx.policy.get();
  d.rules_digest = policy ? policy->digest() : "";
  return d;
}

void count_outcome(Stats& stats, const Decision& decision) {
  Stats::add(stats.decisions);
  switch (decision.outcome) {
    case Outcome::Approve:
      Stats::add(stats.approved);
      break;
    case Outcome::Reject:
      Stats::add(stats.rejected);
      break;
    case Outcome::ApprovalRequired:
      Stats::add(stats.approval_required);
      break;
  }
  if (!decision.error_code.empty()) stats.add_failed_closed(decision.error_code);
  if (decision.defaulted) Stats::add(stats.defaulted);
  // Each rule once per decision and mode, however many decision facts it asserted.
  const std::vector<FiredRule>& rules = decision.rules;
  for (std::size_t i = 0; i < rules.size(); ++i) {
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) {
      seen = rules[j].monitor == rules[i].monitor && rules[j].rule == rules[i].rule;
    }
    if (!seen) stats.rules.add(rules[i].rule, rules[i].monitor);
  }
  stats.decision_seconds.observe(
      decision.elapsed_us > 0 ? static_cast<std::uint64_t>(decision.elapsed_us) : 0);
}

void note_decision(ServerContext& ctx, const Decision& decision, std::string_view principal,
                   std::string_view session) {
  count_outcome(ctx.stats, decision);
  if (!ctx.log->should_log(spdlog::level::debug)) return;
  LogFields fields;
  fields.add("decision_id", decision.decision_id);
  fields.add("principal", principal);
  if (!session.empty()) fields.add("session", session);
  fields.add("outcome", outcome_name(decision.outcome));
  // The rule that decided: the first enforcing one that asserted the outcome (none when the
  // default outcome applied or the decision failed closed).
  for (const FiredRule& r : decision.rules) {
    if (!r.monitor && r.outcome == decision.outcome && decision.error_code.empty()) {
      fields.add("rule", r.rule);
      break;
    }
  }
  if (!decision.error_code.empty()) fields.add("error_code", decision.error_code);
  log_with(ctx.log, spdlog::level::debug, fields, "decision");
}

void record_decision(
    ServerContext& ctx, DecisionOrigin origin, DecideResult&& result, std::int64_t time_us,
    SessionTurn turn, std::function<std::string(const DecideResult&)> prepare,
    std::function<void(const DecideResult&, std::string prepared, SessionTurn turn)> use) {
  if (!ctx.audit) {
    std::string prepared = prepare ? prepare(result) : std::string();
    use(result, std::move(prepared), std::move(turn));
    return;
  }
  // Recorded before used: `use` waits in the append's completion, which runs on the audit
  // writer's single thread once the record is durable (or could not be written). Everything
  // costly — the record's fields, the prepared text — is built here on the worker, so the
  // writer thread only hands over.
  struct Pending {
    DecideResult result;
    std::string prepared;
    DecisionOrigin origin;
    SessionTurn turn;
  };
  auto pending = std::make_shared<Pending>();
  pending->result = std::move(result);
  const DecideResult& r = pending->result;
  Decision recorded;
  const Decision* decision = &r.decision;
  if (!r.ok) {
    // The input was not a proposal: recorded as the reject it is, with its error code.
    recorded = reject_for(ctx, r);
    decision = &recorded;
    pending->result.decision.decision_id = recorded.decision_id;  // the id the record holds
  }
  audit::DecisionInput input;
  input.proposal_json = origin.proposal_json;
  input.principal = origin.principal;
  input.groups = origin.groups;
  input.session = origin.session;
  input.time_us = time_us;
  std::string fields;
  try {
    fields = audit::decision_fields(input, *decision, ctx.masker);
  } catch (const std::exception& e) {
    // A record that cannot be built cannot be written: the decision fails closed, used.
    log_audit_failure(ctx, "decision", std::string("cannot build the record: ") + e.what());
    use(unrecorded(ctx, r, origin.proposal_json,
                   std::string("the audit record cannot be built: ") + e.what()),
        {}, std::move(turn));
    return;
  }
  if (prepare) pending->prepared = prepare(r);
  pending->origin = std::move(origin);
  pending->turn = std::move(turn);
  ServerContext* c = &ctx;
  ctx.audit->append(
      "decision", time_us, std::move(fields),
      [c, pending, use = std::move(use), time_us](const audit::AppendResult& appended) {
        const DecisionOrigin& o = pending->origin;
        if (appended.ok) {
          // Only a decision recorded and used as approved joins its session's history. It is
          // answered once its effects are stored (PostgreSQL: by a writer thread, so this
          // thread never waits for the database): a client told "approve" on one daemon may
          // go straight to another, which must see them. An approved decision whose effects
          // cannot be stored stays approved (the log says so); the store logs and counts it,
          // keeps the effects to retry and fails the session's next decisions closed here.
          const Decision& d = pending->result.decision;
          if (c->sessions && pending->result.ok && SessionHistory::rememberable(o.session, d)) {
            std::int64_t second =
                time_us >= 0 ? time_us / 1000000 : -((-time_us + 999999) / 1000000);
            c->sessions->record_then(o.principal, o.session, d.decision_id, second, d.effects,
                                     [pending, use](const std::string&) {
                                       use(pending->result, std::move(pending->prepared),
                                           std::move(pending->turn));
                                     });
            return;
          }
          use(pending->result, std::move(pending->prepared), std::move(pending->turn));
          return;
        }
        // Never used without a record: the decision fails closed.
        log_audit_failure(*c, "decision", appended.error);
        use(unrecorded(*c, pending->result, o.proposal_json,
                       "the audit log cannot be written: " + appended.error),
            {}, std::move(pending->turn));
      });
}

void remember_granted(ServerContext& ctx, const std::string& principal, const std::string& session,
                      const Decision& decision) {
  if (!ctx.sessions || session.empty()) return;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
  try {
    ctx.sessions->remember(principal, session, decision, now);
  } catch (const SessionHistoryError& e) {
    // Counted, retried and failed closed by the store (engine/session_history.h).
    ctx.log->error("session memory: the effects of an approved step are not stored: {}", e.what());
  }
}

}  // namespace warden::server
