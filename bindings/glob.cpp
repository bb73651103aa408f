// Glob → RE2 translation and whole-string glob matching for rules (`glob-match`).
// Called by the CLIPS function table on every rule evaluation, so compiled patterns are kept
// in a process-wide cache guarded by a mutex (bounded; entries are shared_ptr): thread-safe.
#include "bindings/glob.h"

#include <re2/re2.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "bindings/text.h"

namespace warden::glob {
namespace {

constexpr std::size_t kCacheCapacity = 1024;      // cleared when full
constexpr std::size_t kMaxCachedGlobSize = 4096;  // longer globs are compiled per call
constexpr int64_t kMaxMem = 8 << 20;

// One glob "character" at s[i]: a whole UTF-8 sequence if valid, else one byte.
// Returns its length and the code point (the byte value for an invalid byte).
std::size_t read_char(std::string_view s, std::size_t i, uint32_t* cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  if (len > 1 && (i + len > s.size() || !text::valid_utf8(s.substr(i, len)))) len = 1;
  if (len == 1) {
    *cp = c;
  } else {
    uint32_t v = c & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k) v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    *cp = v;
  }
  return len;
}

bool is_alnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A class member for RE2: ASCII non-alphanumerics as \x{HH}; other characters raw.
void append_class_char(std::string& out, std::string_view raw) {
  const auto c = static_cast<unsigned char>(raw[0]);
  if (raw.size() == 1 && c < 0x80 && !is_alnum(c)) {
    static const char* hex = "0123456789abcdef";
    out += "\\x{";
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
    out.push_back('}');
  } else if (raw.size() == 1 && c >= 0x80) {
    // Invalid UTF-8 byte (only meaningful in Latin-1 mode); escape it by value.
    static const char* hex = "0123456789abcdef";
    out += "\\x{";
    out.push_back(hex[c >> 4]);
    out.push_back(hex[c & 15]);
    out.push_back('}');
  } else {
    out.append(raw);
  }
}

// Tries to translate the bracket expression starting at glob[i] == '['. On success appends
// the RE2 class and returns the index after ']'; returns 0 if there is no closing ']'.
std::size_t translate_class(std::string_view glob, std::size_t i, std::string& out) {
  const std::size_t n = glob.size();
  std::size_t j = i + 1;
  bool negate = false;
  if (j < n && (glob[j] == '!' || glob[j] == '^')) {
    negate = true;
    ++j;
  }
  std::string body;
  bool first = true;
  while (j < n) {
    if (glob[j] == ']' && !first) {
      if (negate) {
        out += "[^/";  // like fnmatch(FNM_PATHNAME): a bracket never matches "/"
        out += body;
        out += "]";
      } else if (body.empty()) {
        out += "(?:\\b\\B)";  // only reversed ranges: matches nothing
      } else {
        out += "[" + body + "]";
      }
      return j + 1;
    }
    first = false;
    if (glob[j] == '\\' && j + 1 < n) ++j;
    uint32_t lo = 0;
    std::size_t lo_len = read_char(glob, j, &lo);
    std::string_view lo_raw = glob.substr(j, lo_len);
    j += lo_len;
    // Range "a-z" (a "-" just before "]" is literal).
    if (j + 1 < n && glob[j] == '-' && glob[j + 1] != ']') {
      std::size_t k = j + 1;
      if (glob[k] == '\\' && k + 1 < n) ++k;
      uint32_t hi = 0;
      std::size_t hi_len = read_char(glob, k, &hi);
      std::string_view hi_raw = glob.substr(k, hi_len);
      j = k + hi_len;
      if (lo <= hi) {
        append_class_char(body, lo_raw);
        body += "-";
        append_class_char(body, hi_raw);
      }
      continue;
    }
    append_class_char(body, lo_raw);
  }
  return 0;
}

void flush_literal(std::string& out, std::string& lit) {
  if (!lit.empty()) {
    out += RE2::QuoteMeta(lit);
    lit.clear();
  }
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const RE2>> map;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: safe during static destruction
  return *c;
}

std::shared_ptr<const RE2> compile(std::string_view glob, bool utf8) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(kMaxMem);
  opts.set_dot_nl(true);
  opts.set_encoding(utf8 ? RE2::Options::EncodingUTF8 : RE2::Options::EncodingLatin1);
  return std::make_shared<const RE2>(to_regex(glob), opts);
}

std::shared_ptr<const RE2> get(std::string_view glob, bool utf8) {
  if (glob.size() > kMaxCachedGlobSize) return compile(glob, utf8);
  std::string key;
  key.reserve(glob.size() + 1);
  key.push_back(utf8 ? 'u' : 'b');
  key.append(glob);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.map.find(key);
    if (it != c.map.end()) return it->second;
  }
  auto re = compile(glob, utf8);  // compile outside the lock
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.map.size() >= kCacheCapacity) c.map.clear();
  c.map.emplace(std::move(key), re);
  return re;
}

}  // namespace

// "**" matches anything including "/"; "**/" also matches zero directories, so "a/**/b"
// matches "a/b" and "**/x" matches "x" (globstar). "*", "?" and brackets never match "/".
// Newlines are matched like any other character; the "s" flag is part of the translation,
// so every user of it (glob-match and the pattern index) gets the same meaning.
std::string to_regex(std::string_view glob) {
  std::string out = "(?s)^(?:";
  std::string lit;
  const std::size_t n = glob.size();
  bool no_close = false;  // once a '[' has no ']', no later '[' has one either
  std::size_t i = 0;
  while (i < n) {
    const char c = glob[i];
    if (c == '*') {
      std::size_t j = i;
      while (j < n && glob[j] == '*') ++j;
      flush_literal(out, lit);
      if (j - i == 1) {
        out += "[^/]*";
        i = j;
      } else if (j < n && glob[j] == '/') {
        out += "(?:.*/)?";
        i = j + 1;
      } else {
        out += ".*";
        i = j;
      }
    } else if (c == '?') {
      flush_literal(out, lit);
      out += "[^/]";
      ++i;
    } else if (c == '[' && !no_close) {
      std::string cls;
      std::size_t next = translate_class(glob, i, cls);
      if (next == 0) {
        no_close = true;
        lit.push_back('[');
        ++i;
      } else {
        flush_literal(out, lit);
        out += cls;
        i = next;
      }
    } else if (c == '\\' && i + 1 < n) {
      lit.push_back(glob[i + 1]);
      i += 2;
    } else {
      lit.push_back(c);
      ++i;
    }
  }
  flush_literal(out, lit);
  out += ")$";
  return out;
}

// Text that is not valid UTF-8 is matched byte-wise (Latin-1 mode): in UTF-8 mode RE2's
// "[^/]*" would not match an invalid byte, which would let "/etc/\xff" escape "/etc/*".
// A glob that cannot be compiled (too large for the memory budget) throws: "no match" would
// let a forbid rule fail open.
bool match(std::string_view glob, std::string_view text) {
  const bool utf8 = text::valid_utf8(text) && text::valid_utf8(glob);
  auto re = get(glob, utf8);
  if (!re || !re->ok())
    throw std::runtime_error("glob cannot be compiled: " + (re ? re->error() : std::string("no pattern")));
  return RE2::FullMatch(text, *re);
}

}  // namespace warden::glob
