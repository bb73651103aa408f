// Masking: for every kind the detector knows, the masked text keeps its length and the kind's
// prefix, is still found as a secret of the same kind at the same place, and no longer holds
// the secret; the same key masks the same secret the same way, another key differently.
#include "audit/mask.h"

#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "bindings/secrets.h"
#include "tests/build_paths.h"
#include "tests/support/temp_dir.h"

using namespace warden::audit;
using warden::server::testing::TempDir;

namespace {

struct Sample {
  const char* kind;
  std::string secret;
  std::string kept_prefix;
};

std::vector<Sample> samples() {
  return {
      {"private-key",
       "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
       "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----",
       "-----BEGIN RSA PRIVATE KEY-----\n"},
      {"anthropic-key", "sk-ant-api03-Qx7Lm2Np9Rt4Vw6Yb1Cd3Ef5Gh8Jk0MnPqRsTuVwXyZ", "sk-ant-"},
      {"openai-key", "sk-proj-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPq", "sk-proj-"},
      {"openai-key", "sk-Tz8Kq3Lm7Np2Rt5Vw9Yb4Cd6Ef1Gh0JkLmNoPqRsTuVwXy", "sk-"},
      {"github-token", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5", "ghp_"},
      {"github-token", "github_pat_11ABCDEFG0123456789_abcdefghijKLMNOPqrstuv", "github_pat_"},
      {"aws-access-key", "AKIAIOSFODNN7EXAMPLE", "AKIA"},
      {"slack-token", "xoxb-2048576012-3901274856-Zq8Xw7Vu6Ts5Rq", "xoxb-"},
      {"jwt",
       "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
       "eyJ"},
      {"high-entropy", "Zx9Kq2Lm8Np4Rt6Vw1Yb3Cd5Ef7Gh0Jp", ""},
  };
}

}  // namespace

TEST_CASE("each kind masks to a same-kind secret of the same length, without the secret",
          "[mask]") {
  const Masker masker(std::string(32, 'k'));
  for (const Sample& s : samples()) {
    INFO(s.kind << ": " << s.secret);
    const std::string before = "run --token=" + s.secret + " now";
    const auto found = warden::secrets::find(before);
    REQUIRE(found.size() == 1);
    REQUIRE(found[0].kind == s.kind);
    const std::size_t offset = found[0].offset;
    REQUIRE(before.substr(offset, found[0].length) == s.secret);

    std::string text = before;
    std::vector<Mask> masks;
    masker.mask_text(&text, "/input/payload/command", &masks);
    REQUIRE(masks.size() == 1);
    CHECK(masks[0].field == "/input/payload/command");
    CHECK(masks[0].offset == offset);
    CHECK(masks[0].length == s.secret.size());
    CHECK(masks[0].kind == s.kind);
    REQUIRE(text.size() == before.size());
    CHECK(text.find(s.secret) == std::string::npos);
    CHECK(text.starts_with("run --token=" + s.kept_prefix));
    CHECK(text.ends_with(" now"));
    const std::string masked = text.substr(offset, s.secret.size());
    // Punctuation and character classes kept byte for byte.
    for (std::size_t i = 0; i < masked.size(); ++i) {
      const char a = s.secret[i], b = masked[i];
      INFO("byte " << i);
      if (std::isupper(static_cast<unsigned char>(a)))
        CHECK(std::isupper(static_cast<unsigned char>(b)));
      else if (std::islower(static_cast<unsigned char>(a)))
        CHECK(std::islower(static_cast<unsigned char>(b)));
      else if (std::isdigit(static_cast<unsigned char>(a)))
        CHECK(std::isdigit(static_cast<unsigned char>(b)));
      else
        CHECK(a == b);
    }
    const auto again = warden::secrets::find(text);
    REQUIRE(again.size() == 1);
    CHECK(again[0].kind == s.kind);
    CHECK(again[0].offset == offset);
    CHECK(again[0].length == s.secret.size());
  }
}

TEST_CASE("the same key masks a secret the same way; another key differently", "[mask]") {
  const Masker a(std::string(32, 'a')), a2(std::string(32, 'a')), b(std::string(32, 'b'));
  for (const Sample& s : samples()) {
    INFO(s.kind);
    std::string x = s.secret, y = s.secret, z = s.secret, again = s.secret;
    a.mask_text(&x, "/x", nullptr);
    a2.mask_text(&y, "/x", nullptr);
    b.mask_text(&z, "/x", nullptr);
    a.mask_text(&again, "/x", nullptr);
    CHECK(x == y);
    CHECK(x == again);
    CHECK(x != z);
    CHECK(x != s.secret);
  }
}

TEST_CASE("text without secrets is left alone; several secrets are each masked", "[mask]") {
  const Masker masker(std::string(32, 'k'));
  std::string plain = "git status && ls -la /home/user/project-2024-final";
  std::vector<Mask> masks;
  masker.mask_text(&plain, "/p", &masks);
  CHECK(plain == "git status && ls -la /home/user/project-2024-final");
  CHECK(masks.empty());

  const std::string two_before =
      "A=AKIAIOSFODNN7EXAMPLE B=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";
  std::string two = two_before;
  masker.mask_text(&two, "/p", &masks);
  REQUIRE(masks.size() == 2);
  CHECK(masks[0].kind == "aws-access-key");
  CHECK(masks[0].offset == 2);
  CHECK(masks[0].length == 20);
  CHECK(masks[1].kind == "github-token");
  CHECK(masks[1].offset == 25);
  CHECK(masks[1].length == 40);
  CHECK(two.size() == two_before.size());
  CHECK(two.find("AKIAIOSFODNN7EXAMPLE") == std::string::npos);
  CHECK(two.find("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5") == std::string::npos);
}

TEST_CASE("mask_value masks strings and member names with JSON pointers", "[mask]") {
  const Masker masker(std::string(32, 'k'));
  rapidjson::Document doc;
  doc.Parse(
      R"({"payload":{"command":"curl -H 'Authorization: token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5'",)"
      R"("args":["x","AKIAIOSFODNN7EXAMPLE"],"a/b~c":"sk-ant-api03-Qx7Lm2Np9Rt4Vw6Yb1Cd3Ef5Gh8Jk0MnPqRsTuVwXyZ",)"
      R"("AKIAIOSFODNN7EXAMPLE":1}})");
  REQUIRE_FALSE(doc.HasParseError());
  std::vector<Mask> masks;
  masker.mask_value(doc, doc.GetAllocator(), "/input", &masks);
  REQUIRE(masks.size() == 4);
  CHECK(masks[0].field == "/input/payload/command");
  CHECK(masks[0].kind == "github-token");
  CHECK(masks[0].offset == 30);
  CHECK(masks[1].field == "/input/payload/args/1");
  CHECK(masks[1].kind == "aws-access-key");
  CHECK(masks[2].field == "/input/payload/a~1b~0c");
  CHECK(masks[2].kind == "anthropic-key");
  CHECK(masks[3].kind == "aws-access-key");
  CHECK(masks[3].field.starts_with("/input/payload/AKIA"));
  CHECK(masks[3].field != "/input/payload/AKIAIOSFODNN7EXAMPLE");
  const std::string cmd = doc["payload"]["command"].GetString();
  CHECK(cmd.starts_with("curl -H 'Authorization: token ghp_"));
  CHECK(cmd.find("aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5") == std::string::npos);
  CHECK_FALSE(doc["payload"].HasMember("AKIAIOSFODNN7EXAMPLE"));
  CHECK(doc["payload"]["args"][0] == "x");
}

TEST_CASE("the mask key is created 0600 once, then read; a readable or short key is refused",
          "[mask]") {
  TempDir dir;
  const std::string path = dir.str() + "/mask.key";
  std::string error;
  auto m1 = Masker::load_or_create(path, &error);
  REQUIRE(m1);
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
  CHECK(st.st_size == 32);
  auto m2 = Masker::load_or_create(path, &error);
  REQUIRE(m2);
  std::string x = "AKIAIOSFODNN7EXAMPLE", y = x;
  m1->mask_text(&x, "/", nullptr);
  m2->mask_text(&y, "/", nullptr);
  CHECK(x == y);
  REQUIRE(::chmod(path.c_str(), 0644) == 0);
  CHECK_FALSE(Masker::load_or_create(path, &error));
  CHECK(error == "the mask key " + path +
                     " has mode 0644: group or others may access it (chmod 600 " + path + ")");
  dir.write("short.key", "0123456789", 0600);
  CHECK_FALSE(Masker::load_or_create(dir.str() + "/short.key", &error));
  CHECK(error == "the mask key " + dir.str() + "/short.key is not 32 bytes (it has 10)");
}

namespace {

// The shipped rules' secrets-other-format-p regex, read from the rule file itself, so the
// masker's hand-written detector is checked against the regex the rules run.
std::string other_format_regex() {
  std::ifstream in(WARDEN_SOURCE_DIR "/rules/secrets_outbound.clp");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  const auto def = text.find("(deffunction secrets-other-format-p");
  REQUIRE(def != std::string::npos);
  const std::string open = "(regex-match \"";
  const auto b = text.find(open, def);
  REQUIRE(b != std::string::npos);
  const auto e = text.find("\" ?v)", b);
  REQUIRE(e != std::string::npos);
  std::string raw = text.substr(b + open.size(), e - b - open.size());
  std::string pattern;  // CLIPS string escapes: \\ → \, \" → "
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\\' && i + 1 < raw.size()) ++i;
    pattern.push_back(raw[i]);
  }
  return pattern;
}

struct Other {
  std::string token;
  std::string secret;  // the part that must not survive
};

std::vector<Other> other_formats() {
  return {
      {"postgres://admin:Zq8vK2mP9xL4tR7w@db.internal:5432/prod", "Zq8vK2mP9xL4tR7w"},
      {"redis://default:hunter2hunter2@cache.internal:6379/0", "hunter2hunter2"},
      {"https://deploy:correct-horse-battery@git.example.com/r.git", "correct-horse-battery"},
      {"ftp://me:p\xC3\xA4sswort@files.example.com", "p\xC3\xA4sswort"},
      {"sk_live_abcdefghijklmnopqrst", "abcdefghijklmnopqrst"},
      {"rk_live_51H8zQ2eZvKYlo2C8dTq3mWx", "51H8zQ2eZvKYlo2C8dTq3mWx"},
      {"glpat-abcdefghijklmnopqrstuvwx", "abcdefghijklmnopqrstuvwx"},
      {"npm_abcdefghijklmnopqrstuvwxyzabcdefghij", "abcdefghijklmnopqrstuvwxyzabcdefghij"},
      {"pypi-AgEabcdefghijklmnopqrstuvwxyzabcdefghijklmnop",
       "abcdefghijklmnopqrstuvwxyzabcdefghijklmnop"},
      {"hf_abcdefghijklmnopqrstuvwxyzabcdefgh", "abcdefghijklmnopqrstuvwxyzabcdefgh"},
      {"dop_v1_" + std::string("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
       "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"},
      {"SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq",
       "abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq"},
      {"AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"},
  };
}

}  // namespace

// Secrets the shipped rules find (secrets-other-format-p) and secrets::find may not: each is
// masked, keeps its length and prefix, and the rule's own regex still matches the masked text.
TEST_CASE("the formats the shipped rules find are masked, and the rule still finds them",
          "[mask]") {
  const std::regex rule(other_format_regex());
  const Masker masker(std::string(32, 'k'));
  for (const Other& o : other_formats()) {
    const std::string text = "use " + o.token + " now";
    INFO(text);
    REQUIRE(std::regex_search(text, rule));
    CHECK(holds_secret(text));
    CHECK(!find_secrets(text).empty());
    std::string masked = text;
    std::vector<Mask> masks;
    masker.mask_text(&masked, "/x", &masks);
    INFO("masked: " << masked);
    CHECK(masked.size() == text.size());
    CHECK(masked.find(o.secret) == std::string::npos);
    CHECK(masked.starts_with("use "));
    CHECK(masked.ends_with(" now"));
    CHECK(std::regex_search(masked, rule));
    REQUIRE(!masks.empty());
    CHECK(masks[0].field == "/x");
    // Deterministic: the same key masks the same way.
    std::string again = text;
    masker.mask_text(&again, "/x", nullptr);
    CHECK(again == masked);
  }
}

// What the rule does not match is not a URL password: no userinfo, a password under 3 bytes,
// no scheme, a bare host:port.
TEST_CASE("URL-like text without a password is left alone", "[mask]") {
  const std::regex rule(other_format_regex());
  for (const std::string text :
       {"https://example.com/a:b@c", "ssh://git@github.com:22/o/r", "postgres://u:pw@db/x",
        "://user:password@host", "http://host:8080/path", "sk_live_short", "npm_abc",
        "xhf_abcdefghijklmnopqrstuvwxyzabcdefgh"}) {
    INFO(text);
    CHECK_FALSE(std::regex_search(text, rule));
    CHECK_FALSE(holds_secret(text));
  }
}

// holds_secret's fast path (lowercase hex and '-', optionally after "sha256:") agrees with the
// detector: the daemon's ids and digests are never secrets.
TEST_CASE("hex ids and digests hold no secret, by the fast path and by the detector", "[mask]") {
  for (const std::string& text :
       {std::string("9f86d081884c7d659a2feaa0c55ad015"),
        std::string("8f14e45f-ceea-467f-a0e6-d2bbfe3b5b8e"),
        "sha256:" + std::string("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
        std::string(200, 'a'), std::string("")}) {
    INFO(text);
    CHECK(warden::secrets::find(text).empty());
    CHECK(find_secrets(text).empty());
    CHECK_FALSE(holds_secret(text));
  }
}

TEST_CASE("passwords and tokens given on a command line or in a header are masked", "[mask]") {
  const Masker masker(std::string(32, 'k'));
  struct Case {
    std::string text;
    std::string secret;
    const char* kind;
  };
  const std::vector<Case> cases = {
      {"curl -u admin:hunter2pw https://example.com/api", "hunter2pw", "command-password"},
      {"curl --user=deploy:s3cr3tvalue https://x", "s3cr3tvalue", "command-password"},
      {"mysql -u root -pCorrectHorse db", "CorrectHorse", "command-password"},
      {"mysqldump --password=Tr0ub4dor db", "Tr0ub4dor", "assigned-secret"},
      {"sshpass -p 'letmein99' ssh host", "letmein99", "command-password"},
      {"PGPASSWORD=pgsecret42 psql -h db", "pgsecret42", "assigned-secret"},
      {"export GITHUB_TOKEN=0123456789abcdef0123456789abcdef01234567",
       "0123456789abcdef0123456789abcdef01234567", "assigned-secret"},
      {"curl -H 'Authorization: Bearer 9f86d081884c7d659a2feaa0c55ad015' https://x",
       "9f86d081884c7d659a2feaa0c55ad015", "authorization-header"},
      {"curl -H \"PRIVATE-TOKEN: abcdef1234\" https://gitlab/x", "abcdef1234",
       "authorization-header"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::string text = c.text;
    std::vector<Mask> masks;
    masker.mask_text(&text, "/input/payload/command", &masks);
    CHECK(text.size() == c.text.size());
    CHECK(text.find(c.secret) == std::string::npos);
    REQUIRE(masks.size() == 1);
    CHECK(masks[0].kind == c.kind);
    CHECK(masks[0].offset == c.text.find(c.secret));
    CHECK(masks[0].length == c.secret.size());
    CHECK(holds_secret(c.text));
  }
  // Near misses: options and words that only look like it.
  for (const std::string plain : {"mysql -u root -p db", "curl -u admin https://x",
                                  "grep -r TOKEN= src", "ls --password-stdin", "max_tokens=100"}) {
    INFO(plain);
    std::string text = plain;
    masker.mask_text(&text, "/x", nullptr);
    CHECK(text == plain);
  }
}

TEST_CASE("approval ids are names, never masked as secrets", "[mask]") {
  const Masker masker(std::string(32, 'k'));
  // Ids whose letters and digits read as high-entropy to the detector: every one of 2000.
  int masked = 0;
  for (int i = 0; i < 2000; ++i) {
    char hex[25];
    std::snprintf(hex, sizeof hex, "%08x%08x%08x", static_cast<unsigned>(i * 2654435761u),
                  static_cast<unsigned>(i * 40503u + 7), static_cast<unsigned>(i ^ 0x9e3779b9u));
    const std::string id = std::string("apr_") + hex;
    std::string text = "approved by bob: " + id;
    masker.mask_text(&text, "/x", nullptr);
    masked += text.find(id) == std::string::npos ? 1 : 0;
    CHECK_FALSE(holds_secret(id));
  }
  CHECK(masked == 0);
}
