// PathClasses: the path classes table (TOML, [[class]] entries) and classification.
// Every pattern and exception of every class is compiled once per table, whatever the home
// directory: a "~/" pattern is compiled with a mark no path holds in place of the home, and
// a path under the home is matched a second time as the mark followed by its part after the
// home; a new home costs two small prefix expressions, not the table.
//
// A path of ASCII characters (nearly every path) is matched through a prefilter: each
// pattern and exception is its own expression, run only when the path holds the longest run
// of literal characters its glob has (`.ssh/id_`, `.pem`, `/etc/cron` …), and compiled on
// first use. Any other path is matched by one RE2::Set of every class's patterns. Both give
// the same answer; the prefilter exists for cost. The set's automaton holds every pattern at
// once (over 150 of them begin with `**/`), so each path it has not seen builds new states,
// about two million instructions a path, where the prefilter runs a few small expressions.
#include "engine/path_classes.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "bindings/glob.h"
#include "bindings/text.h"
#include "engine/toml_document.h"

namespace warden {

namespace {
constexpr std::int64_t kSetMaxMem = 64 << 20;  // all patterns of all classes together
constexpr std::size_t kMaxHomes = 16;          // home prefixes kept (one per home value)
constexpr std::string_view kNone = "none";
constexpr std::size_t kMinAtomLength = 2;  // a pattern with no longer literal run is always run

std::atomic<std::uint64_t> next_generation{1};

bool valid_class_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z') return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

// What is wrong with a pattern's anchoring, or "" when it is anchored.
std::string anchor_problem(std::string_view p) {
  if (p.empty()) return "an empty pattern";
  if (p[0] == '/' || p.rfind("~/", 0) == 0 || p.rfind("**/", 0) == 0) return "";
  return "pattern \"" + std::string(p.substr(0, 80)) +
         "\" is not anchored: it must start with \"/\", \"~/\" or \"**/\"";
}

// The glob with a leading "~/" replaced by the home directory's contents (quoted as glob
// literals, so a home holding "*" or "[" means itself).
std::string expand_home(std::string_view pattern, std::string_view home) {
  if (pattern.rfind("~/", 0) != 0) return std::string(pattern);
  std::string out;
  for (char c : home) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  while (!out.empty() && out.back() == '/') out.pop_back();
  out += pattern.substr(1);  // keeps the "/"
  return out;
}

std::string regex_for(std::string_view glob, bool case_insensitive) {
  return (case_insensitive ? "(?i)" : "") + glob::to_regex(glob);
}

// What "~" stands for in the compiled set: a NUL byte, which no path holds. A home pattern
// "~/x" compiles as NUL "/x"; a path HOME/x is matched as NUL "/x". Every character of the
// home is a literal in the glob (expand_home), so matching the home as a prefix and the
// rest after the mark is the same as matching the expanded pattern.
const std::string kHomeMark(1, '\0');

bool is_home_pattern(std::string_view p) { return p.rfind("~/", 0) == 0; }

}  // namespace

struct PathClasses::Class {
  std::string name;
  bool case_insensitive = true;
  std::vector<std::string> patterns;
  std::vector<std::string> except;
};

// The compiled form for one home: one set per encoding (valid UTF-8 text uses the UTF-8
// set; anything else is matched byte-wise, so an invalid byte cannot slip past "*").
namespace {
// One RE2::Set of the expressions, in UTF-8 or Latin-1; null with *error (and *failed, the
// index of an expression that did not parse, or -1) when it cannot be built.
std::unique_ptr<RE2::Set> build_set(const std::vector<std::string>& alternations, bool latin1,
                                    std::string* error, long* failed);
}  // namespace

struct ClassSets {
  struct Entry {
    std::size_t class_index;
    bool except;
    bool home;              // "~/" patterns: matched only on a path's part after the home
    bool case_insensitive;  // the class's: which home prefix (exact or folded) applies
  };
  std::vector<Entry> entries;             // by set index
  std::vector<std::string> alternations;  // by set index: the expressions both sets hold
  std::unique_ptr<RE2::Set> utf8;
  // Every pattern and exception as its own expression (UTF-8: the prefilter takes ASCII
  // paths only), behind the prefilter; null when there is none.
  struct Filtered {
    struct Pattern {
      std::string expression;  // anchored by the glob's translation
      Entry entry;
      mutable std::once_flag once;
      mutable std::unique_ptr<RE2> re;  // compiled on first use
    };
    std::vector<std::unique_ptr<Pattern>> patterns;
    std::vector<std::uint32_t> always;  // patterns with no literal run of kMinAtomLength
    // The lower-case atoms (each pattern's longest literal run), by their first two bytes:
    // a bit per pair, and the atoms sorted by pair; each atom's patterns.
    std::vector<bool> pair_seen = std::vector<bool>(1 << 16);
    struct Atom {
      std::uint16_t pair;
      std::string text;
      std::vector<std::uint32_t> patterns;
    };
    std::vector<Atom> atoms;  // sorted by pair
  };
  std::unique_ptr<const Filtered> filtered;
  bool home_exact = false, home_folded = false;  // some case-(in)sensitive class has "~/"
  std::string error;                             // set when the UTF-8 set could not be compiled

  // The Latin-1 set, compiled once on first use; null if it could not be.
  const RE2::Set* latin1() const {
    std::call_once(latin1_once_, [this] {
      std::string ignored;
      long failed = -1;
      latin1_ = build_set(alternations, true, &ignored, &failed);
    });
    return latin1_.get();
  }

 private:
  mutable std::once_flag latin1_once_;
  mutable std::unique_ptr<RE2::Set> latin1_;
};

// The home directory as a prefix, per encoding (UTF-8, Latin-1) and per case rule (exact,
// folded as RE2's (?i) folds): HOME then the rest, captured.
struct HomePrefix {
  std::unique_ptr<RE2> re[2][2];  // [latin1][case_insensitive]
  bool ok = true;                 // all four compiled (a home that is not UTF-8 does not, in UTF-8)
};

namespace {

std::unique_ptr<RE2::Set> build_set(const std::vector<std::string>& alternations, bool latin1,
                                    std::string* error, long* failed) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(kSetMaxMem);
  opts.set_dot_nl(true);
  opts.set_encoding(latin1 ? RE2::Options::EncodingLatin1 : RE2::Options::EncodingUTF8);
  auto set = std::make_unique<RE2::Set>(opts, RE2::ANCHOR_BOTH);
  for (std::size_t i = 0; i < alternations.size(); ++i) {
    if (set->Add(alternations[i], error) < 0) {
      *failed = static_cast<long>(i);
      return nullptr;
    }
  }
  if (!set->Compile()) {
    *error = "the patterns are too large to compile together";
    return nullptr;
  }
  return set;
}

std::uint16_t byte_pair(char a, char b) {
  return static_cast<std::uint16_t>(static_cast<unsigned char>(a) << 8 |
                                    static_cast<unsigned char>(b));
}

// Each pattern and exception as its own expression with its atom: the longest run of
// literal ASCII characters of its glob, lowered. A non-ASCII character ends a run: folded,
// it may match an ASCII letter (the Kelvin sign matches "k").
std::unique_ptr<const ClassSets::Filtered> build_filtered(
    const std::vector<std::shared_ptr<const PathClasses::Class>>& classes) {
  auto f = std::make_unique<ClassSets::Filtered>();
  std::map<std::string, std::vector<std::uint32_t>> by_atom;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& k = *classes[i];
    for (bool except : {false, true}) {
      for (const auto& p : except ? k.except : k.patterns) {
        const std::string glob = expand_home(p, kHomeMark);
        const auto index = static_cast<std::uint32_t>(f->patterns.size());
        auto pattern = std::make_unique<ClassSets::Filtered::Pattern>();
        pattern->expression = regex_for(glob, k.case_insensitive);
        pattern->entry = {i, except, is_home_pattern(p), k.case_insensitive};
        f->patterns.push_back(std::move(pattern));
        std::string atom, run;
        auto take = [&] {
          if (run.size() > atom.size()) atom = run;
          run.clear();
        };
        for (const std::string& literal : glob::literal_runs(glob)) {
          for (char c : literal) {
            if (static_cast<unsigned char>(c) >= 0x80)
              take();
            else
              run.push_back(c);
          }
          take();
        }
        if (atom.size() < kMinAtomLength)
          f->always.push_back(index);
        else
          by_atom[text::ascii_lower(atom)].push_back(index);
      }
    }
  }
  if (f->patterns.empty()) return nullptr;
  for (auto& [text, patterns] : by_atom)
    f->atoms.push_back({byte_pair(text[0], text[1]), text, std::move(patterns)});
  std::stable_sort(f->atoms.begin(), f->atoms.end(),
                   [](const auto& a, const auto& b) { return a.pair < b.pair; });
  for (const auto& a : f->atoms) f->pair_seen[a.pair] = true;
  return f;
}

std::shared_ptr<const ClassSets> compile(
    const std::vector<std::shared_ptr<const PathClasses::Class>>& classes) {
  auto c = std::make_shared<ClassSets>();
  // One set entry per class's patterns and one per its exceptions (an alternation), apart
  // for "~/" ones: the set reports classes, not patterns, which keeps a match small.
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& k = *classes[i];
    auto add = [&](const std::vector<std::string>& patterns, bool except, bool home) {
      std::string alternation;
      for (const auto& p : patterns) {
        if (is_home_pattern(p) != home) continue;
        if (!alternation.empty()) alternation += '|';
        alternation += "(?:" + regex_for(expand_home(p, kHomeMark), k.case_insensitive) + ")";
      }
      if (alternation.empty()) return;
      c->alternations.push_back(std::move(alternation));
      c->entries.push_back({i, except, home, k.case_insensitive});
      if (home) (k.case_insensitive ? c->home_folded : c->home_exact) = true;
    };
    for (bool home : {false, true}) {
      add(k.patterns, false, home);
      add(k.except, true, home);
    }
  }
  c->filtered = build_filtered(classes);
  // The UTF-8 set now (it is the larger: a Latin-1 set of the same expressions fits when
  // it does); the Latin-1 one on the first path that is not UTF-8.
  std::string error;
  long failed = -1;
  c->utf8 = build_set(c->alternations, false, &error, &failed);
  if (!c->utf8) {
    c->error = failed < 0
                   ? error
                   : "the patterns of class " +
                         classes[c->entries[static_cast<std::size_t>(failed)].class_index]->name +
                         ": " + error;
  }
  return c;
}

std::shared_ptr<const HomePrefix> compile_prefix(std::string_view home) {
  std::string h(home);
  while (!h.empty() && h.back() == '/') h.pop_back();  // as expand_home
  auto p = std::make_shared<HomePrefix>();
  for (int latin1 = 0; latin1 < 2; ++latin1) {
    for (int folded = 0; folded < 2; ++folded) {
      RE2::Options opts;
      opts.set_log_errors(false);
      opts.set_dot_nl(true);
      opts.set_case_sensitive(folded == 0);
      opts.set_encoding(latin1 ? RE2::Options::EncodingLatin1 : RE2::Options::EncodingUTF8);
      auto re = std::make_unique<RE2>(RE2::QuoteMeta(h) + "(.*)", opts);
      if (re->ok())
        p->re[latin1][folded] = std::move(re);
      else
        p->ok = false;
    }
  }
  return p;
}

// Which entries of a form of the path apply: the path as it is (no "~/" entries), or the
// home mark and the path's part after the home (only "~/" entries, of exact or folded
// classes or both).
enum Form : unsigned { kAsIs = 1, kHomeExact = 2, kHomeFolded = 4 };

// Which classes match `text`: bit i of *hit for a pattern of class i, of *excepted for an
// exception, for the entries `forms` admits. The set is chosen by the whole path's encoding
// (`utf8`). Returns false if the matcher failed (out of memory).
bool match(const ClassSets& c, std::string_view text, bool utf8, bool prefilter, unsigned forms,
           std::vector<char>* hit, std::vector<char>* excepted) {
  auto mark = [&](const ClassSets::Entry& e) {
    const unsigned form = !e.home ? kAsIs : e.case_insensitive ? kHomeFolded : kHomeExact;
    if (forms & form) (e.except ? *excepted : *hit)[e.class_index] = 1;
  };
  // Only when the whole path is UTF-8 (`utf8`): the part after a home that is not is matched
  // by the Latin-1 set, where letters fold otherwise (no Kelvin sign folds to "k" there).
  if (prefilter && utf8 && c.filtered && text::is_ascii(text)) {
    // Atoms are lower case and looked for in the path lowered. For ASCII text that is exact:
    // an ASCII letter of a pattern that folds case matches only its two ASCII forms, one
    // that does not fold only itself.
    const ClassSets::Filtered& f = *c.filtered;
    thread_local std::string lowered;
    thread_local std::vector<std::uint32_t> candidates;
    lowered.assign(text);
    for (char& ch : lowered)
      if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    candidates.assign(f.always.begin(), f.always.end());
    for (std::size_t at = 0; at + 1 < lowered.size(); ++at) {
      const std::uint16_t pair = byte_pair(lowered[at], lowered[at + 1]);
      if (!f.pair_seen[pair]) continue;
      auto it = std::lower_bound(f.atoms.begin(), f.atoms.end(), pair,
                                 [](const auto& a, std::uint16_t p) { return a.pair < p; });
      for (; it != f.atoms.end() && it->pair == pair; ++it)
        if (lowered.compare(at, it->text.size(), it->text) == 0)
          candidates.insert(candidates.end(), it->patterns.begin(), it->patterns.end());
    }
    std::sort(candidates.begin(), candidates.end());  // an atom found twice adds its patterns twice
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    for (std::uint32_t id : candidates) {
      const auto& p = *f.patterns[id];
      std::call_once(p.once, [&p] {
        RE2::Options opts;
        opts.set_log_errors(false);
        opts.set_max_mem(kSetMaxMem);
        opts.set_dot_nl(true);
        opts.set_encoding(RE2::Options::EncodingUTF8);
        p.re = std::make_unique<RE2>(p.expression, opts);
      });
      if (!p.re->ok()) return false;
      if (RE2::FullMatch(re2::StringPiece(text.data(), text.size()), *p.re)) mark(p.entry);
    }
    return true;
  }
  const RE2::Set* set = utf8 ? c.utf8.get() : c.latin1();
  if (!set) return false;
  thread_local std::vector<int> ids;  // reused: classify runs for every path of every decision
  ids.clear();
  RE2::Set::ErrorInfo info;
  if (!set->Match(text, &ids, &info)) return info.kind == RE2::Set::kNoError;
  for (int id : ids) mark(c.entries[static_cast<std::size_t>(id)]);
  return true;
}

// Every entry that matches `path`: as it is, and through the home prefixes.
bool match_path(const ClassSets& c, const HomePrefix& prefix, std::string_view path, bool prefilter,
                std::vector<char>* hit, std::vector<char>* excepted) {
  // A home some expression cannot hold fails every path while "~/" patterns exist: the
  // table does not compile for that home.
  if ((c.home_exact || c.home_folded) && !prefix.ok) return false;
  const bool utf8 = text::valid_utf8(path);
  if (!match(c, path, utf8, prefilter, kAsIs, hit, excepted)) return false;
  re2::StringPiece rest[2];
  bool under[2] = {false, false};
  for (int folded = 0; folded < 2; ++folded) {
    if (!(folded ? c.home_folded : c.home_exact)) continue;
    const RE2* re = prefix.re[utf8 ? 0 : 1][folded].get();
    under[folded] = RE2::FullMatch(re2::StringPiece(path.data(), path.size()), *re, &rest[folded]);
  }
  thread_local std::string form;
  auto match_rest = [&](re2::StringPiece r, unsigned forms) {
    form.assign(kHomeMark);
    form.append(r.data(), r.size());
    return match(c, form, utf8, prefilter, forms, hit, excepted);
  };
  if (under[0] && under[1] && rest[0].data() == rest[1].data())
    return match_rest(rest[0], kHomeExact | kHomeFolded);
  if (under[0] && !match_rest(rest[0], kHomeExact)) return false;
  if (under[1] && !match_rest(rest[1], kHomeFolded)) return false;
  return true;
}

}  // namespace

// The compiled sets (built at parse, or on first use after a merge) and the home prefixes
// by home, shared by every thread querying this table.
struct PathClasses::Cache {
  std::mutex mu;
  std::shared_ptr<const ClassSets> sets;
  std::map<std::string, std::shared_ptr<const HomePrefix>, std::less<>> by_home;
  // For classify_glob, by home: every class's patterns (with "~/" expanded) read once as
  // automata, in class and pattern order.
  using GlobPatterns = std::vector<std::vector<glob::OverlapGlob>>;
  std::map<std::string, std::shared_ptr<const GlobPatterns>, std::less<>> globs_by_home;
};

namespace {
// Per thread, the last (table, home) looked up: engines keep one home, so the mutex is
// taken once per thread and table.
// It also remembers recent answers: the same paths come back decision after decision.
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
constexpr std::size_t kMemoEntries = 4096;   // answers kept per thread (cleared when full)
constexpr std::size_t kMemoKeyBytes = 1024;  // longer paths are not remembered
struct LastLookup {
  std::uint64_t generation = 0;
  std::string home;
  std::shared_ptr<const ClassSets> compiled;
  std::shared_ptr<const HomePrefix> prefix;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>
      memo;         // → class index
  std::string key;  // scratch: the normalized reading's length, then both readings
};
thread_local LastLookup last_lookup;

// Per thread, recent answers of classify_glob for the last (table, home): an agent repeats
// its globs, and each answer compares the glob with every pattern of the table.
struct GlobLookup {
  std::uint64_t generation = 0;
  std::string home;
  std::unordered_map<std::string, std::uint32_t, StringHash, std::equal_to<>>
      memo;         // → class index
  std::string key;  // scratch: the glob, then its two flags
};
thread_local GlobLookup glob_lookup;
}  // namespace

PathClasses::PathClasses()
    : cache_(std::make_unique<Cache>()), generation_(next_generation.fetch_add(1)) {}
PathClasses::~PathClasses() = default;

std::shared_ptr<PathClasses> PathClasses::parse(const RuleSource& source,
                                                Diagnostics* diagnostics) {
  std::optional<toml::table> root = parse_toml(source, code::kPathClasses, "", diagnostics);
  return root ? parse(TomlDocument{source, std::move(*root)}, diagnostics) : nullptr;
}

std::shared_ptr<PathClasses> PathClasses::parse(const TomlDocument& document,
                                                Diagnostics* diagnostics) {
  const RuleSource& source = document.source;
  const toml::table& root = document.root;
  const TomlErrors error(source, code::kPathClasses, diagnostics);
  auto table = std::make_shared<PathClasses>();
  std::set<std::string, std::less<>> seen;
  struct Glob {
    std::string text;
    long line;
    bool case_insensitive;
  };
  std::vector<Glob> globs;  // every pattern and exception, for a bad one's own line
  // Each glob alone, so a bad one is reported at its line: only when something failed (the
  // set, compiled from the same expressions, refuses them all together otherwise).
  auto report_bad_globs = [&] {
    for (const auto& g : globs) {
      RE2::Options opts;
      opts.set_log_errors(false);
      opts.set_max_mem(8 << 20);
      RE2 re(regex_for(expand_home(g.text, kHomeMark), g.case_insensitive), opts);
      if (!re.ok())
        error(g.line, "pattern \"" + g.text.substr(0, 80) + "\" cannot be compiled: " + re.error());
    }
  };
  for (const auto& [key, node] : root) {
    if (key.str() != "class") {
      error(toml_line(node), "unknown key \"" + std::string(key.str()) +
                                 "\" (a path classes file holds [[class]] entries)");
      continue;
    }
    const toml::array* entries = node.as_array();
    if (!entries || !entries->is_array_of_tables()) {
      error(toml_line(node), "\"class\" must be a list of tables: write [[class]]");
      continue;
    }
    for (const auto& entry_node : *entries) {
      const toml::table& entry = *entry_node.as_table();
      const long entry_line = toml_line(entry_node);
      auto k = std::make_shared<Class>();
      bool has_patterns = false, empty_patterns = false;
      for (const auto& [ek, ev] : entry) {
        const std::string_view name = ek.str();
        const long line = toml_line(ev);
        if (name == "name") {
          if (!ev.is_string()) {
            error(line, "\"name\" must be a string");
            continue;
          }
          k->name = ev.as_string()->get();
          if (k->name == kNone)
            error(line, "class name \"none\" is reserved: it means a path no class matches");
          else if (k->name == kOwnPathClass || k->name == kOwnDirClass)
            error(line, "class name \"" + k->name +
                            "\" is reserved: the engine gives it to the daemon's own files");
          else if (!valid_class_name(k->name))
            error(
                line,
                "class name \"" + k->name.substr(0, 80) +
                    "\" is not a symbol of lower-case letters, digits and '-' starting with a letter");
          else if (!seen.insert(k->name).second)
            error(line, "class \"" + k->name + "\" is defined twice");
        } else if (name == "case-insensitive") {
          if (!ev.is_boolean()) {
            error(line, "\"case-insensitive\" must be true or false");
            continue;
          }
          k->case_insensitive = ev.as_boolean()->get();
        } else if (name == "patterns" || name == "except") {
          const toml::array* list = ev.as_array();
          if (!list) {
            error(line, "\"" + std::string(name) + "\" must be a list of glob strings");
            continue;
          }
          auto& out = name == "patterns" ? k->patterns : k->except;
          if (name == "patterns") {
            has_patterns = true;
            empty_patterns = list->empty();
          }
          for (const auto& p : *list) {
            const long pline = toml_line(p);
            if (!p.is_string()) {
              error(pline, "\"" + std::string(name) + "\" must hold only strings");
              continue;
            }
            std::string glob = p.as_string()->get();
            if (std::string why = anchor_problem(glob); !why.empty()) {
              error(pline, why);
              continue;
            }
            globs.push_back({glob, pline, k->case_insensitive});
            out.push_back(std::move(glob));
          }
        } else {
          error(line, "unknown key \"" + std::string(name.substr(0, 40)) +
                          "\" in a class (name, case-insensitive, patterns, except)");
        }
      }
      if (k->name.empty()) error(entry_line, "a class has no \"name\"");
      if (!has_patterns)
        error(entry_line, "class \"" + k->name + "\" has no \"patterns\"");
      else if (empty_patterns)
        error(entry_line, "class \"" + k->name + "\" has an empty \"patterns\" list");
      table->classes_.push_back(std::move(k));
    }
  }
  if (error.any()) {
    report_bad_globs();
    return nullptr;
  }
  // All patterns together must fit the matcher; the sets compiled here are the ones every
  // engine uses, whatever its home.
  auto compiled = compile(table->classes_);
  if (!compiled->error.empty()) {
    report_bad_globs();
    if (!error.any()) error(1, compiled->error);
    return nullptr;
  }
  table->cache_->sets = std::move(compiled);
  return table;
}

void PathClasses::merge(const PathClasses& other) {
  classes_.insert(classes_.end(), other.classes_.begin(), other.classes_.end());
  // The sets are rebuilt for the merged table, on first use.
  std::lock_guard<std::mutex> lock(cache_->mu);
  cache_->sets.reset();
  cache_->globs_by_home.clear();
  generation_ = next_generation.fetch_add(1);
}

std::string_view PathClasses::classify_glob(std::string_view glob, std::string_view home,
                                            bool dotglob, bool outside) const {
  GlobLookup& last = glob_lookup;
  if (last.generation != generation_ || last.home != home) {
    last.generation = generation_;
    last.home.assign(home);
    last.memo.clear();
  }
  const bool memoize = glob.size() <= kMemoKeyBytes;
  if (memoize) {
    last.key.assign(glob);
    last.key.push_back(dotglob ? '1' : '0');
    last.key.push_back(outside ? '1' : '0');
    if (auto it = last.memo.find(last.key); it != last.memo.end())
      return it->second < classes_.size() ? std::string_view(classes_[it->second]->name) : kNone;
  }
  const std::size_t index = glob_class_index(glob, home, dotglob, outside);
  if (memoize) {
    if (last.memo.size() >= kMemoEntries) last.memo.clear();
    last.memo.emplace(last.key, static_cast<std::uint32_t>(index));
  }
  return index < classes_.size() ? std::string_view(classes_[index]->name) : kNone;
}

std::size_t PathClasses::glob_class_index(std::string_view glob, std::string_view home,
                                          bool dotglob, bool outside) const {
  bool hidden = dotglob;  // a hidden name with a wildcard: `.en?`, `.*`, `~/.ss*`
  for (std::size_t at = glob.find("/."); at != std::string_view::npos && !hidden;
       at = glob.find("/.", at + 1)) {
    const std::size_t end = glob.find('/', at + 1);
    hidden = glob::has_shell_glob(
        glob.substr(at + 1, end == std::string_view::npos ? end : end - at - 1));
  }
  std::shared_ptr<const Cache::GlobPatterns> patterns;
  {
    std::lock_guard<std::mutex> lock(cache_->mu);
    auto it = cache_->globs_by_home.find(home);
    if (it != cache_->globs_by_home.end()) {
      patterns = it->second;
    } else {
      auto built = std::make_shared<Cache::GlobPatterns>();
      for (const auto& k : classes_) {
        auto& read = built->emplace_back();
        for (const auto& p : k->patterns)
          read.emplace_back(expand_home(p, home), false, k->case_insensitive, false);
      }
      if (cache_->globs_by_home.size() >= kMaxHomes) cache_->globs_by_home.clear();
      cache_->globs_by_home.emplace(std::string(home), built);
      patterns = std::move(built);
    }
  }
  // The glob read once with letters as written, once without case, as the classes need.
  std::optional<glob::OverlapGlob> as_written, any_case;
  for (std::size_t i = 0; i < classes_.size(); ++i) {
    const Class& k = *classes_[i];
    auto& read = k.case_insensitive ? any_case : as_written;
    if (!read) read.emplace(glob, true, k.case_insensitive, dotglob);
    for (std::size_t j = 0; j < k.patterns.size(); ++j) {
      // Outside the workspace a pattern of one place (`/etc/shadow`, `~/.aws/credentials`)
      // counts for any common path; a name found anywhere (`**/api_key*`) must be spelled.
      const bool strict = hidden || (outside && !k.patterns[j].starts_with("**/"));
      if (glob::may_overlap(*read, (*patterns)[i][j], strict)) return i;
    }
  }
  return classes_.size();
}

std::vector<std::string> PathClasses::names() const {
  std::vector<std::string> out;
  for (const auto& k : classes_) out.push_back(k->name);
  return out;
}

std::string_view PathClasses::classify(std::string_view normalized, std::string_view resolved,
                                       std::string_view home) const {
  return classify(normalized, resolved, home, false);
}

std::string_view PathClasses::classify_by_set(std::string_view normalized,
                                              std::string_view resolved,
                                              std::string_view home) const {
  return classify(normalized, resolved, home, true);
}

std::string_view PathClasses::classify(std::string_view normalized, std::string_view resolved,
                                       std::string_view home, bool reference) const {
  if (classes_.empty()) return kNone;
  LastLookup& last = last_lookup;
  if (last.generation != generation_ || last.home != home) {
    std::shared_ptr<const ClassSets> compiled;
    std::shared_ptr<const HomePrefix> prefix;
    {
      std::lock_guard<std::mutex> lock(cache_->mu);
      if (!cache_->sets) cache_->sets = compile(classes_);
      compiled = cache_->sets;
      auto it = cache_->by_home.find(home);
      if (it != cache_->by_home.end()) {
        prefix = it->second;
      } else {
        prefix = compile_prefix(home);
        if (cache_->by_home.size() >= kMaxHomes) cache_->by_home.clear();
        cache_->by_home.emplace(std::string(home), prefix);
      }
    }
    last.generation = generation_;
    last.home.assign(home);
    last.compiled = std::move(compiled);
    last.prefix = std::move(prefix);
    last.memo.clear();
  }
  const ClassSets& sets = *last.compiled;
  // A table that does not compile (after a merge: each file did alone) or a matcher
  // failure classifies nothing as safe: the path gets the first class.
  if (!sets.error.empty()) return classes_.front()->name;

  // The remembered answer's key: the normalized reading's length, then both readings, so
  // no pair of readings spells another's key (a NUL in a path included).
  const bool one_reading = resolved.empty() || resolved == normalized;
  const std::size_t length = normalized.size();
  last.key.assign(reinterpret_cast<const char*>(&length), sizeof length);
  last.key.append(normalized);
  if (!one_reading) last.key.append(resolved);
  const std::string_view key = last.key;
  const bool memoize = !reference && key.size() <= kMemoKeyBytes;
  if (memoize) {
    auto it = last.memo.find(key);
    if (it != last.memo.end())
      return it->second < classes_.size() ? std::string_view(classes_[it->second]->name) : kNone;
  }

  // Per reading, the first class with a pattern hit and no exception hit on that reading;
  // of the two readings, the earlier class wins (an exception on one reading never clears
  // a hit on the other).
  std::size_t best = classes_.size();
  bool matcher_failed = false;
  thread_local std::vector<char> hit, excepted;
  auto consider = [&](std::string_view text) {
    hit.assign(classes_.size(), 0);
    excepted.assign(classes_.size(), 0);
    if (!match_path(sets, *last.prefix, text, !reference, &hit, &excepted)) {
      best = 0;
      matcher_failed = true;
      return;
    }
    for (std::size_t i = 0; i < best; ++i)
      if (hit[i] && !excepted[i]) {
        best = i;
        break;
      }
  };
  consider(normalized);
  if (!one_reading) consider(resolved);
  if (memoize && !matcher_failed) {
    if (last.memo.size() >= kMemoEntries) last.memo.clear();
    last.memo.emplace(std::string(key), static_cast<std::uint32_t>(best));
  }
  return best < classes_.size() ? std::string_view(classes_[best]->name) : kNone;
}

}  // namespace warden
