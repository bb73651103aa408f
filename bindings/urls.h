// URL parsing for rules: scheme, host (exact, lowercased, IDNA-safe), port, path.
// Follows the WHATWG URL rules where attackers use them to hide a host (userinfo "@",
// backslashes, percent-encoded or numeric hosts). Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::urls {

struct Url {
  bool valid = false;
  std::string scheme;   // lowercased, without ":"
  std::string host;     // lowercased; non-ASCII labels as punycode "xn--…"; IPv4 dotted-quad; IPv6 in brackets
  int port = 0;         // explicit or the scheme default (http 80, https 443, ftp 21, ws 80, wss 443); 0 unknown
  std::string path;     // "/" when empty
  std::string query;    // without "?"
  std::string userinfo; // as written
};

Url parse(std::string_view text);

}  // namespace warden::urls
