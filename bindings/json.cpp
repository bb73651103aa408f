#include "bindings/json.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace warden::json {
namespace {

unsigned hex4_at(std::string_view text, std::size_t at) {
  unsigned v = 0;
  for (std::size_t k = at; k < at + 4 && k < text.size(); ++k) {
    const char c = text[k];
    v = v * 16 + (c >= '0' && c <= '9'   ? unsigned(c - '0')
                  : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                  : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                         : 0u);
  }
  return v;
}

}  // namespace

Error scan(std::string_view text, const Limits& limits) {
  std::size_t depth = 0;
  bool in_string = false;
  std::size_t high_end = std::string_view::npos;  // where a high-surrogate escape ended
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\' && i + 1 < text.size()) {
        if (limits.refuse_lone_surrogates && text[i + 1] == 'u' && i + 5 < text.size()) {
          const unsigned unit = hex4_at(text, i + 2);
          if (unit >= 0xDC00 && unit <= 0xDFFF && high_end != i)
            return {Refusal::kLoneSurrogate, i};
          high_end = unit >= 0xD800 && unit <= 0xDBFF ? i + 6 : std::string_view::npos;
          i += 5;
        } else {
          ++i;
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > limits.max_depth) return {Refusal::kTooDeep, i};
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return {};
}

Error parse(std::string_view text, rapidjson::Document* doc, const Limits& limits) {
  doc->SetNull();
  if (text.size() > limits.max_bytes) return {Refusal::kTooLarge, limits.max_bytes};
  const bool any =
      limits.max_depth == std::numeric_limits<std::size_t>::max() && !limits.refuse_lone_surrogates;
  if (!any) {
    if (Error e = scan(text, limits)) return e;
  }
  if (std::size_t nul = text.find('\0'); nul != std::string_view::npos)
    return {Refusal::kNulByte, nul};
  doc->Parse<kParseFlags>(text.data(), text.size());
  if (doc->HasParseError()) return {Refusal::kSyntax, doc->GetErrorOffset(), doc->GetParseError()};
  return {};
}

const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

std::string string_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = member(object, name);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

std::string to_text(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace warden::json
