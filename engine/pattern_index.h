// PatternIndex: every constant `pattern-hit` pattern of a rule set, compiled per (key, kind)
// into RE2 sets (regex, substring, prefix, glob, path-within), a hash set (exact) or a
// reversed-string trie (suffix), so a decision tests hundreds of patterns in a few passes per
// value and hands CLIPS only the hits. Built once per Policy by Policy::compile; immutable
// and thread-safe to query.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/rule_checker.h"

namespace warden {

// Keys of derived values: a slot of a derived fact rather than a JSON leaf. A pattern-hit
// with one of these keys is matched against that slot of every such fact, and only when
// some rule names the key. A param leaf that happens to have the same dotted name (a
// top-level "url" object in a proposal) never produces a hit under a derived key: the fact
// codec fails the decision if a keyless pattern matches one.
namespace derived_key {
inline constexpr std::string_view kUrlHost = "url.host";            // host of every valid url fact
inline constexpr std::string_view kEffectTarget = "effect.target";  // target of every effect fact
inline constexpr std::string_view kShellProgram =
    "shell-command.program";  // program of every shell-command fact
inline constexpr std::string_view kPathNormalized =
    "path.normalized";  // normalized of every path fact
}  // namespace derived_key

bool is_derived_key(std::string_view key);

class PatternIndex {
 public:
  struct Options {
    // RE2 memory budget of each compiled set: about 250,000 instructions plus its DFA cache.
    // Twice what `regex-match` allows one regex, so any regex the checker accepts fits alone.
    std::int64_t max_mem = 16 << 20;
  };

  // Every pattern is indexed or reported, never dropped: a group whose combined set does
  // not fit the budget is split into sets that do. A pattern that fails alone is an error
  // in *diagnostics (E_PATTERN_TOO_LARGE, E_BAD_REGEX, E_BAD_PATTERN) naming each rule
  // that uses it; the caller must then refuse the rule set.
  PatternIndex(const std::vector<IndexedPattern>& patterns, Diagnostics* diagnostics);
  PatternIndex(const std::vector<IndexedPattern>& patterns, Diagnostics* diagnostics,
               Options options);
  ~PatternIndex();

  bool empty() const { return sets_.empty(); }
  std::size_t set_count() const { return sets_.size(); }

  struct Hit {
    std::string_view kind;
    std::string_view pattern;
  };
  // Calls `on_hit` for every pattern of the kinds other than path-within that matches
  // `value` at `key` (a param key; patterns of derived keys are not run). Returns false if a
  // matcher failed (out of memory, or a value that is not UTF-8 for a regex or glob set):
  // the caller must fail the decision.
  bool match_value(std::string_view key, std::string_view value,
                   const std::function<void(const Hit&)>& on_hit) const;
  // Same for path-within patterns, against a normalized path found at `key`.
  bool match_path(std::string_view key, std::string_view normalized,
                  const std::function<void(const Hit&)>& on_hit) const;

  // True when some rule uses the derived key (see derived_key): only then is it worth
  // computing and matching the value.
  bool uses(std::string_view derived) const;
  // Every pattern of every kind written with the derived key `derived` that matches `value`.
  // Same failure contract as match_value.
  bool match_derived(std::string_view derived, std::string_view value,
                     const std::function<void(const Hit&)>& on_hit) const;

 private:
  struct Set;
  bool run(const std::vector<const Set*>& sets, std::string_view key, bool any_key,
           std::string_view value, const std::function<void(const Hit&)>& on_hit) const;
  std::vector<std::unique_ptr<Set>> sets_;
  std::vector<const Set*> value_sets_, path_sets_, derived_sets_;  // views of sets_
  std::vector<std::string> derived_used_;  // derived keys some pattern names
};

}  // namespace warden
