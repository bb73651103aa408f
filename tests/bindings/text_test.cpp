// Tests for warden::text (UTF-8 validation and encoding, ASCII lowercasing, prefix/suffix
// helpers, hexadecimal and %XX decoding).
// Run with: bindings_tests "[text]". Single-threaded.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include "bindings/text.h"

using namespace std::string_literals;
namespace text = warden::text;

TEST_CASE("valid_utf8 accepts well-formed UTF-8", "[text]") {
  CHECK(text::valid_utf8(""));
  CHECK(text::valid_utf8("plain ascii"));
  CHECK(text::valid_utf8("caf\xC3\xA9"));       // é
  CHECK(text::valid_utf8("\xE2\x82\xAC"));      // €
  CHECK(text::valid_utf8("\xF0\x9F\x98\x80"));  // 😀
  CHECK(text::valid_utf8("\xF4\x8F\xBF\xBF"));  // U+10FFFF
  CHECK(text::valid_utf8("\xEF\xBF\xBF"));      // U+FFFF
  CHECK(text::valid_utf8("\xED\x9F\xBF"));      // U+D7FF
  CHECK(text::valid_utf8("\xEE\x80\x80"));      // U+E000
  CHECK(text::valid_utf8("a\0b"s));             // NUL is valid UTF-8
}

TEST_CASE("valid_utf8 rejects malformed UTF-8", "[text]") {
  CHECK_FALSE(text::valid_utf8("\x80"));  // lone continuation
  CHECK_FALSE(text::valid_utf8("\xBF"));
  CHECK_FALSE(text::valid_utf8("\xC0\xAF"));          // overlong "/"
  CHECK_FALSE(text::valid_utf8("\xC1\xBF"));          // overlong
  CHECK_FALSE(text::valid_utf8("\xE0\x80\xAF"));      // overlong 3-byte
  CHECK_FALSE(text::valid_utf8("\xE0\x9F\xBF"));      // overlong 3-byte
  CHECK_FALSE(text::valid_utf8("\xF0\x80\x80\xAF"));  // overlong 4-byte
  CHECK_FALSE(text::valid_utf8("\xF0\x8F\xBF\xBF"));  // overlong 4-byte
  CHECK_FALSE(text::valid_utf8("\xED\xA0\x80"));      // U+D800 surrogate
  CHECK_FALSE(text::valid_utf8("\xED\xBF\xBF"));      // U+DFFF surrogate
  CHECK_FALSE(text::valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  CHECK_FALSE(text::valid_utf8("\xF5\x80\x80\x80"));
  CHECK_FALSE(text::valid_utf8("\xFE"));
  CHECK_FALSE(text::valid_utf8("\xFF"));
  CHECK_FALSE(text::valid_utf8("\xC3"));          // truncated
  CHECK_FALSE(text::valid_utf8("\xE2\x82"));      // truncated
  CHECK_FALSE(text::valid_utf8("\xF0\x9F\x98"));  // truncated
  CHECK_FALSE(text::valid_utf8("ok\xE2\x82"));    // truncated at end
  CHECK_FALSE(text::valid_utf8("\xE2\x28\xA1"));  // bad continuation
  CHECK_FALSE(text::valid_utf8("\xC3\x28"));
  CHECK_FALSE(text::valid_utf8("\xF0\x9F\x98\x28"));
}

TEST_CASE("ascii_lower only touches ASCII letters", "[text]") {
  CHECK(text::ascii_lower("HeLLo-WORLD_09") == "hello-world_09");
  CHECK(text::ascii_lower("\xC3\x89") == "\xC3\x89");  // É unchanged (not ASCII)
  CHECK(text::ascii_lower("A\0B"s) == "a\0b"s);
  CHECK(text::ascii_lower("") == "");
  CHECK(text::ascii_lower("\xFF\x80Z") == "\xFF\x80z");
}

TEST_CASE("starts_with / ends_with", "[text]") {
  CHECK(text::starts_with("abc", "ab"));
  CHECK(text::starts_with("abc", ""));
  CHECK_FALSE(text::starts_with("ab", "abc"));
  CHECK(text::ends_with("abc", "bc"));
  CHECK(text::ends_with("abc", ""));
  CHECK_FALSE(text::ends_with("bc", "abc"));
  CHECK_FALSE(text::ends_with("abc", "ab"));
}

TEST_CASE("text helpers handle 1 MB inputs", "[text]") {
  std::string valid(1 << 20, 'a');
  for (std::size_t i = 0; i + 4 <= valid.size(); i += 64) valid.replace(i, 4, "\xF0\x9F\x98\x80");
  CHECK(text::valid_utf8(valid));
  std::string bad = valid;
  bad.back() = '\xC3';
  CHECK_FALSE(text::valid_utf8(bad));
  std::string upper(1 << 20, 'Q');
  CHECK(text::ascii_lower(upper) == std::string(1 << 20, 'q'));
}

TEST_CASE("hex writes bytes as lowercase hexadecimal, two digits a byte", "[text]") {
  CHECK(text::hex("") == "");
  CHECK(text::hex("\x00\x01\x7f\x80\xff"s) == "00017f80ff");
  CHECK(text::hex("Warden") == "57617264656e");
  const unsigned char digest[4] = {0xde, 0xad, 0xbe, 0xef};
  CHECK(text::hex(digest, sizeof digest) == "deadbeef");
  std::string out = "sha256:";
  text::append_hex(out, digest, 2);
  CHECK(out == "sha256:dead");
  out = "\\x";
  text::append_hex(out, static_cast<unsigned char>(0x0a));
  CHECK(out == "\\x0a");
  std::string all;
  for (unsigned v = 0; v < 16; ++v) all += text::hex_digit(v);
  CHECK(all == "0123456789abcdef");
  CHECK(text::hex_digit(0x1234) == '4');  // the lowest four bits only
  std::string every;
  for (int b = 0; b < 256; ++b) every += static_cast<char>(b);
  const std::string h = text::hex(every);
  REQUIRE(h.size() == 512);
  for (int b = 0; b < 256; ++b) CHECK(std::stoi(h.substr(2 * b, 2), nullptr, 16) == b);
}

TEST_CASE("hex_value reads one hexadecimal digit of either case", "[text]") {
  const std::string digits = "0123456789abcdef", upper = "ABCDEF";
  for (std::size_t i = 0; i < digits.size(); ++i)
    CHECK(text::hex_value(digits[i]) == static_cast<int>(i));
  for (std::size_t i = 0; i < upper.size(); ++i)
    CHECK(text::hex_value(upper[i]) == static_cast<int>(10 + i));
  for (const char c : "gG/:@`xX \0\xff"s) CHECK(text::hex_value(c) == -1);
}

TEST_CASE("unhex reads two hexadecimal digits a byte and stops at the first bad pair", "[text]") {
  std::string every;
  for (int b = 0; b < 256; ++b) every += static_cast<char>(b);
  unsigned char out[256] = {};
  REQUIRE(text::unhex(text::hex(every), out));
  CHECK(std::string(reinterpret_cast<const char*>(out), sizeof out) == every);
  REQUIRE(text::unhex("DeAdBeEf", out));  // either case
  CHECK((out[0] == 0xde && out[1] == 0xad && out[2] == 0xbe && out[3] == 0xef));
  CHECK(text::unhex("", out));
  unsigned char some[3] = {0, 0, 0};
  CHECK_FALSE(text::unhex("0a1g2c", some));  // g: the second pair is refused
  CHECK((some[0] == 0x0a && some[2] == 0));  // the byte before it written, none after
  CHECK_FALSE(text::unhex("0a1", some));     // odd length
  CHECK_FALSE(text::unhex(" a", some));
  CHECK_FALSE(text::unhex("0x", some));
}

TEST_CASE("percent_decode decodes %XX and keeps a % without two digits", "[text]") {
  CHECK(text::percent_decode("") == "");
  CHECK(text::percent_decode("/a%20b/%2F%2f") == "/a b///");
  CHECK(text::percent_decode("%00%ff") == "\0\xff"s);
  CHECK(text::percent_decode("%") == "%");
  CHECK(text::percent_decode("%4") == "%4");
  CHECK(text::percent_decode("x%41") == "xA");  // the last three bytes
  CHECK(text::percent_decode("%g1%1g%%41") == "%g1%1g%A");
}

TEST_CASE("append_utf8 writes a code point in one to four bytes", "[text]") {
  std::string out = "a";
  text::append_utf8(out, 0x41);
  text::append_utf8(out, 0);
  CHECK(out == "aA\0"s);
  const std::pair<std::uint32_t, std::string> cases[] = {{0x7F, "\x7f"},
                                                         {0x80, "\xc2\x80"},
                                                         {0xE9, "\xc3\xa9"},
                                                         {0x7FF, "\xdf\xbf"},
                                                         {0x800, "\xe0\xa0\x80"},
                                                         {0x20AC, "\xe2\x82\xac"},
                                                         {0xFFFF, "\xef\xbf\xbf"},
                                                         {0x10000, "\xf0\x90\x80\x80"},
                                                         {0x10FFFF, "\xf4\x8f\xbf\xbf"}};
  for (const auto& [cp, bytes] : cases) {
    std::string one;
    text::append_utf8(one, cp);
    CHECK(one == bytes);
    CHECK(text::valid_utf8(one));
  }
}
