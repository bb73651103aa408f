// IP literals as rules see them: canonical text and an address class (loopback, private,
// link-local, metadata …), so a rule can forbid internal addresses by class, not by spelling.
// Called by urls::parse (url facts, `url-host`, `url-ip-class`). Pure functions: thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::ip {

struct Address {
  bool valid = false;
  std::string text;  // canonical: IPv4 dotted quad, IPv6 RFC 5952 lowercase without brackets
  std::string kind;  // address class, see classify()
};

// `literal` is a strict dotted-quad IPv4 ("127.0.0.1") or an IPv6 address with or without
// brackets. An IPv6 address that carries an IPv4 address (IPv4-mapped ::ffff:a.b.c.d,
// IPv4-translated ::ffff:0:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d) is
// reported as that IPv4 address: "[::ffff:a9fe:a9fe]" is 169.254.169.254. Anything else
// (names, short or numeric IPv4 forms, zone ids) is not valid here.
Address parse(std::string_view literal);

// The class of a canonical address: "metadata" (cloud instance-metadata endpoints),
// "loopback", "unspecified" (0.0.0.0/8, ::, which reach the local host on Linux),
// "private" (RFC 1918, 100.64/10 shared, fc00::/7, fec0::/10), "link-local" (169.254/16,
// fe80::/10), "multicast", "reserved" (documentation, benchmarking, 240/4, broadcast …),
// or "public".
std::string classify(std::string_view canonical);

}  // namespace warden::ip
