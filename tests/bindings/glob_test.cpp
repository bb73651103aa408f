// Tests for warden::glob (glob → RE2 translation, anchored matching, cache).
// Run with: bindings_tests "[glob]". One case exercises the shared cache from several threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bindings/glob.h"

using namespace std::string_literals;
namespace glob = warden::glob;

TEST_CASE("glob star and double star", "[glob]") {
  CHECK(glob::match("*.py", "a.py"));
  CHECK(glob::match("*.py", ".py"));
  CHECK_FALSE(glob::match("*.py", "dir/a.py"));
  CHECK_FALSE(glob::match("*.py", "a.pyc"));
  CHECK(glob::match("/etc/*", "/etc/passwd"));
  CHECK_FALSE(glob::match("/etc/*", "/etc/ssh/sshd_config"));
  CHECK(glob::match("/etc/**", "/etc/ssh/sshd_config"));
  CHECK(glob::match("/etc/**", "/etc/"));
  CHECK_FALSE(glob::match("/etc/**", "/etc"));
  CHECK(glob::match("**", "any/thing/at/all"));
  CHECK(glob::match("**", ""));
  CHECK(glob::match("/home/*/.ssh/**", "/home/u/.ssh/id_rsa"));
  CHECK_FALSE(glob::match("/home/*/.ssh/**", "/home/u/x/.ssh/id_rsa"));
  // "**/" also matches zero directories (globstar).
  CHECK(glob::match("**/*.pem", "key.pem"));
  CHECK(glob::match("**/*.pem", "a/b/key.pem"));
  CHECK(glob::match("/a/**/b", "/a/b"));
  CHECK(glob::match("/a/**/b", "/a/x/y/b"));
  CHECK_FALSE(glob::match("/a/**/b", "/a/xb"));
  CHECK(glob::match("a***b", "a/x/b"));  // runs of 3+ stars act like "**"
  CHECK(glob::match("*", ""));
  CHECK(glob::match("", ""));
  CHECK_FALSE(glob::match("", "x"));
}

TEST_CASE("glob question mark and brackets", "[glob]") {
  CHECK(glob::match("?.txt", "a.txt"));
  CHECK_FALSE(glob::match("?.txt", "ab.txt"));
  CHECK_FALSE(glob::match("?.txt", ".txt"));
  CHECK_FALSE(glob::match("a?b", "a/b"));
  CHECK(glob::match("?", "\xC3\xA9"));  // one UTF-8 character
  CHECK(glob::match("[abc].c", "b.c"));
  CHECK_FALSE(glob::match("[abc].c", "d.c"));
  CHECK(glob::match("[a-c]", "b"));
  CHECK_FALSE(glob::match("[a-c]", "d"));
  CHECK(glob::match("[!a-c]", "d"));
  CHECK_FALSE(glob::match("[!a-c]", "a"));
  CHECK(glob::match("[^a-c]", "z"));
  CHECK_FALSE(glob::match("[^a-c]", "b"));
  CHECK_FALSE(glob::match("a[!x]b", "a/b"));  // negated class never matches "/"
  CHECK(glob::match("[]]", "]"));             // "]" first is literal
  CHECK(glob::match("[!]]", "a"));
  CHECK_FALSE(glob::match("[!]]", "]"));
  CHECK(glob::match("[a-]", "-"));  // trailing "-" is literal
  CHECK(glob::match("[\\]]", "]"));
  CHECK(glob::match("[.*+?(){}|$^\\\\]", "\\"));
  CHECK(glob::match("[.*+?(){}|$^\\\\]", "$"));
  CHECK_FALSE(glob::match("[.*+?(){}|$^\\\\]", "a"));
  CHECK_FALSE(glob::match("[z-a]", "m"));  // reversed range matches nothing
  CHECK(glob::match("[\xC3\xA9\xC3\xA8]", "\xC3\xA8"));
  CHECK(glob::match("[\xC3\xA0-\xC3\xBF]", "\xC3\xA9"));
}

TEST_CASE("glob escapes and literal metacharacters", "[glob]") {
  CHECK(glob::match("\\*", "*"));
  CHECK_FALSE(glob::match("\\*", "a"));
  CHECK(glob::match("a\\?", "a?"));
  CHECK(glob::match("\\[x]", "[x]"));
  CHECK(glob::match("a\\", "a\\"));    // trailing backslash literal
  CHECK(glob::match("[abc", "[abc"));  // unmatched "[" literal
  CHECK(glob::match("[[[[", "[[[["));
  CHECK(glob::match("a.b", "a.b"));
  CHECK_FALSE(glob::match("a.b", "axb"));  // "." is literal
  CHECK(glob::match("(a|b)+$^{2}", "(a|b)+$^{2}"));
  CHECK_FALSE(glob::match("(a|b)", "a"));
  CHECK(glob::match("x\0y"s, "x\0y"s));
  CHECK_FALSE(glob::match("x\0y"s, "x"));
  CHECK(glob::match("*", "line1\nline2"));  // newlines are ordinary characters
}

TEST_CASE("glob to_regex output", "[glob]") {
  CHECK(glob::to_regex("*.py") == "(?s)^(?:[^/]*\\.py)$");
  CHECK(glob::to_regex("a/**") == "(?s)^(?:a\\/.*)$");
  CHECK(glob::to_regex("**/x") == "(?s)^(?:(?:.*/)?x)$");
  CHECK(glob::to_regex("?") == "(?s)^(?:[^/])$");
  CHECK(glob::to_regex("[!a-c]") == "(?s)^(?:[^/a-c])$");
  CHECK(glob::to_regex("[abc") == "(?s)^(?:\\[abc)$");
}

TEST_CASE("glob with invalid UTF-8 text cannot slip past wildcards", "[glob]") {
  CHECK(glob::match("/etc/*", "/etc/\xFF\xFE"));
  CHECK(glob::match("/etc/**", "/etc/a/\xC0\xAF/b"));
  CHECK(glob::match("*.key", "\xFF.key"));
  CHECK(glob::match("?", "\xFF"));
  CHECK_FALSE(glob::match("/etc/*", "/etc/\xFF/x"));
  CHECK(glob::match("[!a]", "\xFF"));
  CHECK(glob::match("\xFF*", "\xFFzz"));  // invalid UTF-8 in the glob itself
}

TEST_CASE("glob matching handles 1 MB inputs", "[glob]") {
  const std::string big(1 << 20, 'a');
  CHECK(glob::match("*", big));
  CHECK(glob::match("**", big + "/" + big));
  CHECK_FALSE(glob::match("*b", big));
  CHECK_FALSE(glob::match("*a*a*a*a*a*a*a*a*b", big));  // catastrophic for backtrackers
  CHECK(glob::match("**/*.txt", big + "/x.txt"));
  std::string bad(1 << 20, '\xFF');
  CHECK(glob::match("*", bad));
  // A 1 MB glob (rules are trusted, but it must still be safe): translated in linear time;
  // matching may fail closed if it exceeds RE2's memory budget, but must not crash.
  std::string bigglob(1 << 20, '[');
  CHECK(glob::to_regex(bigglob).size() > (1u << 20));
  (void)glob::match(bigglob, bigglob);
  (void)glob::match(std::string(1 << 20, '*'), "abc");
}

TEST_CASE("a glob too large to compile throws instead of reporting no match", "[glob]") {
  // "No match" would let a rule that forbids what the glob describes fail open.
  CHECK_THROWS_AS(glob::match(std::string(1 << 16, '?'), std::string(1 << 16, 'a')),
                  std::runtime_error);
  CHECK_THROWS_AS(glob::match(std::string(1 << 16, '?'), "a"), std::runtime_error);
}

TEST_CASE("glob cache is safe under concurrency and bounded", "[glob]") {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &failures] {
      for (int i = 0; i < 1500; ++i) {  // > cache capacity: exercises clearing
        const std::string n = std::to_string((i * 7 + t) % 1500);
        if (!glob::match("/p" + n + "/*.c", "/p" + n + "/x.c")) ++failures;
        if (glob::match("/p" + n + "/*.c", "/q" + n + "/x.c")) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures == 0);
}
