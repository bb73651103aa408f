// URL reading for rules (url facts, `url-host`, `url-ip-class`, `url-error`): scheme, host,
// port and path as libcurl — the HTTP client that acts on approved requests — reads them,
// refusing any URL that a WHATWG parser would read differently or that hides its host.
// Pure functions, no network (names are never resolved): thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::urls {

// The curl_url_set() flags the URL was read with: CURLU_NON_SUPPORT_SCHEME only (any
// scheme is read, rules decide which are allowed; no scheme guessing, no default scheme,
// no URL-encoding, spaces refused). The HTTP actuator must read the approved URL with
// exactly these flags (or send `canonical`) so it contacts the host the rules saw.
inline constexpr unsigned kCurlUrlFlags = 1u << 3;

struct Url {
  bool valid = false;
  std::string error;   // why the URL was refused; "" when valid
  std::string scheme;  // lowercased, without ":"
  std::string
      host;  // lowercased ASCII, one trailing "." dropped; IPv4 dotted quad; IPv6 "[…]"; "" for file:
  int port = 0;      // explicit or the scheme's default (http 80, https 443, ftp 21 …); 0 unknown
  std::string path;  // as sent: dot segments resolved, percent-encoding kept; "/" when empty
  std::string query;     // without "?"
  std::string userinfo;  // as written ("git" in ssh://git@host/); never for http(s)/ws(s)
  std::string ip;  // the IP address the host is, canonical (IPv4-mapped IPv6 → IPv4); "" for names
  std::string
      ip_class;  // ip::classify of `ip`; "loopback" for localhost and *.localhost; "" for other names
  std::string canonical;  // the URL as libcurl serializes it
};

// Valid only when the URL has the form scheme://authority[/path][?query][#fragment] and:
// no control characters, whitespace or backslashes anywhere; a host of ASCII letters,
// digits, "-", "_" and "." (no empty labels, no percent-encoding: IDN hosts must be written
// as punycode) or a bracketed IPv6 address without zone; no userinfo for http, https, ws,
// wss, and for other schemes only a plain user name; and libcurl and the WHATWG reading
// agree on scheme, host, port and path. Never throws.
Url parse(std::string_view text);

}  // namespace warden::urls
