// libFuzzer target: the request parser (strict UTF-8 JSON, nesting limit, envelope shape),
// then what the decide path does with a parsed request: re-serialize the proposal and check
// the result is valid JSON again; and error replies built from what was parsed.
#include <rapidjson/document.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "protocol/json_text.h"
#include "protocol/message.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  warden::protocol::Request request;
  warden::protocol::ProtocolError e = warden::protocol::parse_request(text, 66, &request);
  std::string reply;
  if (e) {
    reply = warden::protocol::error_response(request.id_json, request.action, {e.code, e.message});
  } else {
    const rapidjson::Value& payload = request.payload();
    auto proposal = payload.FindMember("proposal");
    std::string fields;
    if (proposal != payload.MemberEnd()) {
      std::string json;
      // As the decide path: a proposal that cannot be written back as UTF-8 is refused.
      if (!warden::protocol::to_valid_json_text(proposal->value, &json)) return 0;
      rapidjson::Document again;
      again.Parse<rapidjson::kParseValidateEncodingFlag>(json.c_str(), json.size());
      if (again.HasParseError()) std::abort();
      fields = "\"proposal\":" + json;
    }
    reply = warden::protocol::ok_response(request.id_json, request.action, fields);
  }
  // Every reply the daemon builds must itself be valid JSON.
  rapidjson::Document check;
  check.Parse<rapidjson::kParseValidateEncodingFlag>(reply.c_str(), reply.size());
  if (check.HasParseError()) std::abort();
  return 0;
}
