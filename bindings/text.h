// Small text functions shared by every folder: UTF-8, ASCII case, prefixes, lowercase
// hexadecimal (digests, random ids, \xNN escapes) and its decoding, %XX decoding and JSON
// string literals. Pure and thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace warden::text {

bool valid_utf8(std::string_view s);
// True when every byte is below 0x80 (the empty string included).
bool is_ascii(std::string_view s);
// Length of the valid UTF-8 sequence starting at s[i] (i < s.size()), or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);
std::string ascii_lower(std::string_view s);
// An HTTP token (RFC 9110 §5.6.2): a header or method name, non-empty, of letters, digits
// and !#$%&'*+-.^_`|~ only.
bool is_http_token(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

// The lowercase hexadecimal digit of v's lowest four bits.
inline char hex_digit(unsigned v) { return "0123456789abcdef"[v & 15]; }
// Appends `byte` to `out` as two lowercase hexadecimal digits.
inline void append_hex(std::string& out, unsigned char byte) {
  out += hex_digit(byte >> 4);
  out += hex_digit(byte);
}
// Appends the `size` bytes at `data` to `out` as lowercase hexadecimal, two digits a byte.
void append_hex(std::string& out, const void* data, std::size_t size);
// The `size` bytes at `data` as lowercase hexadecimal, two digits a byte.
std::string hex(const void* data, std::size_t size);
inline std::string hex(std::string_view bytes) { return hex(bytes.data(), bytes.size()); }

// The value of the hexadecimal digit `c` (either case), or -1 when it is none.
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Decodes `hex` (either case) into its hex.size() / 2 bytes at `out`, in order; false at the
// first pair that is not two hexadecimal digits (the bytes before it written) or when the
// length is odd.
bool unhex(std::string_view hex, unsigned char* out);
// `s` with each %XX (two hexadecimal digits, either case) decoded to its byte; a '%' without
// two digits after it is kept as it is.
std::string percent_decode(std::string_view s);

// Appends the UTF-8 bytes of code point `cp` (at most 0x10FFFF; the caller refuses what it
// must, surrogates included).
void append_utf8(std::string& out, std::uint32_t cp);

// Appends `s` as a JSON string literal, quotes included: '"' and '\\' escaped, \n \r \t by
// name, the other C0 controls as \u00xx (DEL and C1 controls as they are), and each byte that
// is not part of valid UTF-8 as U+FFFD, so the literal is always valid UTF-8. Every JSON text
// Warden writes by hand escapes its strings with it: the engine's, the daemon's replies and
// log lines, the audit records (hash-chained: its output must never change).
void append_json_string(std::string& out, std::string_view s);
std::string json_string(std::string_view s);

}  // namespace warden::text
