#include "engine/pattern_index.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "bindings/glob.h"
#include "bindings/text.h"

namespace warden {

// A named namespace, not an anonymous one: the types PatternIndex::Set (external linkage) holds.
namespace pattern_index_detail {

// Suffixes, stored reversed: one walk from the end of a value, one step per byte, reports
// every pattern that ends it (at most the longest pattern's length in steps).
class SuffixTrie {
 public:
  void add(std::string_view suffix, int index) {
    std::uint32_t n = 0;
    for (auto it = suffix.rbegin(); it != suffix.rend(); ++it) {
      const auto c = static_cast<unsigned char>(*it);
      auto& next = nodes_[n].next;
      auto pos = std::lower_bound(next.begin(), next.end(), c,
                                  [](const Edge& e, unsigned char b) { return e.first < b; });
      if (pos != next.end() && pos->first == c) {
        n = pos->second;
      } else {
        const auto child = static_cast<std::uint32_t>(nodes_.size());
        next.insert(pos, Edge{c, child});
        nodes_.emplace_back();  // may move nodes_: `next` is not used after this
        n = child;
      }
    }
    nodes_[n].pattern = index;
  }
  template <typename F>
  void match(std::string_view value, F on_index) const {
    std::uint32_t n = 0;
    if (nodes_[0].pattern >= 0) on_index(nodes_[0].pattern);  // the empty suffix
    for (auto it = value.rbegin(); it != value.rend(); ++it) {
      const auto c = static_cast<unsigned char>(*it);
      const auto& next = nodes_[n].next;
      auto pos = std::lower_bound(next.begin(), next.end(), c,
                                  [](const Edge& e, unsigned char b) { return e.first < b; });
      if (pos == next.end() || pos->first != c) return;
      n = pos->second;
      if (nodes_[n].pattern >= 0) on_index(nodes_[n].pattern);
    }
  }

 private:
  using Edge = std::pair<unsigned char, std::uint32_t>;
  struct Node {
    std::vector<Edge> next;  // sorted by byte
    int pattern = -1;
  };
  std::vector<Node> nodes_ = std::vector<Node>(1);
};

struct PatternKeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

}  // namespace pattern_index_detail

namespace {

using pattern_index_detail::PatternKeyHash;
using pattern_index_detail::SuffixTrie;

bool literal_kind(const std::string& kind) { return kind == "exact" || kind == "suffix"; }

}  // namespace

struct PatternIndex::Set {
  std::string key;  // empty: any param key
  std::string kind;
  std::vector<std::string> patterns;  // by set index
  std::unique_ptr<RE2::Set> set;      // regex, substring, prefix, glob, path-within
  std::unordered_map<std::string, int, PatternKeyHash, std::equal_to<>> exact;  // pattern → index
  SuffixTrie suffix;
};

bool is_derived_key(std::string_view key) {
  return key == derived_key::kUrlHost || key == derived_key::kEffectTarget ||
         key == derived_key::kShellProgram || key == derived_key::kPathNormalized;
}

namespace {

RE2::Anchor anchor_for(const std::string& kind) {
  if (kind == "prefix" || kind == "path-within") return RE2::ANCHOR_START;
  if (kind == "glob") return RE2::ANCHOR_BOTH;
  return RE2::UNANCHORED;
}

// The same translation the rule functions use: an indexed glob means what glob-match means.
std::string pattern_regex_for(const std::string& kind, const std::string& pattern) {
  if (kind == "regex") return pattern;
  if (kind == "glob") return glob::to_regex(pattern);
  if (kind == "path-within") {
    std::string root = pattern;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (root == "/") return "/";
    return RE2::QuoteMeta(root) + "(?:/|$)";
  }
  return RE2::QuoteMeta(pattern);  // substring, prefix
}

// One (key, kind) group: its distinct patterns, each with every place that uses it.
struct Group {
  std::vector<std::string> patterns;
  std::vector<std::vector<const IndexedPattern*>> uses;
};

class Builder {
 public:
  Builder(PatternIndex::Options options, Diagnostics* diagnostics)
      : options_(options), diagnostics_(diagnostics) {}

  RE2::Options re2_options() const {
    RE2::Options o;
    o.set_log_errors(false);
    o.set_max_mem(options_.max_mem);
    return o;
  }

  void report(const std::vector<const IndexedPattern*>& uses, const char* code,
              const std::string& why) {
    for (const auto* p : uses)
      diagnostics_->push_back({code, Severity::Error, p->file, p->line, p->rule,
                               "indexed " + p->kind + " pattern cannot be used: " + why});
  }

  // Compiles patterns[begin, end) of a group into one set, or splits the range in halves
  // until every part compiles. `regexes` are the translated patterns.
  template <typename Emit>
  void build(const std::string& kind, const Group& g, const std::vector<std::string>& regexes,
             const std::vector<std::size_t>& members, Emit emit) {
    auto set = std::make_unique<RE2::Set>(re2_options(), anchor_for(kind));
    int expected = 0;
    for (std::size_t m : members) {
      if (set->Add(regexes[m], nullptr) != expected++) {  // parsed alone before: cannot happen
        report(g.uses[m], code::kBadPattern, "it does not parse in a set");
        return;
      }
    }
    if (set->Compile()) {
      emit(std::move(set), members);
      return;
    }
    split(kind, g, regexes, members, emit);
  }

  // `members` did not compile together: each half is built alone, down to single patterns,
  // one of which that does not compile alone is reported.
  template <typename Emit>
  void split(const std::string& kind, const Group& g, const std::vector<std::string>& regexes,
             const std::vector<std::size_t>& members, Emit emit) {
    if (members.size() == 1) {
      report(g.uses[members[0]], code::kPatternTooLarge,
             "it does not fit the matcher's memory budget of " +
                 std::to_string(options_.max_mem >> 20) +
                 " MiB even alone (simplify it: fewer or smaller repetitions, shorter literals)");
      return;
    }
    const auto middle = members.begin() + static_cast<std::ptrdiff_t>(members.size() / 2);
    build(kind, g, regexes, std::vector<std::size_t>(members.begin(), middle), emit);
    build(kind, g, regexes, std::vector<std::size_t>(middle, members.end()), emit);
  }

 private:
  PatternIndex::Options options_;
  Diagnostics* diagnostics_;
};

}  // namespace

PatternIndex::PatternIndex(const std::vector<IndexedPattern>& patterns, Diagnostics* diagnostics)
    : PatternIndex(patterns, diagnostics, Options{}) {}

PatternIndex::PatternIndex(const std::vector<IndexedPattern>& patterns, Diagnostics* diagnostics,
                           Options options) {
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::map<std::pair<const Group*, std::string_view>, std::size_t> seen;
  for (const auto& p : patterns) {
    Group& g = groups[{p.key, p.kind}];
    auto [it, inserted] =
        seen.emplace(std::make_pair(&g, std::string_view(p.pattern)), g.patterns.size());
    if (inserted) {
      g.patterns.push_back(p.pattern);
      g.uses.emplace_back();
    }
    g.uses[it->second].push_back(&p);
  }
  Builder builder(options, diagnostics);
  for (const auto& entry : groups) {
    const auto& group_key = entry.first;
    const auto& g = entry.second;  // a plain reference: lambdas below capture it
    const std::string& key = group_key.first;
    const std::string& kind = group_key.second;
    if (literal_kind(kind)) {
      // Byte comparisons: no memory budget to split for, nothing to compile.
      auto s = std::make_unique<Set>();
      s->key = key;
      s->kind = kind;
      for (std::size_t i = 0; i < g.patterns.size(); ++i) {
        if (!text::valid_utf8(g.patterns[i])) {
          builder.report(g.uses[i], code::kBadPattern, "it is not valid UTF-8");
          continue;
        }
        const int index = static_cast<int>(s->patterns.size());
        s->patterns.push_back(g.patterns[i]);
        if (kind == "exact")
          s->exact.emplace(g.patterns[i], index);
        else
          s->suffix.add(g.patterns[i], index);
      }
      if (!s->patterns.empty()) sets_.push_back(std::move(s));
      continue;
    }
    std::vector<std::string> regexes;
    std::vector<std::size_t> members;
    // Each pattern is parsed into the group's set as it is added: one that does not parse is
    // reported and left out (a failed Add adds nothing), the rest are the members.
    auto whole = std::make_unique<RE2::Set>(builder.re2_options(), anchor_for(kind));
    for (std::size_t i = 0; i < g.patterns.size(); ++i) {
      regexes.push_back(pattern_regex_for(kind, g.patterns[i]));
      if (!text::valid_utf8(g.patterns[i])) {
        builder.report(g.uses[i], code::kBadPattern, "it is not valid UTF-8");
        continue;
      }
      std::string error;
      if (whole->Add(regexes.back(), &error) < 0) {
        builder.report(g.uses[i], kind == "regex" ? code::kBadRegex : code::kBadPattern, error);
        continue;
      }
      members.push_back(i);
    }
    if (members.empty()) continue;
    auto emit = [&](std::unique_ptr<RE2::Set> set, const std::vector<std::size_t>& in) {
      auto s = std::make_unique<Set>();
      s->key = key;
      s->kind = kind;
      for (std::size_t m : in) s->patterns.push_back(g.patterns[m]);
      s->set = std::move(set);
      sets_.push_back(std::move(s));
    };
    // Usually the whole group fits one set: compiled as parsed. Otherwise split as build() does.
    if (whole->Compile())
      emit(std::move(whole), members);
    else
      builder.split(kind, g, regexes, members, emit);
  }
  for (const auto& s : sets_) {
    if (is_derived_key(s->key)) {
      derived_sets_.push_back(s.get());
      if (std::find(derived_used_.begin(), derived_used_.end(), s->key) == derived_used_.end())
        derived_used_.push_back(s->key);
    } else if (s->kind == "path-within") {
      path_sets_.push_back(s.get());
    } else {
      value_sets_.push_back(s.get());
    }
  }
}

PatternIndex::~PatternIndex() = default;

bool PatternIndex::run(const std::vector<const Set*>& sets, std::string_view key, bool any_key,
                       std::string_view value,
                       const std::function<void(const Hit&)>& on_hit) const {
  // Sets are compiled for UTF-8. Literal kinds match bytes alike either way; a regex or glob
  // would read text that is not UTF-8 differently from the rule functions (which switch to
  // bytes): refuse it. Proposals are UTF-8; a resolved path read from the disk may not be.
  int utf8 = -1;  // unknown yet
  std::vector<int> hits;
  for (const Set* s : sets) {
    if (s->key != key && !(any_key && s->key.empty())) continue;
    if (s->kind == "exact") {
      auto it = s->exact.find(value);
      if (it != s->exact.end())
        on_hit(Hit{s->kind, s->patterns[static_cast<std::size_t>(it->second)]});
      continue;
    }
    if (s->kind == "suffix") {
      s->suffix.match(value, [&](int index) {
        on_hit(Hit{s->kind, s->patterns[static_cast<std::size_t>(index)]});
      });
      continue;
    }
    if (s->kind == "regex" || s->kind == "glob") {
      if (utf8 < 0) utf8 = text::valid_utf8(value) ? 1 : 0;
      if (utf8 == 0) return false;
    }
    hits.clear();
    RE2::Set::ErrorInfo info;
    if (!s->set->Match(value, &hits, &info) && info.kind != RE2::Set::kNoError) return false;
    for (int index : hits) on_hit(Hit{s->kind, s->patterns[static_cast<std::size_t>(index)]});
  }
  return true;
}

bool PatternIndex::match_value(std::string_view key, std::string_view value,
                               const std::function<void(const Hit&)>& on_hit) const {
  return run(value_sets_, key, true, value, on_hit);
}

bool PatternIndex::match_path(std::string_view key, std::string_view normalized,
                              const std::function<void(const Hit&)>& on_hit) const {
  return run(path_sets_, key, true, normalized, on_hit);
}

bool PatternIndex::uses(std::string_view derived) const {
  for (const auto& k : derived_used_)
    if (k == derived) return true;
  return false;
}

bool PatternIndex::match_derived(std::string_view derived, std::string_view value,
                                 const std::function<void(const Hit&)>& on_hit) const {
  if (!is_derived_key(derived)) return true;
  return run(derived_sets_, derived, false, value, on_hit);
}

}  // namespace warden
