// The functions rule files may call (regex-match, path-within, looks-like-secret …), as one
// registration table for a CLIPS environment. Each function reads its per-environment state
// from the BindingContext set as the environment context. One environment = one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

#include "bindings/paths.h"
#include "bindings/regex_cache.h"
#include "bindings/urls.h"

namespace warden {

struct BindingContext {
  RegexCache regexes;
  std::string workspace_root = "/workspace";
  std::string home = "/home/user";
  std::function<std::int64_t()> clock;  // seconds since the epoch; null = system clock
  std::string last_error;               // why the last function call failed

  // Results memoized for one decision, keyed by CLIPS symbol pointers (stable while the
  // decision's facts hold them). Cleared by begin_decision().
  std::unordered_map<const void*, bool> secret_memo;
  paths::Resolver resolver;  // symlink resolutions, valid for one decision
  std::unordered_map<std::string, urls::Url> url_memo;  // url-* functions, keyed by text
  void begin_decision() {
    secret_memo.clear();
    resolver.clear();
    url_memo.clear();
  }
};

// The environment's context pointer must be a BindingContext* (SetEnvironmentContext).
// Returns false if CLIPS refused a definition.
bool register_functions(void* env);

}  // namespace warden
