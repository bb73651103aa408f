// Small RapidJSON helpers shared by the providers and Think: parse a text, write a value
// back as compact JSON, read optional members without throwing. Internal to reasoning/.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <string>
#include <string_view>

namespace warden::reasoning::json {

// Parses `text` into *doc; "" on success, else "<error> at offset N".
inline std::string parse(std::string_view text, rapidjson::Document* doc) {
  doc->Parse(text.data(), text.size());
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

inline long long int_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* v = member(object, name);
  if (!v) return 0;
  if (v->IsInt64()) return v->GetInt64();
  if (v->IsUint64())
    return static_cast<long long>(v->GetUint64() > (1ull << 62) ? (1ull << 62) : v->GetUint64());
  if (v->IsDouble() && v->GetDouble() >= 0 && v->GetDouble() < 4e18)
    return static_cast<long long>(v->GetDouble());
  return 0;
}

inline rapidjson::Value string_value(std::string_view s, rapidjson::Document::AllocatorType& a) {
  return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

}  // namespace warden::reasoning::json
