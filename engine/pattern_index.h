// PatternIndex: every constant `pattern-hit` pattern of a rule set, compiled into RE2 sets
// per (key, kind), so a decision tests hundreds of patterns in a few passes per value and
// hands CLIPS only the hits. Built once per Policy by Policy::compile; immutable and
// thread-safe to query.
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
  PatternIndex(const std::vector<IndexedPattern>& patterns, Diagnostics* diagnostics, Options options);
  ~PatternIndex();

  bool empty() const { return sets_.empty(); }
  std::size_t set_count() const { return sets_.size(); }

  struct Hit {
    std::string_view kind;
    std::string_view pattern;
  };
  // Calls `on_hit` for every pattern of the kinds other than path-within that matches
  // `value` at `key`. Returns false if a matcher failed (out of memory, or a value that is
  // not UTF-8 for a regex or glob set): the caller must fail the decision.
  bool match_value(std::string_view key, std::string_view value,
                   const std::function<void(const Hit&)>& on_hit) const;
  // Same for path-within patterns, against a normalized path found at `key`.
  bool match_path(std::string_view key, std::string_view normalized,
                  const std::function<void(const Hit&)>& on_hit) const;

 private:
  struct Set;
  bool match(bool paths, std::string_view key, std::string_view value,
             const std::function<void(const Hit&)>& on_hit) const;
  std::vector<std::unique_ptr<Set>> sets_;
};

}  // namespace warden
