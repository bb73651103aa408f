// Reading JSON that came from outside (requests, proposals, model answers, MCP lines, rule
// cases): one parser with one set of limits, the member helpers every folder reads values
// with, and the one check of member names two readers could take apart. Thread-safe.
//
// parse() refuses, in this order and before RapidJSON builds anything:
//   - text longer than Limits::max_bytes                          (Refusal::kTooLarge)
//   - arrays/objects nested deeper than Limits::max_depth, or,
//     with Limits::refuse_lone_surrogates, a \u escape of a low
//     surrogate without its high one — whichever comes first     (kTooDeep, kLoneSurrogate)
//   - a zero written beyond 10^±22 (`0e66`, `0.0e60`, `0.` and 23 zeros), or a nonzero
//     number outside 10^-308 … 10^309 (`0.` and 330 zeros and `1`): RapidJSON 1.1.0's
//     full-precision conversion misreads it (another number, or a read past its table)
//                                       (kSyntax, kParseErrorNumberTooBig, at the number)
//   - a NUL byte: RapidJSON takes it as the end of input, so
//     `{…}\0anything` would parse as `{…}`                        (kNulByte)
// and then parses with kParseFlags (invalid UTF-8 is a syntax error, kSyntax).
// Each caller turns the refusal into its own error code and message.
//
// The daemon's own JSON (approval columns, audit records, decided actions, results) is read
// with parse_stored(): the same refusals at any depth (its depth was checked when it came in)
// and without the encoding check (RapidJSON's writer stores a string's bytes as they are, so
// a string the daemon kept reads back as kept); a file edited on disk still cannot hide text
// behind a NUL or change a number. Readers of many records parse in place (parse_insitu) or
// with SAX (read) after the same refusals.
#pragma once

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace warden::json {

// Every parse of outside text: bytes are checked to be UTF-8; the parser keeps its own stack
// (no recursion, however deep the text); numbers keep their full precision.
constexpr unsigned kParseFlags = rapidjson::kParseValidateEncodingFlag |
                                 rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseFullPrecisionFlag;

// The daemon's own JSON: kParseFlags without the encoding check (see parse_stored).
constexpr unsigned kStoredFlags = kParseFlags & ~rapidjson::kParseValidateEncodingFlag;

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
  // Why, in words: syntax() for kSyntax, else "NUL byte", "nested too deep", "lone surrogate
  // escape" or "text too large"; "" for kNone.
  const char* reason() const;
};

// The checks before parsing (depth, lone surrogates, misread zeros), one linear pass that
// skips strings:
// hostile input never reaches a recursive walk. Depth never drops below zero, so a stray
// closing bracket does not buy room for deeper nesting.
Error scan(std::string_view text, const Limits& limits = {});

// Parses `text` into *doc with kParseFlags after the refusals above; on a refusal *doc is
// left null (kTooLarge, kTooDeep, kLoneSurrogate, kNulByte) or as RapidJSON left it.
Error parse(std::string_view text, rapidjson::Document* doc, const Limits& limits = {});

// parse() of the daemon's own JSON: Limits::any_depth() and kStoredFlags.
Error parse_stored(std::string_view text, rapidjson::Document* doc);

// The refusals parse() makes before parsing (size, scan, NUL byte). `converts_numbers` false:
// the reader keeps numbers as their text (kParseNumbersAsStringsFlag), so no zero is misread
// and none is refused.
Error precheck(std::string_view text, const Limits& limits, bool converts_numbers = true);

// parse() in place: *buffer is parsed in situ (the document's strings point into it), for
// readers of many records that must not copy each one, into any RapidJSON document type.
// kFlags: kParseFlags, or kStoredFlags for the daemon's own records.
template <unsigned kFlags = kParseFlags, class Document>
Error parse_insitu(std::string* buffer, Document* doc, const Limits& limits = {}) {
  static_assert(kFlags & rapidjson::kParseIterativeFlag, "hostile text must not recurse");
  doc->SetNull();
  if (Error e = precheck(*buffer, limits)) return e;
  doc->template ParseInsitu<kFlags>(buffer->data());
  if (doc->HasParseError()) return {Refusal::kSyntax, doc->GetErrorOffset(), doc->GetParseError()};
  return {};
}

// SAX: the refusals of parse(), then RapidJSON's Reader over `stream` (which reads `text`)
// into `handler`; a handler that stops the parse gives kSyntax/kParseErrorTermination. kFlags
// is kParseFlags or kStoredFlags, with kParseNumbersAsStringsFlag added by a reader that keeps
// numbers as written.
template <unsigned kFlags = kParseFlags, class Stream, class Handler>
Error read(std::string_view text, Stream& stream, Handler& handler, const Limits& limits = {}) {
  static_assert(kFlags & rapidjson::kParseIterativeFlag, "hostile text must not recurse");
  if (Error e = precheck(text, limits, !(kFlags & rapidjson::kParseNumbersAsStringsFlag))) return e;
  rapidjson::Reader reader;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, handler);
  if (!result) return {Refusal::kSyntax, result.Offset(), result.Code()};
  return {};
}

// read() over the bytes of `text`.
template <unsigned kFlags = kParseFlags, class Handler>
Error read(std::string_view text, Handler& handler, const Limits& limits = {}) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  return read<kFlags>(text, stream, handler, limits);
}

// The member `name` of `object`, or nullptr when object is no object or has no such member.
const rapidjson::Value* member(const rapidjson::Value& object, const char* name);

// The string member `name` of `object` (embedded NULs kept), or "" when `object` is no
// object, has no such member or it is not a string.
std::string string_member(const rapidjson::Value& object, const char* name);

// `value` as compact JSON text, RapidJSON's writer (strings as they are held).
std::string to_text(const rapidjson::Value& value);
// `value` as JSON text for people, RapidJSON's PrettyWriter: a member or element a line,
// indented `indent` spaces a level; no newline after the last line.
std::string to_pretty_text(const rapidjson::Value& value, unsigned indent);

// Member names two readers could take for different members. RapidJSON keeps every member
// and FindMember finds the first of two equal names, where JSON.parse and Python keep the
// last; a case-insensitive consumer (HTTP headers, a rule reading lower case) merges
// `Command` and `command`; a C-string reader stops at a NUL. Each reader of outside JSON
// says which of these it refuses and in what words.
struct KeyRules {
  bool fold_case = false;   // names equal up to ASCII letter case are one name
  bool refuse_nul = false;  // a name holding a NUL byte is refused
};

enum class KeyFault { kNone, kRepeated, kNul };

struct KeyClash {
  KeyFault fault = KeyFault::kNone;
  std::string_view name;     // the refused name, as written
  std::string_view earlier;  // kRepeated: the first earlier name of its object that it repeats
  explicit operator bool() const { return fault != KeyFault::kNone; }
};

// The steps from a document's root to one of its objects: a member's name, or nullopt for an
// array element.
using KeyPath = std::vector<std::optional<std::string_view>>;

// The names of one object's members, met in order: a reader that walks a document its own
// way (and checks more on the way) asks at each name. Small objects are compared pairwise
// (nothing allocated); past kPairwise names, a map of the (folded) names.
class MemberNames {
 public:
  explicit MemberNames(KeyRules rules = {}) : rules_(rules) {}
  // The next object's names follow.
  void clear() {
    count_ = 0;
    if (many_) many_->clear();
  }
  // The next name of the object: a NUL in it (refuse_nul), or an earlier name it repeats.
  KeyClash add(std::string_view name) {
    if (rules_.refuse_nul && name.find('\0') != std::string_view::npos)
      return {KeyFault::kNul, name, {}};
    if (count_ == kPairwise) return add_many(name);
    for (std::size_t i = 0; i < count_; ++i) {
      const std::string_view seen(few_[i].data, few_[i].size);
      if (same(seen, name)) return {KeyFault::kRepeated, name, seen};
    }
    few_[count_++] = {name.data(), name.size()};
    return {};
  }

 private:
  struct Seen {
    const char* data;
    std::size_t size;
  };
  static constexpr std::size_t kPairwise = 24;

  static char fold(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
  bool same(std::string_view a, std::string_view b) const {
    if (a.size() != b.size()) return false;
    if (!rules_.fold_case) return a == b;
    for (std::size_t i = 0; i < a.size(); ++i)
      if (fold(a[i]) != fold(b[i])) return false;
    return true;
  }
  // add() past kPairwise names: through the map.
  KeyClash add_many(std::string_view name);

  KeyRules rules_;
  std::size_t count_ = 0;
  // The first names, set only below count_: most objects have a few names, and nothing is
  // cleared or allocated for them.
  Seen few_[kPairwise];
  // Past kPairwise names: (folded) name -> the first as written.
  std::unique_ptr<std::unordered_map<std::string, std::string_view>> many_;
};

// The first refused name at any depth of `root`, objects taken breadth first (the root's
// names, then its children's, …) and each object's names in order; no fault when none is.
// With `path`, a refusal also says where its object is. Iterative: any depth.
KeyClash ambiguous_keys(const rapidjson::Value& root, KeyRules rules = {}, KeyPath* path = nullptr);

}  // namespace warden::json
