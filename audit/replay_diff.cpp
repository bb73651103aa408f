#include "audit/replay_diff.h"

#include <rapidjson/document.h>

#include <algorithm>
#include <tuple>

#include "bindings/json.h"

namespace warden::audit {

bool is_widening(Outcome before, Outcome after) { return after < before; }

namespace replay {

ReplayChange change_of(const DecisionRecord& rec, const DecisionRecord& before, const Cached& now,
                       std::size_t file, std::uint64_t line) {
  ReplayChange c;
  c.seq = rec.seq;
  c.time_us = rec.time_us;
  c.file = file;
  c.line = line;
  c.principal = rec.principal;
  c.session = rec.session;
  c.decision_id = rec.decision_id;
  c.summary = summarize_proposal(rec.proposal_json);
  c.masked = rec.masked;
  c.widening = is_widening(rec.outcome, now.outcome);
  c.old_outcome = rec.outcome;
  c.new_outcome = now.outcome;
  c.old_reason = before.reason;
  c.new_reason = now.reason;
  c.old_error = rec.error_code;
  c.new_error = now.error_code;
  c.old_rules = before.rules;
  c.new_rules = now.rules;
  return c;
}

std::string summarize_proposal(std::string_view json) {
  rapidjson::Document doc;
  if (warden::json::parse(json, &doc, warden::json::Limits::any_depth()) || !doc.IsObject())
    return std::string(json.substr(0, 200));
  std::string out = warden::json::string_member(doc, "target");
  std::string action = warden::json::string_member(doc, "action");
  if (!action.empty()) out += "/" + action;
  const rapidjson::Value* payload = warden::json::member(doc, "payload");
  if (payload && payload->IsObject()) {
    for (const char* name : {"command", "path", "url", "tool", "text"}) {
      std::string v = warden::json::string_member(*payload, name);
      if (v.empty()) continue;
      if (v.size() > 200) v = v.substr(0, 200) + "…";
      out += std::string(" ") + name + "=" + v;
      break;
    }
  }
  return out;
}

void order_findings(ReplayReport* report) {
  ReplayReport& rep = *report;
  std::sort(rep.problems.begin(), rep.problems.end(),
            [](const ReplayProblem& a, const ReplayProblem& b) {
              return std::tie(a.file, a.line) < std::tie(b.file, b.line);
            });
  std::sort(rep.changes.begin(), rep.changes.end(),
            [](const ReplayChange& a, const ReplayChange& b) {
              if (a.widening != b.widening) return a.widening;
              return a.seq < b.seq;
            });
  rep.changed = rep.changes.size();
  rep.widenings = static_cast<std::uint64_t>(std::count_if(
      rep.changes.begin(), rep.changes.end(), [](const ReplayChange& c) { return c.widening; }));
}

}  // namespace replay
}  // namespace warden::audit
