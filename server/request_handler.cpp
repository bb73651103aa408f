#include "server/request_handler.h"

#include <memory>

#include "audit/record.h"
#include "audit/writer.h"
#include "engine/decision.h"
#include "engine/session_memory.h"
#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/approval_service.h"
#include "server/decider_pool.h"
#include "server/decision_record.h"
#include "server/errors.h"
#include "server/exec_request.h"
#include "server/notifier.h"
#include "server/pipeline_workers.h"
#include "server/reloader.h"
#include "server/store_health.h"
#include "server/submit.h"

namespace warden::server {

namespace {

// The largest envelope depth a `decide` may name: far past any depth limit, so the rules
// judge every loop, and small enough for any integer slot.
constexpr std::int64_t kMaxEnvelopeDepth = 1000000;

bool is_known_action(std::string_view action) {
  static constexpr std::string_view kActions[] = {"decide",       "submit", "envelope", "pending",
                                                  "approve",      "deny",   "reload",   "status",
                                                  "health-check", "auth"};
  for (std::string_view known : kActions) {
    if (known == action) return true;
  }
  return false;
}

// ok_response(id, "decide", "\"decision\":" + decision_to_json(…)), with one copy of the
// decision's JSON instead of two.
std::string decision_reply(std::string_view id_json, const Decision& decision, bool explain,
                           std::string_view extra = {}) {
  std::string json = decision_to_json(decision, explain);
  std::string out;
  out.reserve(80 + id_json.size() + json.size() + extra.size());
  out += "{\"type\":\"response\",\"id\":";
  out += id_json;
  out += ",\"payload\":{\"action\":\"decide\",\"ok\":true,\"decision\":";
  out += json;
  out += extra;  // more members of the payload (",\"approval\":{…}")
  out += "}}";
  return out;
}

// Every error reply of a request is built and counted here.
Reply error_reply(Stats& stats, std::string_view id_json, std::string_view action,
                  const ErrorBody& body, bool close = false) {
  Stats::add(stats.errors);
  return Reply{error_response(id_json, action, body), close};
}

// One `decide` request: decided once, and once more after a person approved it while its
// client waited (wait_s).
struct DecideCall {
  ServerContext* ctx = nullptr;
  std::string id_json;
  std::string proposal_json;
  bool explain = false;
  std::string principal;
  std::vector<std::string> groups;
  std::string session;
  std::string token_id;    // the token the client authenticated with ("" for none)
  std::int64_t depth = 0;  // the envelope's "depth": where the client's loop is (SPEC §3)
  std::shared_ptr<const std::atomic<bool>> closed;
  ReplyFn later;
  std::int64_t wait_s = 0;
  bool after_approval = false;  // the second round: a grant may approve it, nothing new is stored
};

DeciderPool::Submitted queue_decide(std::shared_ptr<DecideCall> call);

// A decided shell command stays runnable by `warden exec` for a while (server/exec_envelopes.h).
void keep_for_exec(const DecideCall& call, const Decision& decision) {
  const Config& config = *call.ctx->config;
  call.ctx->exec_envelopes.remember(call.principal, decision, config.workspace_root, config.home,
                                    ExecEnvelopes::Clock::now());
}

void send_decision(DecideCall& call, const Decision& decision, std::string_view extra = {}) {
  keep_for_exec(call, decision);
  note_decision(*call.ctx, decision, call.principal, call.session);
  std::string json = decision_reply(call.id_json, decision, call.explain, extra);
  if (json.size() > kMaxEncodableFrame) {
    call.later(error_reply(call.ctx->stats, call.id_json, "decide",
                           {err::kResponseTooLarge, "the decision does not fit in one frame"}));
    return;
  }
  call.later(Reply{std::move(json)});
}

// A recorded approval-required decision, on an approval thread: a live scoped grant approves
// it; otherwise a pending approval is stored and its token goes to the client, who may wait
// for the answer.
void on_approval_required(std::shared_ptr<DecideCall> call, Decision decision, SessionTurn turn) {
  ApprovalService& approvals = *call->ctx->approvals;
  Requester who{call->principal, call->groups, call->session, {}, call->token_id};
  try {
    std::vector<std::string> approved_capabilities;
    if (std::optional<approvals::Grant> grant = approvals.use_grant(
            who, decision.action_json, decision.decision_id, &approved_capabilities)) {
      Decision approved = approved_by_grant(decision, *grant, approved_capabilities);
      remember_granted(*call->ctx, call->principal, call->session, approved);
      turn.reset();  // the session's next decision sees this one
      send_decision(*call, approved,
                    ",\"approval\":{\"id\":" + json_string(grant->approval_id) +
                        ",\"status\":\"granted\",\"scoped\":" +
                        (grant->uses_left == 0 ? "true" : "false") + "}");
      return;
    }
    if (call->after_approval) {
      // Approved, but its grant is gone (used by an identical proposal in the meantime).
      send_decision(*call, decision);
      return;
    }
    turn.reset();  // nothing of this decision joins the session
    approvals::Created created;
    try {
      created = approvals.create(who, decision, decision.action_json, "decide");
    } catch (const approvals::PendingLimit& limit) {
      // The requester holds as many pending approvals as one may: refused, nothing stored.
      send_decision(*call, too_many_approvals(decision, limit, call->principal));
      return;
    }
    const std::string shown = ApprovalService::requester_json(created);
    if (call->wait_s <= 0) {
      send_decision(*call, decision, ",\"approval\":" + shown);
      return;
    }
    // The client waits: it learns the token now (someone must take it to an approver), the
    // decision once a person answered or the wait ran out.
    call->later(
        Reply{event_message(call->id_json, "{\"event\":\"approval-required\",\"decision_id\":" +
                                               json_string(decision.decision_id) +
                                               ",\"reason\":" + json_string(decision.reason) +
                                               ",\"approval\":" + shown + "}"),
              false, true});
    approvals.wait(
        created.approval.id, ApprovalService::Clock::now() + std::chrono::seconds(call->wait_s),
        call->closed, [call, decision, shown](std::optional<approvals::Approval> answered) {
          if (call->closed && call->closed->load()) {
            call->later(Reply{});  // nobody reads it; it releases the session
            return;
          }
          if (!answered) {
            send_decision(*call, decision, ",\"approval\":" + shown);  // still pending
            return;
          }
          if (answered->status == approvals::Status::Executed) {
            // Approved: decided again, under the rules in force, where its grant approves it.
            call->after_approval = true;
            if (queue_decide(call) != DeciderPool::Submitted::Queued) {
              call->later(error_reply(call->ctx->stats, call->id_json, "decide",
                                      {err::kBusy,
                                       "approved, but the decision queue is full; "
                                       "send the proposal again"}));
            }
            return;
          }
          Decision refused = decision;
          refused.outcome = Outcome::Reject;
          refused.reason = answer_reason(*answered);
          send_decision(*call, refused,
                        ",\"approval\":{\"id\":" + json_string(answered->id) + ",\"status\":" +
                            json_string(approvals::status_name(answered->status)) + "}");
        });
  } catch (const std::exception& e) {
    call->later(error_reply(
        call->ctx->stats, call->id_json, "decide",
        {err::kApprovalStore,
         std::string("approval required, but no approval could be stored: ") + e.what()}));
  }
}

DeciderPool::Submitted queue_decide(std::shared_ptr<DecideCall> call) {
  ServerContext* ctx = call->ctx;
  DecideJob job;
  job.proposal_json = call->proposal_json;
  job.explain = call->explain;
  job.principal = call->principal;
  job.groups = call->groups;
  job.session = call->session;
  job.depth = call->depth;
  job.abandoned = call->closed;
  // With the audit log, an approved decision's effects join the session's history only after
  // its record is written (an E_AUDIT reject must not leave effects behind).
  job.defer_remember = ctx->audit != nullptr;
  job.done = [call, origin = DecisionOrigin{call->proposal_json, call->principal, call->groups,
                                            call->session}](
                 DecideResult&& result, std::int64_t time_us, SessionTurn turn) mutable {
    ServerContext* ctx = call->ctx;
    // The reply's JSON is built on the worker; the audit writer's thread only sends it.
    auto prepare = [call](const DecideResult& r) {
      return r.ok && r.decision.outcome != Outcome::ApprovalRequired
                 ? decision_reply(call->id_json, r.decision, call->explain)
                 : std::string();
    };
    auto answer = [call, ctx](const DecideResult& result, std::string json, SessionTurn turn) {
      if (result.ok) {
        if (result.decision.outcome == Outcome::ApprovalRequired && ctx->approvals &&
            ctx->approvals->post([call, decision = result.decision, turn]() mutable {
              on_approval_required(call, decision, std::move(turn));
            })) {
          return;
        }
        if (json.empty()) {
          send_decision(*call, result.decision);
          return;
        }
        keep_for_exec(*call, result.decision);
        note_decision(*ctx, result.decision, call->principal, call->session);
        if (json.size() > kMaxEncodableFrame) {
          call->later(
              error_reply(ctx->stats, call->id_json, "decide",
                          {err::kResponseTooLarge, "the decision does not fit in one frame"}));
          return;
        }
        call->later(Reply{std::move(json)});
      } else {
        std::string diagnostics = "[" + result.error.to_json() + "]";
        call->later(error_reply(ctx->stats, call->id_json, "decide",
                                {result.error.code.empty() ? err::kInternal : result.error.code,
                                 result.error.message, diagnostics}));
      }
    };
    record_decision(*ctx, std::move(origin), std::move(result), time_us, std::move(turn), prepare,
                    answer);
  };
  job.cancelled = [call] {
    if (call->closed && call->closed->load()) {
      // The connection is gone: nobody reads this reply; it only releases the session.
      call->later(Reply{});
      return;
    }
    call->later(error_reply(call->ctx->stats, call->id_json, "decide",
                            {err::kShuttingDown, "the daemon is shutting down"}));
  };
  return ctx->pool->submit(std::move(job));
}

}  // namespace

Reply RequestHandler::error(const Request& request, std::string_view code, std::string_view message,
                            bool close) {
  return error_reply(context_.stats, request.id_json, request.action, {code, message}, close);
}

std::optional<Reply> RequestHandler::handle(std::string_view payload, SessionAuth* auth,
                                            ReplyFn later) {
  Stats::add(context_.stats.requests);
  Request request;
  // Envelope and payload add two levels above the proposal.
  if (ProtocolError e =
          parse_request(payload, context_.config->limits.max_json_depth + 2, &request)) {
    return error(request, e.code, e.message);
  }
  const std::string& action = request.action;
  if (action == "health-check") {
    // Degraded: serving, but every decision fails closed while the audit log cannot be
    // written.
    std::optional<audit::WriterHealth> audit;
    if (context_.audit) audit = context_.audit->health();
    // Degraded too while the approvals store fails: approval-required actions can be neither
    // recorded nor answered.
    std::optional<StoreHealth::Snapshot> store;
    if (context_.approvals_health) store = context_.approvals_health->get();
    // And while the session store fails: decisions in sessions fail closed.
    std::optional<SessionHistoryHealth> sessions;
    if (context_.sessions) sessions = context_.sessions->health();
    const bool failing =
        (audit && !audit->ok) || (store && !store->ok) || (sessions && !sessions->ok);
    std::string fields = "\"status\":";
    fields += context_.draining.load() ? "\"draining\"" : failing ? "\"degraded\"" : "\"serving\"";
    fields += ",\"version\":\"";
    fields += kProtocolVersion;
    fields += '"';
    if (audit && !audit->ok) {
      fields += ",\"audit\":";
      append_json_string(fields, "failing: " + audit->error);
    }
    if (store && !store->ok) {
      fields += ",\"approvals\":";
      append_json_string(fields, "failing: " + store->error);
    }
    if (sessions && !sessions->ok) {
      fields += ",\"sessions\":";
      append_json_string(fields, "failing: " + sessions->error);
    }
    fields += confinement_fields(true);
    return Reply{ok_response(request.id_json, action, fields)};
  }
  if (action == "auth") return authenticate(request, auth);
  if (!auth->identity) {
    return error(request, err::kAuthRequired,
                 "authenticate first: {\"type\":\"request\",\"payload\":{\"action\":\"auth\","
                 "\"token\":\"…\"}}");
  }
  const Identity& identity = *auth->identity;
  if (!is_known_action(action)) {
    return error(request, err::kUnknownAction, "unknown action '" + action + "'");
  }
  if (!role_allows(identity.role, action)) {
    return error(request, err::kForbidden,
                 "role " + std::string(role_name(identity.role)) + " may not call " + action);
  }
  if (action == "decide") return decide(request, identity, auth->closed, std::move(later));
  if (action == "submit") {
    if (context_.approvals && auth->push) context_.approvals->attach(auth->hung_up, auth->push);
    return submit_request(context_, request, identity, auth->hung_up, std::move(later));
  }
  if (action == "envelope") return envelope_request(context_, request, identity.principal);
  if (action == "reload") return reload(request, identity, std::move(later));
  if (action == "status") return Reply{ok_response(request.id_json, action, status_fields())};
  if (action == "pending" || action == "approve" || action == "deny") {
    if (!context_.approvals) {
      return error(request, err::kApprovalStore, "this daemon has no approvals store");
    }
    if (action == "pending") {
      return context_.approvals->pending(request, identity, auth->closed, std::move(later));
    }
    if (action == "approve")
      return context_.approvals->approve(request, identity, std::move(later));
    return context_.approvals->deny(request, identity, std::move(later));
  }
  return error(request, err::kNotImplemented,
               "'" + action + "' is not implemented by this daemon yet");
}

std::optional<Reply> RequestHandler::authenticate(const Request& request, SessionAuth* auth) {
  if (auth->token_checked) {
    return error(request, err::kBadRequest, "this connection is already authenticated");
  }
  const rapidjson::Value& payload = request.payload();
  const rapidjson::Value* token = find_member(payload, "token");
  if (!token || !token->IsString()) {
    return error(request, err::kBadRequest, "\"payload.token\" must be a string");
  }
  auth->token_checked = true;
  std::string_view presented(token->GetString(), token->GetStringLength());
  std::shared_ptr<const TokenStore> store = context_.tokens();
  std::optional<Identity> identity;
  TokenHash presented_hash{};
  try {
    identity = store->authenticate(presented);
    if (identity) presented_hash = hash_token(presented);
  } catch (const std::exception& e) {
    // SHA-256 failed (OpenSSL): nobody is authenticated, the connection closes.
    return error(request, err::kInternal, std::string("cannot check the token: ") + e.what(), true);
  }
  if (!identity) {
    Stats::add(context_.stats.auth_failures);
    // The session logs the failure with the peer's address (rate-limited).
    // One attempt per connection: guessing costs a connection each time.
    return error(request, err::kAuthFailed, "unknown token", true);
  }
  if (auth->admit) {
    if (std::string why = auth->admit(*identity); !why.empty()) {
      Stats::add(context_.stats.connections_refused);
      return error(request, err::kTooManyConnections, why, true);
    }
  }
  auth->identity = identity;
  auth->token_hash = presented_hash;
  auth->verified_by = store;
  std::string fields = "\"principal\":";
  append_json_string(fields, identity->principal);
  fields += ",\"role\":";
  append_json_string(fields, role_name(identity->role));
  fields += ",\"groups\":[";
  for (std::size_t i = 0; i < identity->groups.size(); ++i) {
    if (i) fields += ',';
    append_json_string(fields, identity->groups[i]);
  }
  fields += ']';
  return Reply{ok_response(request.id_json, request.action, fields)};
}

std::optional<Reply> RequestHandler::decide(Request& request, const Identity& identity,
                                            std::shared_ptr<const std::atomic<bool>> closed,
                                            ReplyFn later) {
  const rapidjson::Value& payload = request.document["payload"];
  const rapidjson::Value* proposal = find_member(payload, "proposal");
  if (!proposal || !proposal->IsObject()) {
    return error(request, err::kBadRequest, "\"payload.proposal\" must be an object");
  }
  auto call = std::make_shared<DecideCall>();
  if (const rapidjson::Value* e = find_member(payload, "explain")) {
    if (!e->IsBool()) {
      return error(request, err::kBadRequest, "\"payload.explain\" must be a boolean");
    }
    call->explain = e->GetBool();
  }
  if (std::string bad; !int_field(payload, "wait_s", 0, context_.config->approvals.max_wait_seconds,
                                  &call->wait_s, &bad)) {
    return error(request, err::kBadRequest, bad);
  }
  // The envelope's depth (SPEC §3) is the pipeline depth the client's proposal arrives at;
  // rules see it (a proposal deeper than the limit is a loop or a forged depth).
  if (const rapidjson::Value* depth = find_member(request.document, "depth")) {
    if (!depth->IsInt64() || depth->GetInt64() < 0 || depth->GetInt64() > kMaxEnvelopeDepth) {
      return error(request, err::kBadRequest,
                   "\"depth\" must be an integer from 0 to " + std::to_string(kMaxEnvelopeDepth));
    }
    call->depth = depth->GetInt64();
  }
  if (!to_valid_json_text(*proposal, &call->proposal_json)) {
    return error(request, err::kBadJson, "the proposal is not valid UTF-8 (lone surrogate escape)");
  }
  call->ctx = &context_;
  call->id_json = request.id_json;
  // Who asked is the authenticated identity, never what the proposal claims: the engine puts
  // it in the `proposal` fact (principal, groups) and in the returned action.
  call->principal = identity.principal;
  call->groups = identity.groups;
  call->token_id = identity.token_id;
  // Session memory is keyed by the authenticated principal and the proposal's session id.
  call->session = session_key(*proposal, identity.principal).session;
  call->closed = std::move(closed);
  call->later = std::move(later);
  switch (queue_decide(call)) {
    case DeciderPool::Submitted::Queued:
      return std::nullopt;
    case DeciderPool::Submitted::Busy:
      return error(request, err::kBusy,
                   "the decision queue is full (limits.max_queue, "
                   "limits.max_queue_per_principal); retry later");
    case DeciderPool::Submitted::Stopped:
      break;
  }
  return error(request, err::kShuttingDown, "the daemon is shutting down");
}

std::optional<Reply> RequestHandler::reload(const Request& request, const Identity& identity,
                                            ReplyFn later) {
  ServerContext* ctx = &context_;
  context_.reloader->request("request:" + identity.principal, [ctx, later = std::move(later),
                                                               id = request.id_json](
                                                                  const ReloadReport& report) {
    if (report.ok) {
      later(Reply{ok_response(id, "reload", report.fields_json())});
    } else {
      later(error_reply(ctx->stats, id, "reload",
                        {report.audit_error.empty() ? err::kReloadFailed : err::kAudit,
                         report.summary(), report.diagnostics_json(), report.fields_json(false)}));
    }
  });
  return std::nullopt;
}

// ,"confinement":"on"|"off" and, when off and `with_warning`, the warning (status lists it
// with the other configuration warnings).
std::string RequestHandler::confinement_fields(bool with_warning) const {
  const bool on = context_.config->pipeline.actuators.shell.confine;
  std::string out = ",\"confinement\":";
  out += on ? "\"on\"" : "\"off\"";
  if (!on && with_warning) {
    out += ",\"warnings\":[";
    append_json_string(out, kConfineOffWarning);
    out += "]";
  }
  return out;
}

std::string RequestHandler::status_fields() const {
  const Stats& s = context_.stats;
  auto policy = context_.policy.get();
  auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() -
                                                                 context_.started)
                    .count();
  auto n = [](const Stats::Counter& c) { return std::to_string(Stats::get(c)); };
  std::string out = "\"version\":\"";
  out += kProtocolVersion;
  out += "\",\"status\":";
  out += context_.draining.load() ? "\"draining\"" : "\"serving\"";
  out += ",\"uptime_s\":" + std::to_string(uptime);
  out += ",\"rules_digest\":";
  append_json_string(out, policy ? policy->digest() : "");
  out += ",\"rule_count\":" + std::to_string(policy ? policy->rule_count() : 0);
  DeciderPool::Status pool = context_.pool->status();
  out += ",\"workers\":" + std::to_string(context_.pool->size());
  out += ",\"workers_behind\":" + std::to_string(pool.behind);
  out += ",\"worker_digests\":[";
  for (std::size_t i = 0; i < pool.worker_digests.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, pool.worker_digests[i]);
  }
  out += "]";
  out += ",\"queue\":" + std::to_string(pool.queued);
  out += ",\"queue_principals\":" + std::to_string(pool.principals);
  out +=
      ",\"sessions\":" + std::to_string(context_.sessions ? context_.sessions->session_count() : 0);
  // Where session memory lives and how its calls went (PostgreSQL: fleet-wide sessions, as
  // of the last prune).
  out += ",\"session_store\":{\"store\":";
  append_json_string(out, context_.sessions ? context_.sessions->kind() : "");
  {
    SessionHistoryHealth h =
        context_.sessions ? context_.sessions->health() : SessionHistoryHealth{};
    out += ",\"ok\":";
    out += h.ok ? "true" : "false";
    out += ",\"error\":";
    append_json_string(out, h.error);
    out += ",\"read_failures\":" + std::to_string(h.read_failures) +
           ",\"remember_failures\":" + std::to_string(h.remember_failures) +
           ",\"owed\":" + std::to_string(h.owed) + ",\"lost\":" + std::to_string(h.lost) + "}";
  }
  // submit: the pipeline threads (0 without a provider), runs running and waiting.
  out += ",\"pipelines\":{\"threads\":" +
         std::to_string(context_.pipelines ? context_.pipelines->size() : 0) +
         ",\"running\":" + std::to_string(context_.pipelines ? context_.pipelines->running() : 0) +
         ",\"queued\":" + std::to_string(context_.pipelines ? context_.pipelines->queued() : 0) +
         "}";
  out += ",\"connections\":{\"current\":" + n(s.connections_current) +
         ",\"accepted\":" + n(s.connections_accepted) + ",\"refused\":" + n(s.connections_refused) +
         "}";
  out += ",\"counters\":{\"requests\":" + n(s.requests) + ",\"errors\":" + n(s.errors) +
         ",\"protocol_errors\":" + n(s.protocol_errors) +
         ",\"auth_failures\":" + n(s.auth_failures) + ",\"decisions\":" + n(s.decisions) +
         ",\"approve\":" + n(s.approved) + ",\"reject\":" + n(s.rejected) +
         ",\"approval_required\":" + n(s.approval_required) +
         ",\"failed_closed\":" + n(s.failed_closed) + ",\"reloads\":" + n(s.reloads) +
         ",\"reload_failures\":" + n(s.reload_failures) + ",\"busy\":" + std::to_string(pool.busy) +
         ",\"abandoned\":" + std::to_string(pool.abandoned) + "}";
  out += ",\"audit\":{\"enabled\":";
  if (context_.audit) {
    audit::WriterHealth h = context_.audit->health();
    out += "true,\"ok\":";
    out += h.ok ? "true" : "false";
    out += ",\"error\":";
    append_json_string(out, h.error);
    out += ",\"path\":";
    append_json_string(out, context_.config->audit_log);
    out += ",\"last_seq\":" + std::to_string(h.last_seq);
    out += ",\"records\":" + std::to_string(h.records);
    out += ",\"failures\":" + std::to_string(h.failures);
  } else {
    out +=
        "false,\"ok\":true,\"error\":\"\",\"path\":\"\",\"last_seq\":0,\"records\":0,"
        "\"failures\":0";
  }
  out += '}';
  // The approvals store as its last calls found it.
  out += ",\"approvals\":{\"store\":";
  append_json_string(out, context_.approvals ? context_.config->approvals.store : "");
  if (context_.approvals_health) {
    StoreHealth::Snapshot h = context_.approvals_health->get();
    out += ",\"ok\":";
    out += h.ok ? "true" : "false";
    out += ",\"error\":";
    append_json_string(out, h.error);
    out += ",\"failures\":" + std::to_string(h.failures);
  } else {
    out += ",\"ok\":true,\"error\":\"\",\"failures\":0";
  }
  // The webhook approvers are told through ([approvals.notify]).
  out += ",\"notify\":{\"enabled\":";
  if (context_.notifier) {
    Notifier::Counts c = context_.notifier->counts();
    out += "true,\"where\":";
    append_json_string(out, context_.notifier->where());
    out += ",\"sent\":" + std::to_string(c.sent) + ",\"failed\":" + std::to_string(c.failed) +
           ",\"retried\":" + std::to_string(c.retried) +
           ",\"dropped\":" + std::to_string(c.dropped) + ",\"queued\":" + std::to_string(c.queued) +
           ",\"last_error\":";
    append_json_string(out, c.last_error);
  } else {
    out += "false";
  }
  out += '}';
  const ApprovalService::Counters ac =
      context_.approvals ? context_.approvals->counters() : ApprovalService::Counters{};
  out += ",\"notifications\":{\"received\":" + std::to_string(ac.notes_received) +
         ",\"ignored\":" + std::to_string(ac.notes_ignored) +
         ",\"coalesced\":" + std::to_string(ac.notes_coalesced) +
         ",\"dropped\":" + std::to_string(ac.notes_dropped) +
         ",\"rereads\":" + std::to_string(ac.rereads) + "}";
  out += ",\"limited\":" + std::to_string(ac.limited);
  out += ",\"pruned\":{\"approvals\":" + std::to_string(ac.pruned_approvals) +
         ",\"grants\":" + std::to_string(ac.pruned_grants) + "}";
  out += '}';
  out += confinement_fields(false);
  out += ",\"warnings\":[";
  auto warnings = config_warnings(*context_.config);
  for (std::size_t i = 0; i < warnings.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, warnings[i]);
  }
  out += ']';
  return out;
}

}  // namespace warden::server
