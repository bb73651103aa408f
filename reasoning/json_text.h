// Small RapidJSON helpers shared by the providers and Think: parse a text, write a value
// back as compact JSON, read optional members without throwing. Internal to reasoning/.
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "bindings/json.h"
#include "bindings/text.h"

namespace warden::reasoning::json {

// Deeper JSON than this is refused before parsing: RapidJSON's parser, copies and writers
// recurse once per level, and a hostile model or server can send megabytes of brackets.
constexpr int kMaxDepth = static_cast<int>(warden::json::kMaxDepth);

// The limits of every text the providers and Think read: the shared ones, and lone
// surrogate escapes refused before parsing (the values are handed on unchecked).
inline warden::json::Limits limits() {
  warden::json::Limits l;
  l.refuse_lone_surrogates = true;
  return l;
}

// Why `error` (not a syntax error) refused a text: "<what> at offset N".
inline std::string refusal_text(std::string_view text, const warden::json::Error& error) {
  using warden::json::Refusal;
  const std::string at = " at offset " + std::to_string(error.offset);
  switch (error.refusal) {
    case Refusal::kTooDeep:
      return "nested deeper than " + std::to_string(kMaxDepth) + " levels" + at;
    case Refusal::kLoneSurrogate:
      return "lone surrogate \\u" + std::string(text.substr(error.offset + 2, 4)) + at;
    case Refusal::kNulByte:
      return "NUL byte" + at;
    case Refusal::kTooLarge:
      return "text too large" + at;
    case Refusal::kSyntax:
      return std::string(error.syntax()) + at;
    case Refusal::kNone:
      break;
  }
  return {};
}

// What RapidJSON would accept but must not be parsed: nesting deeper than kMaxDepth, or a
// \u escape of a low surrogate without its high one (RapidJSON decodes it into bytes that
// are not UTF-8). "" when neither.
inline std::string refused(std::string_view text) {
  const warden::json::Error error = warden::json::scan(text, limits());
  return error ? refusal_text(text, error) : std::string();
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
// UTF-8 (also lone surrogates written as \u escapes), NUL bytes and nesting deeper than
// kMaxDepth.
inline std::string parse(std::string_view text, rapidjson::Document* doc) {
  const warden::json::Error error = warden::json::parse(text, doc, limits());
  return error ? refusal_text(text, error) : std::string();
}

inline std::string write(const rapidjson::Value& value) { return warden::json::to_text(value); }

using warden::json::member;
using warden::json::string_member;

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
