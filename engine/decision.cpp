#include "engine/decision.h"

#include <algorithm>

#include "engine/decision_json.h"

namespace warden {

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Approve:
      return "approve";
    case Outcome::ApprovalRequired:
      return "approval-required";
    case Outcome::Reject:
      return "reject";
  }
  return "reject";
}

std::optional<Outcome> parse_outcome(std::string_view name) {
  if (name == "approve") return Outcome::Approve;
  if (name == "approval-required") return Outcome::ApprovalRequired;
  if (name == "reject") return Outcome::Reject;
  return std::nullopt;
}

int exit_code_for(Outcome outcome) {
  switch (outcome) {
    case Outcome::Approve:
      return 0;
    case Outcome::Reject:
      return 1;
    case Outcome::ApprovalRequired:
      return 3;
  }
  return 1;
}

std::string decision_to_json(const Decision& d, bool explain) {
  namespace dj = decision_json;
  const dj::Strings& s = dj::plain_strings();
  std::string out;
  out.reserve(256 + d.action_json.size());
  out += '{';
  dj::decision_id(out, d, s);
  dj::outcome(out, d.outcome);
  dj::reason(out, d, s);
  dj::rules(out, d, s, dj::kOverlay);
  if (!d.rewrites.empty()) dj::rewrites(out, d, s, dj::kOverlay);
  if (!d.allows.empty()) dj::allows(out, d, s, dj::kOverlay | dj::kAllowReason);
  if (!d.hints.empty()) dj::hints(out, d, s);
  if (d.approval_set) dj::approval(out, d);
  dj::action(out, d, "null");
  dj::rules_digest(out, d, s);
  dj::elapsed_us(out, d);
  if (!d.error_code.empty()) dj::error_code(out, d, s, "error");
  if (explain) {
    dj::defaulted(out, d);
    dj::facts(out, d);
  }
  out += '}';
  return out;
}

std::vector<std::string> granted_capabilities(const Decision& decision) {
  if (decision.outcome != Outcome::Approve) return {};
  return allowed_capabilities(decision);
}

std::vector<std::string> allowed_capabilities(const Decision& decision) {
  std::vector<std::string> out;
  if (!decision.error_code.empty()) return out;
  for (const Grant& g : decision.allows) {
    if (!g.monitor) out.push_back(g.capability);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace warden
