// RegexCache: rule regex patterns compiled once with RE2 (linear-time, no backtracking).
// Used by the engine's CLIPS functions (`regex-match`); one cache per engine/thread.
// Not thread-safe (no locking): callers keep one instance per thread.
#include "bindings/regex_cache.h"

#include <re2/re2.h>

#include "bindings/text.h"

namespace warden {
namespace {

constexpr int64_t kMaxMem = 8 << 20;

std::unique_ptr<re2::RE2> compile(std::string_view pattern, bool utf8) {
  RE2::Options opts;
  opts.set_log_errors(false);
  opts.set_max_mem(kMaxMem);
  opts.set_encoding(utf8 ? RE2::Options::EncodingUTF8 : RE2::Options::EncodingLatin1);
  return std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), opts);
}

}  // namespace

RegexCache::RegexCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}

RegexCache::~RegexCache() = default;

// Failed compilations are cached too (the RE2 object keeps its error), so a bad pattern in a
// rule costs one compile, not one per evaluation.
const re2::RE2* RegexCache::get(std::string_view pattern, std::string* error) {
  try {
    std::string key = "u" + std::string(pattern);  // "u" UTF-8 program, "b" byte-wise
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      if (cache_.size() >= capacity_) cache_.clear();
      it = cache_.emplace(std::move(key), compile(pattern, true)).first;
    }
    const re2::RE2* re = it->second.get();
    if (!re->ok()) {
      if (error) *error = "invalid regex: " + re->error();
      return nullptr;
    }
    return re;
  } catch (const std::exception& e) {
    if (error) *error = std::string("regex compile failed: ") + e.what();
    return nullptr;
  } catch (...) {
    if (error) *error = "regex compile failed";
    return nullptr;
  }
}

// Patterns are UTF-8. When the text is not valid UTF-8 the pattern is matched byte-wise
// (a Latin-1 compile cached under a separate key): in UTF-8 mode "." and negated classes do
// not match invalid bytes, which would let "curl\xff.*| sh"-style inputs slip past ".*".
bool RegexCache::search(std::string_view pattern, std::string_view text, bool* matched,
                        std::string* error) {
  if (matched) *matched = false;
  const re2::RE2* re = get(pattern, error);
  if (!re) return false;
  try {
    const re2::StringPiece input(text.data(), text.size());
    if (!text::valid_utf8(text)) {
      std::string key = "b" + std::string(pattern);
      auto it = cache_.find(key);
      if (it == cache_.end()) {
        if (cache_.size() >= capacity_) {
          cache_.clear();  // invalidates `re`; it is not used below this point
        }
        it = cache_.emplace(std::move(key), compile(pattern, false)).first;
      }
      const re2::RE2* bytes = it->second.get();
      if (bytes->ok()) {
        if (matched) *matched = RE2::PartialMatch(input, *bytes);
        return true;
      }
      // Cannot happen for a pattern that compiled as UTF-8; fall back to the UTF-8 program.
      re = get(pattern, error);
      if (!re) return false;
    }
    if (matched) *matched = RE2::PartialMatch(input, *re);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = std::string("regex search failed: ") + e.what();
    return false;
  } catch (...) {
    if (error) *error = "regex search failed";
    return false;
  }
}

}  // namespace warden
