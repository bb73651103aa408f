#include "engine/case_runner.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <set>
#include <string_view>

#include "bindings/json.h"
#include "bindings/local_time.h"
#include "engine/session_memory.h"

namespace warden {
namespace {

bool valid_symbol(std::string_view s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

// Reads "expect_effects" / "not_effects": an array of objects with effect fields. Kinds,
// objects and classes are checked, so a misspelt one never makes a not_effects vacuous.
std::string read_effect_patterns(const rapidjson::Value& v, const char* field,
                                 std::vector<EffectPattern>* out) {
  const std::string where = std::string("\"") + field + "\"";
  if (!v.IsArray()) return where + " must be an array of effect objects";
  static const std::set<std::string_view> kKinds = {"exec",    "write",    "delete",    "read",
                                                    "network", "env-dump", "privilege", "unknown"};
  static const std::set<std::string_view> kObjects = {"path", "host", "program", "code", "none"};
  for (const auto& e : v.GetArray()) {
    if (!e.IsObject()) return where + " must be an array of effect objects";
    EffectPattern p;
    for (auto m = e.MemberBegin(); m != e.MemberEnd(); ++m) {
      std::string_view name(m->name.GetString(), m->name.GetStringLength());
      if (name == "in_workspace" || name == "dynamic") {
        if (!m->value.IsBool())
          return where + ": \"" + std::string(name) + "\" must be true or false";
        (name == "dynamic" ? p.dynamic : p.in_workspace) = m->value.GetBool();
        continue;
      }
      std::optional<std::string>* slot = name == "kind"         ? &p.kind
                                         : name == "object"     ? &p.object
                                         : name == "target"     ? &p.target
                                         : name == "program"    ? &p.program
                                         : name == "class"      ? &p.path_class
                                         : name == "subcommand" ? &p.subcommand
                                         : name == "via"        ? &p.via
                                                                : nullptr;
      if (!slot)
        return where + ": unknown effect field \"" + std::string(name.substr(0, 40)) +
               "\" (kind, object, target, program, class, subcommand, via, in_workspace, dynamic)";
      if (!m->value.IsString()) return where + ": \"" + std::string(name) + "\" must be a string";
      *slot = std::string(m->value.GetString(), m->value.GetStringLength());
    }
    if (p.kind && !kKinds.count(*p.kind))
      return where + ": unknown effect kind \"" + p.kind->substr(0, 40) + "\"";
    if (p.object && !kObjects.count(*p.object))
      return where + ": unknown effect object \"" + p.object->substr(0, 40) + "\"";
    if (p.path_class && !valid_symbol(*p.path_class))
      return where + ": \"class\" must be a class name such as none or credential";
    out->push_back(std::move(p));
  }
  return "";
}

// A remembered step: {"remembered": [effects], "age": seconds}. Each effect is written as in
// "expect_effects" (the same names, checked the same way) and must give kind, object and
// target, the fields every entry of a session's memory has; class defaults to none.
std::string read_remembered(const rapidjson::Value& item, std::size_t index, HistoryStep* step) {
  const std::string where = "history[" + std::to_string(index) + "]";
  for (auto m = item.MemberBegin(); m != item.MemberEnd(); ++m) {
    std::string_view name(m->name.GetString(), m->name.GetStringLength());
    if (name != "remembered" && name != "age")
      return where + ": a remembered step has only \"remembered\" and \"age\", not \"" +
             std::string(name.substr(0, 40)) + "\"";
  }
  if (auto age = item.FindMember("age"); age != item.MemberEnd()) {
    if (!age->value.IsInt64() || age->value.GetInt64() < 0)
      return where + ": \"age\" must be a whole number of seconds";
    step->age = age->value.GetInt64();
  }
  std::vector<EffectPattern> effects;
  const std::string field = where + ".remembered";
  if (std::string why = read_effect_patterns(item["remembered"], field.c_str(), &effects);
      !why.empty())
    return why;
  if (effects.empty()) return where + ": \"remembered\" holds no effect";
  for (const EffectPattern& e : effects) {
    if (!e.kind || !e.object || !e.target)
      return where + ": a remembered effect needs kind, object and target";
    EffectRecord r;
    r.kind = *e.kind;
    r.object = *e.object;
    r.target = *e.target;
    r.program = e.program.value_or("");
    r.path_class = e.path_class.value_or("none");
    r.subcommand = e.subcommand.value_or("");
    r.via = e.via.value_or("");
    r.in_workspace = e.in_workspace.value_or(false);
    r.dynamic = e.dynamic.value_or(false);
    step->remembered.push_back(std::move(r));
  }
  return {};
}

// "history": earlier steps of the case's session, proposals or remembered effects. The
// case's proposal must name its session (context.session), or no history could reach it.
// Returns why it is invalid.
std::string read_history(const rapidjson::Value& v, const rapidjson::Value& proposal, RuleCase* c) {
  auto history = v.FindMember("history");
  if (history == v.MemberEnd()) return {};
  const char* shape = "\"history\" must be an array of proposals and remembered steps";
  if (!history->value.IsArray()) return shape;
  for (const auto& p : history->value.GetArray()) {
    if (!p.IsObject()) return shape;
    HistoryStep step;
    if (std::string why = read_history_step(p, c->history.size(), &step); !why.empty()) return why;
    c->history.push_back(std::move(step));
  }
  if (session_key(proposal, std::nullopt).session.empty())
    return "has a \"history\" but its proposal has no context.session (no session, no history)";
  return {};
}

// Plays the case's history in order into one fresh session memory, then decides the case's
// proposal with what the memory holds, as the daemon would. A proposal step is decided and
// remembered if approved; a remembered step is stored as it is, for the case's session.
// Input errors in the history are reported in *failure (the proposal is then decided
// without that step).
DecideResult decide_with_history(Engine& engine, const RuleCase& c, const DecideRequest& request,
                                 std::string* failure) {
  SessionMemory memory;
  const SessionKey key = session_key(c.proposal_json, c.principal);
  for (std::size_t i = 0; i < c.history.size(); ++i) {
    const HistoryStep& h = c.history[i];
    if (h.proposal_json.empty()) {
      memory.record(key.principal, key.session, "remembered-" + std::to_string(i), c.now - h.age,
                    h.remembered);
      continue;
    }
    DecideRequest step = request;
    step.proposal_json = h.proposal_json;
    DecideResult r =
        decide_in_session(engine, memory, step, session_key(h.proposal_json, c.principal));
    if (!r.ok)
      *failure += "- history[" + std::to_string(i) + "] is not a valid proposal\n+ " +
                  r.error.code + ": " + r.error.message + "\n";
  }
  return decide_in_session(engine, memory, request, key);
}

void read_case(const std::string& file, long line, const rapidjson::Value& v,
               std::vector<RuleCase>* out, Diagnostics* diagnostics) {
  auto bad = [&](const std::string& why) {
    diagnostics->push_back({code::kCase, Severity::Error, file, line, "", why});
  };
  if (!v.IsObject()) return bad("a test case must be a JSON object");
  // A misspelt field (say "expect_eror") must not quietly turn into a weaker test.
  static const std::set<std::string, std::less<>> kFields = {
      "name",     "proposal",       "expect",      "expect_error", "rule",
      "not_rule", "workspace",      "depth",       "principal",    "groups",
      "history",  "expect_effects", "not_effects", "own_paths",    "now"};
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    std::string_view field(m->name.GetString(), m->name.GetStringLength());
    if (!kFields.count(field))
      return bad("unknown test case field \"" + std::string(field.substr(0, 40)) + "\"");
    if (field != "proposal" && field != "depth" && field != "groups" && field != "history" &&
        field != "own_paths" && field != "expect_effects" && field != "not_effects" &&
        !m->value.IsString())
      return bad("test case field \"" + std::string(field) + "\" must be a string");
  }
  RuleCase c;
  c.file = file;
  c.line = line;
  c.name = json::string_member(v, "name");
  c.expect = json::string_member(v, "expect");
  c.expect_error = json::string_member(v, "expect_error");
  c.rule = json::string_member(v, "rule");
  c.not_rule = json::string_member(v, "not_rule");
  c.workspace = json::string_member(v, "workspace");
  if (auto depth = v.FindMember("depth"); depth != v.MemberEnd()) {
    if (!depth->value.IsInt64() || depth->value.GetInt64() < 0)
      return bad("\"depth\" must be a whole number");
    c.depth = depth->value.GetInt64();
  }
  if (auto now = v.FindMember("now"); now != v.MemberEnd()) {
    std::string why;
    auto at = local_time::parse_rfc3339(
        std::string_view(now->value.GetString(), now->value.GetStringLength()), &why);
    if (!at) return bad("test case '" + c.name + "': \"now\" is not a time: " + why);
    c.now = *at;
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
  if (auto own = v.FindMember("own_paths"); own != v.MemberEnd()) {
    if (!own->value.IsArray()) return bad("\"own_paths\" must be an array of absolute paths");
    for (const auto& g : own->value.GetArray()) {
      if (!g.IsString() || g.GetStringLength() == 0 || g.GetString()[0] != '/')
        return bad("\"own_paths\" must be an array of absolute paths");
      c.own_paths.emplace_back(g.GetString(), g.GetStringLength());
    }
  }
  for (const char* field : {"expect_effects", "not_effects"}) {
    auto it = v.FindMember(field);
    if (it == v.MemberEnd()) continue;
    std::string why = read_effect_patterns(it->value, field,
                                           field[0] == 'e' ? &c.expect_effects : &c.not_effects);
    if (!why.empty()) return bad(why);
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
      return bad("test case '" + c.name + "' expects error " + c.expect_error +
                 ", which always rejects, but \"expect\" is " + c.expect);
  }
  if (!parse_outcome(c.expect))
    return bad("test case '" + c.name +
               "' has no valid \"expect\" (approve, reject, approval-required)");
  c.proposal_json = warden::json::to_text(proposal->value);
  out->push_back(std::move(c));
}

std::string effect_text(const EffectRecord& e) {
  std::string out = e.kind + " " + e.object + " \"" + e.target + "\"";
  if (!e.program.empty()) out += " program=" + e.program;
  if (!e.subcommand.empty()) out += " subcommand=" + e.subcommand;
  if (!e.via.empty()) out += " via=" + e.via;
  if (e.object == "path")
    out += std::string(" class=") + e.path_class + (e.in_workspace ? " in-workspace" : "");
  if (e.dynamic) out += " dynamic";
  return out;
}

}  // namespace

bool EffectPattern::matches(const EffectRecord& e) const {
  return (!kind || *kind == e.kind) && (!object || *object == e.object) &&
         (!target || *target == e.target) && (!program || *program == e.program) &&
         (!path_class || *path_class == e.path_class) &&
         (!subcommand || *subcommand == e.subcommand) && (!via || *via == e.via) &&
         (!in_workspace || *in_workspace == e.in_workspace) && (!dynamic || *dynamic == e.dynamic);
}

std::string EffectPattern::to_text() const {
  std::string out;
  auto add = [&](const char* name, const std::optional<std::string>& v) {
    if (v) out += (out.empty() ? "" : " ") + std::string(name) + "=" + *v;
  };
  add("kind", kind);
  add("object", object);
  add("target", target);
  add("program", program);
  add("class", path_class);
  add("subcommand", subcommand);
  add("via", via);
  if (in_workspace)
    out +=
        std::string(out.empty() ? "" : " ") + "in_workspace=" + (*in_workspace ? "true" : "false");
  if (dynamic)
    out += std::string(out.empty() ? "" : " ") + "dynamic=" + (*dynamic ? "true" : "false");
  return "{" + out + "}";
}

std::vector<RuleCase> read_cases(const std::string& file, const std::string& text,
                                 Diagnostics* diagnostics) {
  std::vector<RuleCase> cases;
  const bool lines = file.size() >= 6 && file.compare(file.size() - 6, 6, ".jsonl") == 0;
  if (!lines) {
    rapidjson::Document doc;
    if (warden::json::parse(text, &doc, warden::json::Limits::any_depth())) {
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
    if (line.find_first_not_of(" \t\r") == std::string::npos ||
        line[line.find_first_not_of(" \t\r")] == '#') {
      if (end == text.size()) break;
      continue;
    }
    rapidjson::Document doc;
    if (warden::json::parse(line, &doc, warden::json::Limits::any_depth()))
      diagnostics->push_back({code::kCase, Severity::Error, file, line_no, "", "invalid JSON"});
    else
      read_case(file, line_no, doc, &cases, diagnostics);
    if (end == text.size()) break;
  }
  return cases;
}

CaseReport run_cases(const std::shared_ptr<const Policy>& policy,
                     const std::vector<RuleCase>& cases, const EngineOptions& options) {
  CaseReport report;
  std::map<std::string, std::unique_ptr<Engine>> engines;  // by workspace
  std::set<std::string> fired;
  for (const auto& c : cases) {
    EngineOptions o = options;
    if (!c.workspace.empty()) o.workspace_root = c.workspace;
    o.own_paths.insert(o.own_paths.end(), c.own_paths.begin(), c.own_paths.end());
    std::string engine_key = o.workspace_root;
    for (const std::string& own : c.own_paths) engine_key += '\n' + own;
    auto& engine = engines[engine_key];
    if (!engine) engine = std::make_unique<Engine>(policy, o);
    CaseResult r;
    r.test = &c;
    DecideRequest request;
    request.proposal_json = c.proposal_json;
    request.depth = c.depth;
    request.principal = c.principal;
    request.groups = c.groups;
    request.now = c.now;
    std::string history_failure;
    DecideResult d = c.history.empty() ? engine->decide(request)
                                       : decide_with_history(*engine, c, request, &history_failure);
    // The error the engine reported, if any: an input error or a decision it failed closed.
    const std::string error_code = !d.ok ? d.error.code : d.decision.error_code;
    const std::string error_text = !d.ok ? d.error.message : d.decision.reason;
    if (!error_code.empty() && c.expect_error.empty()) {
      r.failure =
          "- expect: " + c.expect + "\n+ engine error: " + error_code + ": " + error_text + "\n";
    } else if (error_code != c.expect_error) {
      r.failure =
          "- expect error: " + c.expect_error + "\n+ actual: " +
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
      auto fired_here = [&](const std::string& n) {
        return std::find(names.begin(), names.end(), n) != names.end();
      };
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      if (actual != c.expect)
        r.failure +=
            "- expect: " + c.expect + "\n+ actual: " + actual + " (" + d.decision.reason + ")\n";
      if (!c.rule.empty() && !fired_here(c.rule))
        r.failure += "- rule " + c.rule + " should fire\n+ fired: [" + list + "]\n";
      if (!c.not_rule.empty() && fired_here(c.not_rule))
        r.failure += "- rule " + c.not_rule + " should not fire\n+ fired: [" + list + "]\n";
      auto derived = [&] {
        std::string all;
        for (const auto& e : d.decision.effects) all += "\n    " + effect_text(e);
        return all.empty() ? std::string(" none") : all;
      };
      auto any_match = [&](const EffectPattern& p) {
        return std::any_of(d.decision.effects.begin(), d.decision.effects.end(),
                           [&](const EffectRecord& e) { return p.matches(e); });
      };
      for (const auto& p : c.expect_effects)
        if (!any_match(p))
          r.failure +=
              "- effect " + p.to_text() + " should be derived\n+ derived:" + derived() + "\n";
      for (const auto& p : c.not_effects)
        if (any_match(p))
          r.failure +=
              "- effect " + p.to_text() + " should not be derived\n+ derived:" + derived() + "\n";
    } else if (!c.rule.empty()) {
      r.failure =
          "- rule " + c.rule + " should fire\n+ the proposal was refused before any rule ran\n";
    } else if (!c.expect_effects.empty()) {
      r.failure = "- effects expected\n+ the proposal was refused before any effect was derived\n";
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

std::string read_history_step(const rapidjson::Value& item, std::size_t index, HistoryStep* step) {
  if (!item.IsObject())
    return "history[" + std::to_string(index) + "] is neither a proposal nor a remembered step";
  if (item.HasMember("remembered")) return read_remembered(item, index, step);
  step->proposal_json = warden::json::to_text(item);
  return {};
}

}  // namespace warden
