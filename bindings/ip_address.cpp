// IP literal canonicalization and classification for URL facts.
// Called by urls::parse. Pure functions (inet_pton/inet_ntop are reentrant): thread-safe.
#include "bindings/ip_address.h"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

#include "bindings/text.h"

namespace warden::ip {
namespace {

struct V4Range {
  std::uint32_t base;
  int bits;
  const char* kind;
};

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// First match wins: exact metadata addresses come before the ranges that hold them.
constexpr V4Range kV4Ranges[] = {
    {v4(169, 254, 169, 254), 32, "metadata"},  // AWS, GCP, Azure, OpenStack …
    {v4(169, 254, 170, 2), 32, "metadata"},    // AWS ECS task credentials
    {v4(169, 254, 170, 23), 32, "metadata"},   // AWS EKS pod identity
    {v4(100, 100, 100, 200), 32, "metadata"},  // Alibaba Cloud
    {v4(192, 0, 0, 192), 32, "metadata"},      // Oracle Cloud
    {v4(0, 0, 0, 0), 8, "unspecified"},
    {v4(127, 0, 0, 0), 8, "loopback"},
    {v4(10, 0, 0, 0), 8, "private"},
    {v4(172, 16, 0, 0), 12, "private"},
    {v4(192, 168, 0, 0), 16, "private"},
    {v4(100, 64, 0, 0), 10, "private"},  // shared address space (carrier-grade NAT)
    {v4(169, 254, 0, 0), 16, "link-local"},
    {v4(224, 0, 0, 0), 4, "multicast"},
    {v4(192, 0, 0, 0), 24, "reserved"},
    {v4(192, 0, 2, 0), 24, "reserved"},
    {v4(198, 18, 0, 0), 15, "reserved"},
    {v4(198, 51, 100, 0), 24, "reserved"},
    {v4(203, 0, 113, 0), 24, "reserved"},
    {v4(240, 0, 0, 0), 4, "reserved"},  // includes 255.255.255.255
};

std::string classify_v4(std::uint32_t a) {
  for (const auto& r : kV4Ranges) {
    const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
    if ((a & mask) == (r.base & mask)) return r.kind;
  }
  return "public";
}

std::string classify_v6(const unsigned char b[16]) {
  static const unsigned char kEc2Metadata[16] = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,    0,
                                                 0,    0,    0,    0,    0, 0, 0x02, 0x54};
  if (std::memcmp(b, kEc2Metadata, 16) == 0) return "metadata";
  bool zero15 = true;
  for (int i = 0; i < 15; ++i) zero15 = zero15 && b[i] == 0;
  if (zero15 && b[15] == 0) return "unspecified";
  if (zero15 && b[15] == 1) return "loopback";
  if ((b[0] & 0xfe) == 0xfc) return "private";                     // fc00::/7 unique local
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return "link-local";  // fe80::/10
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return "private";     // fec0::/10 site-local
  if (b[0] == 0xff) return "multicast";
  if (b[0] == 0x20 && b[1] == 0x01 && b[2] == 0x0d && b[3] == 0xb8)
    return "reserved";  // 2001:db8::/32
  if (b[0] == 0x01 && b[1] == 0 && b[2] == 0 && b[3] == 0 && b[4] == 0 && b[5] == 0 && b[6] == 0 &&
      b[7] == 0)
    return "reserved";  // 100::/64 discard
  return "public";
}

// True if the IPv6 address carries an IPv4 address in its last 32 bits that the kernel or a
// translator delivers to IPv4: ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated),
// ::/96 (compatible, not :: or ::1), 64:ff9b::/96 (NAT64 well-known prefix).
bool embeds_v4(const unsigned char b[16]) {
  auto zero = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      if (b[i] != 0) return false;
    return true;
  };
  if (zero(0, 10) && b[10] == 0xff && b[11] == 0xff) return true;
  if (zero(0, 8) && b[8] == 0xff && b[9] == 0xff && b[10] == 0 && b[11] == 0) return true;
  if (zero(0, 12)) return !(zero(12, 15) && (b[15] == 0 || b[15] == 1));
  if (b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && zero(4, 12)) return true;
  return false;
}

std::string v4_text(const unsigned char* p) {
  return std::to_string(p[0]) + "." + std::to_string(p[1]) + "." + std::to_string(p[2]) + "." +
         std::to_string(p[3]);
}

}  // namespace

Address parse(std::string_view literal) {
  Address out;
  try {
    if (literal.size() > 64 || literal.find('\0') != std::string_view::npos) return out;
    if (!literal.empty() && literal.front() == '[') {
      if (literal.size() < 2 || literal.back() != ']') return out;
      literal = literal.substr(1, literal.size() - 2);
    }
    const std::string s(literal);
    unsigned char b[16];
    if (inet_pton(AF_INET, s.c_str(), b) == 1) {  // strict dotted quad only
      out.text = v4_text(b);
    } else if (inet_pton(AF_INET6, s.c_str(), b) == 1) {
      if (embeds_v4(b)) {
        out.text = v4_text(b + 12);
      } else {
        char buf[INET6_ADDRSTRLEN];
        if (!inet_ntop(AF_INET6, b, buf, sizeof buf)) return out;
        out.text = text::ascii_lower(buf);
        out.kind = classify_v6(b);
        out.valid = true;
        return out;
      }
    } else {
      return out;
    }
    out.kind = classify(out.text);
    out.valid = true;
  } catch (...) {
    return Address{};
  }
  return out;
}

std::string classify(std::string_view canonical) {
  const std::string s(canonical);
  unsigned char b[16];
  if (inet_pton(AF_INET, s.c_str(), b) == 1)
    return classify_v4((std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) |
                       (std::uint32_t{b[2]} << 8) | b[3]);
  if (inet_pton(AF_INET6, s.c_str(), b) == 1) {
    if (embeds_v4(b))
      return classify_v4((std::uint32_t{b[12]} << 24) | (std::uint32_t{b[13]} << 16) |
                         (std::uint32_t{b[14]} << 8) | b[15]);
    return classify_v6(b);
  }
  return "";
}

}  // namespace warden::ip
