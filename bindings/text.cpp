// Small text functions (UTF-8 validation, ASCII lowercasing, prefix/suffix tests, hexadecimal
// and %XX decoding, JSON string literals).
// Called by the engine, the CLIPS function table, the other bindings and the folders above.
// Pure functions, no shared state: thread-safe.
#include "bindings/text.h"

#include <cstdint>

namespace warden::text {

// Strict UTF-8 (RFC 3629): rejects overlong forms, UTF-16 surrogates (U+D800..U+DFFF),
// code points above U+10FFFF, stray continuation bytes and truncated sequences.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const std::size_t n = s.size();
  const unsigned char c = p[i];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c == 0xE0) {
    len = 3;
    lo = 0xA0;  // no overlongs
  } else if (c >= 0xE1 && c <= 0xEC) {
    len = 3;
  } else if (c == 0xED) {
    len = 3;
    hi = 0x9F;  // no surrogates
  } else if (c >= 0xEE && c <= 0xEF) {
    len = 3;
  } else if (c == 0xF0) {
    len = 4;
    lo = 0x90;  // no overlongs
  } else if (c >= 0xF1 && c <= 0xF3) {
    len = 4;
  } else if (c == 0xF4) {
    len = 4;
    hi = 0x8F;  // <= U+10FFFF
  } else {
    return 0;  // 0x80..0xC1 (continuation / overlong lead), 0xF5..0xFF
  }
  if (n - i < len) return 0;
  if (p[i + 1] < lo || p[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k)
    if ((p[i + k] & 0xC0) != 0x80) return 0;
  return len;
}

bool is_ascii(std::string_view s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    std::size_t len = utf8_sequence_length(s, i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

bool is_http_token(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z')) continue;
    if (std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos)
      return false;
  }
  return true;
}

std::string ascii_lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

bool ends_with(std::string_view s, std::string_view suffix) { return s.ends_with(suffix); }

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void append_hex(std::string& out, const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  out.reserve(out.size() + 2 * size);
  for (std::size_t i = 0; i < size; ++i) append_hex(out, p[i]);
}

std::string hex(const void* data, std::size_t size) {
  std::string out;
  append_hex(out, data, size);
  return out;
}

bool unhex(std::string_view hex, unsigned char* out) {
  if (hex.size() % 2 != 0) return false;
  for (std::size_t i = 0; i < hex.size() / 2; ++i) {
    const int hi = hex_value(hex[2 * i]), lo = hex_value(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<unsigned char>(hi << 4 | lo);
  }
  return true;
}

std::string percent_decode(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const int hi = s[i] == '%' && i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
    const int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
    if (lo >= 0) {
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    // A run of ASCII that needs no escape is copied in one go.
    std::size_t plain = i;
    while (plain < s.size()) {
      const auto b = static_cast<unsigned char>(s[plain]);
      if (b < 0x20 || b >= 0x80 || b == '"' || b == '\\') break;
      ++plain;
    }
    if (plain > i) {
      out.append(s.data() + i, plain - i);
      i = plain;
      continue;
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          out += "\\u00";
          append_hex(out, c);
      }
      ++i;
      continue;
    }
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s.data() + i, n);
      i += n;
    }
  }
  out.push_back('"');
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace warden::text
