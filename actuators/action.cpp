#include "actuators/action.h"

#include <cctype>

#include "bindings/json.h"

namespace warden::actuators {
namespace {

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool same_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

// Two keys of one object equal up to ASCII case, or a NUL in a key: the reader of the rules
// and this reader could take different fields. Checked at every level, in document order.
std::string ambiguity(const rapidjson::Value& v, int depth) {
  if (depth > 64) return "nested too deep";
  if (v.IsObject()) {
    warden::json::MemberNames names({.fold_case = true, .refuse_nul = true});
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      const warden::json::KeyClash clash =
          names.add({it->name.GetString(), it->name.GetStringLength()});
      if (clash.fault == warden::json::KeyFault::kNul) return "NUL character in a key";
      if (clash) return "duplicate key \"" + std::string(clash.name) + "\"";
      if (auto e = ambiguity(it->value, depth + 1); !e.empty()) return e;
    }
  } else if (v.IsArray()) {
    for (const auto& item : v.GetArray())
      if (auto e = ambiguity(item, depth + 1); !e.empty()) return e;
  }
  return {};
}

}  // namespace

Result failure(const char* error_code, std::string message) {
  Result r;
  r.ok = false;
  r.error_code = error_code;
  r.error = std::move(message);
  return r;
}

ActionDoc::ActionDoc(std::string_view json) {
  // The decided action: the daemon's own text (ambiguity() refuses nesting past 64).
  if (const warden::json::Error e = warden::json::parse_stored(json, &doc_)) {
    error_ = std::string("the action is not JSON: ") + e.reason();
    return;
  }
  if (!doc_.IsObject()) {
    error_ = "the action is not a JSON object";
    return;
  }
  if (auto e = ambiguity(doc_, 0); !e.empty()) {
    error_ = "ambiguous action: " + e;
    return;
  }
  const rapidjson::Value* p = member(doc_, "payload");
  if (p && !p->IsObject()) error_ = "payload is not an object";
}

const rapidjson::Value& ActionDoc::payload() const {
  const rapidjson::Value* p = member(doc_, "payload");
  return p && p->IsObject() ? *p : empty_;
}

const rapidjson::Value* ActionDoc::member(const rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it)
    if (same_ignoring_case(name, {it->name.GetString(), it->name.GetStringLength()}))
      return &it->value;
  return nullptr;
}

std::optional<std::string> ActionDoc::text(std::string_view name, std::string* error) const {
  const rapidjson::Value* v = member(payload(), name);
  if (!v) return std::nullopt;
  if (!v->IsString()) {
    *error = "payload." + std::string(name) + " is not a string";
    return std::nullopt;
  }
  std::string s(v->GetString(), v->GetStringLength());
  if (s.find('\0') != std::string::npos) {
    *error = "payload." + std::string(name) + " holds a NUL character";
    return std::nullopt;
  }
  return s;
}

std::string ActionDoc::action() const {
  const rapidjson::Value* v = member(doc_, "action");
  if (!v || !v->IsString()) return {};
  std::string s(v->GetString(), v->GetStringLength());
  for (char& c : s) c = lower(c);
  return s;
}

}  // namespace warden::actuators
