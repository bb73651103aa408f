// Reading JSON that came from outside (requests, proposals, model answers, MCP lines, rule
// cases): one parser with one set of limits, and the member helpers every folder reads
// values with. Pure functions: thread-safe.
//
// parse() refuses, in this order and before RapidJSON builds anything:
//   - text longer than Limits::max_bytes                          (Refusal::kTooLarge)
//   - arrays/objects nested deeper than Limits::max_depth, or,
//     with Limits::refuse_lone_surrogates, a \u escape of a low
//     surrogate without its high one — whichever comes first     (kTooDeep, kLoneSurrogate)
//   - a zero written beyond 10^±22 (`0e66`, `0.0e60`, `0.` and 23 zeros): RapidJSON 1.1.0's
//     full-precision conversion misreads it as a number that is not zero
//                                       (kSyntax, kParseErrorNumberTooBig, at the number)
//   - a NUL byte: RapidJSON takes it as the end of input, so
//     `{…}\0anything` would parse as `{…}`                        (kNulByte)
// and then parses with kParseFlags (invalid UTF-8 is a syntax error, kSyntax).
// Each caller turns the refusal into its own error code and message.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cstddef>
#include <limits>
#include <string>
#include <string_view>

namespace warden::json {

// Every parse of outside text: bytes are checked to be UTF-8; the parser keeps its own stack
// (no recursion, however deep the text); numbers keep their full precision.
constexpr unsigned kParseFlags = rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseFullPrecisionFlag;

// Deeper than this is refused unless the caller says otherwise: RapidJSON's copies, writers
// and walks recurse once per level.
constexpr std::size_t kMaxDepth = 128;

struct Limits {
  std::size_t max_depth = kMaxDepth;
  std::size_t max_bytes = std::numeric_limits<std::size_t>::max();
  // RapidJSON decodes "\udc00" (a low surrogate alone) into bytes that are not UTF-8; a
  // reader that does not check its strings afterwards refuses such text here.
  bool refuse_lone_surrogates = false;

  // No depth limit: for text whose depth a configured limit checks later (a proposal the
  // daemon reads against limits.max_json_depth) or that the daemon wrote itself.
  static Limits any_depth() {
    Limits l;
    l.max_depth = std::numeric_limits<std::size_t>::max();
    return l;
  }
};

enum class Refusal { kNone, kTooLarge, kTooDeep, kLoneSurrogate, kNulByte, kSyntax };

struct Error {
  Refusal refusal = Refusal::kNone;
  std::size_t offset = 0;  // where: the byte that broke the limit or the syntax
  rapidjson::ParseErrorCode code = rapidjson::kParseErrorNone;  // kSyntax: RapidJSON's reason
  explicit operator bool() const { return refusal != Refusal::kNone; }
  // kSyntax: RapidJSON's English text for `code` ("Invalid value."); else "".
  const char* syntax() const {
    return refusal == Refusal::kSyntax ? rapidjson::GetParseError_En(code) : "";
  }
};

// The checks before parsing (depth, lone surrogates, misread zeros), one linear pass that
// skips strings:
// hostile input never reaches a recursive walk. Depth never drops below zero, so a stray
// closing bracket does not buy room for deeper nesting.
Error scan(std::string_view text, const Limits& limits = {});

// Parses `text` into *doc with kParseFlags after the refusals above; on a refusal *doc is
// left null (kTooLarge, kTooDeep, kLoneSurrogate, kNulByte) or as RapidJSON left it.
Error parse(std::string_view text, rapidjson::Document* doc, const Limits& limits = {});

// The member `name` of `object`, or nullptr when object is no object or has no such member.
const rapidjson::Value* member(const rapidjson::Value& object, const char* name);

// The string member `name` of `object` (embedded NULs kept), or "" when `object` is no
// object, has no such member or it is not a string.
std::string string_member(const rapidjson::Value& object, const char* name);

// `value` as compact JSON text, RapidJSON's writer (strings as they are held).
std::string to_text(const rapidjson::Value& value);

}  // namespace warden::json
