// Decisions of the MCP gateway (agents/mcp_tool_gate.h).
#include "agents/mcp_tool_gate.h"

#include <fstream>
#include <random>
#include <span>

#include "agents/mcp_message.h"
#include "agents/mcp_methods.h"
#include "bindings/json.h"
#include "bindings/text.h"
#include "engine/diagnostic.h"
#include "protocol/message.h"

namespace warden::agents::mcp {

namespace {

using rapidjson::Value;

Value str(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return Value(s.data() ? s.data() : "", static_cast<rapidjson::SizeType>(s.size()), a);
}

std::string_view view(const Value& v) { return {v.GetString(), v.GetStringLength()}; }

// "REASON (rule A)"
std::string because(const Verdict& v) {
  std::string text = v.reason.empty() ? "no reason given" : v.reason;
  if (std::string rules = deciding_rules_text(v); !rules.empty()) text += " (" + rules + ")";
  return text;
}

std::string no_decision(const Verdict& v) {
  return "Warden: no decision, so the call was not run (" +
         (v.error_code.empty() ? std::string(code::kInternal) : v.error_code) + ": " +
         v.error_message + ")";
}

// What the gateway answers instead of passing a message on: no decision, a reject, or an
// approval the rules ask for (`approval`: what that means here, `denied`: what the gateway does
// with it); empty when the message may go on.
std::string refusal(const Verdict& v, const std::string& approval, const char* denied) {
  if (!v.ok) return no_decision(v);
  if (v.outcome == Outcome::Reject) return "Warden: " + because(v);
  if (v.outcome == Outcome::ApprovalRequired)
    return "Warden: " + approval + ": " + because(v) + ". " + denied;
  return {};
}

// The params of a decided request that are forwarded (and decided): per method the members
// the specification gives it, and _meta.
Value forwarded_params(std::string_view method, const Value& params,
                       rapidjson::Document::AllocatorType& a) {
  static constexpr std::string_view kResource[] = {"uri", "_meta"};
  static constexpr std::string_view kPrompt[] = {"name", "arguments", "_meta"};
  static constexpr std::string_view kCompletion[] = {"ref", "argument", "context", "_meta"};
  std::span<const std::string_view> keep;
  if (method == "prompts/get") {
    keep = kPrompt;
  } else if (method == "completion/complete") {
    keep = kCompletion;
  } else {
    keep = kResource;
  }
  Value out(rapidjson::kObjectType);
  if (!params.IsObject()) return out;
  for (std::string_view k : keep) {
    auto it = params.FindMember(rapidjson::StringRef(k.data(), k.size()));
    if (it == params.MemberEnd()) continue;
    Value copy;
    copy.CopyFrom(it->value, a);
    out.AddMember(str(k, a), copy, a);
  }
  return out;
}

}  // namespace

ToolGate::ToolGate(GateConfig config, Decider& decider)
    : config_(std::move(config)), decider_(decider) {}

Verdict ToolGate::decide(const std::string& proposal) {
  std::lock_guard<std::mutex> lock(decider_mutex_);
  return decider_.decide(proposal);
}

// {"target":"tool","action":"call"|"list","payload":{"server","tool"[,"args"]},
// "explanation":"","context":{"agent","session","source":"mcp-gateway"}}; args only for a
// call (an object when the call has none).
std::string ToolGate::proposal(bool call, std::string_view tool, const Value* args) const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  Value payload(rapidjson::kObjectType);
  payload.AddMember("server", str(config_.server, a), a);
  payload.AddMember("tool", str(tool, a), a);
  if (call) {
    Value copy;
    if (args) {
      copy.CopyFrom(*args, a);
    } else {
      copy.SetObject();
    }
    payload.AddMember("args", copy, a);
  }
  Value context(rapidjson::kObjectType);
  context.AddMember("agent", str(config_.agent, a), a);
  context.AddMember("session", str(config_.session, a), a);
  context.AddMember("source", "mcp-gateway", a);
  d.AddMember("target", "tool", a);
  d.AddMember("action", rapidjson::StringRef(call ? "call" : "list"), a);
  d.AddMember("payload", payload, a);
  d.AddMember("explanation", "", a);
  d.AddMember("context", context, a);
  return protocol::to_json_text(d);
}

std::string ToolGate::call_proposal(std::string_view tool, const Value* args) const {
  return proposal(true, tool, args);
}

std::string ToolGate::list_proposal(std::string_view tool) const {
  return proposal(false, tool, nullptr);
}

CallAnswer ToolGate::decide_call(Value& request, rapidjson::Document::AllocatorType& alloc) {
  CallAnswer answer;
  auto params = request.FindMember("params");
  if (params == request.MemberEnd() || !params->value.IsObject()) {
    answer.action = CallAnswer::Action::Invalid;
    answer.text = "tools/call needs params with the tool's name";
    return answer;
  }
  Value& p = params->value;
  auto name = p.FindMember("name");
  if (name == p.MemberEnd() || !name->value.IsString()) {
    answer.action = CallAnswer::Action::Invalid;
    answer.text = "tools/call needs params.name, a string";
    return answer;
  }
  answer.tool = std::string(view(name->value));
  auto args = p.FindMember("arguments");
  const Value* args_value = args == p.MemberEnd() ? nullptr : &args->value;

  Verdict v = decide(call_proposal(answer.tool, args_value));
  answer.text = refusal(v, "this call needs a human's approval and was not run",
                        "This gateway denies such calls (--on-approval-required deny); ask the "
                        "user to run it or to change the policy.");
  if (!answer.text.empty()) return answer;
  answer.action = CallAnswer::Action::Forward;

  // What goes to the server is what was decided, serialized anew: never the client's bytes
  // (nothing the gateway did not read can ride along), and on a rewrite the approved tool
  // and args.
  std::string tool_name = answer.tool;
  const Value* final_args = args_value;
  rapidjson::Document approved;
  if (v.rewritten) {
    // The reply's action as the decider wrote it back: this process's own text.
    const Value* payload = nullptr;
    if (!json::parse_stored(v.action_json, &approved) && approved.IsObject()) {
      auto pl = approved.FindMember("payload");
      if (pl != approved.MemberEnd() && pl->value.IsObject()) payload = &pl->value;
    }
    auto refuse = [&](const std::string& why) {
      answer.action = CallAnswer::Action::Refuse;
      answer.text = "Warden: a rule rewrote this call, and " + why + "; the call was not run";
      return answer;
    };
    if (!payload) return refuse("the approved action is not readable");
    auto server = payload->FindMember("server");
    if (server == payload->MemberEnd() || !server->value.IsString() ||
        view(server->value) != config_.server) {
      return refuse("the approved action names another server than " + config_.server);
    }
    auto tool = payload->FindMember("tool");
    if (tool == payload->MemberEnd() || !tool->value.IsString()) {
      return refuse("the approved action names no tool");
    }
    tool_name = std::string(view(tool->value));
    auto new_args = payload->FindMember("args");
    final_args = new_args == payload->MemberEnd() ? nullptr : &new_args->value;
    answer.tool = tool_name;
    answer.changed = true;
  }
  request = canonical_call(request, tool_name, final_args, alloc);
  return answer;
}

std::string ToolGate::request_proposal(std::string_view method, const Value& params,
                                       std::string* problem) const {
  rapidjson::Document d(rapidjson::kObjectType);
  auto& a = d.GetAllocator();
  Value kept = forwarded_params(method, params, a);
  Value payload(rapidjson::kObjectType);
  std::string target = "mcp", action = mcp_action(method);
  if (method == "resources/read" || method == "resources/subscribe") {
    auto uri = kept.FindMember("uri");
    if (uri == kept.MemberEnd() || !uri->value.IsString()) {
      *problem = std::string(method) + " needs params.uri, a string";
      return "";
    }
    const std::string_view u = view(uri->value);
    ResourceUri r = read_resource_uri(u);
    if (r.kind == ResourceUri::Kind::File) {
      target = "file";
      action = "read";
      payload.AddMember("path", str(r.path, a), a);
      payload.AddMember("uri", str(u, a), a);
    } else if (r.kind == ResourceUri::Kind::Web) {
      target = "http";
      action = "get";
      payload.AddMember("method", "GET", a);
      payload.AddMember("url", str(u, a), a);
    }
  } else if (method == "prompts/get") {
    auto name = kept.FindMember("name");
    if (name == kept.MemberEnd() || !name->value.IsString()) {
      *problem = "prompts/get needs params.name, a string";
      return "";
    }
  }
  payload.AddMember("server", str(config_.server, a), a);
  payload.AddMember("mcp_method", str(method, a), a);
  if (target == "mcp") payload.AddMember("params", kept, a);
  Value context(rapidjson::kObjectType);
  context.AddMember("agent", str(config_.agent, a), a);
  context.AddMember("session", str(config_.session, a), a);
  context.AddMember("source", "mcp-gateway", a);
  d.AddMember("target", str(target, a), a);
  d.AddMember("action", str(action, a), a);
  d.AddMember("payload", payload, a);
  d.AddMember("explanation", "", a);
  d.AddMember("context", context, a);
  return protocol::to_json_text(d);
}

CallAnswer ToolGate::decide_request(Value& request, rapidjson::Document::AllocatorType& alloc) {
  CallAnswer answer;
  const std::string method = json::string_member(request, "method");
  answer.tool = method;
  auto params = request.FindMember("params");
  if (params == request.MemberEnd() || !params->value.IsObject()) {
    answer.action = CallAnswer::Action::Invalid;
    answer.text = method + " needs params, an object";
    return answer;
  }
  std::string problem;
  const std::string proposal = request_proposal(method, params->value, &problem);
  if (proposal.empty()) {
    answer.action = CallAnswer::Action::Invalid;
    answer.text = problem;
    return answer;
  }
  Verdict v = decide(proposal);
  answer.text = refusal(v, "this " + method + " needs a human's approval and was not forwarded",
                        "This gateway denies such requests (--on-approval-required deny).");
  if (!answer.text.empty()) return answer;
  if (v.rewritten) {
    answer.text = "Warden: a rule rewrote this " + method +
                  "; the gateway forwards a rewritten form only for tools/call, so it was not "
                  "forwarded";
    return answer;
  }
  answer.action = CallAnswer::Action::Forward;
  Value out(rapidjson::kObjectType);
  out.AddMember("jsonrpc", "2.0", alloc);
  Value id;
  if (auto it = request.FindMember("id"); it != request.MemberEnd()) id.CopyFrom(it->value, alloc);
  out.AddMember("id", id, alloc);
  out.AddMember("method", str(method, alloc), alloc);
  out.AddMember("params", forwarded_params(method, params->value, alloc), alloc);
  request = std::move(out);
  return answer;
}

Value ToolGate::canonical_call(const Value& request, std::string_view tool, const Value* args,
                               rapidjson::Document::AllocatorType& alloc) {
  Value out(rapidjson::kObjectType);
  out.AddMember("jsonrpc", "2.0", alloc);
  Value id;
  if (auto it = request.FindMember("id"); it != request.MemberEnd()) id.CopyFrom(it->value, alloc);
  out.AddMember("id", id, alloc);
  out.AddMember("method", "tools/call", alloc);
  Value params(rapidjson::kObjectType);
  params.AddMember("name", str(tool, alloc), alloc);
  if (args) {
    Value a;
    a.CopyFrom(*args, alloc);
    params.AddMember("arguments", a, alloc);
  }
  // _meta is the protocol's own (a progress token): kept; any other member is dropped.
  if (auto p = request.FindMember("params"); p != request.MemberEnd() && p->value.IsObject()) {
    if (auto meta = p->value.FindMember("_meta"); meta != p->value.MemberEnd()) {
      Value m;
      m.CopyFrom(meta->value, alloc);
      params.AddMember("_meta", m, alloc);
    }
  }
  out.AddMember("params", params, alloc);
  return out;
}

int ToolGate::filter_list(Value& response, rapidjson::Document::AllocatorType& alloc,
                          std::string* log) {
  (void)alloc;
  if (!config_.filter_tools || !response.IsObject()) return 0;
  auto result = response.FindMember("result");
  if (result == response.MemberEnd() || !result->value.IsObject()) return 0;
  auto tools = result->value.FindMember("tools");
  if (tools == result->value.MemberEnd() || !tools->value.IsArray()) return 0;
  int removed = 0;
  auto& list = tools->value;
  for (auto it = list.Begin(); it != list.End();) {
    std::string name;
    if (it->IsObject()) {
      auto n = it->FindMember("name");
      if (n != it->MemberEnd() && n->value.IsString()) name = std::string(view(n->value));
    }
    bool hide = false;
    std::string why;
    if (name.empty()) {
      hide = true;
      why = "a listed tool without a name";
    } else {
      Verdict v = decide(list_proposal(name));
      if (!v.ok) {
        hide = true;
        why = "tool " + name + ": no decision (" + v.error_code + ": " + v.error_message + ")";
      } else if (v.outcome == Outcome::Reject) {
        hide = true;
        why = "tool " + name + ": " + because(v);
      }
    }
    if (hide) {
      if (log) *log += "hid " + why + "\n";
      it = list.Erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

std::string random_session_id() {
  unsigned char bytes[16] = {};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(bytes), sizeof bytes)) {
    std::random_device rd;
    for (auto& b : bytes) b = static_cast<unsigned char>(rd());
  }
  return text::hex(bytes, sizeof bytes);
}

}  // namespace warden::agents::mcp
