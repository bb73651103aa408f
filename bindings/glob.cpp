// Glob → RE2 translation and whole-string glob matching for rules (`glob-match`).
// Called by the CLIPS function table on every rule evaluation, so compiled patterns are kept
// in a process-wide cache guarded by a mutex (bounded; entries are shared_ptr): thread-safe.
#include "bindings/glob.h"

#include <re2/re2.h>

#include <algorithm>
#include <bitset>
#include <cctype>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "bindings/text.h"

namespace warden::glob {
namespace {

constexpr std::size_t kCacheCapacity = 1024;      // cleared when full
constexpr std::size_t kMaxCachedGlobSize = 4096;  // longer globs are compiled per call
constexpr int64_t kMaxMem = 8 << 20;

// One glob "character" at s[i]: a whole UTF-8 sequence if valid, else one byte.
// Returns its length and the code point (the byte value for an invalid byte).
std::size_t read_char(std::string_view s, std::size_t i, uint32_t* cp) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
  if (len > 1 && (i + len > s.size() || !text::valid_utf8(s.substr(i, len)))) len = 1;
  if (len == 1) {
    *cp = c;
  } else {
    uint32_t v = c & (0x7F >> len);
    for (std::size_t k = 1; k < len; ++k)
      v = (v << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    *cp = v;
  }
  return len;
}

bool is_alnum(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// A class member for RE2: ASCII non-alphanumerics as \x{HH}; other characters raw.
void append_class_char(std::string& out, std::string_view raw) {
  const auto c = static_cast<unsigned char>(raw[0]);
  if (raw.size() == 1 && c < 0x80 && !is_alnum(c)) {
    out += "\\x{";
    text::append_hex(out, c);
    out.push_back('}');
  } else if (raw.size() == 1 && c >= 0x80) {
    // Invalid UTF-8 byte (only meaningful in Latin-1 mode); escape it by value.
    out += "\\x{";
    text::append_hex(out, c);
    out.push_back('}');
  } else {
    out.append(raw);
  }
}

// Tries to translate the bracket expression starting at glob[i] == '['. On success appends
// the RE2 class and returns the index after ']'; returns 0 if there is no closing ']'.
std::size_t translate_class(std::string_view glob, std::size_t i, std::string& out) {
  const std::size_t n = glob.size();
  std::size_t j = i + 1;
  bool negate = false;
  if (j < n && (glob[j] == '!' || glob[j] == '^')) {
    negate = true;
    ++j;
  }
  std::string body;
  bool first = true;
  while (j < n) {
    if (glob[j] == ']' && !first) {
      if (negate) {
        out += "[^/";  // like fnmatch(FNM_PATHNAME): a bracket never matches "/"
        out += body;
        out += "]";
      } else if (body.empty()) {
        out += "(?:\\b\\B)";  // only reversed ranges: matches nothing
      } else {
        out += "[" + body + "]";
      }
      return j + 1;
    }
    first = false;
    if (glob[j] == '\\' && j + 1 < n) ++j;
    uint32_t lo = 0;
    std::size_t lo_len = read_char(glob, j, &lo);
    std::string_view lo_raw = glob.substr(j, lo_len);
    j += lo_len;
    // Range "a-z" (a "-" just before "]" is literal).
    if (j + 1 < n && glob[j] == '-' && glob[j + 1] != ']') {
      std::size_t k = j + 1;
      if (glob[k] == '\\' && k + 1 < n) ++k;
      uint32_t hi = 0;
      std::size_t hi_len = read_char(glob, k, &hi);
      std::string_view hi_raw = glob.substr(k, hi_len);
      j = k + hi_len;
      if (lo <= hi) {
        append_class_char(body, lo_raw);
        body += "-";
        append_class_char(body, hi_raw);
      }
      continue;
    }
    append_class_char(body, lo_raw);
  }
  return 0;
}

void flush_literal(std::string& out, std::string& lit) {
  if (!lit.empty()) {
    out += RE2::QuoteMeta(lit);
    lit.clear();
  }
}

struct Cache {
  std::mutex mu;
  std::unordered_map<std::string, std::shared_ptr<const RE2>> map;
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: safe during static destruction
  return *c;
}

std::shared_ptr<const RE2> compile(std::string_view glob, bool utf8) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(kMaxMem);
  opts.set_dot_nl(true);
  opts.set_encoding(utf8 ? RE2::Options::EncodingUTF8 : RE2::Options::EncodingLatin1);
  return std::make_shared<const RE2>(to_regex(glob), opts);
}

std::shared_ptr<const RE2> get(std::string_view glob, bool utf8) {
  if (glob.size() > kMaxCachedGlobSize) return compile(glob, utf8);
  std::string key;
  key.reserve(glob.size() + 1);
  key.push_back(utf8 ? 'u' : 'b');
  key.append(glob);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    auto it = c.map.find(key);
    if (it != c.map.end()) return it->second;
  }
  auto re = compile(glob, utf8);  // compile outside the lock
  std::lock_guard<std::mutex> lock(c.mu);
  if (c.map.size() >= kCacheCapacity) c.map.clear();
  c.map.emplace(std::move(key), re);
  return re;
}

}  // namespace

// "**" matches anything including "/"; "**/" also matches zero directories, so "a/**/b"
// matches "a/b" and "**/x" matches "x" (globstar). "*", "?" and brackets never match "/".
// Newlines are matched like any other character; the "s" flag is part of the translation,
// so every user of it (glob-match and the pattern index) gets the same meaning.
namespace {

// Reads `glob` as to_regex translates it: each literal character to on_literal, each
// wildcard or bracket to on_wildcard with its RE2 translation.
template <class Literal, class Wildcard>
void walk(std::string_view glob, Literal on_literal, Wildcard on_wildcard) {
  const std::size_t n = glob.size();
  bool no_close = false;  // once a '[' has no ']', no later '[' has one either
  std::size_t i = 0;
  while (i < n) {
    const char c = glob[i];
    if (c == '*') {
      std::size_t j = i;
      while (j < n && glob[j] == '*') ++j;
      if (j - i == 1) {
        on_wildcard("[^/]*");
        i = j;
      } else if (j < n && glob[j] == '/') {
        on_wildcard("(?:.*/)?");
        i = j + 1;
      } else {
        on_wildcard(".*");
        i = j;
      }
    } else if (c == '?') {
      on_wildcard("[^/]");
      ++i;
    } else if (c == '[' && !no_close) {
      std::string cls;
      std::size_t next = translate_class(glob, i, cls);
      if (next == 0) {
        no_close = true;
        on_literal('[');
        ++i;
      } else {
        on_wildcard(cls);
        i = next;
      }
    } else if (c == '\\' && i + 1 < n) {
      on_literal(glob[i + 1]);
      i += 2;
    } else {
      on_literal(c);
      ++i;
    }
  }
}

}  // namespace

std::string to_regex(std::string_view glob) {
  std::string out = "(?s)^(?:";
  std::string lit;
  walk(
      glob, [&](char c) { lit.push_back(c); },
      [&](std::string_view regex) {
        flush_literal(out, lit);
        out += regex;
      });
  flush_literal(out, lit);
  out += ")$";
  return out;
}

std::vector<std::string> literal_runs(std::string_view glob) {
  std::vector<std::string> runs(1);
  walk(
      glob, [&](char c) { runs.back().push_back(c); },
      [&](std::string_view) {
        if (!runs.back().empty()) runs.emplace_back();
      });
  if (runs.back().empty()) runs.pop_back();
  return runs;
}

// Text that is not valid UTF-8 is matched byte-wise (Latin-1 mode): in UTF-8 mode RE2's
// "[^/]*" would not match an invalid byte, which would let "/etc/\xff" escape "/etc/*".
// A glob that cannot be compiled (too large for the memory budget) throws: "no match" would
// let a forbid rule fail open.
bool match(std::string_view glob, std::string_view text) {
  const bool utf8 = text::valid_utf8(text) && text::valid_utf8(glob);
  auto re = get(glob, utf8);
  if (!re || !re->ok())
    throw std::runtime_error("glob cannot be compiled: " +
                             (re ? re->error() : std::string("no pattern")));
  return RE2::FullMatch(text, *re);
}

}  // namespace warden::glob

// ---------------------------------------------------------------- pattern intersection

namespace warden::glob {

// A named namespace, not an anonymous one: OverlapGlob::Automata, a member of a class with
// external linkage, holds automata.
namespace detail {

using Bytes = std::bitset<256>;

// A nondeterministic automaton over bytes: edges on byte sets, epsilon edges.
struct Nfa {
  struct Edge {
    Bytes on;
    int to;
    int count = 0;  // on.count(), set by seal()
  };
  std::vector<std::vector<Edge>> edges;
  std::vector<std::vector<int>> eps;
  std::vector<std::vector<int>>
      closures;  // per state: it and what its epsilon edges reach (seal())
  int start = 0;
  int accept = 0;
  int add() {
    edges.emplace_back();
    eps.emplace_back();
    return static_cast<int>(edges.size()) - 1;
  }
};

}  // namespace detail

namespace {

using detail::Bytes;
using detail::Nfa;

constexpr std::size_t kMaxStates = 4096;

Bytes all_bytes() { return Bytes().set(); }
Bytes non_slash() {
  Bytes b = all_bytes();
  b.reset('/');
  return b;
}

void fold(Bytes& b) {
  for (int c = 'a'; c <= 'z'; ++c) {
    if (b.test(static_cast<std::size_t>(c)) || b.test(static_cast<std::size_t>(c - 32))) {
      b.set(static_cast<std::size_t>(c));
      b.set(static_cast<std::size_t>(c - 32));
    }
  }
}

// `[…]` from glob[i] (at '['): the bytes it matches and the index after it; 0 if it does
// not close. A bracket holding non-ASCII text matches any byte but '/' here, repeated
// (a multi-byte character): `*loop` is set.
std::size_t bracket(std::string_view g, std::size_t i, Bytes* out, bool* loop) {
  std::size_t j = i + 1;
  const std::size_t n = g.size();
  bool negate = false;
  if (j < n && (g[j] == '!' || g[j] == '^')) {
    negate = true;
    ++j;
  }
  Bytes b;
  bool first = true;
  *loop = false;
  while (j < n) {
    if (g[j] == ']' && !first) {
      if (negate) b = ~b;
      b.reset('/');
      *out = b;
      return j + 1;
    }
    first = false;
    // [:alpha:] and the other character classes, [=c=] and [.c.]: what the class holds in
    // the C locale, and any non-ASCII character (another locale may add some).
    if (g[j] == '[' && j + 1 < n && (g[j + 1] == ':' || g[j + 1] == '=' || g[j + 1] == '.')) {
      const char kind = g[j + 1];
      const std::size_t close = g.find(std::string{kind, ']'}, j + 2);
      if (close != std::string_view::npos) {
        const std::string_view name = g.substr(j + 2, close - j - 2);
        int (*test)(int) = nullptr;
        if (kind == ':') {
          static constexpr std::pair<std::string_view, int (*)(int)> kClasses[] = {
              {"alpha", isalpha}, {"digit", isdigit}, {"alnum", isalnum}, {"upper", isupper},
              {"lower", islower}, {"space", isspace}, {"blank", isblank}, {"punct", ispunct},
              {"print", isprint}, {"graph", isgraph}, {"cntrl", iscntrl}, {"xdigit", isxdigit}};
          for (const auto& [cls, fn] : kClasses)
            if (name == cls) test = fn;
        }
        for (unsigned c = 0; c < 256; ++c) {
          if (c >= 0x80 || test == nullptr || test(static_cast<int>(c)) != 0) b.set(c);
        }
        *loop = true;
        j = close + 2;
        continue;
      }
    }
    if (g[j] == '\\' && j + 1 < n) ++j;
    const auto lo = static_cast<unsigned char>(g[j]);
    if (lo >= 0x80) *loop = true;
    ++j;
    if (j + 1 < n && g[j] == '-' && g[j + 1] != ']') {
      std::size_t k = j + 1;
      if (g[k] == '\\' && k + 1 < n) ++k;
      const auto hi = static_cast<unsigned char>(g[k]);
      if (hi >= 0x80) *loop = true;
      for (unsigned c = lo; c <= hi && c < 256; ++c) b.set(c);
      j = k + 1;
      continue;
    }
    b.set(lo);
  }
  return 0;
}

// Builds the automaton of one glob. shell: bash's reading (dot rule, extglob groups as
// "anything but /", `**` as anything); else match()'s (`**/` any directories).
bool build(std::string_view g, bool shell, bool ci, bool dotglob, Nfa* a) {
  a->start = a->add();
  int cur = a->start;
  bool at_name_start = true;
  const std::size_t n = g.size();
  std::size_t i = 0;
  auto edge = [&](int from, Bytes on, int to) {
    if (ci) fold(on);
    a->edges[static_cast<std::size_t>(from)].push_back({on, to});
  };
  auto loop_any = [&](Bytes on, bool first_not_dot) {
    // cur -(on, not '.' first if first_not_dot)-> loop -(on)-> loop; both may end.
    const int loop = a->add();
    const int end = a->add();
    Bytes first = on;
    if (first_not_dot) first.reset('.');
    edge(cur, first, loop);
    edge(loop, on, loop);
    a->eps[static_cast<std::size_t>(cur)].push_back(end);
    a->eps[static_cast<std::size_t>(loop)].push_back(end);
    cur = end;
  };
  while (i < n) {
    if (a->edges.size() > kMaxStates) return false;
    const char c = g[i];
    const bool dot_rule = shell && at_name_start && !dotglob;
    if (shell && i + 1 < n && g[i + 1] == '(' &&
        (c == '@' || c == '!' || c == '+' || c == '*' || c == '?')) {
      // extglob group: anything but '/' (closing parenthesis at the same level).
      int depth = 0;
      std::size_t j = i + 1;
      for (; j < n; ++j) {
        if (g[j] == '(') ++depth;
        if (g[j] == ')' && --depth == 0) break;
      }
      if (j < n) {
        loop_any(non_slash(), false);
        i = j + 1;
        at_name_start = false;
        continue;
      }
    }
    if (c == '*') {
      std::size_t j = i;
      while (j < n && g[j] == '*') ++j;
      if (j - i >= 2 && !shell && j < n && g[j] == '/') {
        // `**/`: nothing, or anything ending in '/'.
        const int any = a->add();
        const int end = a->add();
        a->eps[static_cast<std::size_t>(cur)].push_back(end);
        edge(cur, all_bytes(), any);
        edge(any, all_bytes(), any);
        Bytes slash;
        slash.set('/');
        edge(cur, slash, end);
        edge(any, slash, end);
        cur = end;
        i = j + 1;
        at_name_start = true;
        continue;
      }
      loop_any(j - i >= 2 ? all_bytes() : non_slash(), dot_rule);
      i = j;
      at_name_start = false;
      continue;
    }
    const int next = a->add();
    if (c == '?') {
      Bytes b = non_slash();
      if (dot_rule) b.reset('.');
      edge(cur, b, next);
      ++i;
    } else if (c == '[') {
      Bytes b;
      bool multibyte = false;
      const std::size_t after = bracket(g, i, &b, &multibyte);
      if (after == 0) {
        Bytes lit;
        lit.set('[');
        edge(cur, lit, next);
        ++i;
      } else {
        edge(cur, b, next);
        if (multibyte) edge(next, non_slash(), next);
        i = after;
      }
    } else {
      std::size_t k = i;
      if (c == '\\' && i + 1 < n) k = i + 1;
      Bytes lit;
      lit.set(static_cast<unsigned char>(g[k]));
      edge(cur, lit, next);
      i = k + 1;
    }
    at_name_start = g[i - 1] == '/';
    cur = next;
  }
  a->accept = cur;
  return true;
}

void closure(const Nfa& a, std::vector<int>* states) {
  for (std::size_t k = 0; k < states->size(); ++k) {
    for (int e : a.eps[static_cast<std::size_t>((*states)[k])]) {
      if (std::find(states->begin(), states->end(), e) == states->end()) states->push_back(e);
    }
  }
}

// What product_accepts reads of a built automaton, computed once: each state's closure and
// each edge's byte count.
void seal(Nfa* a) {
  a->closures.resize(a->edges.size());
  for (std::size_t p = 0; p < a->edges.size(); ++p) {
    a->closures[p] = {static_cast<int>(p)};
    closure(*a, &a->closures[p]);
    for (auto& e : a->edges[p]) e.count = static_cast<int>(e.on.count());
  }
}

// Whether the two automata accept a common string. Scored: only a common string where the
// shell glob spells the pattern's literal text itself counts, i.e. for which
// 2 × (pattern letters produced by a glob wildcard) ≤ (pattern letters matched by glob
// letters): `.en?` and `*key.p?m` spell what `.env` and `*key*.pem` name; `*.c` does not
// spell `api_key*`, though both match "api_key.c".
bool product_accepts(const Nfa& x, const Nfa& y, bool scored) {
  const std::size_t ny = y.edges.size();
  constexpr int kUnseen = -1000000;
  std::vector<int> best(x.edges.size() * ny, kUnseen);
  std::vector<std::pair<int, int>> work;
  auto push = [&](int p, int q, int score) {
    for (int a : x.closures[static_cast<std::size_t>(p)])
      for (int b : y.closures[static_cast<std::size_t>(q)]) {
        int& s = best[static_cast<std::size_t>(a) * ny + static_cast<std::size_t>(b)];
        if (score > s) {
          s = score;
          work.emplace_back(a, b);
        }
      }
  };
  push(x.start, y.start, 0);
  while (!work.empty()) {
    const auto [p, q] = work.back();
    work.pop_back();
    const int score = best[static_cast<std::size_t>(p) * ny + static_cast<std::size_t>(q)];
    if (p == x.accept && q == y.accept && (!scored || score >= 0)) return true;
    for (const auto& ex : x.edges[static_cast<std::size_t>(p)])
      for (const auto& ey : y.edges[static_cast<std::size_t>(q)]) {
        if (!(ex.on & ey.on).any()) continue;
        int delta = 0;
        if (scored && ey.count <= 2) delta = ex.count <= 2 ? 1 : -2;
        if (score + delta > -10000) push(ex.to, ey.to, score + delta);
      }
  }
  return false;
}

// Brace groups expanded ({a,b}c → ac, bc; {1..9} → `*`), at most kMaxAlternatives.
constexpr std::size_t kMaxAlternatives = 64;
void expand_braces(const std::string& g, std::vector<std::string>* out, bool* overflow) {
  if (out->size() >= kMaxAlternatives) {
    *overflow = true;
    return;
  }
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g[i] == '\\') {
      ++i;
      continue;
    }
    if (g[i] != '{') continue;
    int depth = 0;
    std::vector<std::size_t> commas;
    std::size_t j = i;
    for (; j < g.size(); ++j) {
      if (g[j] == '\\') {
        ++j;
        continue;
      }
      if (g[j] == '{') ++depth;
      if (g[j] == '}' && --depth == 0) break;
      if (g[j] == ',' && depth == 1) commas.push_back(j);
    }
    if (j >= g.size()) return void(out->push_back(g));
    const std::string head = g.substr(0, i), tail = g.substr(j + 1);
    if (commas.empty()) {
      if (g.substr(i, j - i).find("..") != std::string::npos) {
        return expand_braces(head + "*" + tail, out, overflow);
      }
      continue;  // `{x}`: literal
    }
    std::size_t from = i + 1;
    commas.push_back(j);
    for (std::size_t c : commas) {
      expand_braces(head + g.substr(from, c - from) + tail, out, overflow);
      from = c + 1;
    }
    return;
  }
  out->push_back(g);
}

}  // namespace

bool has_shell_glob(std::string_view p) {
  for (std::size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\') {
      ++i;
    } else if (c == '*' || c == '?') {
      return true;
    } else if (c == '[' && p.find(']', i + 2) != std::string_view::npos) {
      return true;
    } else if (c == '{' && p.find('}', i) != std::string_view::npos &&
               (p.find(',', i) < p.find('}', i) ||
                p.substr(i, p.find('}', i) - i).find("..") != std::string_view::npos)) {
      return true;
    } else if ((c == '@' || c == '!' || c == '+') && i + 1 < p.size() && p[i + 1] == '(') {
      return true;
    }
  }
  return false;
}

// The automata of one side: one per brace alternative of a shell glob, one for a pattern.
// `unreadable`: some automaton could not be built (too many states), so the side may
// overlap anything.
struct OverlapGlob::Automata {
  std::vector<Nfa> alternatives;
  bool unreadable = false;
};

OverlapGlob::OverlapGlob(std::string_view glob, bool shell, bool case_insensitive, bool dotglob) {
  auto a = std::make_unique<Automata>();
  std::vector<std::string> texts;
  if (shell) {
    bool overflow = false;
    expand_braces(std::string(glob), &texts, &overflow);
    if (overflow) {
      // Too many alternatives: every group read as `*` (matches more).
      std::string wide(glob);
      for (char& c : wide)
        if (c == '{' || c == '}' || c == ',') c = '*';
      texts = {wide};
    }
  } else {
    texts.emplace_back(glob);
  }
  for (const std::string& text : texts) {
    Nfa n;
    if (!build(text, shell, case_insensitive, shell && dotglob, &n)) {
      a->unreadable = true;
      break;
    }
    seal(&n);
    a->alternatives.push_back(std::move(n));
  }
  automata_ = std::move(a);
}

OverlapGlob::~OverlapGlob() = default;
OverlapGlob::OverlapGlob(OverlapGlob&&) noexcept = default;
OverlapGlob& OverlapGlob::operator=(OverlapGlob&&) noexcept = default;

bool may_overlap(const OverlapGlob& shell_glob, const OverlapGlob& pattern, bool strict) {
  const auto& y = *pattern.automata_;
  const auto& x = *shell_glob.automata_;
  if (y.unreadable || x.unreadable) return true;
  for (const Nfa& alt : x.alternatives)
    if (product_accepts(alt, y.alternatives.front(), !strict)) return true;
  return false;
}

bool may_overlap(std::string_view shell_glob, std::string_view pattern, bool case_insensitive,
                 bool dotglob, bool strict) {
  return may_overlap(OverlapGlob(shell_glob, true, case_insensitive, dotglob),
                     OverlapGlob(pattern, false, case_insensitive, false), strict);
}

}  // namespace warden::glob
