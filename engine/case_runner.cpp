#include "engine/case_runner.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "engine/session_memory.h"

namespace warden {
namespace {

std::string to_text(const rapidjson::Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string member(const rapidjson::Value& v, const char* name) {
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// "history": earlier proposals of the case's session. The case's proposal must name its
// session (context.session), or no history could reach it. Returns why it is invalid.
std::string read_history(const rapidjson::Value& v, const rapidjson::Value& proposal, RuleCase* c) {
  auto history = v.FindMember("history");
  if (history == v.MemberEnd()) return {};
  if (!history->value.IsArray()) return "\"history\" must be an array of proposals";
  for (const auto& p : history->value.GetArray()) {
    if (!p.IsObject()) return "\"history\" must be an array of proposals";
    c->history.push_back(to_text(p));
  }
  if (session_key(proposal, std::nullopt).session.empty())
    return "has a \"history\" but its proposal has no context.session (no session, no history)";
  return {};
}

// Decides the case's history in order, in one fresh session memory, then the case's proposal
// with what the memory holds, as the daemon would. Input errors in the history are reported
// in *failure (the proposal is then decided without that step).
DecideResult decide_with_history(Engine& engine, const RuleCase& c, const DecideRequest& request,
                                 std::string* failure) {
  SessionMemory memory;
  for (std::size_t i = 0; i < c.history.size(); ++i) {
    DecideRequest step = request;
    step.proposal_json = c.history[i];
    DecideResult r = decide_in_session(engine, memory, step, session_key(c.history[i], c.principal));
    if (!r.ok) *failure += "- history[" + std::to_string(i) + "] is not a valid proposal\n+ " + r.error.code + ": " + r.error.message + "\n";
  }
  return decide_in_session(engine, memory, request, session_key(c.proposal_json, c.principal));
}

void read_case(const std::string& file, long line, const rapidjson::Value& v, std::vector<RuleCase>* out,
               Diagnostics* diagnostics) {
  auto bad = [&](const std::string& why) {
    diagnostics->push_back({code::kCase, Severity::Error, file, line, "", why});
  };
  if (!v.IsObject()) return bad("a test case must be a JSON object");
  // A misspelt field (say "expect_eror") must not quietly turn into a weaker test.
  static const std::set<std::string, std::less<>> kFields = {
      "name", "proposal", "expect", "expect_error", "rule", "not_rule", "workspace", "depth", "principal", "groups",
      "history"};
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    std::string_view field(m->name.GetString(), m->name.GetStringLength());
    if (!kFields.count(field)) return bad("unknown test case field \"" + std::string(field.substr(0, 40)) + "\"");
    if (field != "proposal" && field != "depth" && field != "groups" && field != "history" &&
        !m->value.IsString())
      return bad("test case field \"" + std::string(field) + "\" must be a string");
  }
  RuleCase c;
  c.file = file;
  c.line = line;
  c.name = member(v, "name");
  c.expect = member(v, "expect");
  c.expect_error = member(v, "expect_error");
  c.rule = member(v, "rule");
  c.not_rule = member(v, "not_rule");
  c.workspace = member(v, "workspace");
  if (auto depth = v.FindMember("depth"); depth != v.MemberEnd()) {
    if (!depth->value.IsInt64() || depth->value.GetInt64() < 0) return bad("\"depth\" must be a whole number");
    c.depth = depth->value.GetInt64();
  }
  if (auto principal = v.FindMember("principal"); principal != v.MemberEnd())
    c.principal = std::string(principal->value.GetString(), principal->value.GetStringLength());
  if (auto groups = v.FindMember("groups"); groups != v.MemberEnd()) {
    if (!groups->value.IsArray()) return bad("\"groups\" must be an array of strings");
    for (const auto& g : groups->value.GetArray()) {
      if (!g.IsString()) return bad("\"groups\" must be an array of strings");
      c.groups.emplace_back(g.GetString(), g.GetStringLength());
    }
  }
  auto proposal = v.FindMember("proposal");
  if (c.name.empty()) return bad("test case has no \"name\"");
  if (proposal == v.MemberEnd()) return bad("test case '" + c.name + "' has no \"proposal\"");
  if (std::string why = read_history(v, proposal->value, &c); !why.empty())
    return bad("test case '" + c.name + "': " + why);
  if (!c.expect_error.empty()) {
    // An engine error always rejects; saying otherwise is a mistake in the case.
    if (c.expect.empty()) c.expect = "reject";
    if (c.expect != "reject")
      return bad("test case '" + c.name + "' expects error " + c.expect_error + ", which always rejects, but \"expect\" is " + c.expect);
  }
  if (!parse_outcome(c.expect)) return bad("test case '" + c.name + "' has no valid \"expect\" (approve, reject, approval-required)");
  c.proposal_json = to_text(proposal->value);
  out->push_back(std::move(c));
}

}  // namespace

std::vector<RuleCase> read_cases(const std::string& file, const std::string& text, Diagnostics* diagnostics) {
  std::vector<RuleCase> cases;
  constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag;
  const bool lines = file.size() >= 6 && file.compare(file.size() - 6, 6, ".jsonl") == 0;
  if (!lines) {
    rapidjson::Document doc;
    doc.Parse<kFlags>(text.data(), text.size());
    if (doc.HasParseError() || text.find('\0') != std::string::npos) {  // NUL ends RapidJSON's input
      diagnostics->push_back({code::kCase, Severity::Error, file, 0, "", "invalid JSON"});
    } else if (doc.IsArray()) {
      for (auto& v : doc.GetArray()) read_case(file, 0, v, &cases, diagnostics);
    } else {
      read_case(file, 0, doc, &cases, diagnostics);
    }
    return cases;
  }
  long line_no = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(pos, end - pos);
    ++line_no;
    pos = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t\r")] == '#') {
      if (end == text.size()) break;
      continue;
    }
    rapidjson::Document doc;
    doc.Parse<kFlags>(line.data(), line.size());
    if (doc.HasParseError() || line.find('\0') != std::string::npos)
      diagnostics->push_back({code::kCase, Severity::Error, file, line_no, "", "invalid JSON"});
    else
      read_case(file, line_no, doc, &cases, diagnostics);
    if (end == text.size()) break;
  }
  return cases;
}

CaseReport run_cases(const std::shared_ptr<const Policy>& policy, const std::vector<RuleCase>& cases,
                     const EngineOptions& options) {
  CaseReport report;
  std::map<std::string, std::unique_ptr<Engine>> engines;  // by workspace
  std::set<std::string> fired;
  for (const auto& c : cases) {
    EngineOptions o = options;
    if (!c.workspace.empty()) o.workspace_root = c.workspace;
    auto& engine = engines[o.workspace_root];
    if (!engine) engine = std::make_unique<Engine>(policy, o);
    CaseResult r;
    r.test = &c;
    DecideRequest request;
    request.proposal_json = c.proposal_json;
    request.depth = c.depth;
    request.principal = c.principal;
    request.groups = c.groups;
    std::string history_failure;
    DecideResult d = c.history.empty() ? engine->decide(request) : decide_with_history(*engine, c, request, &history_failure);
    // The error the engine reported, if any: an input error or a decision it failed closed.
    const std::string error_code = !d.ok ? d.error.code : d.decision.error_code;
    const std::string error_text = !d.ok ? d.error.message : d.decision.reason;
    if (!error_code.empty() && c.expect_error.empty()) {
      r.failure = "- expect: " + c.expect + "\n+ engine error: " + error_code + ": " + error_text + "\n";
    } else if (error_code != c.expect_error) {
      r.failure = "- expect error: " + c.expect_error + "\n+ actual: " +
                  (error_code.empty() ? std::string(outcome_name(d.decision.outcome)) + " without error"
                                      : error_code + ": " + error_text) +
                  "\n";
    } else if (d.ok) {
      r.decision_json = decision_to_json(d.decision);
      std::string actual = std::string(outcome_name(d.decision.outcome));
      std::vector<std::string> names;
      for (const auto& f : d.decision.rules) {
        names.push_back(f.rule);
        if (error_code.empty()) fired.insert(f.rule);  // a decision that failed covers nothing
      }
      auto fired_here = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      if (actual != c.expect)
        r.failure += "- expect: " + c.expect + "\n+ actual: " + actual + " (" + d.decision.reason + ")\n";
      if (!c.rule.empty() && !fired_here(c.rule))
        r.failure += "- rule " + c.rule + " should fire\n+ fired: [" + list + "]\n";
      if (!c.not_rule.empty() && fired_here(c.not_rule))
        r.failure += "- rule " + c.not_rule + " should not fire\n+ fired: [" + list + "]\n";
    } else if (!c.rule.empty()) {
      r.failure = "- rule " + c.rule + " should fire\n+ the proposal was refused before any rule ran\n";
    }
    r.failure = history_failure + r.failure;
    r.passed = r.failure.empty();
    (r.passed ? report.passed : report.failed)++;
    report.results.push_back(std::move(r));
  }
  for (const auto& name : policy->rule_names())
    if (!fired.count(name)) report.uncovered_rules.push_back(name);
  return report;
}

}  // namespace warden
