// The approver side of approvals (approval_service.h): approve (the store's claim, the last
// mile, a submit's action dispatched on a runner thread or a decide's grant left) and deny.
#include "server/approval_service.h"

#include <algorithm>
#include <exception>

#include "actuators/action.h"
#include "engine/json_writer.h"
#include "pipeline/action_json.h"
#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "server/act_record.h"
#include "server/approval_text.h"
#include "server/daemon_decider.h"
#include "server/decision_record.h"
#include "server/errors.h"
#include "server/submit.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

std::string result_json_of(std::string_view target, const actuators::Result& r, bool with_output) {
  std::string out = "{\"target\":";
  append_json_string(out, target);
  out += ",\"ok\":";
  out += r.ok ? "true" : "false";
  out += ",\"exit_code\":" + std::to_string(r.exit_code);
  approval_text::member(out, "error_code", r.error_code);
  approval_text::member(out, "error", r.error);
  out += ",\"truncated\":";
  out += r.truncated ? "true" : "false";
  if (with_output) approval_text::member(out, "output", r.output);
  out += '}';
  return out;
}

// The scope a claimed approval grants: the smallest scope_minutes of its votes, 0 (one use)
// when any vote asked for none. `claimer`: the completing vote's, when the votes are missing.
int strictest_scope(const Approval& a, int claimer) {
  if (a.votes.empty()) return claimer;
  int out = a.votes.front().scope_minutes;
  for (const approvals::Vote& v : a.votes) out = std::min(out, v.scope_minutes);
  return std::max(out, 0);
}

// An actuator result that means the action never started: no actuator for its target, or
// one that refused it before running it (malformed, needs a shell it was not granted, an
// unknown tool, refused by its confinement).
bool not_run(const actuators::Result& r) {
  for (const char* code :
       {code::kActNoActuator, actuators::code::kBadAction, actuators::code::kShellSyntax,
        actuators::code::kUnknownTool, actuators::code::kDenied}) {
    if (r.error_code == code) return true;
  }
  return false;
}

}  // namespace

// ---- approver side ----

Reply ApprovalService::fail(const std::string& id_json, std::string_view action,
                            std::string_view code, std::string message) {
  Stats::add(context_.stats.errors);
  return Reply{error_response(id_json, action, {code, message})};
}

std::optional<Reply> ApprovalService::approve(const Request& request, const Identity& identity,
                                              ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  std::string approval_id, digest, note, error;
  std::int64_t scope_minutes = 0;
  if (find_member(payload, "token")) {
    // The requester's token is a handle for withdrawing its request, never an approval: an
    // approver answers what they were shown, by id and digest.
    return fail(request.id_json, "approve", err::kBadRequest,
                "a token does not approve: approve by the approval's id and the digest of the "
                "action you were shown (warden approve ID)");
  }
  const rapidjson::Value* i = find_member(payload, "id");
  if (!i || !i->IsString() || i->GetStringLength() == 0) {
    return fail(request.id_json, "approve", err::kBadRequest,
                "\"payload.id\" must be the approval's id (warden approve ID)");
  }
  const rapidjson::Value* g = find_member(payload, "digest");
  if (!g || !g->IsString() || g->GetStringLength() == 0) {
    return fail(request.id_json, "approve", err::kBadRequest,
                "\"payload.digest\" must be the action_hash of the approval you were shown "
                "(\"sha256:…\")");
  }
  if (!string_field(payload, "id", approval_text::kMaxToken, &approval_id, &error) ||
      !string_field(payload, "digest", approval_text::kMaxToken, &digest, &error) ||
      !string_field(payload, "note", approval_text::kMaxNote, &note, &error) ||
      !int_field(payload, "scope_minutes", 1, context_.config->approvals.max_scope_minutes,
                 &scope_minutes, &error)) {
    return fail(request.id_json, "approve", err::kBadRequest, error);
  }
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued =
      post([this, id = request.id_json, identity, approval_id, digest, note, scope_minutes, send] {
        std::optional<Reply> reply;
        try {
          reply = approve_now(id, identity, approval_id, digest, note,
                              static_cast<int>(scope_minutes), send);
        } catch (const approvals::StoreError& e) {
          reply = fail(id, "approve", err::kApprovalStore, e.what());
        } catch (const std::exception& e) {
          reply = fail(id, "approve", err::kAudit, e.what());
        }
        if (reply) (*send)(std::move(*reply));
      });
  if (!queued)
    return fail(request.id_json, "approve", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

std::optional<Reply> ApprovalService::approve_now(const std::string& id_json,
                                                  const Identity& identity,
                                                  const std::string& approval_id,
                                                  const std::string& digest,
                                                  const std::string& note, int scope_minutes,
                                                  std::shared_ptr<ReplyFn> send) {
  // An approval whose requester's token this daemon no longer accepts is cancelled, not
  // voted on (a reload here may not have reached the store yet).
  if (std::optional<Approval> asked = store_->get(approval_id);
      asked && asked->status == Status::Pending &&
      !requester_valid(asked->requester_token_id, asked->principal)) {
    cancel_requester(asked->requester_token_id, asked->principal);
  }
  approvals::ApproveOutcome outcome =
      store_->approve(approval_id, digest, identity.principal, note, approval_text::now_ms(),
                      scope_minutes, context_.config->audit.daemon_id);
  using R = approvals::ApproveResult;
  const std::string which = outcome.approval ? "approval " + outcome.approval->id : "approval";
  switch (outcome.result) {
    case R::NotFound:
      return fail(id_json, "approve", err::kApprovalNotFound, "no approval has this id");
    case R::DigestMismatch:
      return fail(id_json, "approve", err::kApprovalDigest,
                  which + ": " + digest +
                      " is not its digest (its action and what approving it grants): nothing "
                      "was approved; look at it again (warden approve " +
                      approval_id + ")");
    case R::Closed:
      if (outcome.approval->status == Status::Expired) {
        return fail(id_json, "approve", err::kApprovalExpired,
                    which + " expired before it was approved");
      }
      return fail(
          id_json, "approve", err::kApprovalClosed,
          which + " is already " + std::string(approvals::status_name(outcome.approval->status)) +
              (outcome.approval->closed_by == "warden" && !outcome.approval->close_note.empty()
                   ? " (" + outcome.approval->close_note + ")"
                   : std::string()) +
              ": an approval is answered once");
    case R::Expired:
      record("expired", *outcome.approval, "expiry", "");
      return fail(id_json, "approve", err::kApprovalExpired,
                  which + " expired before it was approved");
    case R::SelfApproval:
      return fail(
          id_json, "approve", err::kSelfApproval,
          which + " was requested by " + identity.principal + ": another approver must answer it");
    case R::AlreadyApproved:
      return fail(id_json, "approve", err::kAlreadyApproved,
                  which + ": you already approved it; it needs another approver");
    case R::NeedMore: {
      record("vote", *outcome.approval, identity.principal, note);
      std::string fields =
          "\"status\":\"pending\",\"approval\":" + approval_json(*outcome.approval);
      return Reply{ok_response(id_json, "approve", fields)};
    }
    case R::Claimed:
      break;
  }
  const Approval& approval = *outcome.approval;
  try {
    record("approved", approval, identity.principal, note);
  } catch (const std::exception& e) {
    // Not recorded, so not run.
    store_->finish(approval.id, Status::Refused,
                   std::string("{\"error_code\":\"") + err::kAudit +
                       "\",\"reason\":\"the approval could not be recorded\"}",
                   approval_text::now_ms());
    throw;
  }
  return carry_out(id_json, identity, approval, scope_minutes, std::move(send));
}

std::optional<Reply> ApprovalService::carry_out(const std::string& id_json,
                                                const Identity& approver, const Approval& approval,
                                                int scope_minutes, std::shared_ptr<ReplyFn> send) {
  if (!requester_valid(approval.requester_token_id, approval.principal)) {
    // The token that asked was revoked after the vote was counted: claimed, never run.
    static constexpr char kReason[] =
        "the token that asked for it was revoked before it ran; it is not run";
    std::string result = "{\"error_code\":";
    append_json_string(result, err::kApprovalRefused);
    approval_text::member(result, "reason", kReason);
    result += '}';
    store_->finish(approval.id, Status::Refused, result, approval_text::now_ms());
    record("refused", approval, approver.principal, kReason, {}, result);
    cancel_requester(approval.requester_token_id, approval.principal);
    std::optional<Approval> now = store_->get(approval.id);
    Stats::add(context_.stats.errors);
    return Reply{error_response(id_json, "approve",
                                {err::kApprovalRefused,
                                 std::string("not run: ") + kReason,
                                 {},
                                 "\"approval\":" + approval_json(now ? *now : approval)})};
  }
  // The last mile: the rules in force decide the stored action again, as its requester.
  Identity requester{approval.principal, Role::Agent, approval.groups, approval.requester_token_id};
  pipeline::Signal signal;
  signal.principal = approval.principal;
  signal.session = approval.session;
  signal.agent = approval.agent;
  signal.source = "approval";
  pipeline::Decider decide = make_daemon_decider(context_, requester, nullptr, false);
  Decision last = decide(approval.action_json, signal, pipeline::DecideStage::LastMile, 1);
  std::string decision_json = decision_to_json(last, false);
  std::string refusal;
  if (last.outcome == Outcome::Reject) {
    refusal = "the rules in force now reject it: " + last.reason;
  } else if (last.action_json != approval.action_json) {
    refusal = "the rules in force now change the action (decision " + last.decision_id + ")";
  }
  if (!refusal.empty()) {
    std::string result = "{\"decision_id\":";
    append_json_string(result, last.decision_id);
    approval_text::member(result, "outcome", outcome_name(last.outcome));
    approval_text::member(result, "reason", refusal);
    result += '}';
    return close_refused(id_json, approver, approval, last, decision_json, refusal, result,
                         "not run: " + refusal, "");
  }
  if (approval.origin != "submit") {
    return conclude(id_json, approver, approval, scope_minutes, last, decision_json, "granted",
                    "{\"granted\":true}", "{\"granted\":true}");
  }
  // A submit's action runs on a runner thread, which answers the approver when it is done.
  const bool queued = run_action([this, id_json, approver, approval, scope_minutes, last,
                                  decision_json, send](bool stopping) {
    Reply reply;
    try {
      reply = stopping ? refuse_stopped(id_json, approver, approval, last, decision_json)
                       : dispatch(id_json, approver, approval, scope_minutes, last, decision_json);
    } catch (const approvals::StoreError& e) {
      reply = fail(id_json, "approve", err::kApprovalStore, e.what());
    } catch (const std::exception& e) {
      reply = fail(id_json, "approve", err::kAudit, e.what());
    }
    (*send)(std::move(reply));
  });
  if (!queued) {
    return refuse_stopped(id_json, approver, approval, last, decision_json);
  }
  return std::nullopt;
}

Reply ApprovalService::refuse_stopped(const std::string& id_json, const Identity& approver,
                                      const Approval& approval, const Decision& last,
                                      const std::string& decision_json) {
  pipeline::ResolvedTarget resolved = pipeline::resolve_target(last.action_json, "", "");
  actuators::Result r;
  r.error_code = err::kShuttingDown;
  r.error = "the daemon stopped before it ran";
  return refuse_unrun(id_json, approver, approval, last, decision_json, resolved.target, r);
}

Reply ApprovalService::refuse_unrun(const std::string& id_json, const Identity& approver,
                                    const Approval& approval, const Decision& last,
                                    const std::string& decision_json, const std::string& target,
                                    const actuators::Result& r) {
  // Approved, but it never ran: closed refused, and said so to both sides.
  const std::string what = r.error_code + (r.error.empty() ? "" : ": " + r.error);
  std::string failed = result_json_of(target, r, false);
  failed.insert(failed.size() - 1, ",\"reason\":" + json_string("it could not run: " + what));
  return close_refused(id_json, approver, approval, last, decision_json,
                       "it could not run: " + what, failed,
                       "approved, but it could not run: " + what, ",\"result\":" + failed);
}

Reply ApprovalService::close_refused(const std::string& id_json, const Identity& approver,
                                     const Approval& approval, const Decision& last,
                                     const std::string& decision_json, const std::string& reason,
                                     const std::string& result, const std::string& message,
                                     const std::string& extra) {
  store_->finish(approval.id, Status::Refused, result, approval_text::now_ms());
  record("refused", approval, approver.principal, reason, last.decision_id, result);
  std::optional<Approval> now = store_->get(approval.id);
  Stats::add(context_.stats.errors);
  return Reply{error_response(id_json, "approve",
                              {err::kApprovalRefused,
                               message,
                               {},
                               "\"approval\":" + approval_json(now ? *now : approval) +
                                   ",\"decision\":" + decision_json + extra})};
}

Reply ApprovalService::dispatch(const std::string& id_json, const Identity& approver,
                                const Approval& approval, int scope_minutes, const Decision& last,
                                const std::string& decision_json) {
  pipeline::ResolvedTarget resolved = pipeline::resolve_target(last.action_json, "", "");
  actuators::Actuator* actuator =
      actuators_ && !resolved.target.empty() ? actuators_->find(resolved.target) : nullptr;
  actuators::Result r;
  std::vector<std::string> capabilities;  // what the action ran with
  if (!actuator) {
    r.error_code = code::kActNoActuator;
    r.error = "no actuator for target " + resolved.target + " on daemon " +
              context_.config->audit.daemon_id;
  } else {
    actuators::Context c;
    c.decision_id = last.decision_id;
    c.principal = approval.principal;
    c.session = approval.session;
    c.agent = approval.agent;
    c.source = "approval";
    // What the approver saw granted, and only as far as the rules in force still allow it:
    // a rule change narrows what a person approved, never widens it.
    c.allowed =
        intersect_capabilities(capabilities_of(approval.grants), allowed_capabilities(last));
    capabilities = c.allowed;
    c.effects = last.effects;
    try {
      r = actuator->act(last.action_json, c);
    } catch (...) {
      r = actuators::Result{};
      r.error_code = code::kActCrashed;
      r.error = "the actuator threw";
    }
    record_act(context_, last.decision_id, resolved.target, approval.principal, r);
  }
  if (!actuator || not_run(r)) {
    return refuse_unrun(id_json, approver, approval, last, decision_json, resolved.target, r);
  }
  // A person's yes made it run: its effects are now part of what its session did.
  Decision ran = last;
  ran.outcome = Outcome::Approve;
  remember_granted(context_, approval.principal, approval.session, ran);
  std::string result = result_json_of(resolved.target, r, true);
  std::string recorded = result_json_of(resolved.target, r, false);
  std::string ran_with = ",\"capabilities\":";
  approval_text::append_strings(ran_with, capabilities);
  result.insert(result.size() - 1, ran_with);
  recorded.insert(recorded.size() - 1, ran_with);
  return conclude(id_json, approver, approval, scope_minutes, last, decision_json, "executed",
                  std::move(result), std::move(recorded));
}

Reply ApprovalService::conclude(const std::string& id_json, const Identity& approver,
                                const Approval& approval, int scope_minutes, const Decision& last,
                                const std::string& decision_json, const std::string& status,
                                std::string result, std::string recorded) {
  // The strictest terms of all votes hold: one use when any approver asked for no scope,
  // else the shortest scope asked for.
  scope_minutes = strictest_scope(approval, scope_minutes);
  if (scope_minutes > 0 || approval.origin != "submit") {
    approvals::Grant g;
    g.approval_id = approval.id;
    g.principal = approval.principal;
    g.session = approval.session;
    g.action_hash = approval_text::grant_key(approval.action_json);
    g.approver = approver.principal;
    if (scope_minutes > 0) {
      g.expires_ms = approval_text::now_ms() + std::int64_t{scope_minutes} * 60000;
      g.uses_left = 0;  // any number of uses until it expires
    } else {
      g.expires_ms = approval_text::now_ms() + context_.config->approvals.expiry_seconds * 1000;
      g.uses_left = 1;
    }
    // Never beyond the approval's own expiry (the rule's expires-in, else the daemon's
    // expiry_seconds): what could not be approved after then is not approved after then.
    g.expires_ms = std::min(g.expires_ms, approval.expires_ms);
    store_->add_grant(g);
    std::string grant = "{\"uses\":" + std::to_string(g.uses_left) +
                        ",\"expires_ms\":" + std::to_string(g.expires_ms) +
                        ",\"scope_minutes\":" + std::to_string(scope_minutes) + "}";
    result.insert(result.size() - 1, ",\"grant\":" + grant);
    recorded.insert(recorded.size() - 1, ",\"grant\":" + grant);
  }
  store_->finish(approval.id, Status::Executed, result, approval_text::now_ms());
  record(approval.origin == "submit" ? "executed" : "granted", approval, approver.principal, "",
         last.decision_id, recorded);
  std::optional<Approval> now = store_->get(approval.id);
  std::string fields = "\"status\":";
  append_json_string(fields, status);
  fields += ",\"approval\":" + approval_json(now ? *now : approval);
  fields += ",\"decision\":" + decision_json;
  fields += ",\"result\":" + result;
  std::string reply = ok_response(id_json, "approve", fields);
  if (reply.size() > kMaxEncodableFrame) {
    return Reply{ok_response(id_json, "approve",
                             "\"status\":" + json_string(status) + ",\"approval\":{\"id\":" +
                                 json_string(approval.id) + "},\"truncated\":true")};
  }
  return Reply{std::move(reply)};
}

std::optional<Reply> ApprovalService::deny(const Request& request, const Identity& identity,
                                           ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  std::string token, id, note, error;
  if (!string_field(payload, "token", approval_text::kMaxToken, &token, &error) ||
      !string_field(payload, "id", approval_text::kMaxToken, &id, &error) ||
      !string_field(payload, "note", approval_text::kMaxNote, &note, &error)) {
    return fail(request.id_json, "deny", err::kBadRequest, error);
  }
  if (token.empty() == id.empty()) {
    return fail(request.id_json, "deny", err::kBadRequest,
                "give exactly one of \"payload.token\" and \"payload.id\"");
  }
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued = post([this, rid = request.id_json, identity,
                            which = token.empty() ? id : token, note, send] {
    try {
      approvals::DenyOutcome outcome =
          store_->deny(which, identity.principal, note, approval_text::now_ms());
      switch (outcome.result) {
        case approvals::DenyResult::NotFound:
          (*send)(fail(rid, "deny", err::kApprovalNotFound, "no approval has this token or id"));
          return;
        case approvals::DenyResult::Closed:
          (*send)(fail(rid, "deny", err::kApprovalClosed,
                       "approval " + outcome.approval->id + " is already " +
                           std::string(approvals::status_name(outcome.approval->status))));
          return;
        case approvals::DenyResult::Expired:
          record("expired", *outcome.approval, "expiry", "");
          (*send)(fail(rid, "deny", err::kApprovalExpired,
                       "approval " + outcome.approval->id + " had already expired"));
          return;
        case approvals::DenyResult::Denied:
          break;
      }
      record("denied", *outcome.approval, identity.principal, note);
      (*send)(Reply{ok_response(rid, "deny", "\"approval\":" + approval_json(*outcome.approval))});
    } catch (const approvals::StoreError& e) {
      (*send)(fail(rid, "deny", err::kApprovalStore, e.what()));
    } catch (const std::exception& e) {
      (*send)(fail(rid, "deny", err::kAudit, e.what()));
    }
  });
  if (!queued)
    return fail(request.id_json, "deny", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

}  // namespace warden::server
