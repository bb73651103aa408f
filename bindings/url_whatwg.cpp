// WHATWG-style URL parser reduced to what matters for deciding which host a URL reaches:
// userinfo "@", backslashes, percent-encoded, numeric and IDN hosts, dot segments.
// Called by urls::parse as the second reading. Pure (libidn2 and inet_pton/inet_ntop are
// reentrant): thread-safe.
#include "bindings/url_whatwg.h"
#include <arpa/inet.h>
#include <idn2.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "bindings/text.h"

namespace warden::urls::whatwg {
namespace {

constexpr std::size_t kMaxInput = 64 * 1024;

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int default_port(std::string_view scheme) {
  if (scheme == "http" || scheme == "ws") return 80;
  if (scheme == "https" || scheme == "wss") return 443;
  if (scheme == "ftp") return 21;
  return 0;
}

bool is_special(std::string_view scheme) {
  return scheme == "http" || scheme == "https" || scheme == "ws" || scheme == "wss" ||
         scheme == "ftp" || scheme == "file";
}

// WHATWG forbidden domain code points (ASCII part): C0 controls, space, # % / : < > ? @ [ \ ] ^ |
// and DEL.
bool forbidden_domain_char(unsigned char c) {
  if (c <= 0x20 || c == 0x7F) return true;
  switch (c) {
    case '#':
    case '%':
    case '/':
    case ':':
    case '<':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '^':
    case '|':
      return true;
    default:
      return false;
  }
}

// WHATWG IPv4 number: "0x…" hex, "0…" octal, else decimal. Values are capped (not wrapped).
bool parse_ipv4_number(std::string_view s, uint64_t* out) {
  if (s.empty()) return false;
  int radix = 10;
  if (s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    radix = 16;
    s.remove_prefix(2);
  } else if (s.size() >= 2 && s[0] == '0') {
    radix = 8;
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  for (char c : s) {
    int d;
    if (radix == 16) {
      d = text::hex_value(c);
      if (d < 0) return false;
    } else {
      if (!is_digit(c)) return false;
      d = c - '0';
      if (d >= radix) return false;
    }
    v = v * radix + d;
    if (v > (uint64_t{1} << 40)) v = uint64_t{1} << 40;  // far above any valid value
  }
  *out = v;
  return true;
}

std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) {
      parts.push_back(s.substr(start));
      break;
    }
    parts.push_back(s.substr(start, dot - start));
    start = dot + 1;
  }
  return parts;
}

bool ends_in_number(std::string_view host) {
  std::size_t dot = host.rfind('.');
  std::string_view last = dot == std::string_view::npos ? host : host.substr(dot + 1);
  if (last.empty()) return false;
  bool all_digits = true;
  for (char c : last) all_digits = all_digits && is_digit(c);
  if (all_digits) return true;
  uint64_t v;
  return parse_ipv4_number(last, &v);
}

// Returns false on failure (which makes the URL invalid, as in WHATWG).
bool parse_ipv4(std::string_view host, std::string* out) {
  std::vector<std::string_view> parts = split_dots(host);
  if (parts.size() > 4) return false;
  std::vector<uint64_t> nums;
  for (std::string_view p : parts) {
    uint64_t v;
    if (!parse_ipv4_number(p, &v)) return false;
    nums.push_back(v);
  }
  for (std::size_t i = 0; i + 1 < nums.size(); ++i) {
    if (nums[i] > 255) return false;
  }
  const uint64_t limit = uint64_t{1} << (8 * (5 - nums.size()));
  if (nums.back() >= limit) return false;
  uint64_t ip = nums.back();
  for (std::size_t i = 0; i + 1 < nums.size(); ++i) ip += nums[i] << (8 * (3 - i));
  *out = std::to_string((ip >> 24) & 255) + "." + std::to_string((ip >> 16) & 255) + "." +
         std::to_string((ip >> 8) & 255) + "." + std::to_string(ip & 255);
  return true;
}

// "[…]" → canonical RFC 5952 text in brackets ("[0:0::1]" → "[::1]"), or false.
bool parse_ipv6(std::string_view bracketed, std::string* out) {
  if (bracketed.size() < 3 || bracketed.size() > 64 || bracketed.back() != ']') return false;
  std::string inner(bracketed.substr(1, bracketed.size() - 2));
  if (inner.find('\0') != std::string::npos) return false;
  unsigned char buf[16];
  if (inet_pton(AF_INET6, inner.c_str(), buf) != 1) return false;
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, buf, text, sizeof text) == nullptr) return false;
  *out = '[' + text::ascii_lower(text) + ']';  // chars: GCC 12 misreads "[" + … (-Wrestrict)
  return true;
}

// WHATWG host parser (special-scheme flavour, used for every scheme here): IPv6 literal,
// else percent-decode, IDNA (UTS #46 non-transitional) for non-ASCII, forbidden code point
// check, trailing dots stripped, IPv4 normalization. False means invalid.
bool parse_host(std::string_view raw, std::string* out) {
  if (!raw.empty() && raw[0] == '[') return parse_ipv6(raw, out);
  std::string decoded = text::percent_decode(raw);
  if (!text::valid_utf8(decoded)) return false;
  std::string ascii;
  bool non_ascii = false;
  for (char c : decoded) non_ascii = non_ascii || static_cast<unsigned char>(c) >= 0x80;
  if (non_ascii) {
    if (decoded.find('\0') != std::string::npos) return false;
    char* result = nullptr;
    const int rc =
        idn2_lookup_u8(reinterpret_cast<const uint8_t*>(decoded.c_str()),
                       reinterpret_cast<uint8_t**>(&result), IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
    if (rc != IDN2_OK || result == nullptr) {
      std::free(result);
      return false;
    }
    ascii.assign(result);
    std::free(result);
  } else {
    ascii = std::move(decoded);
  }
  ascii = text::ascii_lower(ascii);
  for (char c : ascii) {
    const auto u = static_cast<unsigned char>(c);
    if (forbidden_domain_char(u) || u >= 0x80) return false;
  }
  while (!ascii.empty() && ascii.back() == '.') ascii.pop_back();
  if (ascii.empty()) return false;
  if (ends_in_number(ascii)) return parse_ipv4(ascii, out);
  *out = std::move(ascii);
  return true;
}

bool is_single_dot(std::string_view s) { return s == "." || s == "%2e" || s == "%2E"; }

bool is_double_dot(std::string_view s) {
  if (s.size() == 2) return s == "..";
  if (s.size() == 4) {
    return s == ".%2e" || s == ".%2E" || s == "%2e." || s == "%2E.";
  }
  if (s.size() == 6) {
    return (s[0] == '%' && s[1] == '2' && (s[2] == 'e' || s[2] == 'E') && s[3] == '%' &&
            s[4] == '2' && (s[5] == 'e' || s[5] == 'E'));
  }
  return false;
}

// WHATWG path: dot segments (including "%2e" forms) resolved; percent-encoding kept as written.
std::string normalize_path(std::string_view path) {
  if (path.empty()) return "/";
  if (path[0] == '/') path.remove_prefix(1);
  std::vector<std::string_view> segs;
  std::size_t start = 0;
  while (true) {
    std::size_t slash = path.find('/', start);
    const bool last = slash == std::string_view::npos;
    std::string_view seg = last ? path.substr(start) : path.substr(start, slash - start);
    if (is_double_dot(seg)) {
      if (!segs.empty()) segs.pop_back();
      if (last) segs.push_back("");
    } else if (is_single_dot(seg)) {
      if (last) segs.push_back("");
    } else {
      segs.push_back(seg);
    }
    if (last) break;
    start = slash + 1;
  }
  std::string out;
  out.reserve(path.size() + 1);
  for (std::string_view s : segs) {
    out.push_back('/');
    out.append(s);
  }
  return out.empty() ? "/" : out;
}

Parts parse_impl(std::string_view text) {
  Parts url;
  if (text.size() > kMaxInput) return url;
  // Strip leading/trailing C0 controls and spaces; drop tabs and newlines anywhere.
  while (!text.empty() && static_cast<unsigned char>(text.front()) <= 0x20) text.remove_prefix(1);
  while (!text.empty() && static_cast<unsigned char>(text.back()) <= 0x20) text.remove_suffix(1);
  std::string input;
  input.reserve(text.size());
  for (char c : text) {
    if (c != '\t' && c != '\n' && c != '\r') input.push_back(c);
  }
  // Scheme.
  if (input.empty() || !is_alpha(input[0])) return url;
  std::size_t i = 1;
  while (i < input.size() && (is_alpha(input[i]) || is_digit(input[i]) || input[i] == '+' ||
                              input[i] == '-' || input[i] == '.')) {
    ++i;
  }
  if (i >= input.size() || input[i] != ':') return url;
  url.scheme = text::ascii_lower(std::string_view(input).substr(0, i));
  const bool special = is_special(url.scheme);
  std::string rest = input.substr(i + 1);
  // Fragment is dropped; query split off before "\" handling (a "\" in the query stays).
  if (std::size_t h = rest.find('#'); h != std::string::npos) rest.resize(h);
  std::string before_query = rest;
  if (std::size_t q = rest.find('?'); q != std::string::npos) {
    url.query = rest.substr(q + 1);
    before_query = rest.substr(0, q);
  }
  if (special) {
    for (char& c : before_query) {
      if (c == '\\') c = '/';
    }
  }
  std::string_view r = before_query;
  bool has_authority = false;
  if (special && url.scheme != "file") {
    while (!r.empty() && r.front() == '/') r.remove_prefix(1);  // "http:/\\/host", "http:host"
    has_authority = true;
  } else if (r.starts_with("//")) {
    r.remove_prefix(2);
    has_authority = true;
  }
  std::string_view path = r;
  if (has_authority) {
    const std::size_t slash = r.find('/');
    std::string_view authority = slash == std::string_view::npos ? r : r.substr(0, slash);
    path = slash == std::string_view::npos ? std::string_view() : r.substr(slash);
    std::string_view hostport = authority;
    if (std::size_t at = authority.rfind('@'); at != std::string_view::npos) {
      url.userinfo = std::string(authority.substr(0, at));
      hostport = authority.substr(at + 1);
    }
    // Port: the first ":" outside an IPv6 literal.
    std::string_view host_raw = hostport;
    std::string_view port_raw;
    bool has_port = false;
    std::size_t colon;
    if (!hostport.empty() && hostport[0] == '[') {
      const std::size_t close = hostport.find(']');
      if (close == std::string_view::npos) return url;
      colon = close + 1 < hostport.size() ? close + 1 : std::string_view::npos;
      if (colon != std::string_view::npos && hostport[colon] != ':') return url;
    } else {
      colon = hostport.find(':');
    }
    if (colon != std::string_view::npos) {
      host_raw = hostport.substr(0, colon);
      port_raw = hostport.substr(colon + 1);
      has_port = true;
    }
    url.port = default_port(url.scheme);
    if (has_port && !port_raw.empty()) {
      if (url.scheme == "file") return url;
      long v = 0;
      for (char c : port_raw) {
        if (!is_digit(c)) return url;
        v = v * 10 + (c - '0');
        if (v > 65535) return url;
      }
      if (v < 1) return url;
      url.port = static_cast<int>(v);
    }
    if (host_raw.empty()) {
      if (special && url.scheme != "file") return url;  // special schemes need a host
      if (!url.userinfo.empty() || has_port) return url;
    } else if (!parse_host(host_raw, &url.host)) {
      return url;
    }
    if (url.scheme == "file" && url.host == "localhost") url.host.clear();
    url.path = normalize_path(path);
  } else if (special || (!path.empty() && path[0] == '/')) {
    url.path = normalize_path(path);  // "file:/etc/passwd", "foo:/a/../b"
  } else {
    url.path = path.empty() ? "/" : std::string(path);  // opaque: "mailto:a@b"
  }
  url.valid = true;
  return url;
}

}  // namespace

Parts parse(std::string_view text) {
  try {
    return parse_impl(text);
  } catch (...) {
    return Parts{};
  }
}

}  // namespace warden::urls::whatwg
