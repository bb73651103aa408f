// Request envelope parsing and the reply builders.
#include "protocol/message.h"

#include <catch2/catch.hpp>

#include "engine/diagnostic.h"
#include "protocol/json_text.h"

using namespace warden::protocol;
namespace err = warden::code;

namespace {
std::string code_of(const std::string& text, Request* request = nullptr) {
  Request local;
  Request* r = request ? request : &local;
  ProtocolError e = parse_request(text, 16, r);
  return e ? e.code : "";
}
}  // namespace

TEST_CASE("a well-formed request parses", "[server][protocol]") {
  Request r;
  REQUIRE(code_of(R"({"type":"request","id":"7","payload":{"action":"decide","proposal":{}}})",
                  &r) == "");
  CHECK(r.action == "decide");
  CHECK(r.id_json == "\"7\"");
  Request n;
  REQUIRE(code_of(R"({"type":"request","id":42,"payload":{"action":"status"}})", &n) == "");
  CHECK(n.id_json == "42");
  Request none;
  REQUIRE(code_of(R"({"type":"request","payload":{"action":"status"}})", &none) == "");
  CHECK(none.id_json == "null");
}

TEST_CASE("invalid JSON and invalid UTF-8 are E_BAD_JSON", "[server][protocol]") {
  CHECK(code_of("") == err::kBadJson);
  CHECK(code_of("{") == err::kBadJson);
  CHECK(code_of(R"({"type":"request"} trailing)") == err::kBadJson);
  CHECK(code_of(std::string("{\"type\":\"req\xff\"}")) == err::kBadJson);
  CHECK(code_of(std::string("{\"a\":\"\xc0\xaf\"}")) == err::kBadJson);  // overlong
  CHECK(code_of(std::string("{\"a\":1}\0", 8)) == err::kBadJson);
}

TEST_CASE("deep nesting is refused before any DOM is built", "[server][protocol]") {
  std::string deep(100000, '[');
  CHECK(code_of(deep) == err::kTooDeep);
  CHECK(nesting_exceeds("[[[]]]", 2));
  CHECK_FALSE(nesting_exceeds("[[[]]]", 3));
  CHECK_FALSE(nesting_exceeds(R"(["[[[[[[", "\"[[[["])", 1));
}

TEST_CASE("wrong envelope shapes are E_BAD_REQUEST and keep the id", "[server][protocol]") {
  Request r;
  CHECK(code_of(R"({"type":"event","id":"x","payload":{"action":"decide"}})", &r) ==
        err::kBadRequest);
  CHECK(r.id_json == "\"x\"");
  CHECK(code_of("[]") == err::kBadRequest);
  CHECK(code_of(R"({"type":"request"})") == err::kBadRequest);
  CHECK(code_of(R"({"type":"request","payload":[]})") == err::kBadRequest);
  CHECK(code_of(R"({"type":"request","payload":{"action":3}})") == err::kBadRequest);
  CHECK(code_of(R"({"type":"request","id":{},"payload":{"action":"x"}})") == err::kBadRequest);
}

TEST_CASE("replies are valid JSON with the id echoed", "[server][protocol]") {
  CHECK(ok_response("\"1\"", "status", "\"a\":1") ==
        R"({"type":"response","id":"1","payload":{"action":"status","ok":true,"a":1}})");
  // One shape for every error: action (null outside a request), code, message, diagnostics.
  CHECK(
      error_response("null", "", {"E_X", "m\"q"}) ==
      R"({"type":"response","id":null,"payload":{"action":null,"ok":false,"error":{"code":"E_X","message":"m\"q","diagnostics":[]}}})");
  CHECK(
      error_response("\"7\"", "reload", {"E_Y", "m", R"([{"code":"E_PARSE"}])", R"("a":1)"}) ==
      R"({"type":"response","id":"7","payload":{"action":"reload","ok":false,"error":{"code":"E_Y","message":"m","diagnostics":[{"code":"E_PARSE"}],"a":1}}})");
  CHECK(
      handshake_event(true, 10, 5) ==
      R"({"type":"event","payload":{"action":"handshake","version":"1","server":"warden","auth":"token","max_frame_bytes":10,"max_preauth_frame_bytes":5}})");
  CHECK(json_string(std::string("a\n\x01")) == R"("a\n\u0001")");
}

TEST_CASE("lone surrogate escapes never reach a reply as invalid UTF-8", "[server][protocol]") {
  // Found by fuzz_request: RapidJSON accepts "\udc3a" and decodes it to bytes that are not
  // UTF-8; echoing them made replies invalid.
  Request r;
  CHECK(code_of(R"({"type":"request","id":"1","payload":{"action":"de\udc3a"}})", &r) ==
        err::kBadJson);
  CHECK(r.id_json == "\"1\"");
  CHECK(code_of(R"({"type":"request","id":"\udc3a","payload":{"action":"x"}})", &r) ==
        err::kBadJson);
  CHECK(r.id_json == "null");
  // Each invalid byte becomes U+FFFD (EF BF BD).
  CHECK(json_string("a\xed\xb0\xba"
                    "b") ==
        "\"a\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
        "b\"");
  CHECK(json_string("\xc3\xa9\xf0\x9f\x98\x80") == "\"\xc3\xa9\xf0\x9f\x98\x80\"");
  CHECK(valid_utf8("\xc3\xa9"));
  CHECK_FALSE(valid_utf8("\xc0\xaf"));
  CHECK_FALSE(valid_utf8("\xed\xa0\x80"));
  CHECK_FALSE(valid_utf8("\xf4\x90\x80\x80"));
  std::string out;
  rapidjson::Document doc;
  doc.Parse(R"({"a":"\udc3a"})");
  REQUIRE_FALSE(doc.HasParseError());
  CHECK_FALSE(to_valid_json_text(doc, &out));
}

TEST_CASE("ambiguous keys anywhere in the document are E_BAD_REQUEST", "[server][protocol]") {
  CHECK(code_of(R"({"type":"request","payload":{"action":"a"},"payload":{"action":"b"}})") ==
        err::kBadRequest);
  CHECK(code_of(R"({"type":"request","Payload":{"action":"b"},"payload":{"action":"a"}})") ==
        err::kBadRequest);
  CHECK(code_of(R"({"type":"request","payload":{"action":"a","ACTION":"b"}})") == err::kBadRequest);
  CHECK(code_of(R"({"type":"request","TYPE":"event","payload":{"action":"a"}})") ==
        err::kBadRequest);
  CHECK(
      code_of(R"({"type":"request","payload":{"action":"a","p":[{"x":1},{"y":{"k":1,"k":2}}]}})") ==
      err::kBadRequest);
  // Same key in different objects is fine; so are keys that differ in more than case.
  CHECK(
      code_of(
          R"({"type":"request","payload":{"action":"a","p":{"action":1},"q":[{"k":1},{"k":2}]}})") ==
      "");
  // Non-ASCII letters are not folded: "É" and "é" are different keys.
  CHECK(
      code_of(
          "{\"type\":\"request\",\"payload\":{\"action\":\"a\",\"\xc3\x89\":1,\"\xc3\xa9\":2}}") ==
      "");
  rapidjson::Document doc;
  doc.Parse(R"({"a":{"b":[{"c":1,"C":2}]}})");
  ProtocolError e = check_keys(doc);
  REQUIRE(e);
  CHECK(e.message.find("a.b.[]") != std::string::npos);
}

// RapidJSON 1.1.0 read `0.` with 330 zeros and `1` as -4.3e+301 and, with 345 zeros, read past
// its table of powers (a crash of the daemon on any frame): the shared parser refuses a number
// below 10^-308 or from 10^309 up at its byte (bindings/json.h).
TEST_CASE("a request with a number RapidJSON would misread is refused at its byte",
          "[server][protocol]") {
  for (int zeros : {330, 345, 2000}) {
    const std::string text = R"({"type":"request","payload":{"action":"status","n":0.)" +
                             std::string(zeros, '0') + "1}}";
    Request r;
    const ProtocolError e = parse_request(text, 16, &r);
    CHECK(e.code == std::string(err::kBadJson));
    CHECK(e.message == "invalid JSON at byte " + std::to_string(text.find("0.")) +
                           ": Number too big to be stored in double.");
  }
}
