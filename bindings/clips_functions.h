// The functions rule files may call (regex-match, path-within, looks-like-secret …), as one
// registration table for a CLIPS environment. Each function reads its per-environment state
// from the BindingContext set as the environment context. One environment = one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bindings/data_sets.h"
#include "bindings/paths.h"
#include "bindings/regex_cache.h"
#include "bindings/urls.h"

namespace warden {

struct BindingContext {
  RegexCache regexes;
  std::string workspace_root;  // set by the engine from EngineOptions (engine/defaults.h)
  std::string home;
  std::function<std::int64_t()> clock;  // seconds since the epoch; null = system clock
  std::string last_error;               // why the last function call failed
  // The rule set's data files (data-member, data-value); set by the policy before its
  // constructs load, since a defglobal may read them. Null: the set has none.
  std::shared_ptr<const DataSets> data;

  // looks-like-secret results for one decision, keyed by the string's content (values up
  // to kMaxMemoBytes, at most kMaxMemoEntries). Cleared by begin_decision().
  static constexpr std::size_t kMaxMemoBytes = 64 * 1024;
  static constexpr std::size_t kMaxMemoEntries = 4096;
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, bool, StringHash, std::equal_to<>> secret_memo;
  paths::Resolver resolver;  // symlink resolutions, valid for one decision
  // URL readings for one decision, keyed by text: the url fact, the network effect and the
  // url-* functions read payload.url once.
  std::unordered_map<std::string, urls::Url, StringHash, std::equal_to<>> url_memo;
  const urls::Url& url(std::string_view text);
  void begin_decision() {
    secret_memo.clear();
    resolver.clear();
    url_memo.clear();
  }
};

// The environment's context pointer must be a BindingContext* (SetEnvironmentContext).
// Returns false if CLIPS refused a definition.
bool register_functions(void* env);

// The names register_functions() defines, in table order.
std::vector<const char*> rule_function_names();

}  // namespace warden
