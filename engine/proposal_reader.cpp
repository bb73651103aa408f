#include "engine/proposal_reader.h"

#include <rapidjson/error/en.h>

#include <cctype>
#include <cstring>
#include <unordered_set>

#include "bindings/text.h"

namespace warden {
namespace {

Diagnostic input_error(const char* code, std::string message) {
  return Diagnostic{code, Severity::Error, "", 0, "", std::move(message)};
}

// Names that become CLIPS symbols: letters, digits and _ . : - ; lowercased.
bool normalize_name(rapidjson::Value& v, rapidjson::Document::AllocatorType& alloc, std::string* out,
                    bool* renamed) {
  if (!v.IsString()) return false;
  std::string s(v.GetString(), v.GetStringLength());
  if (s.empty() || s.size() > 64 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char& c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (!std::isalnum(u) && c != '_' && c != '-' && c != '.' && c != ':') return false;
    c = static_cast<char>(std::tolower(u));
  }
  if (std::string_view(v.GetString(), v.GetStringLength()) != s) {
    v.SetString(s.data(), static_cast<rapidjson::SizeType>(s.size()), alloc);
    *renamed = true;
  }
  *out = std::move(s);
  return true;
}

// Parsers disagree on which of two equal keys wins; rules and actuators must see one value.
bool has_duplicate_key(const rapidjson::Value& obj) {
  std::unordered_set<std::string_view> seen;
  for (auto it = obj.MemberBegin(); it != obj.MemberEnd(); ++it)
    if (!seen.emplace(it->name.GetString(), it->name.GetStringLength()).second) return true;
  return false;
}

std::string string_member(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return {};
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

}  // namespace

std::optional<Diagnostic> read_proposal(std::string_view json, const ReadLimits& limits,
                                        rapidjson::Document* doc, ProposalFields* fields,
                                        std::vector<Leaf>* leaves) {
  if (json.size() > limits.max_bytes)
    return input_error(code::kInputTooLarge, "proposal is " + std::to_string(json.size()) +
                                                 " bytes, over the limit of " + std::to_string(limits.max_bytes));
  constexpr unsigned kFlags = rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag |
                              rapidjson::kParseFullPrecisionFlag;
  doc->Parse<kFlags>(json.data(), json.size());
  if (doc->HasParseError())
    return input_error(code::kInputJson, std::string("invalid JSON at byte ") +
                                             std::to_string(doc->GetErrorOffset()) + ": " +
                                             rapidjson::GetParseError_En(doc->GetParseError()));
  if (!doc->IsObject()) return input_error(code::kInputShape, "a proposal must be a JSON object");
  // RapidJSON validates raw bytes but lets a lone surrogate escape ("\udc3a") through as
  // invalid UTF-8; strings are re-checked whenever the text holds a \u escape.
  const bool check_escapes = json.find("\\u") != std::string_view::npos;
  auto& alloc = doc->GetAllocator();

  // Leaves, depth-first in document order, with an explicit stack (no recursion on input).
  struct Frame {
    rapidjson::Value* value;
    std::string key;
    unsigned depth;
  };
  std::vector<Frame> stack;
  leaves->clear();
  if (has_duplicate_key(*doc)) return input_error(code::kInputShape, "duplicate key in the proposal");
  for (auto it = doc->MemberEnd(); it != doc->MemberBegin();) {
    --it;
    stack.push_back({&it->value, std::string(it->name.GetString(), it->name.GetStringLength()), 1});
  }
  while (!stack.empty()) {
    Frame frame = std::move(stack.back());
    stack.pop_back();
    if (frame.depth > limits.max_depth)
      return input_error(code::kInputTooLarge, "proposal nests deeper than " + std::to_string(limits.max_depth));
    rapidjson::Value& v = *frame.value;
    if (v.IsObject()) {
      if (has_duplicate_key(v))
        return input_error(code::kInputShape, "duplicate key in " + (frame.key.empty() ? std::string("the proposal") : frame.key));
      for (auto it = v.MemberEnd(); it != v.MemberBegin();) {
        --it;
        if (std::memchr(it->name.GetString(), '\0', it->name.GetStringLength()))
          return input_error(code::kInputShape, "NUL character in a key");
        if (check_escapes && !text::valid_utf8({it->name.GetString(), it->name.GetStringLength()}))
          return input_error(code::kInputJson, "invalid Unicode escape in a key");
        stack.push_back({&it->value, frame.key + "." + std::string(it->name.GetString(), it->name.GetStringLength()),
                         frame.depth + 1});
      }
    } else if (v.IsArray()) {
      for (rapidjson::SizeType i = v.Size(); i > 0; --i)
        stack.push_back({&v[i - 1], frame.key + "." + std::to_string(i - 1), frame.depth + 1});
    } else {
      if (v.IsString() && std::memchr(v.GetString(), '\0', v.GetStringLength()))
        return input_error(code::kInputShape, "NUL character in the value of " + frame.key);
      if (check_escapes && v.IsString() && !text::valid_utf8({v.GetString(), v.GetStringLength()}))
        return input_error(code::kInputJson, "invalid Unicode escape in the value of " + frame.key);
      if (leaves->size() >= limits.max_leaves)
        return input_error(code::kInputTooLarge, "proposal has more than " + std::to_string(limits.max_leaves) + " values");
      leaves->push_back({std::move(frame.key), &v});
    }
  }

  auto target = doc->FindMember("target");
  if (target == doc->MemberEnd()) return input_error(code::kInputShape, "proposal has no \"target\"");
  if (!normalize_name(target->value, alloc, &fields->target, &fields->renamed))
    return input_error(code::kInputShape, "\"target\" must be a name (letters, digits, _ . : -)");
  auto action = doc->FindMember("action");
  if (action != doc->MemberEnd() && !action->value.IsNull() &&
      !normalize_name(action->value, alloc, &fields->action, &fields->renamed))
    return input_error(code::kInputShape, "\"action\" must be a name (letters, digits, _ . : -)");
  auto payload = doc->FindMember("payload");
  if (payload != doc->MemberEnd() && !payload->value.IsObject())
    return input_error(code::kInputShape, "\"payload\" must be an object");
  auto explanation = doc->FindMember("explanation");
  if (explanation != doc->MemberEnd() && !explanation->value.IsString() && !explanation->value.IsNull())
    return input_error(code::kInputShape, "\"explanation\" must be a string");
  fields->explanation = string_member(*doc, "explanation");
  auto context = doc->FindMember("context");
  if (context != doc->MemberEnd()) {
    if (!context->value.IsObject()) return input_error(code::kInputShape, "\"context\" must be an object");
    rapidjson::Value& ctx = context->value;
    fields->agent = string_member(ctx, "agent");
    fields->session = string_member(ctx, "session");
    fields->principal = string_member(ctx, "principal");
    auto source = ctx.FindMember("source");
    if (source != ctx.MemberEnd() && !source->value.IsNull() &&
        !normalize_name(source->value, alloc, &fields->source, &fields->renamed))
      return input_error(code::kInputShape, "\"context.source\" must be a name");
  }
  return std::nullopt;
}

}  // namespace warden
