// Small RapidJSON helpers shared by the providers and Think: parse a text, write a value
// back as compact JSON, read optional members without throwing. Internal to reasoning/.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>

#include "bindings/text.h"

namespace warden::reasoning::json {

// Deeper JSON than this is refused before parsing: RapidJSON's parser, copies and writers
// recurse once per level, and a hostile model or server can send megabytes of brackets.
constexpr int kMaxDepth = 128;

// What RapidJSON would accept but must not be parsed: nesting deeper than kMaxDepth, or a
// \u escape of a low surrogate without its high one (RapidJSON decodes it into bytes that
// are not UTF-8). "" when neither.
inline std::string refused(std::string_view text) {
  auto hex4 = [&](std::size_t at) {
    unsigned v = 0;
    for (std::size_t k = at; k < at + 4 && k < text.size(); ++k) {
      const char c = text[k];
      v = v * 16 + (c >= '0' && c <= '9'   ? unsigned(c - '0')
                    : c >= 'a' && c <= 'f' ? unsigned(c - 'a' + 10)
                    : c >= 'A' && c <= 'F' ? unsigned(c - 'A' + 10)
                                           : 0u);
    }
    return v;
  };
  int depth = 0;
  bool in_string = false;
  std::size_t high_end = std::string_view::npos;  // where a high-surrogate escape ended
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '"') {
        in_string = false;
      } else if (c == '\\' && i + 1 < text.size()) {
        if (text[i + 1] == 'u' && i + 5 < text.size()) {
          const unsigned unit = hex4(i + 2);
          if (unit >= 0xDC00 && unit <= 0xDFFF && high_end != i)
            return "lone surrogate \\u" + std::string(text.substr(i + 2, 4)) + " at offset " +
                   std::to_string(i);
          high_end = unit >= 0xD800 && unit <= 0xDBFF ? i + 6 : std::string_view::npos;
          i += 5;
        } else {
          ++i;
        }
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth)
        return "nested deeper than " + std::to_string(kMaxDepth) + " levels at offset " +
               std::to_string(i);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return {};
}

// `text` as valid UTF-8: each invalid byte becomes U+FFFD.
inline std::string valid_utf8(std::string_view text) {
  if (warden::text::valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = warden::text::utf8_sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

// Parses `text` into *doc; "" on success, else "<error> at offset N". Refuses invalid
// UTF-8 (also lone surrogates written as \u escapes) and nesting deeper than kMaxDepth.
inline std::string parse(std::string_view text, rapidjson::Document* doc) {
  if (std::string error = refused(text); !error.empty()) {
    doc->SetNull();
    return error;
  }
  doc->Parse<rapidjson::kParseValidateEncodingFlag>(text.data(), text.size());
  if (!doc->HasParseError()) return {};
  return std::string(rapidjson::GetParseError_En(doc->GetParseError())) + " at offset " +
         std::to_string(doc->GetErrorOffset());
}

inline std::string write(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return {buffer.GetString(), buffer.GetSize()};
}

inline const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

inline std::string string_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = member(object, name);
  return v && v->IsString() ? std::string(v->GetString(), v->GetStringLength()) : std::string();
}

// A count such as token usage: 0 when absent, negative or not a number; capped at 2^62.
inline long long int_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = member(object, name);
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64() < 0 ? 0 : v->GetInt64();
  if (v->IsUint64())
    return static_cast<long long>(v->GetUint64() > (1ull << 62) ? (1ull << 62) : v->GetUint64());
  if (v->IsDouble() && v->GetDouble() >= 0)
    return v->GetDouble() < 4e18 ? static_cast<long long>(v->GetDouble()) : (1ll << 62);
  return 0;
}

// A string value holding `s` as valid UTF-8 (see valid_utf8).
inline rapidjson::Value string_value(std::string_view s, rapidjson::Document::AllocatorType& a) {
  const std::string text = valid_utf8(s);
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), a);
}

}  // namespace warden::reasoning::json
