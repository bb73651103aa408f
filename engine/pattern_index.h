// PatternIndex: every constant `pattern-hit` pattern of a rule set, compiled into one RE2
// set per (key, kind), so a decision tests hundreds of patterns in one pass per value and
// hands CLIPS only the hits. Built once per Policy; immutable and thread-safe to query.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/rule_checker.h"

namespace warden {

class PatternIndex {
 public:
  explicit PatternIndex(const std::vector<IndexedPattern>& patterns);
  ~PatternIndex();

  bool empty() const { return groups_.empty(); }

  struct Hit {
    std::string_view kind;
    std::string_view pattern;
  };
  // Calls `on_hit` for every pattern of the kinds other than path-within that matches
  // `value` at `key`. Returns false if a matcher ran out of memory (fail closed).
  bool match_value(std::string_view key, std::string_view value,
                   const std::function<void(const Hit&)>& on_hit) const;
  // Same for path-within patterns, against a normalized path found at `key`.
  bool match_path(std::string_view key, std::string_view normalized,
                  const std::function<void(const Hit&)>& on_hit) const;

 private:
  struct Group;
  bool match(bool paths, std::string_view key, std::string_view value,
             const std::function<void(const Hit&)>& on_hit) const;
  std::vector<std::unique_ptr<Group>> groups_;
};

}  // namespace warden
