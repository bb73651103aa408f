// Hook call → proposal, and approved action → Claude's updatedInput (agents/hook_proposal.h).
#include "agents/hook_proposal.h"

#include <initializer_list>

#include "bindings/json.h"
#include "protocol/message.h"

namespace warden::agents {

namespace {

using rapidjson::Value;
using Alloc = rapidjson::Document::AllocatorType;

Value string_value(std::string_view s, Alloc& a) {
  return Value(s.data() ? s.data() : "", static_cast<rapidjson::SizeType>(s.size()), a);
}

// Payload fields the engine derives facts from (engine/fact_codec.cpp, effect_facts.cpp: cwd,
// path, url, command, action, glob, pattern, tool, server, args; engine/proposal_reader.cpp:
// action, method) or the shipped rules read by name (content, query, headers, body, text,
// channel), and the proposal's own top-level names. Only the mapping sets them, from the
// tool's fields.
constexpr std::string_view kDerived[] = {
    "cwd",     "path",    "url",    "command", "content",     "action",  "method",
    "glob",    "pattern", "target", "tool",    "server",      "args",    "query",
    "headers", "body",    "text",   "channel", "explanation", "context", "payload"};

// Builds one payload from the tool's input.
class PayloadBuilder {
 public:
  PayloadBuilder(const HookCall& call, Alloc& alloc)
      : input_(call.tool_input), alloc_(alloc), tool_(call.tool_name) {
    payload_.SetObject();
  }

  // input[key] must be a string; it goes to payload[as].
  bool required_string(const char* key, const char* as) {
    auto it = input_.FindMember(key);
    if (it == input_.MemberEnd() || !it->value.IsString()) {
      error_ = tool_ + " tool_input." + key + " must be a string";
      return false;
    }
    put(as, Value(it->value, alloc_));
    return true;
  }
  // input[key], when present, goes to payload[as] unchanged.
  void optional(const char* key, const char* as) {
    auto it = input_.FindMember(key);
    if (it != input_.MemberEnd()) put(as, Value(it->value, alloc_));
  }
  // Every input member not in `skip`, not already in the payload and not a field the engine
  // or the rules derive facts from (kDerived), under its own name. Those fields are set by
  // the mapping from the tool's real input only: a "cwd", "path" or "url" the model adds to a
  // Bash or Read call is nothing the agent acts on, and must not be what the rules judge.
  void rest(std::initializer_list<std::string_view> skip) {
    for (const auto& m : input_.GetObject()) {
      std::string_view k(m.name.GetString(), m.name.GetStringLength());
      bool skipped = payload_.HasMember(m.name);
      for (auto s : skip) skipped = skipped || s == k;
      for (auto s : kDerived) skipped = skipped || s == k;
      if (!skipped) payload_.AddMember(Value(m.name, alloc_), Value(m.value, alloc_), alloc_);
    }
  }
  void put(const char* key, Value v) {
    if (payload_.HasMember(key)) payload_.RemoveMember(key);
    payload_.AddMember(Value(key, alloc_), std::move(v), alloc_);
  }
  void put_string(const char* key, std::string_view s) { put(key, string_value(s, alloc_)); }
  const Value* input(const char* key) const {
    auto it = input_.FindMember(key);
    return it == input_.MemberEnd() ? nullptr : &it->value;
  }
  // input[key] when it is a non-empty string, else the hook's cwd.
  void path_or_cwd(const char* key, const std::string& cwd) {
    const Value* v = input(key);
    if (v && v->IsString() && v->GetStringLength() > 0) {
      put(key, Value(*v, alloc_));
    } else {
      put_string(key, cwd);
    }
  }
  void fail(std::string message) { error_ = std::move(message); }
  // The hook's cwd as payload.cwd: the agent resolves a relative path against it (the model
  // can move it with `cd`), so the engine must too, not against the workspace root.
  void cwd(const std::string& cwd) {
    if (!cwd.empty()) put_string("cwd", cwd);
  }

  Value payload_;
  std::string error_;

 private:
  const Value& input_;
  Alloc& alloc_;
  std::string tool_;
};

struct Mapped {
  const char* target;
  const char* action;
};

// Fills the payload for the tool; the target and action, or null target on a shape error.
Mapped map_tool(const HookCall& call, ToolKind kind, PayloadBuilder& b, Alloc& a) {
  switch (kind) {
    case ToolKind::Bash:
      if (!b.required_string("command", "command")) return {};
      b.put_string("cwd", call.cwd);
      b.rest({"description", "cwd"});
      return {"shell", "run"};
    case ToolKind::Write:
      b.cwd(call.cwd);
      b.put_string("action", "write");
      if (!b.required_string("file_path", "path") || !b.required_string("content", "content"))
        return {};
      return {"file", "write"};
    case ToolKind::Edit:
      b.cwd(call.cwd);
      b.put_string("action", "write");
      if (!b.required_string("file_path", "path") || !b.required_string("new_string", "content"))
        return {};
      b.optional("old_string", "old_string");
      b.optional("replace_all", "replace_all");
      return {"file", "write"};
    case ToolKind::MultiEdit: {
      b.cwd(call.cwd);
      b.put_string("action", "write");
      if (!b.required_string("file_path", "path")) return {};
      const Value* edits = b.input("edits");
      if (!edits || !edits->IsArray()) {
        b.fail("MultiEdit tool_input.edits must be an array");
        return {};
      }
      std::string content;
      for (rapidjson::SizeType i = 0; i < edits->Size(); ++i) {
        const Value& e = (*edits)[i];
        auto ns = e.IsObject() ? e.FindMember("new_string") : e.MemberEnd();
        if (!e.IsObject() || ns == e.MemberEnd() || !ns->value.IsString()) {
          b.fail("MultiEdit tool_input.edits[" + std::to_string(i) +
                 "].new_string must be a string");
          return {};
        }
        if (i) content += '\n';
        content.append(ns->value.GetString(), ns->value.GetStringLength());
      }
      b.put_string("content", content);
      b.put("edits", Value(*edits, a));
      return {"file", "write"};
    }
    case ToolKind::NotebookEdit:
      b.cwd(call.cwd);
      b.put_string("action", "write");
      if (!b.required_string("notebook_path", "path")) return {};
      if (const Value* src = b.input("new_source"); src && !src->IsString()) {
        b.fail("NotebookEdit tool_input.new_source must be a string");
        return {};
      }
      if (b.input("new_source")) {
        b.optional("new_source", "content");
      } else {
        b.put_string("content", "");  // a cell deletion writes nothing new
      }
      b.optional("cell_id", "cell_id");
      b.optional("edit_mode", "edit_mode");
      b.optional("cell_type", "cell_type");
      return {"file", "write"};
    case ToolKind::Read:
      b.cwd(call.cwd);
      b.put_string("action", "read");
      if (!b.required_string("file_path", "path")) return {};
      b.rest({"file_path"});
      return {"file", "read"};
    case ToolKind::Grep:
    case ToolKind::Glob:
    case ToolKind::LS:
      b.cwd(call.cwd);
      b.put_string("action", "read");
      if (const Value* p = b.input("path"); p && !p->IsString()) {
        b.fail(call.tool_name + " tool_input.path must be a string");
        return {};
      }
      if (kind != ToolKind::LS && !b.required_string("pattern", "pattern")) return {};
      b.path_or_cwd("path", call.cwd);
      if (kind == ToolKind::Grep) b.optional("glob", "glob");  // its file-name filter: reads
      b.rest({});
      return {"file", "read"};
    case ToolKind::WebFetch:
      b.put_string("method", "GET");
      if (!b.required_string("url", "url")) return {};
      b.rest({"method"});
      return {"http", "get"};
    case ToolKind::WebSearch:
      b.put_string("method", "GET");
      if (!b.required_string("query", "query")) return {};
      b.rest({"method", "url"});
      return {"http", "get"};
    case ToolKind::Mcp: {
      std::string server, tool;
      split_mcp_tool(call.tool_name, &server, &tool);
      b.put_string("server", server);
      b.put_string("tool", tool);
      b.put("args", Value(call.tool_input, a));
      return {"tool", "call"};
    }
    case ToolKind::Other:  // the agent's own tool (apply_patch …): its paths are the agent's
      b.cwd(call.cwd);
      b.put_string("tool", call.tool_name);
      b.put("args", Value(call.tool_input, a));
      return {"tool", "call"};
  }
  return {};
}

// The tool input field a payload field came from; "" when it was made up by the mapping
// (a rewrite of it cannot go back into the tool's input). "*" stands for the whole input.
std::string input_key(ToolKind kind, std::string_view k) {
  auto is = [&](std::initializer_list<std::string_view> keys) {
    for (auto key : keys)
      if (k == key) return true;
    return false;
  };
  switch (kind) {
    case ToolKind::Bash:
      return is({"cwd"}) ? "" : std::string(k);
    case ToolKind::Write:
      return k == "path" ? "file_path" : is({"content"}) ? std::string(k) : "";
    case ToolKind::Edit:
      return k == "path"                         ? "file_path"
             : k == "content"                    ? "new_string"
             : is({"old_string", "replace_all"}) ? std::string(k)
                                                 : "";
    case ToolKind::MultiEdit:
      return k == "path" ? "file_path" : k == "edits" ? "edits" : "";
    case ToolKind::NotebookEdit:
      return k == "path"                                 ? "notebook_path"
             : k == "content"                            ? "new_source"
             : is({"cell_id", "edit_mode", "cell_type"}) ? std::string(k)
                                                         : "";
    case ToolKind::Read:
      return k == "path" ? "file_path" : is({"action", "cwd"}) ? "" : std::string(k);
    case ToolKind::Grep:
    case ToolKind::Glob:
    case ToolKind::LS:
    case ToolKind::WebFetch:
    case ToolKind::WebSearch:
      return is({"action", "method", "cwd"}) ? "" : std::string(k);
    case ToolKind::Mcp:
    case ToolKind::Other:
      return k == "args" ? "*" : "";
  }
  return "";
}

const Value* payload_of(const rapidjson::Document& doc) {
  if (!doc.IsObject()) return nullptr;
  auto it = doc.FindMember("payload");
  return it != doc.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

}  // namespace

ToolKind tool_kind(std::string_view name) {
  static const std::pair<std::string_view, ToolKind> kKnown[] = {
      {"Bash", ToolKind::Bash},
      {"Write", ToolKind::Write},
      {"Edit", ToolKind::Edit},
      {"MultiEdit", ToolKind::MultiEdit},
      {"NotebookEdit", ToolKind::NotebookEdit},
      {"Read", ToolKind::Read},
      {"Grep", ToolKind::Grep},
      {"Glob", ToolKind::Glob},
      {"LS", ToolKind::LS},
      {"WebFetch", ToolKind::WebFetch},
      {"WebSearch", ToolKind::WebSearch},
  };
  for (const auto& [n, k] : kKnown)
    if (n == name) return k;
  std::string server, tool;
  return split_mcp_tool(name, &server, &tool) ? ToolKind::Mcp : ToolKind::Other;
}

bool split_mcp_tool(std::string_view name, std::string* server, std::string* tool) {
  constexpr std::string_view kPrefix = "mcp__";
  if (name.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view rest = name.substr(kPrefix.size());
  std::size_t sep = rest.find("__");
  if (sep == std::string_view::npos || sep == 0 || sep + 2 >= rest.size()) return false;
  server->assign(rest.substr(0, sep));
  tool->assign(rest.substr(sep + 2));
  return true;
}

bool hook_proposal(const HookCall& call, std::string_view agent, std::string* proposal_json,
                   HookError* error) {
  rapidjson::Document doc;
  doc.SetObject();
  Alloc& a = doc.GetAllocator();
  const ToolKind kind = tool_kind(call.tool_name);
  PayloadBuilder b(call, a);
  Mapped m = map_tool(call, kind, b, a);
  if (!m.target) {
    *error = {kHookInputShape,
              b.error_.empty() ? call.tool_name + " input not understood" : b.error_};
    return false;
  }
  std::string_view explanation;
  if (kind == ToolKind::Bash) {
    auto d = call.tool_input.FindMember("description");
    if (d != call.tool_input.MemberEnd() && d->value.IsString()) {
      explanation = std::string_view(d->value.GetString(), d->value.GetStringLength());
    }
  }
  Value context(rapidjson::kObjectType);
  context.AddMember("agent", string_value(agent, a), a);
  context.AddMember("session", string_value(call.session_id, a), a);
  context.AddMember("source", "hook", a);
  context.AddMember("tool_use_id", string_value(call.tool_use_id, a), a);
  context.AddMember("tool", string_value(call.tool_name, a), a);
  doc.AddMember("target", Value(m.target, a), a);
  doc.AddMember("action", Value(m.action, a), a);
  doc.AddMember("explanation", string_value(explanation, a), a);
  doc.AddMember("context", context, a);
  doc.AddMember("payload", b.payload_, a);
  *proposal_json = protocol::to_json_text(doc);
  return true;
}

bool updated_tool_input(const HookCall& call, std::string_view proposal_json,
                        std::string_view action_json, std::string* input_json, std::string* error) {
  rapidjson::Document proposal, action;
  // The proposal this hook built and the reply's action as the decider wrote it back: this
  // process's own text.
  json::parse_stored(proposal_json, &proposal);
  json::parse_stored(action_json, &action);
  const Value* before = payload_of(proposal);
  const Value* after = payload_of(action);
  if (!before || !after) {
    *error = "the approved action has no payload";
    return false;
  }
  const ToolKind kind = tool_kind(call.tool_name);
  rapidjson::Document input;
  input.CopyFrom(call.tool_input, input.GetAllocator());
  Alloc& a = input.GetAllocator();
  for (const auto& m : after->GetObject()) {
    auto old = before->FindMember(m.name);
    if (old != before->MemberEnd() && old->value == m.value) continue;
    std::string k(m.name.GetString(), m.name.GetStringLength());
    std::string to = input_key(kind, k);
    if (to.empty()) {
      *error =
          "a rule rewrote payload." + k + ", which " + call.tool_name + "'s input has no field for";
      return false;
    }
    if (to == "*") {
      if (!m.value.IsObject()) {
        *error = "a rule rewrote payload.args into something other than an object";
        return false;
      }
      input.CopyFrom(m.value, a);
      continue;
    }
    if (auto it = input.FindMember(to.c_str()); it != input.MemberEnd()) {
      it->value.CopyFrom(m.value, a);  // in place: the input keeps its order
    } else {
      input.AddMember(Value(to.c_str(), a), Value(m.value, a), a);
    }
  }
  *input_json = protocol::to_json_text(input);
  return true;
}

}  // namespace warden::agents
