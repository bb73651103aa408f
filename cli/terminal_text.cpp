#include "cli/terminal_text.h"

#include <cstdint>
#include <cstdio>

#include "bindings/text.h"

namespace warden::cli {
namespace {

std::uint32_t decode(std::string_view s, std::size_t at, std::size_t n) {
  auto b = [&](std::size_t k) {
    return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + k]));
  };
  switch (n) {
    case 1:
      return b(0);
    case 2:
      return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3:
      return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default:
      return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// Code points a terminal acts on (or reorders text by) rather than shows.
bool invisible_control(std::uint32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void append_u(std::string& out, std::uint32_t cp) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  out += buf;
}

void append_x(std::string& out, unsigned char byte) {
  out += "\\x";
  text::append_hex(out, byte);
}

}  // namespace

// Read, never decoded (unlike text::append_json_string): bidi, C1 and stray bytes made visible.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t n = text::utf8_sequence_length(text, i);
    if (n == 0) {  // not UTF-8: show the byte (a raw 0x9b is CSI on 8-bit terminals)
      append_x(out, c);
      ++i;
      continue;
    }
    const std::uint32_t cp = decode(text, i, n);
    if (!invisible_control(cp)) {
      out.append(text.data() + i, n);
    } else if (cp < 0x80) {
      switch (cp) {
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\v':
          out += "\\v";
          break;
        default:
          append_x(out, c);
      }
    } else {
      append_u(out, cp);
    }
    i += n;
  }
  return out;
}

std::string json_for_terminal(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size();) {
    // A run of printable ASCII (and JSON's whitespace), the bulk of any JSON text, is copied
    // as it is in one go.
    std::size_t plain = i;
    while (plain < json.size()) {
      const auto c = static_cast<unsigned char>(json[plain]);
      if ((c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c >= 0x7F) break;
      ++plain;
    }
    if (plain > i) {
      out.append(json.data() + i, plain - i);
      i = plain;
      continue;
    }
    const std::size_t n = text::utf8_sequence_length(json, i);
    if (n == 0) {  // not UTF-8 (not valid JSON text either): never a raw byte on the terminal
      out += "\\ufffd";
      ++i;
      continue;
    }
    const std::uint32_t cp = decode(json, i, n);
    // Outside strings JSON allows only whitespace controls; inside, raw C0 is invalid anyway.
    const bool json_whitespace = cp == '\n' || cp == '\r' || cp == '\t';
    if (!json_whitespace && invisible_control(cp)) {
      append_u(out, cp);
    } else {
      out.append(json.data() + i, n);
    }
    i += n;
  }
  return out;
}

}  // namespace warden::cli
