// Messages of the daemon protocol (SPEC §3, §5; docs/PROTOCOL.md): parsing a frame payload
// into a request envelope and building response, error and handshake messages.
// Pure functions over text; safe from any thread.
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace warden::protocol {

inline constexpr const char* kProtocolVersion = "1";

// A parsed request: {"type":"request","id":…,"payload":{"action":"…",…}}.
struct Request {
  std::string id_json = "null";  // the client's id as JSON text (string, number or null)
  std::string action;
  rapidjson::Document document;  // the whole envelope

  const rapidjson::Value& payload() const { return document["payload"]; }
};

struct ProtocolError {
  const char* code = nullptr;  // nullptr: no error
  std::string message;
  explicit operator bool() const { return code != nullptr; }
};

// Parses one frame payload. Strict: valid UTF-8 JSON (RapidJSON with encoding validation,
// iterative parsing), nesting at most max_depth, one meaning per key (check_keys), the
// envelope shape above. On error, request->id_json still holds the id when it could be read
// (not when the keys are ambiguous), so the error can echo it.
ProtocolError parse_request(std::string_view text, std::size_t max_depth, Request* request);

// E_BAD_REQUEST when any object in the document (the proposal included) repeats a key or
// has two keys that differ only in ASCII letter case: parsers disagree on which one wins.
ProtocolError check_keys(const rapidjson::Value& root);

// {"type":"response","id":ID,"payload":{"action":A,"ok":true<,fields>}}; fields is a list of
// JSON members without braces ("\"decision\":{…}") or empty.
std::string ok_response(std::string_view id_json, std::string_view action,
                        std::string_view fields = {});
// The body of an error reply. `code` is one of the stable codes (warden::code::kTable).
struct ErrorBody {
  ErrorBody(std::string_view code, std::string_view message, std::string_view diagnostics = {},
            std::string_view details = {})
      : code(code), message(message), diagnostics(diagnostics), details(details) {}
  std::string_view code;
  std::string_view message;
  std::string_view diagnostics;  // JSON array of diagnostics; empty means []
  std::string_view details;      // further members of "error" without braces, or empty
};
// Every error reply of the daemon has this one shape (docs/PROTOCOL.md, "Errors"):
// {"type":"response","id":ID,"payload":{"action":A|null,"ok":false,
//   "error":{"code":C,"message":M,"diagnostics":[…]<,details>}}}; action null when empty.
std::string error_response(std::string_view id_json, std::string_view action,
                           const ErrorBody& error);
// The first message on every connection. preauth_frame_bytes: the frame limit until auth.
std::string handshake_event(bool auth_required, std::size_t max_frame_bytes,
                            std::size_t preauth_frame_bytes);

// The member `name` of an object value, or nullptr (also when value is not an object).
const rapidjson::Value* find_member(const rapidjson::Value& value, const char* name);
rapidjson::Value* find_member(rapidjson::Value& value, const char* name);

// Optional request fields: payload.NAME absent leaves *out as it is (true); present with
// another type, too long or out of range is false with *error naming the field.
bool string_field(const rapidjson::Value& payload, const char* name, std::size_t max,
                  std::string* out, std::string* error);
bool int_field(const rapidjson::Value& payload, const char* name, std::int64_t lo, std::int64_t hi,
               std::int64_t* out, std::string* error);

// Serializes a RapidJSON value (already depth-checked) to compact JSON text.
std::string to_json_text(const rapidjson::Value& value);
// The same, refusing strings that are not valid UTF-8 (a lone "\udc00" escape parses but
// cannot be written back). False on such a string.
bool to_valid_json_text(const rapidjson::Value& value, std::string* out);

}  // namespace warden::protocol
