// DataSets: the named lists and maps of a rule set's data files (*.data.toml, *.data.json,
// read by engine/data_files.h), as rules read them through data-member and data-value
// (bindings/clips_functions.h). Built once while the rules compile, then immutable and
// shared by every environment of the policy: thread-safe to read. Values are plain bytes
// compared exactly; nothing here is ever turned into rule code.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace warden {

class DataSets {
 public:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  enum class Kind { List, Map };
  struct Set {
    Kind kind = Kind::List;
    std::string at;  // where it is defined: "team/packages.data.toml:3"
    std::unordered_set<std::string, Hash, std::equal_to<>> members;           // a list's values
    std::unordered_map<std::string, std::string, Hash, std::equal_to<>> map;  // a map's entries
    std::size_t size() const { return kind == Kind::List ? members.size() : map.size(); }
  };

  // Adds a set; false (and nothing added) when one of that name exists.
  bool add(std::string name, Set set);
  const Set* find(std::string_view name) const;
  std::vector<std::string> names() const;  // sorted
  const std::map<std::string, Set, std::less<>>& sets() const { return sets_; }

  // A list's member or a map's key. False when the value is absent or there is no such set
  // (*known says which).
  bool contains(std::string_view set, std::string_view value, bool* known) const;

 private:
  std::map<std::string, Set, std::less<>> sets_;
};

}  // namespace warden
