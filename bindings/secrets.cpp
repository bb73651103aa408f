// Secret detection for outgoing data (`contains-secret`, redaction of logged/forwarded text):
// known token formats via RE2 plus a Shannon-entropy heuristic for unknown secrets.
// Called by the CLIPS function table and derived-fact builders. Patterns are function-local
// statics (initialized once, thread-safe in C++11+); all other state is local: thread-safe.
#include "bindings/secrets.h"

#include <re2/re2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

namespace warden::secrets {
namespace {

struct Kind {
  const char* name;
  const char* pattern;  // the secret itself; a left boundary is added below
  // Every match of the pattern starts with one of these: a text holding none of them is not
  // scanned with it (most texts hold none, and the scan is most of a short text's cost).
  std::array<const char*, 5> literals;
};

// Order = priority when two candidates start at the same offset (anthropic before openai).
constexpr std::array<Kind, 7> kKinds = {{
    {"private-key", "-----BEGIN [A-Z ]*PRIVATE KEY-----", {"-----BEGIN "}},
    {"anthropic-key", "sk-ant-[A-Za-z0-9_-]{20,}", {"sk-ant-"}},
    {"openai-key", "sk-(?:proj-)?[A-Za-z0-9_-]{20,}", {"sk-"}},
    {"github-token",
     "gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}",
     {"gh", "github_pat_"}},
    {"aws-access-key",
     "(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}",
     {"A3T", "AKIA", "ASIA", "ABIA", "ACCA"}},
    {"slack-token", "xox[baprs]-[A-Za-z0-9-]{10,}", {"xox"}},
    {"jwt", "eyJ[A-Za-z0-9_-]{10,}\\.eyJ[A-Za-z0-9_-]{10,}\\.[A-Za-z0-9_-]{10,}", {"eyJ"}},
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

// Which kinds' literals `text` holds (bit k for kKinds[k]), in one pass over it: at each byte,
// only the literals that start with it are compared.
unsigned kinds_held(std::string_view text) {
  struct Literal {
    unsigned bit;
    std::string_view text;
  };
  static const auto* by_first = [] {
    auto* table = new std::array<std::vector<Literal>, 256>();
    for (std::size_t k = 0; k < kKinds.size(); ++k) {
      for (const char* literal : kKinds[k].literals) {
        if (literal != nullptr)
          (*table)[static_cast<unsigned char>(literal[0])].push_back({1u << k, literal});
      }
    }
    return table;
  }();
  unsigned held = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    for (const Literal& l : (*by_first)[static_cast<unsigned char>(text[i])]) {
      if (l.text.size() <= text.size() - i &&
          std::memcmp(text.data() + i, l.text.data(), l.text.size()) == 0) {
        held |= l.bit;
      }
    }
  }
  return held;
}

void find_known(std::string_view text, std::vector<Candidate>& out) {
  const re2::StringPiece input(text.data(), text.size());
  const auto& patterns = kind_patterns();
  const unsigned held = kinds_held(text);
  for (int k = 0; k < static_cast<int>(patterns.size()); ++k) {
    const RE2& re = *patterns[k];
    if (!re.ok())
      throw std::runtime_error(std::string("secret pattern does not compile: ") + kKinds[k].name);
    if (!(held & (1u << k))) continue;
    std::size_t pos = 0;
    bool no_end = false;  // no END line after the last BEGIN searched: don't rescan (linear)
    re2::StringPiece m[2];
    while (pos <= text.size() && re.Match(input, pos, text.size(), RE2::UNANCHORED, m, 2)) {
      const std::size_t whole_end =
          static_cast<std::size_t>(m[0].data() - text.data()) + m[0].size();
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

// Where a shell word, an option's value or a quoted string ends.
bool word_break(char c) {
  switch (c) {
    case ' ':
    case '\t':
    case '\n':
    case '\r':
    case '\'':
    case '"':
    case '`':
    case '=':
    case ':':
    case ';':
    case '|':
    case '&':
    case '(':
    case ')':
    case '<':
    case '>':
    case ',':
      return true;
    default:
      return false;
  }
}

void check_token(std::string_view text, std::size_t b, std::size_t e, std::vector<Candidate>& out) {
  std::string_view tok = text.substr(b, e - b);
  if (tok.size() < kMinTokenLength) return;
  // Absolute-path-like tokens ("/var/lib/…") are judged segment by segment, so a path made
  // of ordinary names and one hex id is not one long "random" token. So is the rest of a
  // word that is an absolute or home path (`/tmp/run.iT1WyS/out/log`: the token after the
  // dot): mktemp's random names would otherwise make paths look like secrets. A random
  // segment of a secret's length is still one.
  std::size_t word = b;
  while (word > 0 && !word_break(text[word - 1])) --word;
  const bool in_path = word < b && (text[word] == '/' ||
                                    (text[word] == '~' && word + 1 < b && text[word + 1] == '/'));
  if (tok[0] == '/' || in_path) {
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

// ---- encoded and split forms ----
// A secret written percent-encoded (`sk%2Dproj%2D…`), escaped (`\u0073k-…`, `\x73k-…`,
// `\163k-…`, `&#115;k-…`) or split into pieces that a shell or a program joins again
// (`'sk-pr''oj-…'`, `"sk-pr" + "oj-…"`, a backslash-newline) is still that secret. find()
// therefore also scans the text with those forms undone, and maps what it finds there back
// to the span of the text it came from.

// Text with its forms undone: byte i came from the original text's [from[i], to[i]).
struct View {
  std::string text;
  std::vector<std::size_t> from, to;
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The value of n hex digits at t[i], or -1.
long hex_run(std::string_view t, std::size_t i, std::size_t n) {
  if (i + n > t.size()) return -1;
  long v = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const int d = hex_value(t[i + k]);
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

bool is_quote(char c) { return c == '\'' || c == '"' || c == '`'; }
bool is_blank(char c) { return c == ' ' || c == '\t'; }

void append_utf8(std::string& out, long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool valid_code_point(long cp) {
  return cp >= 0 && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
}

// One encoded form at t[i]: its decoded bytes into *bytes and its length, or 0.
std::size_t decode_one(std::string_view t, std::size_t i, std::string* bytes) {
  const char c = t[i];
  const std::size_t left = t.size() - i;
  if (c == '%' && left >= 3) {
    if (long v = hex_run(t, i + 1, 2); v >= 0) {
      *bytes = std::string(1, static_cast<char>(v));
      return 3;
    }
    if ((t[i + 1] == 'u' || t[i + 1] == 'U') && left >= 6) {
      if (long cp = hex_run(t, i + 2, 4); valid_code_point(cp)) {
        append_utf8(*bytes, cp);
        return 6;
      }
    }
    return 0;
  }
  if (c == '\\' && left >= 2) {
    const char k = t[i + 1];
    if (k == 'u' && left >= 6 && t[i + 2] != '{') {
      long cp = hex_run(t, i + 2, 4);
      std::size_t n = 6;
      if (cp >= 0xD800 && cp <= 0xDBFF && left >= 12 && t[i + 6] == '\\' && t[i + 7] == 'u') {
        const long low = hex_run(t, i + 8, 4);
        if (low >= 0xDC00 && low <= 0xDFFF) {
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          n = 12;
        }
      }
      if (valid_code_point(cp)) {
        append_utf8(*bytes, cp);
        return n;
      }
      return 0;
    }
    if (k == 'u' && left >= 4 && t[i + 2] == '{') {
      // At most six hex digits: the search for "}" stays short (linear over the text).
      const std::size_t close = t.substr(0, std::min(t.size(), i + 10)).find('}', i + 3);
      if (close == std::string_view::npos || close - (i + 3) < 1 || close - (i + 3) > 6) return 0;
      const long cp = hex_run(t, i + 3, close - (i + 3));
      if (!valid_code_point(cp)) return 0;
      append_utf8(*bytes, cp);
      return close + 1 - i;
    }
    if (k == 'x' && left >= 4) {
      if (long v = hex_run(t, i + 2, 2); v >= 0) {
        *bytes = std::string(1, static_cast<char>(v));
        return 4;
      }
      return 0;
    }
    if (k >= '0' && k <= '3' && left >= 4 && t[i + 2] >= '0' && t[i + 2] <= '7' &&
        t[i + 3] >= '0' && t[i + 3] <= '7') {
      *bytes = std::string(
          1, static_cast<char>((k - '0') * 64 + (t[i + 2] - '0') * 8 + (t[i + 3] - '0')));
      return 4;
    }
    // A line continuation joins the lines.
    if (k == '\n') return 2;
    if (k == '\r' && left >= 3 && t[i + 2] == '\n') return 3;
    return 0;
  }
  if (c == '&' && left >= 4 && t[i + 1] == '#') {
    const bool hex = t[i + 2] == 'x' || t[i + 2] == 'X';
    std::size_t j = i + (hex ? 3 : 2);
    long cp = 0;
    std::size_t digits = 0;
    for (; j < t.size() && digits < 8; ++j, ++digits) {
      const int d = hex ? hex_value(t[j]) : (t[j] >= '0' && t[j] <= '9' ? t[j] - '0' : -1);
      if (d < 0) break;
      cp = cp * (hex ? 16 : 10) + d;
    }
    if (digits == 0 || j >= t.size() || t[j] != ';' || !valid_code_point(cp)) return 0;
    append_utf8(*bytes, cp);
    return j + 1 - i;
  }
  if (is_quote(c)) {
    // A quote joins what it separates: `'a''b'`, `"a" "b"`, `"a" + "b"`, `"a" . "b"` read as
    // "ab"; any other quote is dropped.
    std::size_t j = i + 1;
    while (j < t.size() && is_blank(t[j])) ++j;
    if (j < t.size() && (t[j] == '+' || t[j] == '.')) {
      ++j;
      while (j < t.size() && is_blank(t[j])) ++j;
    }
    return j < t.size() && is_quote(t[j]) ? j + 1 - i : 1;
  }
  return 0;
}

// One round of undoing the forms over `in`; false when nothing changed.
bool decode_round(const View& in, View* out) {
  const std::string_view t = in.text;
  out->text.clear();
  out->from.clear();
  out->to.clear();
  out->text.reserve(t.size());
  out->from.reserve(t.size());
  out->to.reserve(t.size());
  bool changed = false;
  std::string bytes;
  for (std::size_t i = 0; i < t.size();) {
    bytes.clear();
    const std::size_t n = decode_one(t, i, &bytes);
    if (n == 0) {
      out->text += t[i];
      out->from.push_back(in.from[i]);
      out->to.push_back(in.to[i]);
      ++i;
      continue;
    }
    changed = true;
    for (char b : bytes) {
      out->text += b;
      out->from.push_back(in.from[i]);
      out->to.push_back(in.to[i + n - 1]);
    }
    i += n;
  }
  return changed;
}

// Whether the text holds anything decode_one could undo.
bool may_be_encoded(std::string_view text) {
  std::string bytes;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if ((c == '%' || c == '\\' || c == '&' || is_quote(c)) && decode_one(text, i, &bytes) > 0)
      return true;
  }
  return false;
}

// The text with its forms undone, rounds repeated (a form inside another: `%255C`) up to a
// bound; false when there was nothing to undo.
constexpr int kDecodeRounds = 4;
bool decoded_view(std::string_view text, View* view) {
  if (!may_be_encoded(text)) return false;
  View current;
  current.text.assign(text);
  current.from.resize(text.size());
  current.to.resize(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    current.from[i] = i;
    current.to[i] = i + 1;
  }
  bool any = false;
  View next;
  for (int round = 0; round < kDecodeRounds && may_be_encoded(current.text); ++round) {
    if (!decode_round(current, &next)) break;
    any = true;
    std::swap(current, next);
  }
  if (any) *view = std::move(current);
  return any;
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
  // No try/catch here: an internal error (out of memory) propagates, so callers fail
  // closed instead of acting on a partial scan.
  std::vector<Candidate> cands;
  if (could_hold_secret(text)) {
    find_known(text, cands);
    find_high_entropy(text, cands);
  }
  // The text with encoded and split forms undone: what is found there covers the span of
  // the text it was written in.
  if (View view; decoded_view(text, &view) && could_hold_secret(view.text)) {
    std::vector<Candidate> decoded;
    find_known(view.text, decoded);
    find_high_entropy(view.text, decoded);
    for (const Candidate& c : decoded)
      cands.push_back({view.from[c.begin], view.to[c.end - 1], c.kind});
  }
  if (cands.empty()) return {};
  std::vector<Finding> findings;
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
