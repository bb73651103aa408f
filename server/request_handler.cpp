#include "server/request_handler.h"

#include <memory>

#include "audit/record.h"
#include "audit/writer.h"
#include "engine/decision.h"
#include "engine/session_memory.h"
#include "server/decider_pool.h"
#include "server/decision_record.h"
#include "server/errors.h"
#include "server/frame.h"
#include "server/json_text.h"
#include "server/pipeline_workers.h"
#include "server/protocol.h"
#include "server/reloader.h"
#include "server/submit.h"

namespace warden::server {

namespace {

bool is_known_action(std::string_view action) {
  static constexpr std::string_view kActions[] = {
      "decide", "submit", "pending", "approve", "deny", "reload", "status", "health-check", "auth"};
  for (std::string_view known : kActions) {
    if (known == action) return true;
  }
  return false;
}

// ok_response(id, "decide", "\"decision\":" + decision_to_json(…)), with one copy of the
// decision's JSON instead of two.
std::string decision_reply(std::string_view id_json, const Decision& decision, bool explain) {
  std::string json = decision_to_json(decision, explain);
  std::string out;
  out.reserve(80 + id_json.size() + json.size());
  out += "{\"type\":\"response\",\"id\":";
  out += id_json;
  out += ",\"payload\":{\"action\":\"decide\",\"ok\":true,\"decision\":";
  out += json;
  out += "}}";
  return out;
}

// Every error reply of a request is built and counted here.
Reply error_reply(Stats& stats, std::string_view id_json, std::string_view action,
                  const ErrorBody& body, bool close = false) {
  Stats::add(stats.errors);
  return Reply{error_response(id_json, action, body), close};
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
    std::string fields = "\"status\":";
    fields += context_.draining.load()  ? "\"draining\""
              : audit && !audit->ok     ? "\"degraded\""
                                        : "\"serving\"";
    fields += ",\"version\":\"";
    fields += kProtocolVersion;
    fields += '"';
    if (audit && !audit->ok) {
      fields += ",\"audit\":";
      append_json_string(fields, "failing: " + audit->error);
    }
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
    return submit_request(context_, request, identity, auth->hung_up, std::move(later));
  }
  if (action == "reload") return reload(request, identity, std::move(later));
  if (action == "status") return Reply{ok_response(request.id_json, action, status_fields())};
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
  std::optional<Identity> identity = store->authenticate(presented);
  if (!identity) {
    Stats::add(context_.stats.auth_failures);
    // The session logs the failure with the peer's address (rate-limited).
    // One attempt per connection: guessing costs a connection each time.
    return error(request, err::kAuthFailed, "unknown token", true);
  }
  auth->identity = identity;
  auth->token_hash = hash_token(presented);
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
  bool explain = false;
  if (const rapidjson::Value* e = find_member(payload, "explain")) {
    if (!e->IsBool()) {
      return error(request, err::kBadRequest, "\"payload.explain\" must be a boolean");
    }
    explain = e->GetBool();
  }
  DecideJob job;
  if (!to_valid_json_text(*proposal, &job.proposal_json)) {
    return error(request, err::kBadJson, "the proposal is not valid UTF-8 (lone surrogate escape)");
  }
  job.explain = explain;
  // Who asked is the authenticated identity, never what the proposal claims: the engine puts
  // it in the `proposal` fact (principal, groups) and in the returned action.
  job.principal = identity.principal;
  job.groups = identity.groups;
  // Session memory is keyed by the authenticated principal and the proposal's session id.
  job.session = session_key(*proposal, identity.principal).session;
  job.abandoned = closed;
  // With the audit log, an approved decision's effects join the session's history only after
  // its record is written (an E_AUDIT reject must not leave effects behind).
  job.defer_remember = context_.audit != nullptr;
  ServerContext* ctx = &context_;
  auto shared_later = std::make_shared<ReplyFn>(std::move(later));
  job.done = [ctx, shared_later, id = request.id_json, explain,
              origin = DecisionOrigin{job.proposal_json, job.principal, job.groups, job.session}](
                 DecideResult&& result, std::int64_t time_us) mutable {
    // The reply's JSON is built on the worker; the audit writer's thread only sends it.
    auto prepare = [id, explain](const DecideResult& r) {
      return r.ok ? decision_reply(id, r.decision, explain) : std::string();
    };
    auto answer = [ctx, shared_later, id, explain](const DecideResult& result, std::string json) {
      if (result.ok) {
        count_outcome(ctx->stats, result.decision);
        if (json.empty()) json = decision_reply(id, result.decision, explain);
        if (json.size() > kMaxEncodableFrame) {
          (*shared_later)(
              error_reply(ctx->stats, id, "decide",
                          {err::kResponseTooLarge, "the decision does not fit in one frame"}));
          return;
        }
        (*shared_later)(Reply{std::move(json)});
      } else {
        std::string diagnostics = "[" + result.error.to_json() + "]";
        (*shared_later)(error_reply(ctx->stats, id, "decide",
                                    {result.error.code.empty() ? err::kInternal : result.error.code,
                                     result.error.message, diagnostics}));
      }
    };
    record_decision(*ctx, std::move(origin), std::move(result), time_us, prepare, answer);
  };
  job.cancelled = [ctx, shared_later, closed, id = request.id_json] {
    if (closed->load()) {
      // The connection is gone: nobody reads this reply; it only releases the session.
      (*shared_later)(Reply{});
      return;
    }
    (*shared_later)(
        error_reply(ctx->stats, id, "decide", {err::kShuttingDown, "the daemon is shutting down"}));
  };
  switch (context_.pool->submit(std::move(job))) {
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
  context_.reloader->request(
      "request:" + identity.principal,
      [ctx, later = std::move(later), id = request.id_json](const ReloadReport& report) {
        if (report.ok) {
          later(Reply{ok_response(id, "reload", report.fields_json())});
        } else {
          later(error_reply(ctx->stats, id, "reload",
                            {report.audit_error.empty() ? err::kReloadFailed : err::kAudit,
                             report.summary(), report.diagnostics_json(),
                             report.fields_json(false)}));
        }
      });
  return std::nullopt;
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
  out += ",\"sessions\":" + std::to_string(context_.sessions ? context_.sessions->session_count() : 0);
  // submit: the pipeline threads (0 without a provider), runs running and waiting.
  out += ",\"pipelines\":{\"threads\":" +
         std::to_string(context_.pipelines ? context_.pipelines->size() : 0) +
         ",\"running\":" + std::to_string(context_.pipelines ? context_.pipelines->running() : 0) +
         ",\"queued\":" + std::to_string(context_.pipelines ? context_.pipelines->queued() : 0) + "}";
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
    out += "false,\"ok\":true,\"error\":\"\",\"path\":\"\",\"last_seq\":0,\"records\":0,"
           "\"failures\":0";
  }
  out += '}';
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
