// The `envelope` reply body, written and read (server/exec_wire.h).
#include "server/exec_wire.h"

#include <type_traits>
#include <utility>

#include "engine/decision_json.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/errors.h"

namespace warden::server {

namespace {

using decision_json::Place;

// The envelope's own strings, in their order: beside the decision, what the command is and
// where it runs.
constexpr std::pair<const char*, std::string ExecEnvelopeWire::*> kWireStrings[] = {
    {"command", &ExecEnvelopeWire::command},
    {"cwd", &ExecEnvelopeWire::cwd},
    {"workspace_root", &ExecEnvelopeWire::workspace_root},
    {"home", &ExecEnvelopeWire::home},
};

// The members of "inputs" in their order, each as f(name, member): a string, a list of
// strings or the process limit. Stops at the first f that returns false.
template <class In, class F>
bool each_input(In& in, F&& f) {
  return f("workspace", in.workspace) && f("own_files", in.own_files) && f("hide", in.hide) &&
         f("writable_roots", in.writable_roots) && f("read", in.read) &&
         f("cache_dir", in.cache_dir) && f("path", in.path) && f("max_processes", in.max_processes);
}

template <class T>
using Plain = std::decay_t<T>;

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

bool get_bool(const rapidjson::Value& v, const char* key, bool* out, std::string* error) {
  const rapidjson::Value* m = find_member(v, key);
  if (!m || !m->IsBool())
    return fail(error, std::string("envelope: \"") + key + "\" is not a boolean");
  *out = m->GetBool();
  return true;
}

bool get_positive(const rapidjson::Value& v, const char* key, std::uint64_t* out,
                  std::string* error) {
  const rapidjson::Value* m = find_member(v, key);
  if (!m || !m->IsUint64() || m->GetUint64() == 0)
    return fail(error, std::string("envelope: \"") + key + "\" is not a positive integer");
  *out = m->GetUint64();
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
  for (const auto& [key, member] : kWireStrings)
    decision_json::string(out, key, w.*member, s, Place::of(key));
  decision_json::name(out, "inputs");
  out += '{';
  each_input(w.inputs, [&](const char* key, const auto& value) {
    using T = Plain<decltype(value)>;
    if constexpr (std::is_same_v<T, std::string>) {
      decision_json::string(out, key, value, s, Place::of(key));
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      decision_json::name(out, key);
      out += '[';
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ',';
        append_json_string(out, value[i]);
      }
      out += ']';
    } else {
      decision_json::name(out, key);
      out += std::to_string(value);
    }
    return true;
  });
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
      !get_string(*env, "rules_digest", &d.rules_digest, error)) {
    return false;
  }
  for (const auto& [key, member] : kWireStrings) {
    if (!get_string(*env, key, &(w.*member), error)) return false;
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
    const bool complete = decision_json::each_effect_member(r, [&](const char* key, auto& member) {
      if constexpr (std::is_same_v<Plain<decltype(member)>, bool>)
        return get_bool(e, key, &member, error);
      else
        return get_string(e, key, &member, error);
    });
    if (!complete) return false;
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
  const bool complete = each_input(w.inputs, [&](const char* key, auto& member) {
    using T = Plain<decltype(member)>;
    if constexpr (std::is_same_v<T, std::string>)
      return get_string(*in, key, &member, error);
    else if constexpr (std::is_same_v<T, std::vector<std::string>>)
      return get_strings(*in, key, &member, error);
    else
      return get_positive(*in, key, &member, error);
  });
  if (!complete) return false;
  *out = std::move(w);
  return true;
}

}  // namespace warden::server
