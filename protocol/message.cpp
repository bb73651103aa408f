#include "protocol/message.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <optional>

#include "engine/diagnostic.h"
#include "protocol/json_text.h"

namespace warden::protocol {

namespace {

std::string quoted(std::string_view name) {
  return "\"" + std::string(name.substr(0, 64)) + (name.size() > 64 ? "…" : "") + "\"";
}

// Where a clash is: "the request", or the steps to its object joined with '.' ("[]" for an
// array element or an empty name), each cut at 64 bytes.
std::string path_of(const json::KeyPath& path) {
  if (path.empty()) return "the request";
  std::string out;
  for (const std::optional<std::string_view>& step : path) {
    if (!out.empty()) out += '.';
    out += !step || step->empty() ? std::string_view("[]") : step->substr(0, 64);
  }
  return out;
}

}  // namespace

ProtocolError check_keys(const rapidjson::Value& root) {
  json::KeyPath path;
  const json::KeyClash clash = json::ambiguous_keys(root, {.fold_case = true}, &path);
  if (!clash) return {};
  if (clash.earlier == clash.name)
    return {code::kBadRequest, "duplicate key " + quoted(clash.name) + " in " + path_of(path)};
  return {code::kBadRequest, "keys " + quoted(clash.earlier) + " and " + quoted(clash.name) +
                                 " in " + path_of(path) + " differ only in letter case"};
}

ProtocolError parse_request(std::string_view text, std::size_t max_depth, Request* request) {
  request->id_json = "null";
  request->action.clear();
  json::Limits limits;
  limits.max_depth = max_depth;
  rapidjson::Document& doc = request->document;
  if (const json::Error e = json::parse(text, &doc, limits)) {
    switch (e.refusal) {
      case json::Refusal::kTooDeep:
        return {code::kTooDeep, "JSON nests deeper than " + std::to_string(max_depth) + " levels"};
      case json::Refusal::kNulByte:
        return {code::kBadJson, "invalid JSON: NUL byte"};
      default:
        return {code::kBadJson,
                "invalid JSON at byte " + std::to_string(e.offset) + ": " + e.syntax()};
    }
  }
  if (!doc.IsObject()) return {code::kBadRequest, "a request must be a JSON object"};
  if (ProtocolError e = check_keys(doc)) return e;
  if (const rapidjson::Value* id = find_member(doc, "id")) {
    if (id->IsString() || id->IsNumber() || id->IsNull()) {
      if (id->IsString() && id->GetStringLength() > 256) {
        return {code::kBadRequest, "\"id\" is longer than 256 bytes"};
      }
      if (!to_valid_json_text(*id, &request->id_json)) {
        request->id_json = "null";
        return {code::kBadJson, "\"id\" is not valid UTF-8 (lone surrogate escape)"};
      }
    } else {
      return {code::kBadRequest, "\"id\" must be a string, a number or null"};
    }
  }
  const rapidjson::Value* type = find_member(doc, "type");
  if (!type || !type->IsString() ||
      std::string_view(type->GetString(), type->GetStringLength()) != "request") {
    return {code::kBadRequest, "\"type\" must be \"request\""};
  }
  const rapidjson::Value* payload = find_member(doc, "payload");
  if (!payload || !payload->IsObject()) {
    return {code::kBadRequest, "\"payload\" must be an object"};
  }
  const rapidjson::Value* action = find_member(*payload, "action");
  if (!action || !action->IsString()) {
    return {code::kBadRequest, "\"payload.action\" must be a string"};
  }
  std::string_view name(action->GetString(), action->GetStringLength());
  if (!valid_utf8(name)) return {code::kBadJson, "\"payload.action\" is not valid UTF-8"};
  request->action.assign(name);
  return {};
}

std::string ok_response(std::string_view id_json, std::string_view action,
                        std::string_view fields) {
  std::string out;
  out.reserve(64 + id_json.size() + action.size() + fields.size());
  out += "{\"type\":\"response\",\"id\":";
  out += id_json;
  out += ",\"payload\":{\"action\":";
  append_json_string(out, action);
  out += ",\"ok\":true";
  if (!fields.empty()) {
    out += ',';
    out += fields;
  }
  out += "}}";
  return out;
}

std::string error_response(std::string_view id_json, std::string_view action,
                           const ErrorBody& error) {
  std::string_view diagnostics = error.diagnostics.empty() ? "[]" : error.diagnostics;
  std::string out;
  out.reserve(112 + id_json.size() + error.message.size() + diagnostics.size() +
              error.details.size());
  out += "{\"type\":\"response\",\"id\":";
  out += id_json;
  out += ",\"payload\":{\"action\":";
  if (action.empty()) {
    out += "null";
  } else {
    append_json_string(out, action);
  }
  out += ",\"ok\":false,\"error\":{\"code\":";
  append_json_string(out, error.code);
  out += ",\"message\":";
  append_json_string(out, error.message);
  out += ",\"diagnostics\":";
  out += diagnostics;
  if (!error.details.empty()) {
    out += ',';
    out += error.details;
  }
  out += "}}}";
  return out;
}

std::string handshake_event(bool auth_required, std::size_t max_frame_bytes,
                            std::size_t preauth_frame_bytes) {
  std::string out = "{\"type\":\"event\",\"payload\":{\"action\":\"handshake\",\"version\":\"";
  out += kProtocolVersion;
  out += "\",\"server\":\"warden\",\"auth\":";
  out += auth_required ? "\"token\"" : "\"none\"";
  out += ",\"max_frame_bytes\":";
  out += std::to_string(max_frame_bytes);
  out += ",\"max_preauth_frame_bytes\":";
  out += std::to_string(preauth_frame_bytes);
  out += "}}";
  return out;
}

const rapidjson::Value* find_member(const rapidjson::Value& value, const char* name) {
  if (!value.IsObject()) return nullptr;
  for (const auto& member : value.GetObject()) {
    if (member.name.IsString() &&
        std::string_view(member.name.GetString(), member.name.GetStringLength()) == name) {
      return &member.value;
    }
  }
  return nullptr;
}

bool string_field(const rapidjson::Value& payload, const char* name, std::size_t max,
                  std::string* out, std::string* error) {
  const rapidjson::Value* v = find_member(payload, name);
  if (!v) return true;
  if (!v->IsString()) {
    *error = std::string("\"payload.") + name + "\" must be a string";
    return false;
  }
  if (v->GetStringLength() > max) {
    *error =
        std::string("\"payload.") + name + "\" is longer than " + std::to_string(max) + " bytes";
    return false;
  }
  out->assign(v->GetString(), v->GetStringLength());
  return true;
}

bool int_field(const rapidjson::Value& payload, const char* name, std::int64_t lo, std::int64_t hi,
               std::int64_t* out, std::string* error) {
  const rapidjson::Value* v = find_member(payload, name);
  if (!v) return true;
  if (!v->IsInt64() || v->GetInt64() < lo || v->GetInt64() > hi) {
    *error = std::string("\"payload.") + name + "\" must be an integer from " + std::to_string(lo) +
             " to " + std::to_string(hi);
    return false;
  }
  *out = v->GetInt64();
  return true;
}

rapidjson::Value* find_member(rapidjson::Value& value, const char* name) {
  return const_cast<rapidjson::Value*>(
      find_member(static_cast<const rapidjson::Value&>(value), name));
}

bool to_valid_json_text(const rapidjson::Value& value, std::string* out) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                    rapidjson::CrtAllocator, rapidjson::kWriteValidateEncodingFlag>
      writer(buffer);
  if (!value.Accept(writer)) return false;
  out->assign(buffer.GetString(), buffer.GetSize());
  return true;
}

std::string to_json_text(const rapidjson::Value& value) { return json::to_text(value); }

}  // namespace warden::protocol
