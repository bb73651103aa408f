// The `envelope` reply body, written and read (server/exec_wire.h).
#include "server/exec_wire.h"

#include "engine/decision_json.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/errors.h"

namespace warden::server {

namespace {

void wire_member(std::string& out, const char* key, std::string_view value) {
  out += '"';
  out += key;
  out += "\":";
  append_json_string(out, value);
}

bool fail(std::string* error, std::string text) {
  *error = std::move(text);
  return false;
}

bool get_string(const rapidjson::Value& v, const char* key, std::string* out, std::string* error) {
  const rapidjson::Value* m = find_member(v, key);
  if (!m || !m->IsString())
    return fail(error, std::string("envelope: \"") + key + "\" is not a string");
  out->assign(m->GetString(), m->GetStringLength());
  return true;
}

bool get_strings(const rapidjson::Value& v, const char* key, std::vector<std::string>* out,
                 std::string* error) {
  const rapidjson::Value* m = find_member(v, key);
  if (!m || !m->IsArray())
    return fail(error, std::string("envelope: \"") + key + "\" is not an array");
  out->clear();
  for (const auto& s : m->GetArray()) {
    if (!s.IsString())
      return fail(error, std::string("envelope: \"") + key + "\" holds a non-string");
    out->emplace_back(s.GetString(), s.GetStringLength());
  }
  return true;
}

void strings(std::string& out, const char* key, const std::vector<std::string>& values) {
  out += '"';
  out += key;
  out += "\":[";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, values[i]);
  }
  out += ']';
}

bool get_bool(const rapidjson::Value& v, const char* key, bool* out, std::string* error) {
  const rapidjson::Value* m = find_member(v, key);
  if (!m || !m->IsBool())
    return fail(error, std::string("envelope: \"") + key + "\" is not a boolean");
  *out = m->GetBool();
  return true;
}

}  // namespace

std::string exec_envelope_fields(const ExecEnvelopeWire& w) {
  const Decision& d = w.decision;
  std::string out = "\"envelope\":{";
  const decision_json::Strings& s = decision_json::plain_strings();
  decision_json::decision_id(out, d, s);
  decision_json::outcome(out, d.outcome);
  decision_json::reason(out, d, s);
  decision_json::error_code(out, d, s);
  decision_json::action(out, d, "{}");
  decision_json::rules_digest(out, d, s);
  decision_json::effects(out, d, s);
  decision_json::allows(out, d, s, 0);
  out += ',';
  wire_member(out, "command", w.command);
  out += ',';
  wire_member(out, "cwd", w.cwd);
  out += ',';
  wire_member(out, "workspace_root", w.workspace_root);
  out += ',';
  wire_member(out, "home", w.home);
  const actuators::confine::Inputs& in = w.inputs;
  out += ",\"inputs\":{";
  wire_member(out, "workspace", in.workspace);
  out += ',';
  strings(out, "own_files", in.own_files);
  out += ',';
  strings(out, "hide", in.hide);
  out += ',';
  strings(out, "writable_roots", in.writable_roots);
  out += ',';
  strings(out, "read", in.read);
  out += ',';
  wire_member(out, "cache_dir", in.cache_dir);
  out += ',';
  strings(out, "path", in.path);
  out += ",\"max_processes\":";
  out += std::to_string(in.max_processes);
  out += "}}";
  return out;
}

bool parse_exec_envelope(const rapidjson::Value& payload, ExecEnvelopeWire* out,
                         std::string* error) {
  const rapidjson::Value* env = find_member(payload, "envelope");
  if (!env || !env->IsObject()) return fail(error, "the reply has no \"envelope\" object");
  ExecEnvelopeWire w;
  Decision& d = w.decision;
  std::string outcome;
  if (!get_string(*env, "decision_id", &d.decision_id, error) ||
      !get_string(*env, "outcome", &outcome, error) ||
      !get_string(*env, "reason", &d.reason, error) ||
      !get_string(*env, "error_code", &d.error_code, error) ||
      !get_string(*env, "rules_digest", &d.rules_digest, error) ||
      !get_string(*env, "command", &w.command, error) || !get_string(*env, "cwd", &w.cwd, error) ||
      !get_string(*env, "workspace_root", &w.workspace_root, error) ||
      !get_string(*env, "home", &w.home, error)) {
    return false;
  }
  auto parsed = parse_outcome(outcome);
  if (!parsed) return fail(error, "envelope: \"outcome\" is not an outcome");
  d.outcome = *parsed;
  const rapidjson::Value* action = find_member(*env, "action");
  if (!action || !action->IsObject()) return fail(error, "envelope: \"action\" is not an object");
  d.action_json = to_json_text(*action);
  const rapidjson::Value* effects = find_member(*env, "effects");
  if (!effects || !effects->IsArray()) return fail(error, "envelope: \"effects\" is not an array");
  for (const auto& e : effects->GetArray()) {
    if (!e.IsObject()) return fail(error, "envelope: an effect is not an object");
    EffectRecord r;
    if (!get_string(e, "kind", &r.kind, error) || !get_string(e, "object", &r.object, error) ||
        !get_string(e, "target", &r.target, error) ||
        !get_string(e, "program", &r.program, error) ||
        !get_string(e, "class", &r.path_class, error) ||
        !get_bool(e, "in_workspace", &r.in_workspace, error) ||
        !get_string(e, "subcommand", &r.subcommand, error) ||
        !get_string(e, "via", &r.via, error) || !get_bool(e, "dynamic", &r.dynamic, error)) {
      return false;
    }
    d.effects.push_back(std::move(r));
  }
  const rapidjson::Value* allows = find_member(*env, "allows");
  if (!allows || !allows->IsArray()) return fail(error, "envelope: \"allows\" is not an array");
  for (const auto& a : allows->GetArray()) {
    if (!a.IsObject()) return fail(error, "envelope: an allow is not an object");
    Grant g;
    std::string mode;
    if (!get_string(a, "rule", &g.rule, error) ||
        !get_string(a, "capability", &g.capability, error) ||
        !get_string(a, "mode", &mode, error)) {
      return false;
    }
    g.monitor = mode != "enforce";
    d.allows.push_back(std::move(g));
  }
  const rapidjson::Value* in = find_member(*env, "inputs");
  if (!in || !in->IsObject()) return fail(error, "envelope: \"inputs\" is not an object");
  actuators::confine::Inputs& inputs = w.inputs;
  if (!get_string(*in, "workspace", &inputs.workspace, error) ||
      !get_strings(*in, "own_files", &inputs.own_files, error) ||
      !get_strings(*in, "hide", &inputs.hide, error) ||
      !get_strings(*in, "writable_roots", &inputs.writable_roots, error) ||
      !get_strings(*in, "read", &inputs.read, error) ||
      !get_string(*in, "cache_dir", &inputs.cache_dir, error) ||
      !get_strings(*in, "path", &inputs.path, error)) {
    return false;
  }
  const rapidjson::Value* max = find_member(*in, "max_processes");
  if (!max || !max->IsUint64() || max->GetUint64() == 0) {
    return fail(error, "envelope: \"max_processes\" is not a positive integer");
  }
  inputs.max_processes = max->GetUint64();
  *out = std::move(w);
  return true;
}

}  // namespace warden::server
