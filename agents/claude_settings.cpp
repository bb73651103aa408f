// Claude Code's settings.json: Warden's PreToolUse entry, merged with RapidJSON.
#include "agents/claude_settings.h"

#include "bindings/json.h"

namespace warden::agents {

namespace {

using rapidjson::Value;

bool blank(std::string_view text) {
  return text.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

SettingsEdit fail(const char* code, std::string message) {
  SettingsEdit e;
  e.error_code = code;
  e.error = std::move(message);
  return e;
}

bool is_warden_hook(const Value& hook) {
  return hook.IsObject() && hook.HasMember("command") && hook["command"].IsString() &&
         is_warden_hook_command(hook["command"].GetString(), HookAgent::ClaudeCode);
}

bool only_warden_hooks(const Value& group) {
  for (const auto& h : group["hooks"].GetArray()) {
    if (!is_warden_hook(h)) return false;
  }
  return true;
}

// Sets obj[key] = value (a string or an int) when it differs; true when it changed.
bool set_member(Value& obj, const char* key, Value value, rapidjson::Document::AllocatorType& a) {
  auto it = obj.FindMember(key);
  if (it != obj.MemberEnd()) {
    if (it->value == value) return false;
    it->value = value;
    return true;
  }
  obj.AddMember(Value(key, a), value, a);
  return true;
}

}  // namespace

SettingsEdit add_claude_hook(std::string_view text, const std::string& command,
                             int timeout_seconds) {
  rapidjson::Document doc;
  if (blank(text)) {
    doc.SetObject();
  } else {
    // The user's settings file: outside text, with the shared limits (it is written back
    // with a recursive writer).
    if (const json::Error e = json::parse(text, &doc)) {
      return fail(code::kSettingsParse,
                  "not valid JSON at offset " + std::to_string(e.offset) + ": " + e.reason());
    }
    if (!doc.IsObject()) return fail(code::kSettingsShape, "the settings are not a JSON object");
  }
  auto& a = doc.GetAllocator();
  if (!doc.HasMember("hooks")) doc.AddMember("hooks", Value(rapidjson::kObjectType), a);
  Value& hooks = doc["hooks"];
  if (!hooks.IsObject()) return fail(code::kSettingsShape, "\"hooks\" is not an object");
  if (!hooks.HasMember("PreToolUse"))
    hooks.AddMember("PreToolUse", Value(rapidjson::kArrayType), a);
  Value& groups = hooks["PreToolUse"];
  if (!groups.IsArray()) return fail(code::kSettingsShape, "\"hooks.PreToolUse\" is not an array");

  SettingsEdit edit;
  edit.ok = true;
  bool found = false;
  for (Value::ValueIterator g = groups.Begin(); g != groups.End();) {
    if (!g->IsObject() || !g->HasMember("hooks") || !(*g)["hooks"].IsArray()) {
      ++g;
      continue;
    }
    Value& list = (*g)["hooks"];
    for (Value::ValueIterator h = list.Begin(); h != list.End();) {
      if (!is_warden_hook(*h)) {
        ++h;
        continue;
      }
      if (found) {  // a second Warden hook would decide every call twice
        h = list.Erase(h);
        edit.changed = true;
        continue;
      }
      found = true;
      edit.changed |= set_member(*h, "type", Value("command", a), a);
      edit.changed |= set_member(*h, "command", Value(command.c_str(), a), a);
      edit.changed |= set_member(*h, "timeout", Value(timeout_seconds), a);
      ++h;
    }
    if (list.Empty()) {
      g = groups.Erase(g);
      continue;
    }
    // A group holding only Warden's hook is Warden's: it must match every tool.
    if (found && only_warden_hooks(*g)) edit.changed |= set_member(*g, "matcher", Value("*", a), a);
    ++g;
  }
  if (!found) {
    Value hook(rapidjson::kObjectType);
    hook.AddMember("type", "command", a);
    hook.AddMember("command", Value(command.c_str(), a), a);
    hook.AddMember("timeout", timeout_seconds, a);
    Value list(rapidjson::kArrayType);
    list.PushBack(hook, a);
    Value group(rapidjson::kObjectType);
    group.AddMember("matcher", "*", a);
    group.AddMember("hooks", list, a);
    groups.PushBack(group, a);
    edit.changed = edit.added = true;
  }
  if (!edit.changed) return edit;
  edit.text = json::to_pretty_text(doc, 2) + "\n";
  return edit;
}

std::vector<HookEntry> claude_pretooluse_hooks(const rapidjson::Value& settings) {
  std::vector<HookEntry> out;
  if (!settings.IsObject() || !settings.HasMember("hooks") || !settings["hooks"].IsObject()) {
    return out;
  }
  const Value& hooks = settings["hooks"];
  if (!hooks.HasMember("PreToolUse") || !hooks["PreToolUse"].IsArray()) return out;
  int gi = -1;
  for (const auto& g : hooks["PreToolUse"].GetArray()) {
    ++gi;
    if (!g.IsObject() || !g.HasMember("hooks") || !g["hooks"].IsArray()) continue;
    HookEntry base;
    base.group = gi;
    if (g.HasMember("matcher") && g["matcher"].IsString()) {
      base.has_matcher = true;
      base.matcher = g["matcher"].GetString();
    }
    int hi = -1;
    for (const auto& h : g["hooks"].GetArray()) {
      ++hi;
      if (!h.IsObject()) continue;
      HookEntry e = base;
      e.handler = hi;
      if (h.HasMember("type") && h["type"].IsString()) e.type = h["type"].GetString();
      if (h.HasMember("command") && h["command"].IsString()) e.command = h["command"].GetString();
      if (h.HasMember("timeout") && h["timeout"].IsNumber())
        e.timeout_seconds = h["timeout"].GetDouble();
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace warden::agents
