// Parsing the PreToolUse hook's stdin (agents/hook_call.h).
#include "agents/hook_call.h"

#include "agents/json_strict.h"
#include "bindings/json.h"

namespace warden::agents {

std::string_view agent_name(HookAgent agent) {
  return agent == HookAgent::Codex ? "codex" : "claude-code";
}

namespace {

bool hook_call_failed(HookError* error, const char* code, std::string message) {
  *error = {code, std::move(message)};
  return false;
}

// An optional string member: absent → "", a string → its text, anything else → false.
bool optional_string(const rapidjson::Value& doc, const char* key, std::string* out) {
  auto it = doc.FindMember(key);
  if (it == doc.MemberEnd()) {
    out->clear();
    return true;
  }
  if (!it->value.IsString()) return false;
  out->assign(it->value.GetString(), it->value.GetStringLength());
  return true;
}

}  // namespace

bool parse_hook_call(std::string_view text, HookCall* call, HookError* error) {
  if (text.size() > kMaxHookInputBytes) {
    return hook_call_failed(error, kHookInputTooLarge,
                            "hook input of " + std::to_string(text.size()) +
                                " bytes is over the limit of " +
                                std::to_string(kMaxHookInputBytes));
  }
  rapidjson::Document doc;
  // The depth is json_unambiguous's to refuse (kMaxJsonDepth), after an iterative parse.
  if (const json::Error e = json::parse(text, &doc, json::Limits::any_depth())) {
    return hook_call_failed(
        error, kHookInputJson,
        e.code == rapidjson::kParseErrorStringInvalidEncoding
            ? "hook input is not valid UTF-8"
            : "hook input is not valid JSON (at byte " + std::to_string(e.offset) + ")");
  }
  if (!doc.IsObject())
    return hook_call_failed(error, kHookInputShape, "hook input is not a JSON object");
  // The agent read its own JSON one way; the mapping must not read another (a duplicate name:
  // first here, last in JSON.parse; a lone surrogate escape: different bytes on each side).
  if (std::string problem; !json_unambiguous(doc, &problem)) {
    return hook_call_failed(error, kHookInputJson, "hook input is ambiguous: " + problem);
  }
  auto name = doc.FindMember("tool_name");
  if (name == doc.MemberEnd() || !name->value.IsString() || name->value.GetStringLength() == 0) {
    return hook_call_failed(error, kHookInputShape, "hook input has no tool_name string");
  }
  std::string event;
  if (!optional_string(doc, "hook_event_name", &event)) {
    return hook_call_failed(error, kHookInputShape, "hook_event_name is not a string");
  }
  if (event != "PreToolUse") {
    return hook_call_failed(error, kHookEvent,
                            "hook_event_name is '" + event +
                                "', not PreToolUse: install this hook for "
                                "PreToolUse only");
  }
  for (auto [key, out] : {std::pair{"session_id", &call->session_id},
                          {"cwd", &call->cwd},
                          {"tool_use_id", &call->tool_use_id},
                          {"permission_mode", &call->permission_mode}}) {
    if (!optional_string(doc, key, out)) {
      return hook_call_failed(error, kHookInputShape, std::string(key) + " is not a string");
    }
  }
  // transcript_path: Codex sends null when it keeps no rollout (codex exec --ephemeral).
  if (auto t = doc.FindMember("transcript_path"); t != doc.MemberEnd() && t->value.IsNull()) {
    call->transcript_path.clear();
  } else if (!optional_string(doc, "transcript_path", &call->transcript_path)) {
    return hook_call_failed(error, kHookInputShape, "transcript_path is not a string");
  }
  auto input = doc.FindMember("tool_input");
  if (input == doc.MemberEnd() || !input->value.IsObject()) {
    return hook_call_failed(error, kHookInputShape, "hook input has no tool_input object");
  }
  call->hook_event_name = event;
  call->tool_name.assign(name->value.GetString(), name->value.GetStringLength());
  call->tool_input.SetObject();
  call->tool_input.CopyFrom(input->value, call->tool_input.GetAllocator());
  return true;
}

}  // namespace warden::agents
