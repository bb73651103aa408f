#include "pipeline/action_json.h"

#include "bindings/json.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace warden::pipeline {
namespace {

bool parse_object(std::string_view text, rapidjson::Document* doc, std::string* error) {
  // The engine wrote this text after reading the proposal against its configured depth.
  if (const warden::json::Error e =
          warden::json::parse(text, doc, warden::json::Limits::any_depth())) {
    *error = e.refusal == warden::json::Refusal::kNulByte
                 ? "action is not JSON: NUL byte"
                 : "action is not JSON (offset " + std::to_string(e.offset) + ")";
    return false;
  }
  if (!doc->IsObject()) {
    *error = "action is not a JSON object";
    return false;
  }
  return true;
}

// Member lookup ignoring ASCII case, as the engine reads proposal keys ("Target" is the
// target): the action goes where the rules saw it go.
rapidjson::Value::MemberIterator find_member(rapidjson::Value& object, std::string_view name) {
  for (auto it = object.MemberBegin(); it != object.MemberEnd(); ++it) {
    std::string_view key(it->name.GetString(), it->name.GetStringLength());
    if (key.size() != name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < key.size() && same; ++i) {
      char a = key[i], b = name[i];
      if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
      same = a == b;
    }
    if (same) return it;
  }
  return object.MemberEnd();
}

std::string string_member(rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) return {};
  auto it = find_member(object, name);
  if (it == object.MemberEnd() || !it->value.IsString()) return {};
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

void set_string(rapidjson::Value& object, const char* name, std::string_view value,
                rapidjson::Document::AllocatorType& alloc) {
  rapidjson::Value text(value.data(), static_cast<rapidjson::SizeType>(value.size()), alloc);
  auto it = find_member(object, name);
  if (it != object.MemberEnd())
    it->value = text;  // in place: the member keeps its position
  else
    object.AddMember(rapidjson::Value(name, alloc), text, alloc);
}

std::string shorten(std::string text, std::size_t max) {
  for (char& c : text)
    if (c == '\n' || c == '\r' || c == '\t') c = ' ';
  if (text.size() <= max) return text;
  std::size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;  // UTF-8 boundary
  text.resize(cut);
  return text + "…";
}

}  // namespace

std::string with_context(std::string_view proposal_json, const Signal& signal, std::string* error) {
  rapidjson::Document doc;
  if (!parse_object(proposal_json, &doc, error)) return {};
  auto& alloc = doc.GetAllocator();
  for (auto it = find_member(doc, "context"); it != doc.MemberEnd();
       it = find_member(doc, "context"))
    doc.RemoveMember(it);
  rapidjson::Value context(rapidjson::kObjectType);
  const std::pair<const char*, const std::string*> members[] = {
      {"agent", &signal.agent},
      {"session", &signal.session},
      {"source", &signal.source},
      {"principal", &signal.principal},
  };
  for (const auto& [name, value] : members)
    if (!value->empty()) set_string(context, name, *value, alloc);
  doc.AddMember("context", context, alloc);
  return warden::json::to_text(doc);
}

ResolvedTarget resolve_target(std::string_view action_json, std::string_view source,
                              std::string_view default_target) {
  ResolvedTarget out;
  rapidjson::Document doc;
  if (!parse_object(action_json, &doc, &out.error)) return out;
  out.target = string_member(doc, "target");
  if (out.target.empty()) out.target = std::string(source);
  if (out.target.empty()) out.target = std::string(default_target);
  set_string(doc, "target", out.target, doc.GetAllocator());
  out.action_json = warden::json::to_text(doc);
  return out;
}

std::string describe_action(std::string_view action_json) {
  rapidjson::Document doc;
  std::string error;
  if (!parse_object(action_json, &doc, &error)) return shorten(std::string(action_json), 160);
  const std::string target = string_member(doc, "target");
  const std::string action = string_member(doc, "action");
  auto payload_it = find_member(doc, "payload");
  rapidjson::Value* payload =
      payload_it != doc.MemberEnd() && payload_it->value.IsObject() ? &payload_it->value : nullptr;
  std::string head = target.empty() ? "(no target)" : target;
  if (!action.empty()) head += " " + action;
  if (!payload) return shorten(head, 160);
  std::string detail;
  if (target == "shell") {
    detail = string_member(*payload, "command");
  } else if (target == "http") {
    std::string method = string_member(*payload, "method");
    detail = (method.empty() ? "GET" : method) + " " + string_member(*payload, "url");
  } else if (target == "file") {
    detail = string_member(*payload, "action") + " " + string_member(*payload, "path");
  } else if (target == "reply") {
    detail = string_member(*payload, "text");
  } else if (target == "system") {
    detail = string_member(*payload, "message");
  } else if (target == "tool") {
    detail = string_member(*payload, "tool");
  }
  if (detail.empty() || detail == " ") detail = warden::json::to_text(*payload);
  return shorten(head + ": " + detail, 160);
}

}  // namespace warden::pipeline
