// Tests for warden::json (bindings/json.h): the one parser of outside JSON text, its limits
// and refusals in order, and the member helpers. Run with: bindings_tests "[json]".
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "bindings/json.h"

using namespace std::string_literals;
namespace wjson = warden::json;
using warden::json::Refusal;
namespace json = warden::json;

namespace {

wjson::Error parse_text(const std::string& text, const wjson::Limits& limits = {}) {
  rapidjson::Document doc;
  return wjson::parse(text, &doc, limits);
}

// `number` inside a document is refused at its first byte as too big, read as outside text
// and as the daemon's own.
void check_number_refused(const std::string& number) {
  const std::string text = "{\"a\":[1," + number + "]}";
  rapidjson::Document doc;
  const wjson::Error e = wjson::parse(text, &doc, wjson::Limits::any_depth());
  CHECK(e.refusal == Refusal::kSyntax);
  CHECK(e.code == rapidjson::kParseErrorNumberTooBig);
  CHECK(e.offset == 8);  // the number's first byte
  CHECK(wjson::parse_stored(text, &doc).offset == 8);
}

}  // namespace

TEST_CASE("wjson::parse reads valid text into the document", "[json]") {
  rapidjson::Document doc;
  const wjson::Error e = wjson::parse(R"({"a":[1,2,{"b":"c"}],"n":null})", &doc);
  CHECK_FALSE(e);
  CHECK(e.refusal == Refusal::kNone);
  REQUIRE(doc.IsObject());
  CHECK(doc["a"].Size() == 3);
  CHECK(std::string(e.syntax()).empty());
}

TEST_CASE("wjson::parse refuses invalid UTF-8 as a syntax error at its offset", "[json]") {
  for (const std::string& bad : {"{\"a\":\"\xC0\xAF\"}"s, "{\"a\":\"\xFF\"}"s, "\"\xED\xA0\x80\""s,
                                 "{\"a\":\"\xE2\x82\"}"s}) {
    const wjson::Error e = parse_text(bad);
    CHECK(e.refusal == Refusal::kSyntax);
    CHECK(e.code == rapidjson::kParseErrorStringInvalidEncoding);
    CHECK(std::string(e.syntax()) ==
          rapidjson::GetParseError_En(rapidjson::kParseErrorStringInvalidEncoding));
  }
  CHECK(parse_text("{\"a\":\"caf\xC3\xA9\"}").refusal == Refusal::kNone);
}

TEST_CASE("wjson::parse refuses a NUL byte, which RapidJSON would take as the end", "[json]") {
  const wjson::Error e = parse_text("{\"a\":1}\0{\"b\":2}"s);
  CHECK(e.refusal == Refusal::kNulByte);
  CHECK(e.offset == 7);
  CHECK(parse_text("\0"s).refusal == Refusal::kNulByte);
  // A NUL written as an escape is text, not the end of input.
  CHECK(parse_text(R"({"a":"\u0000"})").refusal == Refusal::kNone);
}

TEST_CASE("wjson::parse refuses nesting deeper than the limit before parsing", "[json]") {
  CHECK(
      parse_text(std::string(wjson::kMaxDepth, '[') + std::string(wjson::kMaxDepth, ']')).refusal ==
      Refusal::kNone);
  const wjson::Error e =
      parse_text(std::string(wjson::kMaxDepth + 1, '[') + std::string(wjson::kMaxDepth + 1, ']'));
  CHECK(e.refusal == Refusal::kTooDeep);
  CHECK(e.offset == wjson::kMaxDepth);
  // Megabytes of brackets: refused at the first level too many, no stack used.
  CHECK(parse_text(std::string(4 << 20, '{')).refusal == Refusal::kTooDeep);
  CHECK(parse_text(std::string(4 << 20, '[')).offset == wjson::kMaxDepth);
  // Objects and arrays count alike; brackets inside strings do not count.
  CHECK(parse_text(R"({"a":[{"b":[1]}]})", wjson::Limits{3}).refusal == Refusal::kTooDeep);
  CHECK(parse_text(R"({"a":[{"b":[1]}]})", wjson::Limits{4}).refusal == Refusal::kNone);
  CHECK(parse_text(R"(["[[[[[[", "\"[[[["])", wjson::Limits{1}).refusal == Refusal::kNone);
  // Stray closing brackets do not buy depth.
  CHECK(parse_text("]]]]" + std::string(wjson::kMaxDepth + 1, '[')).refusal == Refusal::kTooDeep);
}

TEST_CASE("wjson::Limits::any_depth leaves the depth to the caller, still without recursion",
          "[json]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  rapidjson::Document doc;
  CHECK_FALSE(wjson::parse(deep, &doc, wjson::Limits::any_depth()));
  CHECK(doc.IsArray());
  CHECK(parse_text("[1]\0"s, wjson::Limits::any_depth()).refusal == Refusal::kNulByte);
  CHECK(parse_text("[\"\xFF\"]", wjson::Limits::any_depth()).refusal == Refusal::kSyntax);
}

TEST_CASE("wjson::parse refuses text over max_bytes", "[json]") {
  wjson::Limits limits;
  limits.max_bytes = 8;
  CHECK(parse_text("[1,2,3]", limits).refusal == Refusal::kNone);
  CHECK(parse_text("[1,2,3,4]", limits).refusal == Refusal::kTooLarge);
}

TEST_CASE("wjson::parse refuses lone low surrogate escapes when asked", "[json]") {
  wjson::Limits strict;
  strict.refuse_lone_surrogates = true;
  const wjson::Error e = parse_text(R"({"a":"x\udc3a"})", strict);
  CHECK(e.refusal == Refusal::kLoneSurrogate);
  CHECK(e.offset == 7);
  CHECK(parse_text(R"({"a":"\uD83D\uDE00"})", strict).refusal == Refusal::kNone);  // a pair
  CHECK(parse_text(R"({"a":"\ud83dx\ude00"})", strict).refusal == Refusal::kLoneSurrogate);
  CHECK(parse_text(R"({"a":"\\udc3a"})", strict).refusal ==
        Refusal::kNone);  // an escaped backslash
  // A high surrogate alone is RapidJSON's own error.
  CHECK(parse_text(R"({"a":"\ud83d"})", strict).code ==
        rapidjson::kParseErrorStringUnicodeSurrogateInvalid);
  // Without the option RapidJSON decodes it; the caller checks its strings itself.
  CHECK(parse_text(R"({"a":"\udc3a"})").refusal == Refusal::kNone);
  // Whichever comes first in the text is named.
  strict.max_depth = 2;
  CHECK(parse_text(R"([["\udc3a",[1]]])", strict).refusal == Refusal::kLoneSurrogate);
  CHECK(parse_text(R"([[[1],"\udc3a"]])", strict).refusal == Refusal::kTooDeep);
}

TEST_CASE("wjson::parse keeps huge numbers and duplicate keys as RapidJSON reads them", "[json]") {
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse(R"({"n":123456789012345678901234567890,"k":1,"k":2})", &doc));
  CHECK(doc["n"].IsDouble());
  CHECK(wjson::to_text(doc["n"]) == "1.2345678901234568e29");
  CHECK(doc.MemberCount() ==
        3);  // duplicates are the caller's to refuse (json_unambiguous, check_keys)
  CHECK(wjson::parse("[1e400]", &doc).code == rapidjson::kParseErrorNumberTooBig);
  // Full precision: the value written is the value read.
  REQUIRE_FALSE(wjson::parse("[1.5e-30,0.1,9007199254740993]", &doc));
  CHECK(wjson::to_text(doc) == "[1.5e-30,0.1,9007199254740993]");
}

TEST_CASE("wjson::parse reports syntax errors with RapidJSON's code and offset", "[json]") {
  const wjson::Error e = parse_text(R"({"a":})");
  CHECK(e.refusal == Refusal::kSyntax);
  CHECK(e.code == rapidjson::kParseErrorValueInvalid);
  CHECK(e.offset == 5);
  CHECK(parse_text("").code == rapidjson::kParseErrorDocumentEmpty);
  CHECK(parse_text("{} {}").code == rapidjson::kParseErrorDocumentRootNotSingular);
}

TEST_CASE("wjson::member and string_member read optional members without throwing", "[json]") {
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse(R"({"s":"a\u0000b","n":1,"o":{}})", &doc));
  CHECK(wjson::string_member(doc, "s") == "a\0b"s);
  CHECK(wjson::string_member(doc, "n").empty());
  CHECK(wjson::string_member(doc, "missing").empty());
  CHECK(wjson::string_member(doc["n"], "s").empty());  // not an object
  CHECK(wjson::member(doc, "o") == &doc["o"]);
  CHECK(wjson::member(doc, "missing") == nullptr);
  CHECK(wjson::member(doc["s"], "x") == nullptr);
}

TEST_CASE("wjson::to_text writes compact JSON", "[json]") {
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse(R"( { "a" : [ 1 , "x\"y" , null , true ] , "b" : { } } )", &doc));
  CHECK(wjson::to_text(doc) == R"({"a":[1,"x\"y",null,true],"b":{}})");
  CHECK(wjson::to_text(doc["a"][1]) == R"("x\"y")");
}

TEST_CASE("wjson::to_pretty_text writes a member or element a line, indented as asked", "[json]") {
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse(R"({"a":[1,"x\"y",null],"b":{},"c":[],"d":{"e":true}})", &doc));
  CHECK(wjson::to_pretty_text(doc, 2) ==
        "{\n"
        "  \"a\": [\n"
        "    1,\n"
        "    \"x\\\"y\",\n"
        "    null\n"
        "  ],\n"
        "  \"b\": {},\n"
        "  \"c\": [],\n"
        "  \"d\": {\n"
        "    \"e\": true\n"
        "  }\n"
        "}");
  CHECK(wjson::to_pretty_text(doc["d"], 4) == "{\n    \"e\": true\n}");
  CHECK(wjson::to_pretty_text(doc["a"][0], 2) == "1");
}

TEST_CASE(
    "json: a zero beyond 10^22 is refused where RapidJSON would misread it; others read as written",
    "[json]") {
  // RapidJSON 1.1.0's full-precision conversion normalizes a zero significand with
  // __builtin_clzll(0): `0e66` read as 2.1e-109 or 1.8e+47, depending on the build.
  for (const std::string number :
       {"0e66", "-0e66", "0e23", "0E+40", "0e-23", "0.0e60", "0.00000000000000000000000",
        "0.000000000000000000000000000000e5", "-0.0000000000000000000000000e0"}) {
    INFO(number);
    check_number_refused(number);
  }
  for (const std::string number : {"0", "-0", "0.0", "0e22", "0e-22", "0.0000000000000000000000",
                                   "0e0", "1e66", "0.5e-30", "100e-40", "1e-300"}) {
    INFO(number);
    rapidjson::Document doc;
    REQUIRE_FALSE(json::parse("[" + number + "]", &doc));
    CHECK(doc[0].GetDouble() == std::stod(number));
  }
  // Digits in strings and keys are not numbers.
  rapidjson::Document doc;
  CHECK_FALSE(json::parse(R"({"0e66":"0e66 0.0e60"})", &doc));
}

TEST_CASE("wjson::Error::reason names every refusal in words", "[json]") {
  wjson::Limits strict;
  strict.refuse_lone_surrogates = true;
  strict.max_bytes = 64;
  strict.max_depth = 2;
  CHECK(std::string(parse_text("[1]", strict).reason()).empty());
  CHECK(std::string(parse_text(std::string(65, ' '), strict).reason()) == "text too large");
  CHECK(std::string(parse_text("[[[1]]]", strict).reason()) == "nested too deep");
  CHECK(std::string(parse_text(R"(["\udc00"])", strict).reason()) == "lone surrogate escape");
  CHECK(std::string(parse_text("[1]\0"s, strict).reason()) == "NUL byte");
  CHECK(std::string(parse_text("[1,]", strict).reason()) ==
        rapidjson::GetParseError_En(rapidjson::kParseErrorValueInvalid));
}

TEST_CASE("wjson::parse_stored reads the daemon's own text: any depth, bytes as written",
          "[json]") {
  rapidjson::Document doc;
  // RapidJSON's writer stores a string's bytes as they are: they read back the same.
  REQUIRE_FALSE(wjson::parse_stored("{\"r\":\"w\xff\"}", &doc));
  CHECK(wjson::string_member(doc, "r") == "w\xff");
  CHECK(parse_text("{\"r\":\"w\xff\"}").code == rapidjson::kParseErrorStringInvalidEncoding);
  const std::string deep = std::string(1000, '[') + std::string(1000, ']');
  CHECK_FALSE(wjson::parse_stored(deep, &doc));
  // What an edit on disk could hide or change is refused as in outside text.
  const wjson::Error nul = wjson::parse_stored("[1]\0[2]"s, &doc);
  CHECK(nul.refusal == Refusal::kNulByte);
  CHECK(nul.offset == 3);
  CHECK(doc.IsNull());
  const wjson::Error zero = wjson::parse_stored("[0e66]", &doc);
  CHECK(zero.code == rapidjson::kParseErrorNumberTooBig);
  CHECK(zero.offset == 1);
  CHECK(wjson::parse_stored("[1] [2]", &doc).code == rapidjson::kParseErrorDocumentRootNotSingular);
  // Full precision, as parse().
  REQUIRE_FALSE(wjson::parse_stored("[0.1,9007199254740993]", &doc));
  CHECK(wjson::to_text(doc) == "[0.1,9007199254740993]");
}

TEST_CASE("wjson::parse_insitu refuses as parse does and parses the buffer in place", "[json]") {
  std::string buffer = R"({"a":["x",1.5]})";
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse_insitu(&buffer, &doc));
  CHECK(wjson::string_member(doc, "a").empty());
  CHECK(wjson::to_text(doc) == R"({"a":["x",1.5]})");
  // Strings point into the buffer.
  CHECK(doc["a"][0].GetString() >= buffer.data());
  CHECK(doc["a"][0].GetString() < buffer.data() + buffer.size());
  for (std::string text : {"{\"a\":1}\0{\"b\":2}"s, "{} {}"s, "[\"\xFF\"]"s, "[0e66]"s,
                           std::string(wjson::kMaxDepth + 1, '[')}) {
    INFO(text);
    std::string copy = text;
    const wjson::Error e = wjson::parse_insitu(&copy, &doc);
    CHECK(e.refusal == parse_text(text).refusal);
    CHECK(e.code == parse_text(text).code);
    CHECK(e.offset == parse_text(text).offset);
  }
  // The daemon's own records: kStoredFlags, bytes as written.
  std::string stored = "[\"w\xff\"]";
  REQUIRE_FALSE(
      wjson::parse_insitu<wjson::kStoredFlags>(&stored, &doc, wjson::Limits::any_depth()));
  CHECK(std::string(doc[0].GetString()) == "w\xff");
}

namespace {

// Counts SAX events and keeps the raw numbers it is handed.
struct Events : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Events> {
  int count = 0;
  std::string numbers;
  bool stop_at = false;
  bool Default() {
    ++count;
    return !stop_at;
  }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    numbers.append(s, n).push_back(' ');
    return Default();
  }
};

}  // namespace

TEST_CASE("wjson::read gives SAX readers the same refusals before the first event", "[json]") {
  Events events;
  REQUIRE_FALSE(wjson::read(R"({"a":[1,"x",null]})", events));
  CHECK(events.count == 8);
  for (const std::string& text :
       {"[1]\0[2]"s, "[\"\xFF\"]"s, "[0e66]"s, "[1,]"s, std::string(wjson::kMaxDepth + 1, '[')}) {
    INFO(text);
    Events e;
    const wjson::Error error = wjson::read(text, e);
    CHECK(error.refusal == parse_text(text).refusal);
    CHECK(error.code == parse_text(text).code);
    CHECK(error.offset == parse_text(text).offset);
  }
  // A handler that stops: RapidJSON's termination, at the value it stopped on.
  Events stopping;
  stopping.stop_at = true;
  const wjson::Error stopped = wjson::read("[[1]]", stopping);
  CHECK(stopped.refusal == Refusal::kSyntax);
  CHECK(stopped.code == rapidjson::kParseErrorTermination);
  // Numbers kept as text are never converted, so no zero is refused; the encoding check may be
  // dropped by a reader that writes invalid bytes itself. NUL bytes are refused all the same.
  constexpr unsigned kRaw = (wjson::kParseFlags & ~rapidjson::kParseValidateEncodingFlag) |
                            rapidjson::kParseNumbersAsStringsFlag;
  Events raw;
  REQUIRE_FALSE(wjson::read<kRaw>("[0e66,1.50,\"\xFF\"]", raw, wjson::Limits::any_depth()));
  CHECK(raw.numbers == "0e66 1.50 ");
  CHECK(wjson::read<kRaw>("[1]\0[2]"s, raw, wjson::Limits::any_depth()).refusal ==
        Refusal::kNulByte);
}

TEST_CASE("json: a number beyond 10^-308 … 10^309 is refused where RapidJSON would misread it",
          "[json]") {
  // RapidJSON 1.1.0's full-precision conversion ignores the zeros after the point in its
  // underflow test and indexes its table of cached powers with the first digit's place:
  // `0.` with 330 zeros and `1` read as -4.3e+301; 345 zeros read half a gigabyte past the
  // table (a crash).
  for (const std::string& number :
       {"0." + std::string(330, '0') + "1", "0." + std::string(345, '0') + "2029",
        "-0." + std::string(400, '0') + "123456789012345678901234567",
        "1" + std::string(300, '7') + "e100", "1e-309"s, "0.1e-308"s, "1e309"s, "12.5e308"s,
        "0." + std::string(20, '0') + "1e-300"}) {
    INFO(number.substr(0, 40) << "… (" << number.size() << " bytes)");
    check_number_refused(number);
  }
  // The largest and smallest normal doubles' decades, and numbers whose zeros and exponent
  // cancel out, read as written.
  for (const std::string& number :
       {"1.7976931348623157e308"s, "2.2250738585072014e-308"s, "1e-308"s, "-4.5e-308"s,
        "0." + std::string(330, '0') + "1e330", "1" + std::string(300, '0') + "e-300",
        "0." + std::string(300, '0') + "25"}) {
    INFO(number.substr(0, 40));
    rapidjson::Document doc;
    REQUIRE_FALSE(json::parse("[" + number + "]", &doc));
    CHECK(doc[0].GetDouble() == std::strtod(number.c_str(), nullptr));
  }
}

namespace {

using KeySteps = std::vector<std::string>;

// A KeyClash with its own copies (the document's strings go with it); a path step is
// ".name" or "[]".
struct KeyFound {
  wjson::KeyFault fault = wjson::KeyFault::kNone;
  std::string name, earlier;
  KeySteps steps;
  explicit operator bool() const { return fault != wjson::KeyFault::kNone; }
};

KeyFound key_clash_in(const std::string& text, wjson::KeyRules rules = {}) {
  rapidjson::Document doc;
  REQUIRE_FALSE(wjson::parse_stored(text, &doc));
  wjson::KeyPath path;
  const wjson::KeyClash clash = wjson::ambiguous_keys(doc, rules, &path);
  CHECK(wjson::ambiguous_keys(doc, rules).name.data() == clash.name.data());  // path or not
  KeyFound found{clash.fault, std::string(clash.name), std::string(clash.earlier), {}};
  for (const auto& step : path) found.steps.push_back(step ? "." + std::string(*step) : "[]");
  return found;
}

}  // namespace

TEST_CASE("wjson::ambiguous_keys finds a repeated name at any depth, with its path", "[json]") {
  CHECK_FALSE(key_clash_in(R"({"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]})"));
  CHECK_FALSE(key_clash_in(R"([1,"a",null,[],{}])"));
  KeyFound c = key_clash_in(R"({"a":1,"b":2,"a":3})");
  CHECK(c.fault == wjson::KeyFault::kRepeated);
  CHECK(c.name == "a");
  CHECK(c.earlier == "a");
  CHECK(c.steps.empty());
  c = key_clash_in(R"({"p":{"q":{"r":{"s":1,"t":2,"s":3}}}})");
  CHECK(c.name == "s");
  CHECK(c.steps == KeySteps{".p", ".q", ".r"});
  // Breadth first: a shallower repeat in a later member is found before a deeper one.
  c = key_clash_in(R"({"p":{"q":{"a":1,"a":2}},"r":{"b":1,"b":2}})");
  CHECK(c.name == "b");
  CHECK(c.steps == KeySteps{".r"});
  // Each object's names are its own; an empty name is a name.
  CHECK_FALSE(key_clash_in(R"({"":{"":1},"x":{"":2}})"));
  CHECK(key_clash_in(R"({"":1,"":2})").name.empty());
}

TEST_CASE("wjson::ambiguous_keys walks arrays of objects, each object on its own", "[json]") {
  CHECK_FALSE(key_clash_in(R"([{"a":1},{"a":2},[{"a":3}]])"));
  KeyFound c = key_clash_in(R"({"list":[{"a":1},[{"x":1,"y":2,"x":3}]]})");
  CHECK(c.name == "x");
  CHECK(c.steps == KeySteps{".list", "[]", "[]"});
  c = key_clash_in(R"([[{"k":1}],{"k":1,"K":2,"k":3}])", {.fold_case = true});
  CHECK(c.name == "K");
  CHECK(c.earlier == "k");
  CHECK(c.steps == KeySteps{"[]"});
}

TEST_CASE("wjson::ambiguous_keys folds ASCII letter case only when asked", "[json]") {
  const std::string text = R"({"x":{"Command":"a","command":"b"}})";
  CHECK_FALSE(key_clash_in(text));
  KeyFound c = key_clash_in(text, {.fold_case = true});
  CHECK(c.fault == wjson::KeyFault::kRepeated);
  CHECK(c.name == "command");
  CHECK(c.earlier == "Command");
  CHECK(c.steps == KeySteps{".x"});
  // Names that only look alike are different names.
  CHECK_FALSE(key_clash_in(R"({"a_":1,"A-":2,"a@":3,"A`":4,"[":5,"{":6})", {.fold_case = true}));
}

TEST_CASE("wjson::ambiguous_keys compares non-ASCII names byte for byte", "[json]") {
  const wjson::KeyRules fold{.fold_case = true};
  // Only ASCII letters fold: É and é, and K and the Kelvin sign, are different names.
  CHECK_FALSE(key_clash_in("{\"\xc3\x89t\xc3\xa9\":1,\"\xc3\xa9t\xc3\xa9\":2}", fold));
  CHECK_FALSE(key_clash_in("{\"k\":1,\"\xe2\x84\xaa\":2}", fold));
  // The same character escaped and written out is the same name once decoded.
  KeyFound c = key_clash_in("{\"\xc3\xa9t\xc3\xa9\":1,\"\\u00e9t\\u00e9\":2}");
  CHECK(c.name == "\xc3\xa9t\xc3\xa9");
  c = key_clash_in("{\"\xc3\xa9T\":1,\"\xc3\xa9t\":2}", fold);
  CHECK(c.name == "\xc3\xa9t");
  CHECK(c.earlier == "\xc3\xa9T");
}

TEST_CASE("wjson::ambiguous_keys: a NUL in a name, refused when asked, compared in full",
          "[json]") {
  const std::string text = R"({"a":{"k\u0000x":1,"k\u0000y":2}})";
  CHECK_FALSE(key_clash_in(text));  // the bytes after the NUL tell the names apart
  KeyFound c = key_clash_in(text, {.refuse_nul = true});
  CHECK(c.fault == wjson::KeyFault::kNul);
  CHECK(c.name == "k\0x"s);
  CHECK(c.steps == KeySteps{".a"});
  c = key_clash_in(R"({"k\u0000":1,"k\u0000":2})");
  CHECK(c.fault == wjson::KeyFault::kRepeated);
  CHECK(c.name == "k\0"s);
}

TEST_CASE("wjson::MemberNames compares many names as it compares a few", "[json]") {
  for (const bool fold : {false, true}) {
    wjson::MemberNames names({.fold_case = fold});
    std::vector<std::string> written;
    for (int i = 0; i < 100; ++i) written.push_back("Name" + std::to_string(i));
    for (const std::string& n : written) CHECK_FALSE(names.add(n));
    const std::string again = "Name7", other_case = "nAME70";
    wjson::KeyClash c = names.add(again);
    CHECK(c.earlier == "Name7");
    c = names.add(other_case);
    CHECK(bool(c) == fold);
    if (fold) CHECK(c.earlier == "Name70");
    names.clear();
    CHECK_FALSE(names.add(again));
    CHECK(names.add("name7").fault == (fold ? wjson::KeyFault::kRepeated : wjson::KeyFault::kNone));
    // A second large object: nothing of the first one is remembered.
    names.clear();
    for (std::size_t i = 30; i < 60; ++i) CHECK_FALSE(names.add(written[i]));
    CHECK_FALSE(names.add(written[3]));
    CHECK(names.add(written[31]).earlier == "Name31");
    CHECK(names.add(written[3]).earlier == "Name3");
  }
}
