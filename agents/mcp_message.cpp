// JSON-RPC lines of the MCP stdio transport (agents/mcp_message.h).
#include "agents/mcp_message.h"

#include "agents/json_strict.h"
#include "bindings/json.h"
#include "protocol/message.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace warden::agents::mcp {

namespace {

bool valid_id(const rapidjson::Value& id) { return id.IsString() || id.IsNumber() || id.IsNull(); }

void write_id(rapidjson::Writer<rapidjson::StringBuffer>& w, std::string_view id) {
  rapidjson::Document d;
  // The id's text as the gateway wrote it from a parsed id.
  if (warden::json::parse_stored(id, &d) || !valid_id(d)) {
    w.Null();
  } else {
    d.Accept(w);
  }
}

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void write_text(Writer& w, std::string_view text) {
  w.String(text.data() ? text.data() : "", static_cast<rapidjson::SizeType>(text.size()));
}

// `{"jsonrpc":"2.0","id":ID,"member":VALUE}`, a response to `id`: `value` writes VALUE.
template <typename WriteValue>
std::string response(std::string_view id, const char* member, WriteValue value) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.StartObject();
  w.Key("jsonrpc");
  w.String("2.0");
  w.Key("id");
  write_id(w, id);
  w.Key(member);
  value(w);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize());
}

}  // namespace

Message classify(const rapidjson::Value& m) {
  Message out;
  if (!m.IsObject()) {
    out.problem = "a JSON-RPC message must be an object";
    out.id = "null";
    return out;
  }
  auto id = m.FindMember("id");
  const bool has_id = id != m.MemberEnd();
  out.id = has_id && valid_id(id->value) ? protocol::to_json_text(id->value) : "null";
  auto version = m.FindMember("jsonrpc");
  if (version == m.MemberEnd() || !version->value.IsString() ||
      std::string_view(version->value.GetString(), version->value.GetStringLength()) != "2.0") {
    out.problem = "\"jsonrpc\" must be \"2.0\"";
    return out;
  }
  if (has_id && !valid_id(id->value)) {
    out.problem = "\"id\" must be a string, a number or null";
    return out;
  }
  auto method = m.FindMember("method");
  if (method != m.MemberEnd()) {
    if (!method->value.IsString()) {
      out.problem = "\"method\" must be a string";
      return out;
    }
    auto params = m.FindMember("params");
    if (params != m.MemberEnd() && !params->value.IsObject() && !params->value.IsArray()) {
      out.problem = "\"params\" must be an object or an array";
      return out;
    }
    out.method.assign(method->value.GetString(), method->value.GetStringLength());
    out.kind = has_id ? Kind::Request : Kind::Notification;
    return out;
  }
  const bool result = m.HasMember("result"), error = m.HasMember("error");
  if (has_id && (result != error)) {
    out.kind = Kind::Response;
    return out;
  }
  out.problem = "neither a request, a notification nor a response";
  return out;
}

Line parse_line(std::string_view text) {
  Line line;
  // The depth is json_unambiguous's to refuse (kMaxJsonDepth), after an iterative parse.
  if (const warden::json::Error e =
          warden::json::parse(text, &line.doc, warden::json::Limits::any_depth())) {
    line.error_code = kParseError;
    const char* why = e.refusal == warden::json::Refusal::kNulByte ? "NUL byte" : e.syntax();
    line.problem = std::string("not JSON: ") + why + " at byte " + std::to_string(e.offset);
    return line;
  }
  // One line, one reading: the server's JSON parser (JSON.parse, Python's json) keeps the
  // last of duplicate names where FindMember finds the first, and decodes a lone surrogate
  // escape to other bytes. Such a line is refused whole.
  if (std::string why;
      (line.doc.IsObject() || line.doc.IsArray()) && !json_unambiguous(line.doc, &why)) {
    line.error_code = kInvalidRequest;
    line.problem = "ambiguous message: " + why;
    if (line.doc.IsObject()) line.id = classify(line.doc).id;
    return line;
  }
  if (line.doc.IsArray()) {
    if (line.doc.Empty()) {
      line.error_code = kInvalidRequest;
      line.problem = "an empty batch";
      return line;
    }
    line.batch = true;
    for (const auto& m : line.doc.GetArray()) line.members.push_back(classify(m));
    line.ok = true;
    return line;
  }
  if (!line.doc.IsObject()) {
    line.error_code = kInvalidRequest;
    line.problem = "a JSON-RPC message must be an object or a batch array";
    return line;
  }
  line.members.push_back(classify(line.doc));
  line.id = line.members.back().id;
  line.ok = true;
  return line;
}

std::string error_response(std::string_view id, int code, std::string_view message) {
  return response(id, "error", [&](Writer& w) {
    w.StartObject();
    w.Key("code");
    w.Int(code);
    w.Key("message");
    write_text(w, message);
    w.EndObject();
  });
}

std::string refusal_response(std::string_view id, std::string_view text) {
  return response(id, "result", [&](Writer& w) {
    w.StartObject();
    w.Key("content");
    w.StartArray();
    w.StartObject();
    w.Key("type");
    w.String("text");
    w.Key("text");
    write_text(w, text);
    w.EndObject();
    w.EndArray();
    w.Key("isError");
    w.Bool(true);
    w.EndObject();
  });
}

std::string batch_of(const std::vector<std::string>& responses) {
  std::string out = "[";
  for (std::size_t i = 0; i < responses.size(); ++i) {
    if (i) out += ',';
    out += responses[i];  // each is JSON text this file wrote
  }
  out += ']';
  return out;
}

}  // namespace warden::agents::mcp
