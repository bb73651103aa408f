// Think: the prompt from (signal, catalog, conversation, rejection trace, hints) and the
// proposal from a model's answer. Pure functions; thread-safe.
#include "reasoning/think.h"

#include <algorithm>

#include "reasoning/json_text.h"

namespace warden::reasoning {
namespace {

using rapidjson::Document;
using rapidjson::Value;
using Alloc = Document::AllocatorType;

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

std::string trim_text(std::string_view s) {
  const char* space = " \t\r\n";
  auto begin = s.find_first_not_of(space);
  if (begin == std::string_view::npos) return {};
  auto end = s.find_last_not_of(space);
  return std::string(s.substr(begin, end - begin + 1));
}

const char* kOutputInstructions =
    "Propose exactly one action per answer. When tools are offered to you, call exactly one of "
    "them and say why in its \"explanation\" argument. Otherwise answer with one JSON object "
    "and nothing else:\n"
    "{\"target\": \"<target>\", \"action\": \"<action>\", \"payload\": {…}, \"explanation\": "
    "\"<why>\"}\n"
    "To answer the user in words, use the target \"reply\" with payload {\"text\": \"…\"}. "
    "Every action is checked by a security policy before it runs; a refused action is not run.";

// The text of the newest perception as the model reads it.
std::string perception_text(const Signal& signal) {
  auto about = [&]() {
    std::string s;
    if (!signal.tool.empty()) s += signal.tool;
    if (!signal.action_json.empty()) s += (s.empty() ? "" : " ") + signal.action_json;
    return s.empty() ? std::string() : " (" + s + ")";
  };
  if (signal.sensor == "tool-output")
    return "Result of the previous action" + about() + ":\n" + signal.text;
  if (signal.sensor == "tool-error")
    return "The previous action failed" + about() + ":\n" + signal.text;
  if (signal.sensor == "loop-error")
    return "An error occurred while handling the previous step:\n" + signal.text;
  return signal.text;
}

// The action a target's proposal gets when the model called it as a native tool.
std::string default_action(const std::string& target, const Value& payload) {
  if (target == "shell") return "run";
  if (target == "http") return "request";
  if (target == "reply") return "send";
  if (target == "file") {
    std::string action = json::string_member(payload, "action");
    return action.empty() ? "call" : action;
  }
  return "call";
}

bool has_spec(const std::vector<ToolSpec>& specs, const std::string& name) {
  return std::any_of(specs.begin(), specs.end(), [&](const ToolSpec& s) { return s.name == name; });
}

const ToolSpec* find_spec(const std::vector<ToolSpec>& specs, const std::string& name) {
  auto it =
      std::find_if(specs.begin(), specs.end(), [&](const ToolSpec& s) { return s.name == name; });
  return it == specs.end() ? nullptr : &*it;
}

// A native tool call carries no proposal text (OpenAI and Ollama send `content: null`), so
// every tool the model is offered takes the proposal's explanation as an argument of this
// name — unless its own schema already has a property of that name, which stays its own.
constexpr const char* kExplanationArgument = "explanation";
constexpr const char* kExplanationSchema =
    R"({"type":"string","description":"why this action is needed, in one sentence: the )"
    R"(security policy refuses an action without it"})";

// The schema's `properties`, or nullptr.
const Value* schema_properties(const Value& schema) {
  const Value* properties = json::member(schema, "properties");
  return properties && properties->IsObject() ? properties : nullptr;
}

// Whether the spec's own schema declares an `explanation` property (then an `explanation`
// argument is the tool's, not the proposal's).
bool declares_explanation(const ToolSpec& spec) {
  Document schema;
  if (!json::parse(spec.parameters_schema_json, &schema).empty() || !schema.IsObject())
    return false;
  const Value* properties = schema_properties(schema);
  return properties && json::member(*properties, kExplanationArgument);
}

// The spec as the model is offered it: its schema with a required `explanation` string.
// A schema that is not a JSON object is offered as it is.
ToolSpec with_explanation(ToolSpec spec) {
  Document schema;
  const std::string text = trim_text(spec.parameters_schema_json).empty()
                               ? "{\"type\":\"object\"}"
                               : spec.parameters_schema_json;
  if (!json::parse(text, &schema).empty() || !schema.IsObject()) return spec;
  Alloc& a = schema.GetAllocator();
  if (!json::member(schema, "type")) schema.AddMember("type", "object", a);
  Value* properties = const_cast<Value*>(schema_properties(schema));
  if (!properties) {
    if (schema.HasMember("properties")) return spec;  // not an object: left as it is
    schema.AddMember("properties", Value(rapidjson::kObjectType), a);
    properties = &schema["properties"];
  }
  if (json::member(*properties, kExplanationArgument)) return spec;  // the tool's own
  Document property;
  json::parse(kExplanationSchema, &property);
  properties->AddMember(Value(kExplanationArgument, a), Value(property, a), a);
  Value* required = json::member(schema, "required") ? &schema["required"] : nullptr;
  if (!required) {
    schema.AddMember("required", Value(rapidjson::kArrayType), a);
    required = &schema["required"];
  }
  if (!required->IsArray()) return spec;
  required->PushBack(Value(kExplanationArgument, a), a);
  spec.parameters_schema_json = json::write(schema);
  return spec;
}

// Takes the proposal's explanation out of a tool call's arguments (an object whose keys are
// as the spec reads them): its text, or "" when there is none or it is not a string. The
// argument is removed either way, so it never reaches the payload the actuator runs.
std::string take_explanation(Value& args, const ToolSpec& spec) {
  if (declares_explanation(spec)) return {};
  auto it = args.FindMember(kExplanationArgument);
  if (it == args.MemberEnd()) return {};
  std::string text = it->value.IsString()
                         ? std::string(it->value.GetString(), it->value.GetStringLength())
                         : std::string();
  args.EraseMember(it);  // keeps the order of the other arguments
  return trim_text(text);
}

std::string reply_proposal(const std::string& raw) {
  Document doc(rapidjson::kObjectType);
  Alloc& a = doc.GetAllocator();
  doc.AddMember("target", "reply", a);
  doc.AddMember("action", "send", a);
  Value payload(rapidjson::kObjectType);
  payload.AddMember("text", json::string_value(raw, a), a);
  doc.AddMember("payload", payload, a);
  return json::write(doc);
}

// A copy of `object` with its own keys lowercased; false when two keys collide after that
// (ambiguous: which one would the rules see?).
bool lowercase_keys(const Value& object, Value* out, Alloc& a) {
  out->SetObject();
  warden::json::MemberNames names({.fold_case = true});
  for (const auto& m : object.GetObject()) {
    if (names.add({m.name.GetString(), m.name.GetStringLength()})) return false;
    std::string key = ascii_lower(std::string(m.name.GetString(), m.name.GetStringLength()));
    out->AddMember(json::string_value(key, a), Value(m.value, a), a);
  }
  return true;
}

std::string proposal(const std::string& target, const std::string& action, const Value& payload,
                     const std::string* explanation) {
  Document doc(rapidjson::kObjectType);
  Alloc& a = doc.GetAllocator();
  doc.AddMember("target", json::string_value(target, a), a);
  // Lowercased like the target: the engine folds the case of both names, so consensus must.
  doc.AddMember("action", json::string_value(ascii_lower(action), a), a);
  doc.AddMember("payload", Value(payload, a), a);
  if (explanation && !explanation->empty())
    doc.AddMember("explanation", json::string_value(*explanation, a), a);
  return json::write(doc);
}

// The JSON inside the first Markdown fence, or the whole text.
std::string strip_fences(const std::string& text) {
  const auto open = text.find("```");
  if (open == std::string::npos) return trim_text(text);
  auto body = text.find('\n', open);
  if (body == std::string::npos) return trim_text(text);
  ++body;
  const auto close = text.find("```", body);
  return trim_text(std::string_view(text).substr(
      body, close == std::string::npos ? std::string::npos : close - body));
}

std::string from_tool_call(const Answer& answer, const Catalog& catalog) {
  const ToolCall& call = *answer.tool_call;
  const std::string raw = answer.text.empty() ? call.name + " " + call.arguments_json : answer.text;
  Document args;
  const std::string arguments = trim_text(call.arguments_json).empty() ? "{}" : call.arguments_json;
  if (!json::parse(arguments, &args).empty() || !args.IsObject()) return reply_proposal(raw);
  Alloc& a = args.GetAllocator();
  // The explanation: the call's `explanation` argument, else the text the model wrote with
  // the call (providers that send both).
  auto explained = [&](std::string argument) {
    return argument.empty() ? trim_text(answer.text) : argument;
  };
  if (const std::string target = ascii_lower(call.name); has_spec(catalog.targets, target)) {
    Value payload;
    if (!lowercase_keys(args, &payload, a)) return reply_proposal(raw);
    const std::string explanation =
        explained(take_explanation(payload, *find_spec(catalog.targets, target)));
    return proposal(target, default_action(target, payload), payload, &explanation);
  }
  if (const ToolSpec* spec = find_spec(catalog.tools, call.name)) {
    const std::string explanation = explained(take_explanation(args, *spec));
    Value payload(rapidjson::kObjectType);
    payload.AddMember("tool", json::string_value(call.name, a), a);
    payload.AddMember("args", Value(args, a), a);
    return proposal("tool", "call", payload, &explanation);
  }
  return reply_proposal(raw);
}

// Keys sorted at every level, compact.
void write_sorted(const Value& v, std::string& out) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](auto* x, auto* y) {
      return std::string_view(x->name.GetString(), x->name.GetStringLength()) <
             std::string_view(y->name.GetString(), y->name.GetStringLength());
    });
    out += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (i) out += ',';
      out += json::write(members[i]->name);
      out += ':';
      write_sorted(members[i]->value, out);
    }
    out += '}';
  } else if (v.IsArray()) {
    out += '[';
    bool first = true;
    for (const Value& e : v.GetArray()) {
      if (!first) out += ',';
      first = false;
      write_sorted(e, out);
    }
    out += ']';
  } else {
    out += json::write(v);
  }
}

}  // namespace

Request build_request(const Signal& signal, const Catalog& catalog,
                      const std::vector<Message>& conversation, const std::vector<Rejection>& trace,
                      const std::vector<std::string>& hints) {
  Request request;
  std::string& s = request.system;
  s = catalog.identity;
  if (!catalog.targets.empty()) {
    s += "\n\nTargets you may propose actions for (target: what it does; payload fields as JSON "
         "Schema):";
    for (const ToolSpec& t : catalog.targets)
      s += "\n- " + t.name + ": " + t.description +
           "\n  payload: " + (t.parameters_schema_json.empty() ? "{}" : t.parameters_schema_json);
  }
  if (!catalog.tools.empty()) {
    s += "\n\nRegistered tools (target \"tool\", action \"call\", payload {\"tool\": NAME, "
         "\"args\": {…}}):";
    for (const ToolSpec& t : catalog.tools)
      s += "\n- " + t.name + ": " + t.description +
           "\n  args: " + (t.parameters_schema_json.empty() ? "{}" : t.parameters_schema_json);
  }
  s += "\n\n";
  s += kOutputInstructions;
  if (!hints.empty()) {
    s += "\n\nHints from the security policy:";
    for (const std::string& hint : hints) s += "\n- " + hint;
  }
  if (!trace.empty()) {
    s += "\n\nEarlier attempts for this request were refused:";
    for (const Rejection& r : trace) {
      std::string rules;
      for (const std::string& rule : r.rules) rules += (rules.empty() ? "" : ", ") + rule;
      s += "\n- Attempt " + std::to_string(r.attempt) + " was refused by " +
           (r.rules.empty() ? std::string("the policy")
                            : (r.rules.size() == 1 ? "rule " : "rules ") + rules) +
           ": " + (r.reason.empty() ? std::string("no reason given") : r.reason) +
           "; do not propose it again. The refused proposal: " + r.action_json;
    }
  }
  request.messages = conversation;
  request.messages.push_back(Message{"user", perception_text(signal)});
  for (const ToolSpec& target : catalog.targets) request.tools.push_back(with_explanation(target));
  for (const ToolSpec& tool : catalog.tools)
    if (!has_spec(catalog.targets, tool.name)) request.tools.push_back(with_explanation(tool));
  request.session = signal.principal + '\x1f' + signal.session;
  return request;
}

std::string parse_answer(const Answer& answer, const Catalog& catalog) {
  if (answer.tool_call) return from_tool_call(answer, catalog);
  // The whole text first (a command may hold backticks), then the first fenced block.
  Document doc;
  if (!json::parse(trim_text(answer.text), &doc).empty() &&
      !json::parse(strip_fences(answer.text), &doc).empty())
    return reply_proposal(answer.text);
  if (!doc.IsObject()) return reply_proposal(answer.text);
  Alloc& a = doc.GetAllocator();
  Value top;
  if (!lowercase_keys(doc, &top, a)) return reply_proposal(answer.text);
  const Value* target = json::member(top, "target");
  if (!target || !target->IsString() || target->GetStringLength() == 0)
    return reply_proposal(answer.text);
  const std::string target_name =
      ascii_lower(std::string(target->GetString(), target->GetStringLength()));
  Value payload(rapidjson::kObjectType);
  if (const Value* p = json::member(top, "payload")) {
    if (!p->IsObject() || !lowercase_keys(*p, &payload, a)) return reply_proposal(answer.text);
  }
  const Value* action = json::member(top, "action");
  if (action && !action->IsString()) return reply_proposal(answer.text);
  const std::string action_name = action && action->GetStringLength()
                                      ? std::string(action->GetString(), action->GetStringLength())
                                      : default_action(target_name, payload);
  const Value* explanation = json::member(top, "explanation");
  const std::string explanation_text =
      explanation && explanation->IsString()
          ? std::string(explanation->GetString(), explanation->GetStringLength())
          : "";
  return proposal(target_name, action_name, payload, &explanation_text);
}

std::string normalized_action(const std::string& proposal_json) {
  Document doc;
  if (!json::parse(proposal_json, &doc).empty() || !doc.IsObject())
    return "unparseable: " + proposal_json;
  Document kept(rapidjson::kObjectType);
  Alloc& a = kept.GetAllocator();
  for (const char* name : {"target", "action", "payload"})
    if (const Value* v = json::member(doc, name)) kept.AddMember(Value(name, a), Value(*v, a), a);
  std::string out;
  write_sorted(kept, out);
  return out;
}

}  // namespace warden::reasoning
