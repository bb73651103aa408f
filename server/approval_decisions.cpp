// What approvals do to decisions (approval_service.h): the grants an approval-required
// decision offers, the decision a grant or the pending limit turns it into, and the reason a
// final approval gives.
#include "server/approval_service.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <iterator>

#include "bindings/json.h"
#include "server/errors.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

}  // namespace

std::vector<approvals::CapabilityGrant> approval_grants(const Decision& decision) {
  std::vector<approvals::CapabilityGrant> out;
  if (!decision.error_code.empty()) return out;
  for (const Grant& a : decision.allows) {
    if (a.monitor) continue;  // reported, never granted
    approvals::CapabilityGrant g{a.capability, a.rule, a.reason};
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(std::move(g));
  }
  return out;
}

std::vector<std::string> capabilities_of(const std::vector<approvals::CapabilityGrant>& grants) {
  std::vector<std::string> out;
  for (const approvals::CapabilityGrant& g : grants) out.push_back(g.capability);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> intersect_capabilities(const std::vector<std::string>& approved,
                                                const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  std::set_intersection(approved.begin(), approved.end(), allowed.begin(), allowed.end(),
                        std::back_inserter(out));
  return out;
}

Decision approved_by_grant(Decision decision, const approvals::Grant& grant,
                           const std::vector<std::string>& approved) {
  decision.outcome = Outcome::Approve;
  decision.reason = "approved for this session by " + grant.approver + " (approval " +
                    grant.approval_id + (grant.uses_left == 0 ? ", scoped" : "") + ")";
  // A capability is in force only when the approval a person answered granted it and the
  // rules deciding now still allow it.
  std::erase_if(decision.allows, [&](const Grant& a) {
    return !a.monitor &&
           std::find(approved.begin(), approved.end(), a.capability) == approved.end();
  });
  return decision;
}

Decision too_many_approvals(Decision decision, const approvals::PendingLimit& limit,
                            const std::string& principal) {
  decision.outcome = Outcome::Reject;
  decision.error_code = err::kTooManyApprovals;
  decision.reason = "approval required (" + decision.reason + "), but " + principal +
                    " already has " + std::to_string(limit.pending) +
                    " pending approvals, the most one principal may have ([approvals] "
                    "max_pending_per_principal = " +
                    std::to_string(limit.limit) +
                    "): nothing was stored; wait for answers, or withdraw some (warden deny)";
  return decision;
}

std::string answer_reason(const Approval& a) {
  switch (a.status) {
    case Status::Denied:
      return "denied by " + a.closed_by + (a.close_note.empty() ? "" : ": " + a.close_note);
    case Status::Expired:
      return "the approval expired before anyone approved it";
    case Status::Refused: {
      rapidjson::Document d;
      const rapidjson::Value* reason =
          warden::json::parse(a.result_json, &d, warden::json::Limits::any_depth())
              ? nullptr
              : warden::json::member(d, "reason");
      return "approved, but not run: " + (reason && reason->IsString()
                                              ? std::string(reason->GetString())
                                              : std::string("the rules refused it"));
    }
    case Status::Executed:
      return "approved";
    default:
      return "not answered";
  }
}

}  // namespace warden::server
