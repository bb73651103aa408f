// URL reading for rules: strict syntax checks, libcurl's URL API as the authoritative
// reading, the WHATWG reading as a cross-check, IP literal classification.
// Called by the fact codec (url facts) and the CLIPS function table. Thread-safe: each call
// uses its own CURLU handle; curl_url_*() needs no global initialization.
#include "bindings/urls.h"

#include <arpa/inet.h>
#include <curl/curl.h>

#include <memory>

#include "bindings/ip_address.h"
#include "bindings/text.h"
#include "bindings/url_whatwg.h"

namespace warden::urls {
namespace {

static_assert(kCurlUrlFlags == CURLU_NON_SUPPORT_SCHEME);

constexpr std::size_t kMaxInput = 64 * 1024;

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_host_char(char c) { return is_alpha(c) || is_digit(c) || c == '-' || c == '_' || c == '.'; }

bool web_scheme(std::string_view s) {
  return s == "http" || s == "https" || s == "ws" || s == "wss";
}

struct CurlHandle {
  void operator()(CURLU* h) const { curl_url_cleanup(h); }
};

// One part of a parsed CURLU, or nullopt-like (false) when libcurl has none.
bool curl_part(CURLU* h, CURLUPart part, unsigned flags, std::string* out) {
  char* s = nullptr;
  if (curl_url_get(h, part, &s, flags) != CURLUE_OK || s == nullptr) return false;
  out->assign(s);
  curl_free(s);
  return true;
}

Url refuse(std::string why) {
  Url u;
  u.error = std::move(why);
  return u;
}

// Checks the raw text for everything that lets two parsers (or a human) read a different
// host. On success *scheme is the lowercased scheme; otherwise *error says why.
bool check_syntax(std::string_view text, std::string* scheme, std::string* error) {
  auto fail = [error](std::string why) {
    *error = std::move(why);
    return false;
  };
  if (text.size() > kMaxInput) return fail("URL longer than 65536 bytes");
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) return fail("control character or whitespace in the URL");
    if (c == '\\') return fail("backslash in the URL");
  }
  std::size_t i = 0;
  if (text.empty() || !is_alpha(text[0])) return fail("no scheme");
  while (i < text.size() && (is_alpha(text[i]) || is_digit(text[i]) || text[i] == '+' ||
                             text[i] == '-' || text[i] == '.'))
    ++i;
  if (i >= text.size() || text[i] != ':') return fail("no scheme");
  *scheme = text::ascii_lower(text.substr(0, i));
  std::string_view rest = text.substr(i + 1);
  if (!rest.starts_with("//")) return fail("not of the form scheme://host/…");
  rest.remove_prefix(2);
  std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));

  std::string_view hostport = authority;
  if (std::size_t at = authority.find('@'); at != std::string_view::npos) {
    if (authority.find('@', at + 1) != std::string_view::npos)
      return fail("several '@' in the authority");
    if (web_scheme(*scheme)) return fail("user name or password in an " + *scheme + " URL");
    std::string_view user = authority.substr(0, at);
    if (user.empty()) return fail("empty user name");
    for (char c : user)
      if (!(is_alpha(c) || is_digit(c) || c == '-' || c == '_'))
        return fail("user part other than a plain user name");
    hostport = authority.substr(at + 1);
  }

  std::string_view host = hostport;
  if (!hostport.empty() && hostport[0] == '[') {
    const std::size_t close = hostport.find(']');
    if (close == std::string_view::npos) return fail("unterminated IPv6 address");
    host = hostport.substr(0, close + 1);
    for (char c : host.substr(1, host.size() - 2))
      if (!(text::hex_value(c) >= 0 || c == ':' || c == '.'))
        return fail("IPv6 address with a zone or other characters");
  } else {
    host = hostport.substr(0, hostport.find(':'));
    for (char c : host) {
      if (static_cast<unsigned char>(c) >= 0x80)
        return fail("non-ASCII host (write it as punycode, xn--…)");
      if (c == '%') return fail("percent-encoded host");
      if (!is_host_char(c)) return fail(std::string("character '") + c + "' in the host");
    }
    std::string_view labels = host;
    if (labels.ends_with('.')) labels.remove_suffix(1);
    if (!host.empty() && (labels.empty() || labels.front() == '.' ||
                          labels.find("..") != std::string_view::npos || labels.ends_with('.')))
      return fail("empty label in the host");
  }
  if (host.empty() && *scheme != "file") return fail("empty host");
  return true;
}

// The host as libcurl will look it up, in the form the WHATWG reading produces: lowercase,
// one trailing dot dropped, IPv6 in inet_ntop's canonical text.
std::string comparable_curl_host(std::string h) {
  h = text::ascii_lower(h);
  if (h.size() > 2 && h.front() == '[' && h.back() == ']' && h.size() < 64) {
    const std::string inner = h.substr(1, h.size() - 2);
    unsigned char b[16];
    char buf[INET6_ADDRSTRLEN];
    if (inet_pton(AF_INET6, inner.c_str(), b) == 1 && inet_ntop(AF_INET6, b, buf, sizeof buf))
      return "[" + text::ascii_lower(buf) + "]";
    return h;
  }
  if (h.ends_with('.')) h.pop_back();
  return h;
}

Url parse_impl(std::string_view text) {
  std::string scheme, error;
  if (!check_syntax(text, &scheme, &error)) return refuse(std::move(error));

  std::unique_ptr<CURLU, CurlHandle> h(curl_url());
  if (!h) return refuse("out of memory");
  const std::string input(text);
  if (CURLUcode rc = curl_url_set(h.get(), CURLUPART_URL, input.c_str(), kCurlUrlFlags);
      rc != CURLUE_OK)
    return refuse(std::string("libcurl cannot read it: ") + curl_url_strerror(rc));
  const whatwg::Parts w = whatwg::parse(text);
  if (!w.valid) return refuse("not a valid URL by the WHATWG rules");

  Url url;
  std::string curl_scheme, curl_host, curl_port;
  curl_part(h.get(), CURLUPART_SCHEME, 0, &curl_scheme);
  curl_part(h.get(), CURLUPART_HOST, 0, &curl_host);
  const bool has_port = curl_part(h.get(), CURLUPART_PORT, CURLU_DEFAULT_PORT, &curl_port);
  // (assign: GCC 12 misreads `= "/"` here as an overlapping copy, -Wrestrict)
  if (!curl_part(h.get(), CURLUPART_PATH, 0, &url.path) || url.path.empty())
    url.path.assign(1, '/');
  curl_part(h.get(), CURLUPART_QUERY, 0, &url.query);
  curl_part(h.get(), CURLUPART_URL, 0, &url.canonical);

  url.scheme = text::ascii_lower(curl_scheme);
  url.host = comparable_curl_host(curl_host);
  if (url.scheme != w.scheme) return refuse("libcurl and WHATWG read different schemes");
  if (url.host != w.host)
    return refuse("libcurl reads host '" + url.host + "', WHATWG reads '" + w.host + "'");
  url.port = w.port;
  if (has_port) {
    int p = 0;
    for (char c : curl_port) p = is_digit(c) && p < 100000 ? p * 10 + (c - '0') : 100000;
    // WHATWG knows no default for most schemes (sftp, ldap …): 0 means "none written".
    if (p != w.port && w.port != 0)
      return refuse("libcurl reads port " + curl_port + ", WHATWG reads " + std::to_string(w.port));
    url.port = p;
  }
  if (url.path != w.path)
    return refuse("libcurl reads path '" + url.path + "', WHATWG reads '" + w.path + "'");
  url.userinfo = w.userinfo;

  if (ip::Address a = ip::parse(url.host); a.valid) {
    url.ip = a.text;
    url.ip_class = a.kind;
  } else if (url.host == "localhost" || url.host.ends_with(".localhost")) {
    url.ip_class = "loopback";  // resolved to the local host without DNS
  }
  url.valid = true;
  return url;
}

}  // namespace

Url parse(std::string_view text) {
  try {
    return parse_impl(text);
  } catch (...) {
    return refuse("internal error");
  }
}

}  // namespace warden::urls
