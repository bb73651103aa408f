// Tests for the WHATWG reading (warden::urls::whatwg::parse), the cross-check urls::parse
// compares libcurl with: host extraction and attacker tricks (userinfo, backslashes,
// numeric/percent-encoded/IDN hosts, control chars, huge inputs).
// Run with: bindings_tests "[whatwg]". Single-threaded.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "bindings/url_whatwg.h"

using namespace std::string_literals;
namespace whatwg = warden::urls::whatwg;
using WhatwgUrl = warden::urls::whatwg::Parts;

TEST_CASE("WHATWG: basic URL parts", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("https://example.com/a/b?x=1&y=2#frag");
  REQUIRE(u.valid);
  CHECK(u.scheme == "https");
  CHECK(u.host == "example.com");
  CHECK(u.port == 443);
  CHECK(u.path == "/a/b");
  CHECK(u.query == "x=1&y=2");
  CHECK(u.userinfo.empty());

  u = whatwg::parse("http://example.com");
  REQUIRE(u.valid);
  CHECK(u.port == 80);
  CHECK(u.path == "/");
  CHECK(u.query.empty());

  CHECK(whatwg::parse("ws://h/").port == 80);
  CHECK(whatwg::parse("wss://h/").port == 443);
  CHECK(whatwg::parse("ftp://h/").port == 21);
  CHECK(whatwg::parse("HTTP://h/").scheme == "http");
  CHECK(whatwg::parse("http://h?q").path == "/");
  CHECK(whatwg::parse("http://h?q").query == "q");
  CHECK(whatwg::parse("http://h#f?notquery").query.empty());
}

TEST_CASE("WHATWG: scheme is required", "[whatwg]") {
  CHECK_FALSE(whatwg::parse("example.com/path").valid);
  CHECK_FALSE(whatwg::parse("//example.com/path").valid);
  CHECK_FALSE(whatwg::parse("").valid);
  CHECK_FALSE(whatwg::parse("1http://x").valid);
  CHECK_FALSE(whatwg::parse(":x").valid);
  CHECK(whatwg::parse("git+ssh://git@github.com/o/r").valid);
  CHECK(whatwg::parse("git+ssh://git@github.com/o/r").host == "github.com");
  CHECK(whatwg::parse("git+ssh://git@github.com/o/r").userinfo == "git");
  CHECK(whatwg::parse("git+ssh://git@github.com/o/r").port == 0);
}

TEST_CASE("WHATWG: userinfo cannot disguise the host", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("https://github.com@evil.com/");
  REQUIRE(u.valid);
  CHECK(u.host == "evil.com");
  CHECK(u.userinfo == "github.com");

  u = whatwg::parse("https://user:pass@github.com:443@evil.com/x");  // last "@" wins
  REQUIRE(u.valid);
  CHECK(u.host == "evil.com");
  CHECK(u.userinfo == "user:pass@github.com:443");

  u = whatwg::parse("https://evil.com\\@github.com");  // "\" ends the authority for special schemes
  REQUIRE(u.valid);
  CHECK(u.host == "evil.com");
  CHECK(u.path == "/@github.com");

  u = whatwg::parse("https://evil.com/@github.com");
  CHECK(u.host == "evil.com");
  u = whatwg::parse("https://evil.com?@github.com");
  CHECK(u.host == "evil.com");
  u = whatwg::parse("https://evil.com#@github.com");
  CHECK(u.host == "evil.com");
  CHECK_FALSE(whatwg::parse("https://user@/x").valid);
}

TEST_CASE("WHATWG: backslashes and slash variations in special schemes", "[whatwg]") {
  CHECK(whatwg::parse("https:\\\\evil.com\\x").host == "evil.com");
  CHECK(whatwg::parse("https:\\\\evil.com\\x").path == "/x");
  CHECK(whatwg::parse("https:/\\evil.com/").host == "evil.com");
  CHECK(whatwg::parse("https:evil.com/").host == "evil.com");
  CHECK(whatwg::parse("https:///evil.com/").host == "evil.com");
  CHECK(whatwg::parse("https://evil.com/a?b\\c").query == "b\\c");  // query keeps "\"
  // Non-special: "\" is not a separator.
  WhatwgUrl u = whatwg::parse("foo://a\\b/c");
  CHECK((!u.valid || u.host != "a"));
}

TEST_CASE("WHATWG: host case, trailing dot and percent-encoding", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("HTTPS://GitHub.COM./");
  REQUIRE(u.valid);
  CHECK(u.scheme == "https");
  CHECK(u.host == "github.com");
  CHECK(whatwg::parse("https://github.com../").host == "github.com");
  CHECK(whatwg::parse("https://%67ithub.com/").host == "github.com");
  CHECK(whatwg::parse("https://GITHUB%2ECOM/").host == "github.com");
  CHECK_FALSE(whatwg::parse("https://./").valid);
  CHECK_FALSE(whatwg::parse("https://evil.com%2fgithub.com/").valid);  // decoded "/" forbidden
  CHECK_FALSE(whatwg::parse("https://evil.com%40github.com/").valid);  // decoded "@" forbidden
  CHECK_FALSE(whatwg::parse("https://a%00b.com/").valid);
  CHECK_FALSE(whatwg::parse("https://a%zzb.com/").valid);  // "%" left over is forbidden
  CHECK_FALSE(whatwg::parse("https://a b.com/").valid);
  CHECK_FALSE(whatwg::parse("https://a<b.com/").valid);
  CHECK_FALSE(whatwg::parse("https://a^b.com/").valid);
  CHECK_FALSE(whatwg::parse("https://a|b.com/").valid);
  CHECK_FALSE(whatwg::parse("https://a%ffb.com/").valid);  // not UTF-8
}

TEST_CASE("WHATWG: IPv4 hosts are normalized like WHATWG", "[whatwg]") {
  CHECK(whatwg::parse("http://127.0.0.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://2130706433/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://0x7f.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://0x7F000001/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://0177.0.0.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://127.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://127.0.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://127.0.0.1./").host == "127.0.0.1");
  CHECK(whatwg::parse("http://0/").host == "0.0.0.0");
  CHECK(whatwg::parse("http://0x/").host == "0.0.0.0");
  CHECK(whatwg::parse("http://169.254.169.254/latest").host == "169.254.169.254");
  CHECK(whatwg::parse("http://0xa9.0xfe.0xa9.0xfe/").host == "169.254.169.254");
  CHECK(whatwg::parse("http://%31%32%37.1/").host == "127.0.0.1");
  CHECK(whatwg::parse("http://\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x97.0.0.1/").host ==
        "127.0.0.1");  // fullwidth
  CHECK(whatwg::parse("http://4294967295/").host == "255.255.255.255");
  CHECK_FALSE(whatwg::parse("http://4294967296/").valid);
  CHECK_FALSE(whatwg::parse("http://256.0.0.1/").valid);
  CHECK_FALSE(whatwg::parse("http://1.2.3.4.5/").valid);
  CHECK_FALSE(whatwg::parse("http://08.0.0.1/").valid);  // bad octal
  CHECK_FALSE(whatwg::parse("http://0xg.1/").valid);
  CHECK_FALSE(whatwg::parse("http://example.0x1/").valid);
  CHECK(whatwg::parse("http://1.2.3.a/").host == "1.2.3.a");  // last label not numeric: a domain
  CHECK(whatwg::parse("http://99999999999999999999999/").valid == false);
}

TEST_CASE("WHATWG: IPv6 hosts", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("http://[::1]:8080/x");
  REQUIRE(u.valid);
  CHECK(u.host == "[::1]");
  CHECK(u.port == 8080);
  CHECK(u.path == "/x");
  CHECK(whatwg::parse("http://[0:0:0:0:0:0:0:1]/").host == "[::1]");
  CHECK(whatwg::parse("http://[ABCD::EF]/").host == "[abcd::ef]");
  CHECK(whatwg::parse("http://[::ffff:127.0.0.1]/").valid);
  CHECK(whatwg::parse("http://user@[::1]/").host == "[::1]");
  CHECK_FALSE(whatwg::parse("http://[::1/").valid);
  CHECK_FALSE(whatwg::parse("http://[::1]x/").valid);
  CHECK_FALSE(whatwg::parse("http://[:::1]/").valid);
  CHECK_FALSE(whatwg::parse("http://[fe80::1%25eth0]/").valid);
  CHECK_FALSE(whatwg::parse("http://[]/").valid);
  CHECK_FALSE(whatwg::parse("http://[github.com]/").valid);
}

TEST_CASE("WHATWG: ports", "[whatwg]") {
  CHECK(whatwg::parse("https://h:8443/").port == 8443);
  CHECK(whatwg::parse("https://h:1/").port == 1);
  CHECK(whatwg::parse("https://h:65535/").port == 65535);
  CHECK(whatwg::parse("https://h:0443/").port == 443);
  CHECK(whatwg::parse("https://h:/").port == 443);  // empty port: default
  CHECK(whatwg::parse("https://h:/").valid);
  CHECK_FALSE(whatwg::parse("https://h:99999/").valid);
  CHECK_FALSE(whatwg::parse("https://h:65536/").valid);
  CHECK_FALSE(whatwg::parse("https://h:0/").valid);
  CHECK_FALSE(whatwg::parse("https://h:-1/").valid);
  CHECK_FALSE(whatwg::parse("https://h:80a/").valid);
  CHECK_FALSE(whatwg::parse("https://h:1:2/").valid);
  CHECK_FALSE(whatwg::parse("https://h: 80/").valid);
  CHECK_FALSE(whatwg::parse("https://h:" + std::string(1000, '9') + "/").valid);
  CHECK_FALSE(whatwg::parse("https://:443/").valid);
}

TEST_CASE("WHATWG: internationalized hosts", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("https://g\xD1\x96thub.com/");  // Cyrillic і
  REQUIRE(u.valid);
  CHECK(u.host.rfind("xn--", 0) == 0);
  CHECK(u.host != "github.com");
  CHECK(u.host == "xn--gthub-n2e.com");
  CHECK(whatwg::parse("https://github\xE3\x80\x82"
                      "com/")
            .host == "github.com");  // U+3002
  CHECK(whatwg::parse("https://github\xEF\xBC\x8E"
                      "com/")
            .host == "github.com");  // U+FF0E
  CHECK(whatwg::parse("https://github\xEF\xBD\xA1"
                      "com/")
            .host == "github.com");                                             // U+FF61
  CHECK(whatwg::parse("https://\xEF\xBD\x87ithub.com/").host == "github.com");  // fullwidth g
  CHECK(whatwg::parse("https://M\xC3\x9C"
                      "NCHEN.de/")
            .host == "xn--mnchen-3ya.de");
  CHECK(whatwg::parse("https://%C3%A9.com/").host == "xn--9ca.com");
  CHECK(whatwg::parse("https://xn--gthub-n2e.com/").host == "xn--gthub-n2e.com");
  CHECK_FALSE(whatwg::parse("https://a\xEF\xBC\x8F"
                            "b.\xC3\xA9/")
                  .valid);  // fullwidth "/" maps to "/"
  CHECK_FALSE(whatwg::parse("https://a\xEF\xBC\xA0"
                            "b.\xC3\xA9/")
                  .valid);                                        // fullwidth "@"
  CHECK_FALSE(whatwg::parse("https://\xE2\x81\x84.com/").valid);  // disallowed code point
  CHECK_FALSE(whatwg::parse("https://\xFF\xFE.com/").valid);      // invalid UTF-8
  CHECK_FALSE(whatwg::parse("https://\xC0\xAE.com/").valid);      // overlong
  CHECK_FALSE(
      whatwg::parse("https://" + std::string(300, 'a') + "\xC3\xA9.com/").valid);  // label too long
}

TEST_CASE("WHATWG: control characters and whitespace", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("  \t\x01https://github.com/ \n\x1F");
  REQUIRE(u.valid);
  CHECK(u.host == "github.com");
  CHECK(whatwg::parse("ht\ntp\t://git\rhub.com/").host == "github.com");  // tabs/newlines removed
  CHECK(whatwg::parse("https://git\nhub.com/").host == "github.com");
  CHECK_FALSE(whatwg::parse("https://git\x01hub.com/").valid);
  CHECK_FALSE(whatwg::parse("https://git hub.com/").valid);
  CHECK_FALSE(whatwg::parse("https://git\0hub.com/"s).valid);
  CHECK_FALSE(whatwg::parse("https://git\x7Fhub.com/").valid);
  CHECK(whatwg::parse("\0https://x/"s).valid);  // leading NUL is a C0 control: stripped
}

TEST_CASE("WHATWG: paths are dot-segment normalized", "[whatwg]") {
  CHECK(whatwg::parse("https://h/a/../b").path == "/b");
  CHECK(whatwg::parse("https://h/a/./b").path == "/a/b");
  CHECK(whatwg::parse("https://h/../../etc/passwd").path == "/etc/passwd");
  CHECK(whatwg::parse("https://h/a/%2e%2E/b").path == "/b");
  CHECK(whatwg::parse("https://h/a/.%2e/b").path == "/b");
  CHECK(whatwg::parse("https://h/a/%2e/b").path == "/a/b");
  CHECK(whatwg::parse("https://h/a/..").path == "/");
  CHECK(whatwg::parse("https://h/a/b/..").path == "/a/");
  CHECK(whatwg::parse("https://h/a\\..\\b").path == "/b");
  CHECK(whatwg::parse("https://h/a%2fb").path == "/a%2fb");  // encoding kept
  CHECK(whatwg::parse("https://h//x").path == "//x");
}

TEST_CASE("WHATWG: file and non-special schemes", "[whatwg]") {
  WhatwgUrl u = whatwg::parse("file:///etc/passwd");
  REQUIRE(u.valid);
  CHECK(u.host.empty());
  CHECK(u.path == "/etc/passwd");
  CHECK(u.port == 0);
  CHECK(whatwg::parse("file://localhost/etc/passwd").host.empty());
  CHECK(whatwg::parse("file://server/share").host == "server");
  CHECK(whatwg::parse("file:/etc/../etc/shadow").path == "/etc/shadow");
  CHECK_FALSE(whatwg::parse("file://h:80/x").valid);
  u = whatwg::parse("mailto:user@example.com");
  REQUIRE(u.valid);
  CHECK(u.host.empty());
  CHECK(u.path == "user@example.com");
  u = whatwg::parse("ssh://git@GitHub.com:22/o/r.git");
  REQUIRE(u.valid);
  CHECK(u.host == "github.com");
  CHECK(u.port == 22);
  CHECK(u.path == "/o/r.git");
  CHECK(whatwg::parse("data:text/plain,hi").valid);
  CHECK(whatwg::parse("javascript:alert(1)").scheme == "javascript");
  CHECK(whatwg::parse("foo://").valid);
  CHECK(whatwg::parse("foo://").host.empty());
}

TEST_CASE("WHATWG: urls are safe on huge and hostile inputs", "[whatwg]") {
  CHECK_FALSE(whatwg::parse("https://h/" + std::string(1 << 20, 'a')).valid);  // > 64 KB
  CHECK_FALSE(whatwg::parse(std::string(1 << 20, '\xFF')).valid);
  const std::string host(60000, 'a');
  CHECK(whatwg::parse("https://" + host + "/").host == host);
  std::string dots;
  while (dots.size() < 60000) dots += "1.";
  CHECK_FALSE(whatwg::parse("http://" + dots + "1/").valid);
  std::string segs;
  while (segs.size() < 60000) segs += "/..";
  CHECK(whatwg::parse("https://h" + segs).path == "/");
  CHECK(whatwg::parse("https://" + std::string(60000, '@') + "h/").host == "h");
  CHECK_FALSE(whatwg::parse("https://" + std::string(60000, '[')).valid);
  CHECK_FALSE(whatwg::parse("https://" + std::string(60000, '%')).valid);
  CHECK_FALSE(whatwg::parse("https://" + std::string(20000, '\xE3') + "/").valid);
  std::string idn;
  while (idn.size() < 60000) idn += "\xD1\x96.";
  (void)whatwg::parse("https://" + idn + "/");  // valid or not, must not crash
}
