// Tests for warden::urls::parse: libcurl's reading (the HTTP client's), refused whenever the
// WHATWG reading disagrees or the URL hides its host; IP literals classified in any spelling.
// Run with: bindings_tests "[urls]". Single-threaded.
#include <catch2/catch.hpp>

#include <curl/curl.h>

#include <string>

#include "bindings/ip_address.h"
#include "bindings/urls.h"

using namespace std::string_literals;
namespace urls = warden::urls;
using warden::urls::Url;

namespace {

// The host libcurl itself would contact, read with the actuator's flags.
std::string curl_host(const std::string& text) {
  CURLU* h = curl_url();
  std::string out = "(unparsed)";
  if (curl_url_set(h, CURLUPART_URL, text.c_str(), warden::urls::kCurlUrlFlags) == CURLUE_OK) {
    char* s = nullptr;
    if (curl_url_get(h, CURLUPART_HOST, &s, 0) == CURLUE_OK) out = s;
    curl_free(s);
  }
  curl_url_cleanup(h);
  return out;
}

void refused(const std::string& text) {
  INFO(text);
  Url u = urls::parse(text);
  CHECK_FALSE(u.valid);
  CHECK_FALSE(u.error.empty());
  CHECK(u.host.empty());
}

}  // namespace

TEST_CASE("URL parts come from libcurl's reading", "[urls]") {
  Url u = urls::parse("https://Example.COM/a/./b/../c?x=1&y=2#frag");
  REQUIRE(u.valid);
  CHECK(u.error.empty());
  CHECK(u.scheme == "https");
  CHECK(u.host == "example.com");
  CHECK(u.port == 443);
  CHECK(u.path == "/a/c");
  CHECK(u.query == "x=1&y=2");
  CHECK(u.canonical == "https://Example.COM/a/c?x=1&y=2#frag");
  CHECK(u.ip.empty());
  CHECK(u.ip_class.empty());
  CHECK(urls::parse("http://example.com").port == 80);
  CHECK(urls::parse("http://example.com").path == "/");
  CHECK(urls::parse("https://h:8443/").port == 8443);
  CHECK(urls::parse("HTTP://h/").scheme == "http");
  CHECK(urls::parse("ws://h/").port == 80);  // unknown to libcurl: the scheme's default
  Url g = urls::parse("ssh://git@GitHub.com:22/o/r.git");
  REQUIRE(g.valid);
  CHECK(g.host == "github.com");
  CHECK(g.userinfo == "git");
  CHECK(g.port == 22);
  CHECK(urls::parse("git://github.com/o/r").host == "github.com");
  CHECK(urls::parse("sftp://git@h/x").port == 22);  // libcurl's default where WHATWG has none
  CHECK_FALSE(urls::parse("sftp://h:0x16/x").valid);
  Url f = urls::parse("file:///etc/passwd");
  REQUIRE(f.valid);
  CHECK(f.host.empty());
  CHECK(f.path == "/etc/passwd");
  CHECK(urls::parse("https://github.com./").host == "github.com");  // one trailing dot: same name
}

TEST_CASE("the backslash userinfo trick is refused, not read as the forge", "[urls]") {
  // libcurl connects to evil.example; the WHATWG reading says github.com.
  REQUIRE(curl_host("https://github.com\\@evil.example/") == "evil.example");
  Url u = urls::parse("https://github.com\\@evil.example/");
  CHECK_FALSE(u.valid);
  CHECK(u.host != "github.com");
  CHECK(u.error == "backslash in the URL");
  refused("http:/\\evil.com");
  refused("https:\\\\evil.com\\x");
  refused("https://evil.com/a?b\\c");
}

TEST_CASE("URLs whose host a human or another parser could misread are refused", "[urls]") {
  refused("http://good.com@evil.com/");  // userinfo looks like the host
  refused("http://a.com:80@b.com/");
  refused("https://user:pass@github.com/");  // credentials in an http URL
  refused("http://a@b@c/");
  refused("ssh://github.com@evil.com/x");    // user name with dots
  refused("ssh://git:secret@github.com/x");  // password
  refused("http://%65vil.com/");             // percent-encoded host
  refused("https://GITHUB%2ECOM/");
  refused(
      "http://evil\xE3\x80\x82"
      "com/");  // ideographic full stop
  refused(
      "https://github\xEF\xBC\x8E"
      "com/");                            // fullwidth full stop
  refused("https://g\xD1\x96thub.com/");  // Cyrillic і: punycode it
  refused("http://evil.com../");          // empty label
  refused("http://.evil.com/");
  refused("http://[fe80::1%25eth0]/");  // zone id
  refused("https:evil.com/");           // no "//"
  refused("https:///evil.com/");
  refused("mailto:user@example.com");
  refused("example.com/path");
  refused("//example.com/path");
  refused("");
}

TEST_CASE("control characters and whitespace anywhere are refused", "[urls]") {
  refused("https://git\thub.com/");
  refused("https://git\nhub.com/");
  refused("ht\ntp://github.com/");
  refused(" https://github.com/");
  refused("https://github.com/ ");
  refused("https://github.com/a b");
  refused("https://git\x01hub.com/");
  refused("https://git\x7Fhub.com/");
  refused("https://git\0hub.com/"s);
  refused("https://h/" + std::string(70000, 'a'));
}

TEST_CASE("libcurl and the WHATWG reading must agree", "[urls]") {
  // Accepted by libcurl, read differently (or not at all) by WHATWG.
  Url u = urls::parse("http://08.0.0.1/");
  CHECK_FALSE(u.valid);
  refused("http://4294967296/");
  refused("https://h:0/");
  refused("https://h/a/%2e%2e/b");  // WHATWG resolves the encoded dot segment, libcurl sends it
  refused("https://h/a/.%2E/b");
  u = urls::parse("http://127.1./");  // libcurl keeps "127.1." for the resolver
  CHECK_FALSE(u.valid);
  CHECK(urls::parse("https://h/a%2fb").path == "/a%2fb");  // encoding kept by both
}

TEST_CASE("IPv4 literals are canonical and classified in every spelling", "[urls]") {
  for (const char* text :
       {"http://127.0.0.1/", "http://0x7f.1/", "http://2130706433/", "http://017700000001/",
        "http://127.1/", "http://0177.0.0.1/", "http://0x7F000001/", "http://[::1]/",
        "http://[::ffff:127.0.0.1]/", "http://localhost/", "http://app.localhost:3000/"}) {
    INFO(text);
    Url u = urls::parse(text);
    REQUIRE(u.valid);
    CHECK(u.ip_class == "loopback");
  }
  CHECK(urls::parse("http://0x7f.1/").host == "127.0.0.1");
  CHECK(urls::parse("http://0x7f.1/").ip == "127.0.0.1");
  CHECK(urls::parse("http://[::1]:8080/x").host == "[::1]");
  CHECK(urls::parse("http://[::1]:8080/x").ip == "::1");
  CHECK(urls::parse("http://localhost/").ip.empty());
  for (const char* text :
       {"http://169.254.169.254/latest", "http://0xa9.0xfe.0xa9.0xfe/", "http://2852039166/",
        "http://[::ffff:a9fe:a9fe]/", "http://[::ffff:169.254.169.254]/",
        "http://[0:0:0:0:0:ffff:a9fe:a9fe]/", "http://[::a9fe:a9fe]/",
        "http://[64:ff9b::a9fe:a9fe]/", "http://[fd00:ec2::254]/", "http://169.254.170.2/",
        "http://100.100.100.200/"}) {
    INFO(text);
    Url u = urls::parse(text);
    REQUIRE(u.valid);
    CHECK(u.ip_class == "metadata");
  }
  Url m = urls::parse("http://[::ffff:a9fe:a9fe]/");
  CHECK(m.ip == "169.254.169.254");
  CHECK(m.host == "[::ffff:169.254.169.254]");
  CHECK(urls::parse("http://10.1.2.3/").ip_class == "private");
  CHECK(urls::parse("http://172.31.255.255/").ip_class == "private");
  CHECK(urls::parse("http://172.32.0.1/").ip_class == "public");
  CHECK(urls::parse("http://192.168.0.1/").ip_class == "private");
  CHECK(urls::parse("http://100.64.0.1/").ip_class == "private");
  CHECK(urls::parse("http://[fc00::1]/").ip_class == "private");
  CHECK(urls::parse("http://169.254.1.1/").ip_class == "link-local");
  CHECK(urls::parse("http://[fe80::1]/").ip_class == "link-local");
  CHECK(urls::parse("http://0/").ip_class == "unspecified");
  CHECK(urls::parse("http://0.0.0.0/").ip == "0.0.0.0");
  CHECK(urls::parse("http://[::]/").ip_class == "unspecified");
  CHECK(urls::parse("http://224.0.0.1/").ip_class == "multicast");
  CHECK(urls::parse("http://255.255.255.255/").ip_class == "reserved");
  CHECK(urls::parse("http://8.8.8.8/").ip_class == "public");
  CHECK(urls::parse("http://[2606:4700::1111]/").ip_class == "public");
  CHECK(urls::parse("http://[ABCD::EF]/").host == "[abcd::ef]");
}

TEST_CASE("ip::parse accepts only strict literals", "[urls]") {
  namespace ip = warden::ip;
  CHECK(ip::parse("127.0.0.1").valid);
  CHECK_FALSE(ip::parse("127.1").valid);
  CHECK_FALSE(ip::parse("0x7f.0.0.1").valid);
  CHECK_FALSE(ip::parse("example.com").valid);
  CHECK_FALSE(ip::parse("[fe80::1%eth0]").valid);
  CHECK_FALSE(ip::parse("[::1").valid);
  CHECK(ip::parse("::1").text == "::1");
  CHECK(ip::parse("[::ffff:0:a9fe:a9fe]").text == "169.254.169.254");  // IPv4-translated
  CHECK(ip::parse("2002:a9fe:a9fe::1").kind == "public");              // 6to4 is not unwrapped
  CHECK(ip::classify("example.com").empty());
}

TEST_CASE("url parsing is safe on huge and hostile inputs", "[urls]") {
  const std::string host(60000, 'a');
  CHECK(urls::parse("https://" + host + "/").host == host);
  refused("https://" + std::string(60000, '@') + "h/");
  refused("https://" + std::string(60000, '['));
  refused("https://" + std::string(60000, '%'));
  refused("https://" + std::string(20000, '\xE3') + "/");
  std::string dots;
  while (dots.size() < 60000) dots += "1.";
  refused("http://" + dots + "1/");
}
