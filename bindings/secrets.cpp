// Secret detection for outgoing data (`contains-secret`, redaction of logged/forwarded text):
// known token formats via RE2 plus a Shannon-entropy heuristic for unknown secrets.
// Called by the CLIPS function table and derived-fact builders. Patterns are function-local
// statics (initialized once, thread-safe in C++11+); all other state is local: thread-safe.
#include "bindings/secrets.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

namespace warden::secrets {
namespace {

struct Kind {
  const char* name;
  const char* pattern;  // the secret itself; a left boundary is added below
};

// Order = priority when two candidates start at the same offset (anthropic before openai).
constexpr std::array<Kind, 7> kKinds = {{
    {"private-key", "-----BEGIN [A-Z ]*PRIVATE KEY-----"},
    {"anthropic-key", "sk-ant-[A-Za-z0-9_-]{20,}"},
    {"openai-key", "sk-(?:proj-)?[A-Za-z0-9_-]{20,}"},
    {"github-token", "gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"},
    {"aws-access-key", "(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"},
    {"slack-token", "xox[baprs]-[A-Za-z0-9-]{10,}"},
    {"jwt", "eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}"},
}};
constexpr int kPrivateKey = 0;
constexpr int kOpenAi = 2;
constexpr int kHighEntropy = static_cast<int>(kKinds.size());

// High-entropy heuristic thresholds (see find()).
constexpr std::size_t kMinTokenLength = 24;
constexpr double kMinEntropyBits = 4.0;

RE2::Options options() {
  RE2::Options o;
  o.set_log_errors(false);
  o.set_encoding(RE2::Options::EncodingLatin1);  // byte-wise: any input, valid UTF-8 or not
  o.set_max_mem(32 << 20);
  return o;
}

// Each known kind with a left boundary: the secret must not continue an alphanumeric run
// ("risk-assessment-…" is not an OpenAI key). Group 1 is the secret.
const std::vector<std::unique_ptr<RE2>>& kind_patterns() {
  static const std::vector<std::unique_ptr<RE2>>* patterns = [] {
    auto* v = new std::vector<std::unique_ptr<RE2>>();
    for (const Kind& k : kKinds) {
      std::string p = k.name == std::string_view("private-key")
                          ? std::string("(") + k.pattern + ")"
                          : std::string("(?:^|[^A-Za-z0-9])(") + k.pattern + ")";
      v->push_back(std::make_unique<RE2>(p, options()));
    }
    return v;
  }();
  return *patterns;
}

const RE2& private_key_end() {
  static const RE2* re = new RE2("-----END [A-Z ]*PRIVATE KEY-----", options());
  return *re;
}

struct Candidate {
  std::size_t begin;
  std::size_t end;
  int kind;  // index into kKinds, or kHighEntropy
};

void find_known(std::string_view text, std::vector<Candidate>& out) {
  const re2::StringPiece input(text.data(), text.size());
  const auto& patterns = kind_patterns();
  for (int k = 0; k < static_cast<int>(patterns.size()); ++k) {
    const RE2& re = *patterns[k];
    if (!re.ok()) throw std::runtime_error(std::string("secret pattern does not compile: ") + kKinds[k].name);
    std::size_t pos = 0;
    bool no_end = false;  // no END line after the last BEGIN searched: don't rescan (linear)
    re2::StringPiece m[2];
    while (pos <= text.size() &&
           re.Match(input, pos, text.size(), RE2::UNANCHORED, m, 2)) {
      const std::size_t whole_end = static_cast<std::size_t>(m[0].data() - text.data()) + m[0].size();
      const std::size_t b = static_cast<std::size_t>(m[1].data() - text.data());
      std::size_t e = b + m[1].size();
      pos = std::max(whole_end, pos + 1);
      if (k == kOpenAi && text.substr(b).starts_with("sk-ant-")) continue;
      if (k == kPrivateKey && !no_end) {
        re2::StringPiece end_m;
        if (private_key_end().Match(input, e, text.size(), RE2::UNANCHORED, &end_m, 1)) {
          e = static_cast<std::size_t>(end_m.data() - text.data()) + end_m.size();
          pos = e;
        } else {
          no_end = true;
        }
      }
      out.push_back({b, e, k});
    }
  }
}

bool token_char(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' ||
         c == '/' || c == '_' || c == '-';
}

// Identifier-like: every part between "-", "_" or "/" is letters followed by digits
// ("ThisIsAVeryLongIdentifierName2024", "my-project-2024-final-backup", "MyService2").
// Random base64 of >= 24 chars almost never has this shape (digits land between letters).
bool identifier_like(std::string_view tok) {
  bool in_digits = false;
  for (char c : tok) {
    if (c == '-' || c == '_' || c == '/') {
      in_digits = false;
    } else if (c >= '0' && c <= '9') {
      in_digits = true;
    } else if (in_digits || c == '+' || c == '=') {
      return false;  // a letter after digits within one part
    }
  }
  return true;
}

bool high_entropy(std::string_view tok) {
  if (tok.size() < kMinTokenLength) return false;
  std::array<std::size_t, 256> counts{};
  bool digit = false, letter = false, non_hex = false;
  for (char ch : tok) {
    const auto c = static_cast<unsigned char>(ch);
    ++counts[c];
    if (c >= '0' && c <= '9') digit = true;
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) letter = true;
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
                     c == '-' || c == '=';
    if (!hex) non_hex = true;
  }
  // Hex digests (git SHAs, SHA-256, UUIDs) carry at most ~4 bits/char: never flagged.
  if (!digit || !letter || !non_hex) return false;
  std::string_view body = tok;
  while (!body.empty() && body.back() == '=') body.remove_suffix(1);
  if (identifier_like(body)) return false;
  double h = 0;
  const double n = static_cast<double>(tok.size());
  for (std::size_t c : counts) {
    if (c == 0) continue;
    const double p = static_cast<double>(c) / n;
    h -= p * std::log2(p);
  }
  return h >= kMinEntropyBits;
}

void check_token(std::string_view text, std::size_t b, std::size_t e, std::vector<Candidate>& out) {
  std::string_view tok = text.substr(b, e - b);
  if (tok.size() < kMinTokenLength) return;
  // Absolute-path-like tokens ("/var/lib/…") are judged segment by segment, so a path made
  // of ordinary names and one hex id is not one long "random" token.
  if (tok[0] == '/') {
    std::size_t s = 0;
    while (s < tok.size()) {
      std::size_t t = tok.find('/', s);
      if (t == std::string_view::npos) t = tok.size();
      if (high_entropy(tok.substr(s, t - s))) out.push_back({b + s, b + t, kHighEntropy});
      s = t + 1;
    }
    return;
  }
  if (high_entropy(tok)) out.push_back({b, e, kHighEntropy});
}

// Tokens are maximal runs of [A-Za-z0-9+/_-] plus any "=" padding right after them
// ("key=value" is two tokens; "abc==" one).
void find_high_entropy(std::string_view text, std::vector<Candidate>& out) {
  const std::size_t n = text.size();
  std::size_t i = 0;
  while (i < n) {
    if (!token_char(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < n && token_char(static_cast<unsigned char>(text[j]))) ++j;
    while (j < n && text[j] == '=') ++j;
    check_token(text, i, j, out);
    i = j;
  }
}

}  // namespace

// Known formats first, then high-entropy tokens: length >= 24, Shannon entropy >= 4.0
// bits/char, at least one digit and one letter, not purely hex, not identifier-like. Overlapping candidates are
// merged into one finding (union of spans, so redaction covers all of them) whose kind is
// the highest-priority known kind among them.
// Every known kind and every high-entropy token holds a run of at least 13 characters from
// [A-Za-z0-9+/=_-] (the shortest: a JWT's first segment, "eyJ" and 10 more); a private key
// holds "-----BEGIN". Text with neither cannot hold a secret: one cheap pass skips the
// regex scans for most values.
static bool could_hold_secret(std::string_view text) {
  constexpr std::size_t kMinRun = 13;
  std::size_t run = 0;
  for (char c : text) {
    const bool token = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '+' || c == '/' || c == '=' || c == '_' || c == '-';
    run = token ? run + 1 : 0;
    if (run >= kMinRun) return true;
  }
  return text.find("-----BEGIN") != std::string_view::npos;
}

std::vector<Finding> find(std::string_view text) {
  if (!could_hold_secret(text)) return {};
  // No try/catch here: an internal error (out of memory) propagates, so callers fail
  // closed instead of acting on a partial scan.
  std::vector<Finding> findings;
  std::vector<Candidate> cands;
  find_known(text, cands);
  find_high_entropy(text, cands);
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.kind != b.kind) return a.kind < b.kind;
    return a.end > b.end;
  });
  std::size_t cur_end = 0;
  int cur_kind = kHighEntropy;
  for (const Candidate& c : cands) {
    if (findings.empty() || c.begin >= cur_end) {
      findings.push_back({c.begin, c.end - c.begin, ""});
      cur_end = c.end;
      cur_kind = c.kind;
    } else {
      cur_end = std::max(cur_end, c.end);
      cur_kind = std::min(cur_kind, c.kind);
    }
    Finding& f = findings.back();
    f.length = cur_end - f.offset;
    f.kind = cur_kind == kHighEntropy ? "high-entropy" : kKinds[cur_kind].name;
  }
  return findings;
}

bool looks_like_secret(std::string_view text) { return !find(text).empty(); }

std::string redact(std::string_view text, std::string_view replacement) {
  try {
    std::string out;
    out.reserve(text.size());
    std::size_t pos = 0;
    for (const Finding& f : find(text)) {
      out.append(text.substr(pos, f.offset - pos));
      out.append(replacement);
      pos = f.offset + f.length;
    }
    out.append(text.substr(pos));
    return out;
  } catch (...) {
    return std::string(replacement);  // never hand back unredacted text on failure
  }
}

}  // namespace warden::secrets
