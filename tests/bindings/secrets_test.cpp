// Tests for warden::secrets (known token formats, high-entropy heuristic, redaction).
// Run with: bindings_tests "[secrets]". Single-threaded except the concurrency case.
#include <catch2/catch.hpp>

#include <chrono>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bindings/secrets.h"

using namespace std::string_literals;
namespace secrets = warden::secrets;

namespace {
std::string kinds(std::string_view text) {
  std::string out;
  for (const auto& f : secrets::find(text)) {
    if (!out.empty()) out += ",";
    out += f.kind;
  }
  return out;
}

std::string random_base64(std::size_t n, unsigned seed) {
  static const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937 rng(seed);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(alphabet[rng() % 64]);
  return s;
}

std::string random_hex(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::string s;
  for (std::size_t i = 0; i < n; ++i) s.push_back("0123456789abcdef"[rng() % 16]);
  return s;
}

const std::string kGithub = "ghp_" + std::string("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5");  // 36
const std::string kAnthropic = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWx_yz-0123456789";
const std::string kOpenAi = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123";
}  // namespace

TEST_CASE("known token formats are detected with their kind", "[secrets]") {
  CHECK(kinds("key AKIAIOSFODNN7EXAMPLE here") == "aws-access-key");
  CHECK(kinds("ASIAY34FZKBOKMUTVV7A") == "aws-access-key");
  CHECK(kinds("A3T1ABCDEFGHIJKLMNOP") == "aws-access-key");
  CHECK(kinds("token=" + kGithub) == "github-token");
  CHECK(kinds("gho_" + std::string(36, 'a')) == "github-token");
  CHECK(kinds("github_pat_11ABCDEFG0123456789_abcdefghijklmnop") == "github-token");
  CHECK(kinds("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx") == "openai-key");
  CHECK(kinds(kOpenAi) == "openai-key");
  CHECK(kinds(kAnthropic) == "anthropic-key");  // not also openai
  CHECK(kinds("xoxb-123456789012-abcdefghij") == "slack-token");
  CHECK(kinds("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
              "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U") == "jwt");
}

TEST_CASE("findings have correct offsets and are sorted", "[secrets]") {
  const std::string text = "a=AKIAIOSFODNN7EXAMPLE b=" + kGithub + " c=" + kAnthropic;
  const auto f = secrets::find(text);
  REQUIRE(f.size() == 3);
  CHECK(f[0].offset == 2);
  CHECK(f[0].length == 20);
  CHECK(text.substr(f[1].offset, f[1].length) == kGithub);
  CHECK(text.substr(f[2].offset, f[2].length) == kAnthropic);
  CHECK(f[0].offset < f[1].offset);
  CHECK(f[1].offset < f[2].offset);
}

TEST_CASE("private keys span to the END line", "[secrets]") {
  const std::string key =
      "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bq8\nabc\n-----END RSA PRIVATE KEY-----";
  const std::string text = "before\n" + key + "\nafter";
  auto f = secrets::find(text);
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == "private-key");
  CHECK(text.substr(f[0].offset, f[0].length) == key);
  CHECK(secrets::redact(text) == "before\n[REDACTED]\nafter");
  // Without an END line only the header is certain; body lines may still be flagged.
  f = secrets::find("-----BEGIN OPENSSH PRIVATE KEY-----\n");
  REQUIRE(f.size() == 1);
  CHECK(f[0].length == 35);
  CHECK(kinds("-----BEGIN PRIVATE KEY-----") == "private-key");
  CHECK(kinds("-----BEGIN PUBLIC KEY-----") == "");
  // Two keys: each spans to its own END.
  const auto two = secrets::find(key + "\n" + key);
  CHECK(two.size() == 2);
}

TEST_CASE("left boundary avoids substrings of words", "[secrets]") {
  CHECK(kinds("the risk-assessment-framework-document") == "");
  CHECK(kinds("task-management-system-overview") == "");
  CHECK(kinds("XAKIAIOSFODNN7EXAMPLE") != "aws-access-key");
  CHECK(kinds("sk-short") == "");
  CHECK(kinds("ghp_tooShort123") == "");
  CHECK(kinds("xoxb-short") == "");
  // A real key right after the false start is still found.
  CHECK(kinds("risk-x sk-abcdefghijklmnopqrstuvwx") == "openai-key");
}

TEST_CASE("high-entropy tokens", "[secrets]") {
  // AWS secret access key (the documented example) and random base64.
  CHECK(kinds("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY") ==
        "high-entropy");
  for (unsigned seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    CHECK(kinds("data " + random_base64(32, seed) + " end") == "high-entropy");
    CHECK(kinds(random_base64(44, seed) + "==") == "high-entropy");
  }
  // "key=value": the value is the token, "=" padding stays with the token.
  const std::string v = random_base64(40, 99);
  const auto f = secrets::find("password=" + v);
  REQUIRE(f.size() == 1);
  CHECK(f[0].offset == 9);
  CHECK(f[0].length == v.size());
}

TEST_CASE("high-entropy near misses are not flagged", "[secrets]") {
  CHECK(kinds("The quick brown fox jumps over the lazy dog and keeps on running far away.") == "");
  CHECK(kinds("Internationalization localization characterization") == "");  // long words
  CHECK(kinds("/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30") == "");
  CHECK(kinds("/home/user/projects/warden/bindings/secrets_test.cpp") == "");
  CHECK(kinds("/var/lib/docker/overlay2/" + random_hex(64, 1) + "/merged") == "");
  CHECK(kinds("commit " + random_hex(40, 7)) == "");  // git sha
  CHECK(kinds("sha256:" + random_hex(64, 3)) == "");
  CHECK(kinds("550e8400-e29b-41d4-a716-446655440000") == "");        // UUID
  CHECK(kinds("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnop") == "");  // no digit
  CHECK(kinds("012345678901234567890123456789") == "");              // no letter
  CHECK(kinds(random_base64(23, 5)) == "");                          // too short
  CHECK(kinds("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1") == "");           // low entropy
  CHECK(kinds("") == "");
  CHECK_FALSE(secrets::looks_like_secret("ls -la /tmp && echo done"));
}

TEST_CASE("paths with random names from mktemp are not secrets; a secret in a path still is",
          "[secrets]") {
  // mktemp's suffixes after a dot start a token of their own: these were "secrets" before.
  for (const char* suffix : {"iT1WyS", "Qz8kP2", "a9ZxW4", "R7tY3u", "mN5bV1", "Xk3jQ9"}) {
    const std::string path = std::string("/tmp/warden-e2e.") + suffix + "/warden/home/dash-marker";
    INFO(path);
    CHECK(kinds(path) == "");
    CHECK_FALSE(secrets::looks_like_secret("touch " + path));
    CHECK_FALSE(secrets::looks_like_secret("cp x --target=" + path));
    CHECK_FALSE(secrets::looks_like_secret("ls ~/.cache/run." + std::string(suffix) +
                                           "/objects/pack-data"));
  }
  // A secret's length of randomness in one segment is still found, in a path or after it.
  const std::string key = random_base64(40, 11);
  CHECK(kinds("/tmp/run.x/" + key + "/out") == "high-entropy");
  CHECK(kinds("echo " + key) == "high-entropy");
}

TEST_CASE("overlapping candidates merge into one finding", "[secrets]") {
  // A known key embedded in a longer random token: the whole token is covered.
  const std::string tok = "AKIAIOSFODNN7EXAMPLE" + random_base64(30, 11);
  const auto f = secrets::find("x " + tok + " y");
  REQUIRE(f.size() == 1);
  CHECK(f[0].kind == "aws-access-key");
  CHECK(f[0].offset == 2);
  CHECK(f[0].length == tok.size());
  CHECK(secrets::redact("x " + tok + " y") == "x [REDACTED] y");
}

TEST_CASE("redact and looks_like_secret", "[secrets]") {
  CHECK(secrets::redact("export GH=" + kGithub + "; echo ok") == "export GH=[REDACTED]; echo ok");
  CHECK(secrets::redact("a AKIAIOSFODNN7EXAMPLE b AKIAIOSFODNN7EXAMPLF", "***") == "a *** b ***");
  CHECK(secrets::redact("nothing here") == "nothing here");
  CHECK(secrets::redact("") == "");
  CHECK(secrets::redact(kOpenAi, "") == "");
  CHECK(secrets::looks_like_secret(kAnthropic));
  CHECK_FALSE(secrets::looks_like_secret("hello world"));
}

TEST_CASE("secrets tolerate binary and invalid UTF-8", "[secrets]") {
  const std::string text = "\xFF\xFE\0AKIAIOSFODNN7EXAMPLE\xC0\xAF"s;
  const auto f = secrets::find(text);
  REQUIRE(f.size() == 1);
  CHECK(f[0].offset == 3);
  CHECK(secrets::redact(text) == "\xFF\xFE\0[REDACTED]\xC0\xAF"s);
}

TEST_CASE("secrets handle 1 MB inputs", "[secrets]") {
  std::string prose;
  while (prose.size() < (1 << 20)) prose += "the quick brown fox jumps over the lazy dog. ";
  CHECK(secrets::find(prose).empty());
  const std::string rnd = random_base64(1 << 20, 42);
  auto f = secrets::find(rnd);
  REQUIRE(f.size() == 1);
  CHECK(f[0].length == rnd.size());
  CHECK(secrets::redact(rnd) == "[REDACTED]");
  std::string headers;
  while (headers.size() < (1 << 20)) headers += "-----BEGIN RSA PRIVATE KEY-----";
  CHECK(secrets::find(headers).size() == headers.size() / 31);
  std::string dashes;
  while (dashes.size() < (1 << 20)) dashes += "ask-";
  CHECK(secrets::find(dashes).empty());
  std::string sks;
  while (sks.size() < (1 << 20)) sks += " sk-";
  CHECK(secrets::find(sks).empty());
  std::string many;
  while (many.size() < (1 << 20)) many += "AKIAIOSFODNN7EXAMPLE ";
  CHECK(secrets::find(many).size() == many.size() / 21);
  CHECK(secrets::find(std::string(1 << 20, '\xFF')).empty());
  CHECK(secrets::find(std::string(1 << 20, 'a')).empty());
}

TEST_CASE("secrets find is thread-safe", "[secrets]") {
  std::vector<std::thread> threads;
  std::vector<int> counts(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &counts] {
      for (int i = 0; i < 200; ++i)
        counts[t] += static_cast<int>(secrets::find("k=" + kGithub).size());
    });
  }
  for (auto& th : threads) th.join();
  for (int c : counts) CHECK(c == 200);
}

TEST_CASE("identifier-like tokens are not high-entropy", "[secrets]") {
  CHECK(kinds("ThisIsAVeryLongIdentifierName2024") == "");
  CHECK(kinds("getUserAccountBalanceForCustomer1") == "");
  CHECK(kinds("my-project-2024-final-version-backup") == "");
  CHECK(kinds("com/example/MyService2/Handler") == "");
  CHECK(kinds("internal/pkg/controllers/reconciler_v2/handler") == "");
  CHECK(kinds("test_user_authentication_handler_v2") == "");
  // ...but base64 of text and random base64url still are.
  CHECK(kinds("SGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q=") == "high-entropy");
  CHECK(kinds("Zx9_Qm3-Lp7aKw2_Rt5vNb8-Yc4uHj6e") == "high-entropy");
}

namespace {
// Each byte of s as %XX.
std::string percent_all(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    out += '%';
    out += "0123456789ABCDEF"[c >> 4];
    out += "0123456789ABCDEF"[c & 15];
  }
  return out;
}
// Each byte of s as a JSON/JavaScript \u escape.
std::string u_escape_all(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    out += "\\u00";
    out += "0123456789abcdef"[c >> 4];
    out += "0123456789abcdef"[c & 15];
  }
  return out;
}
}  // namespace

TEST_CASE("a key written in an encoded form is found, and redacted where it is written",
          "[secrets][forms]") {
  const std::string aws = "AKIAIOSFODNN7EXAMPLE";
  struct Case {
    std::string text;  // the form
    std::string kind;
  };
  const std::vector<Case> cases = {
      // percent-encoded: the whole key, only its dashes, twice over (%25 is "%")
      {percent_all(kOpenAi), "openai-key"},
      {"https://x.example/?k=sk%2Dproj%2DAbCdEfGhIjKlMnOpQrStUvWx0123", "openai-key"},
      {"q=sk%252Dproj%252DAbCdEfGhIjKlMnOpQrStUvWx0123", "openai-key"},
      {"%u0073k-proj-AbCdEfGhIjKlMnOpQrStUvWx0123", "openai-key"},
      // \u-escaped (JSON, JavaScript, Python), \u{…}, \x, octal, HTML entities
      {u_escape_all(kAnthropic), "anthropic-key"},
      {"{\"k\":\"\\u0067hp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5\"}", "github-token"},
      {"\\u{41}KIAIOSFODNN7EXAMPLE", "aws-access-key"},
      {"printf '\\x73\\x6b-proj-AbCdEfGhIjKlMnOpQrStUvWx0123'", "openai-key"},
      {"printf '\\163\\153-proj-AbCdEfGhIjKlMnOpQrStUvWx0123'", "openai-key"},
      {"&#115;&#x6b;-proj-AbCdEfGhIjKlMnOpQrStUvWx0123", "openai-key"},
      // split: shell quote concatenation, string concatenation, line continuation
      {"curl -d 'k=sk-pr''oj-AbCdEfGhIjKl''MnOpQrStUvWx0123' https://x.example", "openai-key"},
      {"echo sk-pro\"j-AbCdEf\"GhIjKlMnOpQrStUvWx0123", "openai-key"},
      {"key = \"AKIAIOSF\" + \"ODNN7EXAMPLE\"", "aws-access-key"},
      {"$k = 'AKIAIOSF' . 'ODNN7EXAMPLE';", "aws-access-key"},
      {"k = (\"AKIAIOSF\" \"ODNN7EXAMPLE\")", "aws-access-key"},
      {"export K=sk-proj-AbCdEfGhIj\\\nKlMnOpQrStUvWx0123", "openai-key"},
      // forms mixed in one key
      {"sk%2Dproj-\\u0041bCdEf'GhIj'KlMnOpQrStUvWx0123", "openai-key"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    const auto found = secrets::find(c.text);
    REQUIRE(found.size() == 1);
    CHECK(found[0].kind == c.kind);
    CHECK(secrets::looks_like_secret(c.text));
    // Redaction covers the form as written: nothing of the key is left.
    const std::string redacted = secrets::redact(c.text);
    CHECK(redacted.find("[REDACTED]") != std::string::npos);
    CHECK_FALSE(secrets::looks_like_secret(redacted));
    CHECK(redacted.find("0123") == std::string::npos);
    CHECK(redacted.find("EXAMPLE") == std::string::npos);
  }
  // The span is the encoded text's: here, from "sk%2D" to the key's end.
  const std::string url = "https://x.example/?k=sk%2Dproj%2DAbCdEfGhIjKlMnOpQrStUvWx0123&z=1";
  const auto f = secrets::find(url);
  REQUIRE(f.size() == 1);
  CHECK(url.substr(f[0].offset, f[0].length) == "sk%2Dproj%2DAbCdEfGhIjKlMnOpQrStUvWx0123");
  CHECK(secrets::redact(url) == "https://x.example/?k=[REDACTED]&z=1");
  // A high-entropy secret split in two halves neither of which is long enough alone.
  const std::string b64 = random_base64(32, 77);
  const std::string split = "t = '" + b64.substr(0, 16) + "' + '" + b64.substr(16) + "'";
  CHECK(secrets::find("t = '" + b64.substr(0, 16) + "'").empty());
  CHECK(kinds(split) == "high-entropy");
  // Found in the text as it is and in its decoded form at once: one finding.
  CHECK(secrets::find(kOpenAi + " " + percent_all(kOpenAi)).size() == 2);
}

TEST_CASE("encoded and quoted text that holds no key is not a secret", "[secrets][forms]") {
  CHECK(kinds("https://example.com/search?q=hello%20world%21&lang=en") == "");
  CHECK(kinds("/home/user/My%20Documents/notes%2Etxt") == "");
  CHECK(kinds("git commit -m \"fix the parser\" && git push origin 'main'") == "");
  CHECK(kinds("{\"name\":\"caf\\u00e9\",\"text\":\"na\\u00efve r\\u00e9sum\\u00e9\"}") == "");
  CHECK(kinds("printf 'a\\tb\\n' \\\n  && echo \"$HOME\"") == "");
  CHECK(kinds("x = \"hello\" + \"world\" + \"again\"") == "");
  CHECK(kinds("Fish &amp; chips &#8211; 100% tasty") == "");
  // Malformed forms stay as they are (and hold nothing).
  CHECK(kinds("100%zz \\u12 \\x4 &#; &#xZZ; \\u{110000} \\uD800") == "");
}

TEST_CASE("encoded forms in 1 MB inputs", "[secrets][forms]") {
  // Forms that decode to nothing secret, forms cut short, and many keys in one form.
  std::string percents;
  while (percents.size() < (1 << 20)) percents += "%41";
  CHECK(secrets::find(percents).empty());
  std::string open_braces;
  while (open_braces.size() < (1 << 20)) open_braces += "\\u{";
  CHECK(secrets::find(open_braces).empty());
  std::string quotes;
  while (quotes.size() < (1 << 20)) quotes += "'' + ";
  CHECK(secrets::find(quotes).empty());
  std::string keys;
  const std::string one = percent_all(kOpenAi) + " ";
  while (keys.size() < (1 << 20)) keys += one;
  const auto f = secrets::find(keys);
  CHECK(f.size() == keys.size() / one.size());
  for (const auto& finding : f) CHECK(finding.kind == "openai-key");
}
