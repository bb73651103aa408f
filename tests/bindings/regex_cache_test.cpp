// Tests for warden::RegexCache (RE2 compile cache, unanchored search, error reporting).
// Run with: bindings_tests "[regex]". Single-threaded (the cache is per thread by design).
#include <catch2/catch.hpp>

#include <re2/re2.h>

#include <chrono>
#include <string>

#include "bindings/regex_cache.h"

using namespace std::string_literals;
using warden::RegexCache;

namespace {
bool search(RegexCache& c, std::string_view pattern, std::string_view text) {
  bool matched = true;
  std::string error;
  REQUIRE(c.search(pattern, text, &matched, &error));
  CHECK(error.empty());
  return matched;
}
}  // namespace

TEST_CASE("regex search is unanchored", "[regex]") {
  RegexCache c;
  CHECK(search(c, "curl", "sudo curl http://x | sh"));
  CHECK(search(c, "^sudo", "sudo ls"));
  CHECK_FALSE(search(c, "^ls", "sudo ls"));
  CHECK(search(c, "rm\\s+-rf\\s+/", "rm   -rf /"));
  CHECK_FALSE(search(c, "rm\\s+-rf\\s+/", "rm -r /"));
  CHECK(search(c, "(?i)DROP TABLE", "drop table users"));
  CHECK(search(c, "", "anything"));
  CHECK(search(c, "", ""));
  CHECK(search(c, "a\\x00b", "a\0b"s));
  CHECK(search(c, "caf\xC3\xA9", "un caf\xC3\xA9"));
  CHECK(search(c, "^.$", "\xC3\xA9"));  // UTF-8 mode: one character
}

TEST_CASE("regex cache compiles each pattern once", "[regex]") {
  RegexCache c;
  std::string err;
  const re2::RE2* a = c.get("ab+c", &err);
  REQUIRE(a != nullptr);
  CHECK(c.get("ab+c", &err) == a);
  CHECK(c.size() == 1);
  CHECK(c.get("x", &err) != nullptr);
  CHECK(c.size() == 2);
}

TEST_CASE("regex cache reports bad patterns without throwing", "[regex]") {
  RegexCache c;
  std::string err;
  CHECK(c.get("(", &err) == nullptr);
  CHECK_FALSE(err.empty());
  err.clear();
  CHECK(c.get("(", &err) == nullptr);  // cached failure still reports
  CHECK_FALSE(err.empty());
  bool matched = true;
  err.clear();
  CHECK_FALSE(c.search("a(?=b)", "ab", &matched, &err));  // lookahead unsupported by RE2
  CHECK_FALSE(matched);
  CHECK_FALSE(err.empty());
  CHECK_FALSE(c.search("(a)\\1", "aa", &matched, &err));  // backreference
  CHECK_FALSE(c.search("[z-a]", "x", &matched, &err));
  CHECK(c.get("a", nullptr) != nullptr);  // null error pointer is fine
  CHECK(c.get("(", nullptr) == nullptr);
  CHECK_FALSE(c.search("(", "x", nullptr, nullptr));
  // Pattern too large for the memory budget: an error, not a crash.
  err.clear();
  CHECK(c.get("((((((((((a{100}){100}){100}){100}))))))))", &err) == nullptr);
  CHECK_FALSE(err.empty());
}

TEST_CASE("regex cache is bounded", "[regex]") {
  RegexCache c(16);
  std::string err;
  for (int i = 0; i < 100; ++i) {
    REQUIRE(c.get("p" + std::to_string(i), &err) != nullptr);
    CHECK(c.size() <= 16);
  }
  RegexCache zero(0);  // degenerate capacity still works
  CHECK(zero.get("a", &err) != nullptr);
  CHECK(search(zero, "b", "abc"));
}

TEST_CASE("regex search on invalid UTF-8 matches byte-wise", "[regex]") {
  RegexCache c;
  // In UTF-8 mode ".*" cannot cross an invalid byte; the cache falls back to byte-wise
  // matching so an attacker cannot split "curl … | sh" with a stray 0xFF.
  CHECK(search(c, "curl.*\\|\\s*sh", "curl http://x \xFF | sh"));
  CHECK(search(c, "a[^b]c",
               "a\xFF"
               "c"));
  CHECK(search(c, "x", "\xC0\xAF x"));
  CHECK_FALSE(search(c, "y", "\xC0\xAF x"));
  bool matched = true;
  std::string err;
  CHECK_FALSE(c.search("^\xFF$", "\xFF", &matched, &err));  // patterns must be valid UTF-8
  CHECK_FALSE(err.empty());
  RegexCache small(1);  // eviction between the two programs is safe
  CHECK(search(small, "a.b",
               "a\xFF"
               "b"));
  CHECK(search(small, "a.b",
               "a\xFF"
               "b"));
  CHECK(search(small, "a.b", "axb"));
}

TEST_CASE("regex search handles 1 MB inputs", "[regex]") {
  RegexCache c;
  const std::string big(1 << 20, 'a');
  CHECK_FALSE(search(c, "(a+)+b", big));  // catastrophic for backtracking engines
  CHECK_FALSE(search(c, "(a|aa)*c", big));
  CHECK(search(c, "a{100}$", big));
  CHECK(search(c, "(?s).*", big + "\n" + big));
  std::string bad(1 << 20, '\xFF');
  CHECK_FALSE(search(c, "(.*)*x", bad));
  std::string err;
  (void)c.get(std::string(1 << 20, 'a'), &err);  // huge pattern: error or ok, never a crash
  (void)c.get(std::string(1 << 20, '('), &err);
}
