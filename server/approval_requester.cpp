// The requester side of approvals (approval_service.h): a pending approval created for an
// approval-required decision, a submit suspended on one, a grant used, and what a revoked
// token asked for cancelled.
#include "server/approval_service.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <exception>
#include <future>

#include "bindings/json.h"
#include "pipeline/events.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/approval_text.h"
#include "server/errors.h"
#include "server/submit.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

// The context.agent of an action, or "".
std::string agent_of(const std::string& action_json) {
  rapidjson::Document d;
  if (warden::json::parse(action_json, &d, warden::json::Limits::any_depth()) || !d.IsObject())
    return {};
  const rapidjson::Value* context = warden::json::member(d, "context");
  return context ? warden::json::string_member(*context, "agent") : std::string();
}

}  // namespace

// ---- requester side ----

approvals::Created ApprovalService::create(const Requester& who, const Decision& decision,
                                           const std::string& action_json,
                                           const std::string& origin) {
  const Config& config = *context_.config;
  approvals::NewApproval n;
  n.action_json = action_json;
  n.proposal_json = action_json;
  n.principal = who.principal;
  n.groups = who.groups;
  n.session = who.session;
  n.agent = who.agent.empty() ? agent_of(action_json) : who.agent;
  for (const FiredRule& r : decision.rules) {
    if (!r.monitor && r.outcome == Outcome::ApprovalRequired) n.rules.push_back(r.rule);
  }
  n.reason = decision.reason;
  n.decision_id = decision.decision_id;
  n.origin = origin;
  n.daemon_id = config.audit.daemon_id;
  n.created_ms = approval_text::now_ms();
  std::int64_t expiry_s = config.approvals.expiry_seconds;
  if (decision.approval_expires_s > 0 && decision.approval_expires_s < expiry_s) {
    expiry_s = decision.approval_expires_s;
  }
  n.expires_ms = n.created_ms + expiry_s * 1000;
  n.approvers_needed = std::clamp(decision.approvers_needed, 1, 2);
  // What approving grants: the decision's enforcing allows, shown to the approver and bound
  // into the digest they answer with.
  n.grants = approval_grants(decision);
  n.requester_token_id = who.token_id;
  n.max_pending = config.approvals.max_pending_per_principal;
  approvals::Created created;
  try {
    created = store_->create(n);
  } catch (const approvals::PendingLimit& e) {
    {
      std::lock_guard c(counters_mutex_);
      ++counters_.limited;
    }
    // Nothing stored; the log says why this approval-required decision went no further.
    Approval refused;
    refused.action_hash = approvals::action_hash(action_json);
    refused.principal = who.principal;
    refused.session = who.session;
    refused.agent = n.agent;
    refused.origin = origin;
    refused.rules = n.rules;
    refused.reason = decision.reason;
    refused.decision_id = decision.decision_id;
    refused.approvers_needed = n.approvers_needed;
    record("limited", refused, "warden",
           who.principal + " already has " + std::to_string(e.pending) +
               " pending approvals ([approvals] max_pending_per_principal = " +
               std::to_string(e.limit) + "): none stored");
    throw;
  }
  try {
    record("created", created.approval, who.principal, "", decision.decision_id);
  } catch (...) {
    // Unrecorded, it must not be answerable: closed at once (denied by the daemon itself).
    try {
      store_->deny(created.approval.id, "warden", "the audit log could not record it",
                   approval_text::now_ms());
    } catch (const std::exception& e) {
      context_.log->error("approvals: {} could not be closed: {}", created.approval.id, e.what());
    }
    throw;
  }
  return created;
}

std::string ApprovalService::requester_json(const approvals::Created& created) {
  std::string out = "{\"id\":";
  append_json_string(out, created.approval.id);
  approval_text::member(out, "token", created.token);
  approval_text::member(out, "action_hash", created.approval.action_hash);
  approval_text::member(out, "digest", created.approval.digest);
  out += ",\"status\":\"pending\",\"expires_ms\":" + std::to_string(created.approval.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(created.approval.approvers_needed);
  approval_text::member(out, "how", "warden approve " + created.approval.id);
  out += '}';
  return out;
}

std::string ApprovalService::suspend(const Identity& identity,
                                     std::shared_ptr<const std::atomic<bool>> closed,
                                     const Decision& decision, const std::string& action_json,
                                     const pipeline::Signal& signal,
                                     const pipeline::EventSink& sink) {
  Requester who{identity.principal, identity.groups, signal.session, signal.agent,
                identity.token_id};
  approvals::Created created;
  try {
    created = create(who, decision, action_json, "submit");
  } catch (const approvals::PendingLimit& e) {
    sink(pipeline::events::approval_required(decision));
    sink(pipeline::events::error(err::kTooManyApprovals,
                                 too_many_approvals(decision, e, identity.principal).reason));
    return "rejected";
  } catch (const std::exception& e) {
    sink(pipeline::events::approval_required(decision));
    sink(pipeline::events::error(err::kApprovalStore,
                                 std::string("no pending approval could be stored: ") + e.what()));
    return "failed";
  }
  std::string event = pipeline::events::approval_required(decision);
  event.insert(event.size() - 1, ",\"approval\":" + requester_json(created));
  sink(event);
  const std::string id = created.approval.id;
  if (signal.approval_wait_s > 0) {
    auto answered = std::make_shared<std::promise<std::optional<Approval>>>();
    std::future<std::optional<Approval>> future = answered->get_future();
    wait(id, Clock::now() + std::chrono::seconds(signal.approval_wait_s), closed,
         [answered](std::optional<Approval> a) { answered->set_value(std::move(a)); });
    std::optional<Approval> a = future.get();
    if (a) {
      sink(result_event(*a));
      return a->status == Status::Executed ? "done" : "rejected";
    }
    if (closed && closed->load()) return "cancelled";
  }
  // Not waiting (or no longer): the result reaches the connection while it is open.
  if (Push push = pusher(closed.get())) {
    const auto left = std::chrono::milliseconds(
        std::max<std::int64_t>(0, created.approval.expires_ms - approval_text::now_ms()));
    wait(id, Clock::now() + left + std::chrono::seconds(5), closed,
         [push](std::optional<Approval> a) {
           if (a) push(event_message("null", result_event(*a)));
         });
  }
  return "suspended";
}

std::optional<approvals::Grant> ApprovalService::use_grant(const Requester& who,
                                                           const std::string& action_json,
                                                           const std::string& decision_id,
                                                           std::vector<std::string>* capabilities) {
  capabilities->clear();
  std::optional<approvals::Grant> grant = store_->use_grant(
      who.principal, who.session, approval_text::grant_key(action_json), approval_text::now_ms());
  if (!grant) return std::nullopt;
  std::optional<Approval> approval = store_->get(grant->approval_id);
  if (approval && !requester_valid(approval->requester_token_id, approval->principal)) {
    // Its requester's token was revoked (on this daemon, perhaps before the store heard of
    // it): the grant approves nothing, and whatever else that token started ends with it.
    cancel_requester(approval->requester_token_id, approval->principal);
    return std::nullopt;
  }
  Approval shown = approval ? *approval : Approval{};
  if (!approval) shown.id = grant->approval_id;
  // No approval to read its grants from: the grant carries no capability.
  if (approval) *capabilities = capabilities_of(approval->grants);
  record("scoped-use", shown, grant->approver, "", decision_id);
  return grant;
}

// ---- revoked tokens ----

bool ApprovalService::requester_valid(std::string_view token_id, std::string_view principal) const {
  if (token_id.empty()) return true;  // not asked for with a token
  std::optional<Identity> now = context_.tokens()->find_by_id(token_id);
  return now && now->principal == principal &&
         (role_allows(now->role, "decide") || role_allows(now->role, "submit"));
}

std::size_t ApprovalService::cancel_requester(const std::string& token_id,
                                              const std::string& principal) {
  std::vector<Approval> cancelled = store_->cancel_requester(token_id, principal, "warden",
                                                             kRevokedNote, approval_text::now_ms());
  for (const Approval& a : cancelled) {
    context_.log->warn(
        "approvals: {} of {} cancelled: the token that asked for it ({}) is no "
        "longer valid",
        a.id, a.principal, a.requester_token_id);
    try {
      record("denied", a, "warden", kRevokedNote);
    } catch (const std::exception& e) {
      context_.log->error("approvals: {}", e.what());
    }
  }
  return cancelled.size();
}

std::size_t ApprovalService::revoke_missing_tokens() {
  std::size_t n = 0;
  for (const approvals::TokenRequester& r : store_->open_requesters(approval_text::now_ms())) {
    if (!requester_valid(r.token_id, r.principal)) n += cancel_requester(r.token_id, r.principal);
  }
  return n;
}

}  // namespace warden::server
