// RegexCache: compiled RE2 patterns by pattern text, so each rule pattern compiles once.
// One per engine (per thread); not thread-safe. Bounded: cleared when it grows past `capacity`.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace re2 {
class RE2;
}

namespace warden {

class RegexCache {
 public:
  explicit RegexCache(std::size_t capacity = 4096);
  ~RegexCache();
  // The compiled pattern, or nullptr with *error set if RE2 cannot compile it.
  const re2::RE2* get(std::string_view pattern, std::string* error);
  // Unanchored search. Returns false and sets *error on a bad pattern.
  bool search(std::string_view pattern, std::string_view text, bool* matched, std::string* error);
  std::size_t size() const { return cache_.size(); }

 private:
  std::size_t capacity_;
  std::unordered_map<std::string, std::unique_ptr<re2::RE2>> cache_;
};

}  // namespace warden
