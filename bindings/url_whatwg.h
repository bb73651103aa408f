// The WHATWG-style URL reading (what browsers and most URL libraries do), kept as the second
// opinion urls::parse compares libcurl's reading with: a URL the two read differently is
// refused. Internal to bindings; pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::urls::whatwg {

struct Parts {
  bool valid = false;
  std::string scheme;  // lowercased, without ":"
  std::string host;    // lowercased; IDNA to punycode; IPv4 dotted quad; IPv6 in brackets
  int port = 0;       // explicit or the scheme default (http 80, https 443, ftp 21, ws 80, wss 443)
  std::string path;   // dot segments resolved ("%2e" too); "/" when empty
  std::string query;  // without "?"
  std::string userinfo;  // as written
};

Parts parse(std::string_view text);

}  // namespace warden::urls::whatwg
