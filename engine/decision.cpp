#include "engine/decision.h"

#include <algorithm>

#include "engine/json_writer.h"

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
  std::string out;
  out.reserve(256 + d.action_json.size());
  out += "{\"decision_id\":";
  append_json_string(out, d.decision_id);
  out += ",\"outcome\":";
  append_json_string(out, outcome_name(d.outcome));
  out += ",\"reason\":";
  append_json_string(out, d.reason);
  out += ",\"rules\":";
  append_fired_rules_json(out, d.rules);
  if (!d.rewrites.empty()) {
    out += ",\"rewrites\":[";
    for (std::size_t i = 0; i < d.rewrites.size(); ++i) {
      const Rewrite& w = d.rewrites[i];
      if (i) out += ',';
      out += "{\"rule\":";
      append_json_string(out, w.rule);
      out += ",\"key\":";
      append_json_string(out, w.key);
      out += ",\"reason\":";
      append_json_string(out, w.reason);
      out += ",\"mode\":";
      out += w.monitor ? "\"monitor\"" : "\"enforce\"";
      out += ",\"applied\":";
      out += w.applied ? "true" : "false";
      if (!w.overlay.empty()) {
        out += ",\"overlay\":";
        append_json_string(out, w.overlay);
      }
      out += '}';
    }
    out += ']';
  }
  if (!d.allows.empty()) {
    out += ",\"allows\":[";
    for (std::size_t i = 0; i < d.allows.size(); ++i) {
      const Grant& g = d.allows[i];
      if (i) out += ',';
      out += "{\"rule\":";
      append_json_string(out, g.rule);
      out += ",\"capability\":";
      append_json_string(out, g.capability);
      out += ",\"reason\":";
      append_json_string(out, g.reason);
      out += ",\"mode\":";
      out += g.monitor ? "\"monitor\"" : "\"enforce\"";
      if (!g.overlay.empty()) {
        out += ",\"overlay\":";
        append_json_string(out, g.overlay);
      }
      out += '}';
    }
    out += ']';
  }
  if (!d.hints.empty()) {
    out += ",\"hints\":[";
    for (std::size_t i = 0; i < d.hints.size(); ++i) {
      if (i) out += ',';
      out += "{\"rule\":";
      append_json_string(out, d.hints[i].rule);
      out += ",\"text\":";
      append_json_string(out, d.hints[i].text);
      out += '}';
    }
    out += ']';
  }
  if (d.approval_set) {
    out += ",\"approval\":{\"expires_in_s\":" + std::to_string(d.approval_expires_s) +
           ",\"approvers\":" + std::to_string(d.approvers_needed) + '}';
  }
  out += ",\"action\":";
  out += d.action_json.empty() ? "null" : d.action_json;
  out += ",\"rules_digest\":";
  append_json_string(out, d.rules_digest);
  out += ",\"elapsed_us\":" + std::to_string(d.elapsed_us);
  if (!d.error_code.empty()) {
    out += ",\"error\":";
    append_json_string(out, d.error_code);
  }
  if (explain) {
    out += ",\"defaulted\":";
    out += d.defaulted ? "true" : "false";
    out += ",\"facts\":";
    out += d.facts_json.empty() ? "[]" : d.facts_json;
  }
  out += '}';
  return out;
}

void append_fired_rules_json(std::string& out, const std::vector<FiredRule>& rules) {
  out += '[';
  for (std::size_t i = 0; i < rules.size(); ++i) {
    const FiredRule& r = rules[i];
    if (i) out += ',';
    out += "{\"rule\":";
    append_json_string(out, r.rule);
    out += ",\"outcome\":";
    append_json_string(out, outcome_name(r.outcome));
    out += ",\"reason\":";
    append_json_string(out, r.reason);
    out += ",\"mode\":";
    out += r.monitor ? "\"monitor\"" : "\"enforce\"";
    if (!r.overlay.empty()) {
      // What the rule asserted before the overlay entry at `at` changed it.
      out += ",\"overlay\":{\"at\":";
      append_json_string(out, r.overlay);
      if (r.disabled) {
        out += ",\"disabled\":true";
      } else {
        out += ",\"was\":";
        append_json_string(out, outcome_name(r.asserted));
      }
      if (r.asserted_reason) {
        out += ",\"was_reason\":";
        append_json_string(out, *r.asserted_reason);
      }
      out += '}';
    }
    out += '}';
  }
  out += ']';
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
