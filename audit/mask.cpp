// Format-preserving, keyed masking of the secrets the detector (bindings/secrets.h) finds.
#include "audit/mask.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <re2/re2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "bindings/secrets.h"
#include "bindings/text.h"

namespace warden::audit {
namespace {

constexpr std::size_t kKeyBytes = 32;
// A masking attempt whose result the detector would no longer name as the same kind (say the
// drawn letters of a high-entropy token all fall in a-f) is redrawn with the next attempt
// number; the first attempt almost always fits.
constexpr int kAttempts = 16;

bool alnum(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

// What draw() does with each byte of a secret.
enum : char {
  kRedraw = 0,   // a letter or digit becomes one of the same class (A-Z, a-z, 0-9)
  kKeep = 1,     // kept (a known prefix)
  kKeepHex = 2,  // a lowercase hex digit stays one (0-9a-f)
  kAny = 3,      // as kRedraw, and a non-ASCII byte becomes a lowercase letter
};

bool word(char c) { return alnum(c) || c == '_'; }
bool dash_word(char c) { return word(c) || c == '-'; }
bool hex_lower(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }
bool lower(char c) { return c >= 'a' && c <= 'z'; }

// "apr_" + 24 lowercase hex digits: the id of an approval (approvals/store.h).
bool is_approval_id(std::string_view s) {
  if (s.size() != 28 || !s.starts_with("apr_")) return false;
  return std::all_of(s.begin() + 4, s.end(), hex_lower);
}
bool letter(char c) { return lower(c) || (c >= 'A' && c <= 'Z'); }
bool space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::size_t run(std::string_view s, std::size_t at, bool (*in)(char)) {
  std::size_t j = at;
  while (j < s.size() && in(s[j])) ++j;
  return j - at;
}

// Marks the known kinds' literal prefixes in `s` (where one starts a token) as kept — the
// formats of secrets::find and of the shipped rules' secrets-other-format-p, so both still
// find the masked secret — and a DigitalOcean token's hex body as hex.
void keep_prefixes(std::string_view s, std::vector<char>& keep) {
  auto mark = [&](std::size_t at, std::size_t n) {
    for (std::size_t i = at; i < at + n && i < s.size(); ++i) keep[i] = kKeep;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const std::string_view rest = s.substr(i);
    if (rest.starts_with("-----BEGIN") || rest.starts_with("-----END")) {
      // The whole armour line "-----BEGIN RSA PRIVATE KEY-----".
      const std::size_t close = s.find("-----", i + 8);
      const std::size_t end = close == std::string_view::npos ? s.size() : close + 5;
      mark(i, end - i);
      i = end - 1;
      continue;
    }
    if (i > 0 && alnum(s[i - 1])) continue;
    if (rest.starts_with("sk_live_") || rest.starts_with("rk_live_") ||
        rest.starts_with("pypi-AgE")) {
      mark(i, 8);
    } else if (rest.starts_with("dop_v1_")) {
      mark(i, 7);
      for (std::size_t j = i + 7; j < s.size() && hex_lower(s[j]); ++j) keep[j] = kKeepHex;
    } else if (rest.starts_with("glpat-")) {
      mark(i, 6);
    } else if (rest.starts_with("npm_") || rest.starts_with("AIza")) {
      mark(i, 4);
    } else if (rest.starts_with("hf_") || rest.starts_with("SG.")) {
      mark(i, 3);
    } else if (rest.starts_with("sk-ant-")) {
      mark(i, 7);
    } else if (rest.starts_with("sk-proj-")) {
      mark(i, 8);
    } else if (rest.starts_with("sk-")) {
      mark(i, 3);
    } else if (rest.starts_with("github_pat_")) {
      mark(i, 11);
    } else if (rest.size() >= 4 && rest.starts_with("gh") &&
               std::string_view("pousr").find(rest[2]) != std::string_view::npos &&
               rest[3] == '_') {
      mark(i, 4);
    } else if (rest.starts_with("AKIA") || rest.starts_with("ASIA") || rest.starts_with("ABIA") ||
               rest.starts_with("ACCA") || rest.starts_with("A3T")) {
      mark(i, 4);
    } else if (rest.size() >= 5 && rest.starts_with("xox") &&
               std::string_view("baprs").find(rest[3]) != std::string_view::npos &&
               rest[4] == '-') {
      mark(i, 5);
    } else if (rest.starts_with("eyJ")) {
      mark(i, 3);
    }
  }
}

// Secrets written into a command line or a header, whatever their format: a password or
// token assigned to a variable (`PGPASSWORD=…`, `MYSQL_PWD=…`, `GITHUB_TOKEN=…`, `api_key=…`),
// curl's `-u user:PASSWORD`, a MySQL client's `-pPASSWORD`, `--password=…`, `sshpass -p …`,
// and `Authorization: Bearer|Basic|token …`, `X-Api-Key: …`, `PRIVATE-TOKEN: …` headers. The
// finding is the value only (quotes excluded), at least 3 bytes.
bool find_command_credentials(std::string_view s, std::vector<secrets::Finding>* out) {
  struct Pattern {
    const char* kind;
    const char* regex;  // group 1: the secret
    // Every match holds each literal of `needs` and, when it lists any, one of `needs_one_of`
    // (lowercase, in any ASCII case: in Latin-1, (?i) folds an ASCII letter only to its other
    // case). A text that does not is not scanned, and scanning is most of a short text's cost.
    std::array<const char*, 2> needs;
    std::array<const char*, 5> needs_one_of;
  };
  struct Compiled {
    const Pattern* pattern;
    std::unique_ptr<RE2> re;
  };
  static const Pattern list[] = {
      {"assigned-secret",
       R"((?i)(?:^|[^A-Za-z0-9_])[A-Za-z0-9_]*(?:PASSWORD|PASSWD|_PWD|_PASS|TOKEN|SECRET|API_?KEY|ACCESS_?KEY)=["']?([^\s"';&|]{3,}))",
       {"="},
       {"pass", "pwd", "token", "secret", "key"}},
      {"command-password",
       R"((?:^|\s)(?:-u\s*|--user[=\s]+)["']?[^\s:"']+:([^\s"';&|@]{3,}))",
       {"-u", ":"},
       {}},
      {"command-password",
       R"((?:^|[\s;&|(])(?:mysql|mariadb|mysqldump|mysqladmin|mysqlimport)\b[^;&|\n]*?\s-p([^\s"';&|-][^\s"';&|]{2,}))",
       {"-p"},
       {"mysql", "mariadb"}},
      {"command-password", R"((?:^|\s)--password[=\s]["']?([^\s"';&|]{3,}))", {"--password"}, {}},
      {"command-password",
       R"(\bsshpass\s+(?:-[A-Za-oq-z]\S*\s+)*-p\s*["']?([^\s"';&|]{3,}))",
       {"sshpass", "-p"},
       {}},
      {"authorization-header",
       R"((?i)\bauthorization\s*:\s*(?:bearer|basic|token|digest)\s+([A-Za-z0-9._~+/=-]{3,}))",
       {"authorization", ":"},
       {}},
      {"authorization-header",
       R"((?i)\b(?:x-api-key|api-key|private-token|x-auth-token|x-access-token)\s*:\s*([^\s"';&|]{3,}))",
       {":"},
       {"api-key", "-token"}},
  };
  static const std::vector<Compiled>* patterns = [] {
    auto* v = new std::vector<Compiled>();
    RE2::Options o;
    o.set_log_errors(false);
    o.set_encoding(RE2::Options::EncodingLatin1);  // byte-wise: any input
    o.set_max_mem(8 << 20);
    for (const Pattern& p : list) v->push_back({&p, std::make_unique<RE2>(p.regex, o)});
    return v;
  }();
  bool found = false;
  const re2::StringPiece input(s.data(), s.size());
  std::string lowered;  // s in ASCII lowercase, made when first needed
  const auto held = [&](const char* literal) {
    if (literal == nullptr) return true;
    if (lowered.size() != s.size()) {
      lowered.assign(s);
      for (char& c : lowered) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
    }
    return lowered.find(literal) != std::string::npos;
  };
  // Every pattern needs "=", ":" or "-p" (in any case).
  if (s.find_first_of("=:") == std::string_view::npos && s.find("-p") == std::string_view::npos &&
      s.find("-P") == std::string_view::npos) {
    return false;
  }
  for (const auto& [pattern, re] : *patterns) {
    if (!re->ok()) continue;
    if (!std::all_of(pattern->needs.begin(), pattern->needs.end(), held)) continue;
    if (pattern->needs_one_of[0] != nullptr &&
        !std::any_of(pattern->needs_one_of.begin(), pattern->needs_one_of.end(),
                     [&](const char* literal) { return literal != nullptr && held(literal); })) {
      continue;
    }
    const char* const kind = pattern->kind;
    re2::StringPiece groups[2];
    std::size_t at = 0;
    while (at < s.size() && re->Match(input, at, s.size(), RE2::UNANCHORED, groups, 2)) {
      const std::size_t end =
          static_cast<std::size_t>(groups[0].data() - s.data()) + groups[0].size();
      at = std::max(end, at + 1);
      if (groups[1].data() == nullptr || groups[1].empty()) continue;
      found = true;
      if (!out) return true;
      const std::size_t offset = static_cast<std::size_t>(groups[1].data() - s.data());
      const std::size_t length = groups[1].size();
      bool overlaps = false;
      for (const secrets::Finding& f : *out) {
        overlaps = overlaps || (offset < f.offset + f.length && f.offset < offset + length);
      }
      if (!overlaps) out->push_back({offset, length, kind});
    }
  }
  return found;
}

// Whether a word starting with `c`, `d` may be one of find_other_formats' prefixes (sk_live_,
// rk_live_, glpat-, npm_, pypi-AgE, hf_, dop_v1_, SG., AIza): most words are not.
bool other_format_start(char c, char d) {
  // Their first bytes, each once, and the second byte that goes with each.
  constexpr std::string_view kFirst = "srgnphdSA", kSecond = "kklpyfoGI";
  const std::size_t at = kFirst.find(c);
  return at != std::string_view::npos && kSecond[at] == d;
}

// The secrets of secrets-other-format-p (rules/secrets_outbound.clp) — its regex, by hand:
//   \b(?:sk|rk)_live_[0-9A-Za-z]{16,} | \bglpat-[0-9A-Za-z_-]{20,} | \bnpm_[0-9A-Za-z]{36}\b |
//   \bpypi-AgE[0-9A-Za-z_-]{40,} | \bhf_[A-Za-z]{30,}\b | \bdop_v1_[0-9a-f]{64}\b |
//   \bSG\.[0-9A-Za-z_-]{20,}\.[0-9A-Za-z_-]{40,} | \bAIza[0-9A-Za-z_-]{35}\b |
//   [a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]{3,}@
// Each finding is the part after the format's prefix (the URL's password), so a masked
// secret, whose bytes keep their class, still matches. (The -----BEGIN … PRIVATE KEY
// alternative is secrets::find's private-key.)
// With out == nullptr, stops at the first one: returns whether there is one.
bool find_other_formats(std::string_view s, std::vector<secrets::Finding>* out) {
  const std::size_t n = s.size();
  // The shortest: "a://u:pwd@" (10 bytes).
  if (n < 10) return false;
  bool found = false;
  auto add = [&](std::size_t at, std::size_t len, const char* kind) {
    found = true;
    if (out) out->push_back({at, len, kind});
  };
  for (std::size_t p = s.find("://"); p != std::string_view::npos; p = s.find("://", p + 1)) {
    bool scheme = false;
    for (std::size_t b = p; b > 0; --b) {
      const char c = s[b - 1];
      if (!(lower(c) || (c >= '0' && c <= '9') || c == '+' || c == '.' || c == '-')) break;
      scheme = scheme || lower(c);
    }
    if (!scheme) continue;
    std::size_t u = p + 3;
    while (u < n && s[u] != '/' && s[u] != ':' && s[u] != '@' && !space(s[u])) ++u;
    if (u == p + 3 || u >= n || s[u] != ':') continue;
    const std::size_t pw = u + 1;
    std::size_t e = pw;
    while (e < n && s[e] != '/' && s[e] != '@' && !space(s[e])) ++e;
    if (e < n && s[e] == '@' && e - pw >= 3) add(pw, e - pw, "url-password");
    if (found && !out) return true;
  }
  auto alnum_c = [](char c) { return alnum(c); };
  for (std::size_t i = 0; i + 3 < n; ++i) {
    if (i > 0 && word(s[i - 1])) continue;
    if (!other_format_start(s[i], s[i + 1])) continue;
    const std::string_view rest = s.substr(i);
    auto after = [&](std::size_t k) { return k < n && word(s[k]); };
    if (rest.starts_with("sk_live_") || rest.starts_with("rk_live_")) {
      const std::size_t len = run(s, i + 8, +alnum_c);
      if (len >= 16) add(i + 8, len, "stripe-key");
    } else if (rest.starts_with("glpat-")) {
      const std::size_t len = run(s, i + 6, dash_word);
      if (len >= 20) add(i + 6, len, "gitlab-token");
    } else if (rest.starts_with("npm_")) {
      const std::size_t len = run(s, i + 4, +alnum_c);
      if (len == 36 && !after(i + 4 + len)) add(i + 4, len, "npm-token");
    } else if (rest.starts_with("pypi-AgE")) {
      const std::size_t len = run(s, i + 8, dash_word);
      if (len >= 40) add(i + 8, len, "pypi-token");
    } else if (rest.starts_with("hf_")) {
      const std::size_t len = run(s, i + 3, letter);
      if (len >= 30 && !after(i + 3 + len)) add(i + 3, len, "huggingface-token");
    } else if (rest.starts_with("dop_v1_")) {
      const std::size_t len = run(s, i + 7, hex_lower);
      if (len == 64 && !after(i + 7 + len)) add(i + 7, len, "digitalocean-token");
    } else if (rest.starts_with("SG.")) {
      const std::size_t a = run(s, i + 3, dash_word);
      if (a >= 20 && i + 3 + a < n && s[i + 3 + a] == '.') {
        const std::size_t b = run(s, i + 4 + a, dash_word);
        if (b >= 40) add(i + 3, a + 1 + b, "sendgrid-key");
      }
    } else if (rest.starts_with("AIza")) {
      const std::size_t len = run(s, i + 4, dash_word);
      if (len >= 35 && word(s[i + 4 + 34]) != after(i + 4 + 35)) add(i + 4, 35, "google-api-key");
    }
    if (found && !out) return true;
  }
  if (find_command_credentials(s, out)) {
    found = true;
    if (!out) return true;
  }
  return found;
}

void hmac_sha256(std::string_view key, std::string_view data, unsigned char out[32]) {
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n) ||
      n != 32) {
    throw std::runtime_error("HMAC-SHA256 failed (OpenSSL)");
  }
}

// One masking of `secret`: attempt `attempt` of the keyed stream.
std::string draw(std::string_view key, std::string_view secret, const std::vector<char>& keep,
                 int attempt) {
  std::string seed_input;
  seed_input.reserve(secret.size() + 1);
  seed_input.push_back(static_cast<char>(attempt));
  seed_input.append(secret);
  unsigned char seed[32];
  hmac_sha256(key, seed_input, seed);
  const std::string_view seed_key(reinterpret_cast<const char*>(seed), sizeof seed);

  std::string out(secret);
  unsigned char block[32];
  std::size_t used = sizeof block;
  std::uint32_t counter = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    const char how = keep[i];
    const bool high = static_cast<unsigned char>(c) >= 0x80;
    if (how == kKeep || !(alnum(c) || (how == kAny && high))) continue;
    if (used == sizeof block) {
      const char ctr[4] = {static_cast<char>(counter >> 24), static_cast<char>(counter >> 16),
                           static_cast<char>(counter >> 8), static_cast<char>(counter)};
      hmac_sha256(seed_key, std::string_view(ctr, 4), block);
      ++counter;
      used = 0;
    }
    const unsigned r = block[used++];
    if (how == kKeepHex && hex_lower(c)) {
      out[i] = text::hex_digit(r);
    } else if (c >= 'A' && c <= 'Z') {
      out[i] = static_cast<char>('A' + r % 26);
    } else if ((c >= 'a' && c <= 'z') || high) {
      out[i] = static_cast<char>('a' + r % 26);
    } else {
      out[i] = static_cast<char>('0' + r % 10);
    }
  }
  return out;
}

bool same_kind_found(std::string_view masked, std::string_view kind) {
  const auto found = secrets::find(masked);
  return found.size() == 1 && found[0].offset == 0 && found[0].length == masked.size() &&
         found[0].kind == kind;
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// The key file's bytes; ENOENT is reported through *missing.
bool read_key(const std::string& path, std::string* key, bool* missing, std::string* error) {
  *missing = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    if (errno == ENOENT) {
      *missing = true;
      return false;
    }
    *error = "cannot open the mask key " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "the mask key " + path + " is not a regular file";
    ::close(fd);
    return false;
  }
  if ((st.st_mode & 077) != 0) {
    *error = "the mask key " + path + " has mode " + mode_text(st.st_mode) +
             ": group or others may access it (chmod 600 " + path + ")";
    ::close(fd);
    return false;
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    *error = "the mask key " + path + " is owned by uid " + std::to_string(st.st_uid) +
             ", not by this user or root";
    ::close(fd);
    return false;
  }
  char buf[kKeyBytes + 1];
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf + got, sizeof buf - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = "cannot read the mask key " + path + ": " + std::strerror(errno);
      ::close(fd);
      return false;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    if (got == sizeof buf) break;
  }
  ::close(fd);
  if (got != kKeyBytes) {
    *error = "the mask key " + path + " is not " + std::to_string(kKeyBytes) + " bytes" +
             (got > kKeyBytes ? " (it is longer)" : " (it has " + std::to_string(got) + ")");
    return false;
  }
  key->assign(buf, kKeyBytes);
  return true;
}

bool create_key(const std::string& path, std::string* key, std::string* error) {
  unsigned char raw[kKeyBytes];
  if (RAND_bytes(raw, sizeof raw) != 1) {
    *error = "cannot draw a random mask key (OpenSSL RAND_bytes)";
    return false;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    *error = "cannot create the mask key " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, 0600) == 0;
  std::size_t done = 0;
  while (ok && done < sizeof raw) {
    const ssize_t n = ::write(fd, raw + done, sizeof raw - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (ok && ::fsync(fd) != 0) ok = false;
  if (!ok) *error = "cannot write the mask key " + path + ": " + std::strerror(errno);
  ::close(fd);
  if (!ok) {
    ::unlink(path.c_str());
    return false;
  }
  key->assign(reinterpret_cast<const char*>(raw), sizeof raw);
  return true;
}

}  // namespace

std::vector<secrets::Finding> find_secrets(std::string_view text) {
  std::vector<secrets::Finding> all = secrets::find(text);
  std::erase_if(all, [&](const secrets::Finding& f) {
    return is_approval_id(text.substr(f.offset, f.length));
  });
  find_other_formats(text, &all);
  std::stable_sort(
      all.begin(), all.end(),
      [](const secrets::Finding& a, const secrets::Finding& b) { return a.offset < b.offset; });
  return all;
}

bool holds_secret(std::string_view text) {
  // Fast path for the daemon's own ids and digests (decision ids, "sha256:<hex>", UUID
  // sessions): lowercase hex and '-' only is never a secret — secrets::find flags no pure hex
  // token and every known kind holds a non-hex letter; no other format is pure hex either.
  std::string_view t = text;
  if (t.starts_with("sha256:")) t.remove_prefix(7);
  bool hex = true;
  for (char c : t) {
    const auto u = static_cast<unsigned char>(c);
    hex &= (static_cast<unsigned char>(u - '0') < 10) | (static_cast<unsigned char>(u - 'a') < 6) |
           (u == '-');
  }
  if (hex) return false;
  if (find_other_formats(text, nullptr)) return true;
  for (const secrets::Finding& f : secrets::find(text)) {
    if (!is_approval_id(text.substr(f.offset, f.length))) return true;
  }
  return false;
}

void append_pointer_token(std::string* out, std::string_view token) {
  out->push_back('/');
  for (char c : token) {
    if (c == '~') {
      out->append("~0");
    } else if (c == '/') {
      out->append("~1");
    } else {
      out->push_back(c);
    }
  }
}

std::unique_ptr<Masker> Masker::load_or_create(const std::string& key_path, std::string* error) {
  std::string key;
  bool missing = false;
  if (read_key(key_path, &key, &missing, error)) return std::make_unique<Masker>(std::move(key));
  if (!missing) return nullptr;
  if (create_key(key_path, &key, error)) return std::make_unique<Masker>(std::move(key));
  // Another process created it first: use theirs.
  if (errno == EEXIST && read_key(key_path, &key, &missing, error)) {
    return std::make_unique<Masker>(std::move(key));
  }
  return nullptr;
}

Masker::Masker(std::string key) : key_(std::move(key)) {
  if (key_.empty()) throw std::invalid_argument("empty mask key");
}

std::string Masker::mask_secret(std::string_view secret, std::string_view kind) const {
  std::vector<char> keep(secret.size(), 0);
  keep_prefixes(secret, keep);
  std::string masked;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    masked = draw(key_, secret, keep, attempt);
    if (masked != secret && same_kind_found(masked, kind)) break;
  }
  return masked;
}

void Masker::mask_text(std::string* text, std::string_view field_pointer,
                       std::vector<Mask>* masks) const {
  // secrets::find's secrets first (their kind must still be found in the masked text); then
  // the other formats (found in the text as given), unless a secret masked already covers one.
  auto findings = secrets::find(*text);
  // The daemon's own approval ids (apr_ + 24 hex) are public names, not secrets: an auditor
  // looks them up (`audit query --approval ID`).
  std::erase_if(findings, [&](const secrets::Finding& f) {
    return is_approval_id(std::string_view(*text).substr(f.offset, f.length));
  });
  std::vector<secrets::Finding> others;
  find_other_formats(*text, &others);
  for (const secrets::Finding& f : findings) {
    const std::string masked =
        mask_secret(std::string_view(*text).substr(f.offset, f.length), f.kind);
    text->replace(f.offset, f.length, masked);
    if (masks) masks->push_back({std::string(field_pointer), f.offset, f.length, f.kind});
  }
  for (const secrets::Finding& o : others) {
    bool covered = false;
    for (const secrets::Finding& f : findings) {
      covered = covered || (f.offset <= o.offset && o.offset + o.length <= f.offset + f.length);
    }
    if (covered) continue;
    const std::string_view secret = std::string_view(*text).substr(o.offset, o.length);
    std::vector<char> keep(secret.size(), o.kind == "url-password" ? kAny : kRedraw);
    if (o.kind == "digitalocean-token") std::fill(keep.begin(), keep.end(), kKeepHex);
    std::string masked;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
      masked = draw(key_, secret, keep, attempt);
      if (masked != secret) break;
    }
    text->replace(o.offset, o.length, masked);
    if (masks) masks->push_back({std::string(field_pointer), o.offset, o.length, o.kind});
  }
}

void Masker::mask_value(rapidjson::Value& value, rapidjson::Document::AllocatorType& a,
                        const std::string& pointer, std::vector<Mask>* masks) const {
  auto mask_string = [&](rapidjson::Value& v, const std::string& at) {
    const std::string_view s(v.GetString(), v.GetStringLength());
    if (!holds_secret(s)) return;
    std::string text(s);
    mask_text(&text, at, masks);
    v.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), a);
  };
  if (value.IsString()) {
    mask_string(value, pointer);
  } else if (value.IsArray()) {
    std::string at;
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      at = pointer;
      append_pointer_token(&at, std::to_string(i));
      mask_value(value[i], a, at, masks);
    }
  } else if (value.IsObject()) {
    std::string at;
    for (auto m = value.MemberBegin(); m != value.MemberEnd(); ++m) {
      const std::string_view name(m->name.GetString(), m->name.GetStringLength());
      if (holds_secret(name)) {
        // The pointer names the member by its masked name: the secret never reaches "field".
        std::string text(name);
        const std::size_t first = masks ? masks->size() : 0;
        mask_text(&text, "", masks);
        m->name.SetString(text.data(), static_cast<rapidjson::SizeType>(text.size()), a);
        at = pointer;
        append_pointer_token(&at, text);
        if (masks) {
          for (std::size_t i = first; i < masks->size(); ++i) (*masks)[i].field = at;
        }
      } else {
        at = pointer;
        append_pointer_token(&at, name);
      }
      mask_value(m->value, a, at, masks);
    }
  }
}

}  // namespace warden::audit
