// Rule functions: thin adapters from CLIPS arguments to the pure bindings. Every adapter
// checks its argument types, catches every exception (none may cross a CLIPS C frame) and
// reports failure as a CLIPS evaluation error, which fails the decision closed.
#include "bindings/clips_functions.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "bindings/glob.h"
#include "bindings/local_time.h"
#include "bindings/paths.h"
#include "bindings/secrets.h"
#include "bindings/text.h"
#include "bindings/urls.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {
namespace {

BindingContext& context(void* env) {
  return *static_cast<BindingContext*>(GetEnvironmentContext(env));
}

void fail(void* env, const char* function, const std::string& why) {
  context(env).last_error = std::string(function) + ": " + why;
  EnvPrintRouter(env, WERROR, "[WARDEN1] ");
  EnvPrintRouter(env, WERROR, context(env).last_error.c_str());
  EnvPrintRouter(env, WERROR, "\n");
  SetEvaluationError(env, TRUE);
}

// Argument i (1-based) as a string or symbol; false (with an evaluation error) otherwise.
bool lexeme_arg(void* env, const char* function, int i, std::string_view* out) {
  DATA_OBJECT arg;
  if (EnvRtnArgCount(env) < i) {
    fail(env, function, "missing argument " + std::to_string(i));
    return false;
  }
  EnvRtnUnknown(env, i, &arg);
  if (GetType(arg) != STRING && GetType(arg) != SYMBOL) {
    fail(env, function, "argument " + std::to_string(i) + " must be a string");
    return false;
  }
  const char* s = DOToString(arg);
  *out = std::string_view(s, std::strlen(s));
  return true;
}

bool check_count(void* env, const char* function, int min, int max) {
  int n = EnvRtnArgCount(env);
  if (n < min || n > max) {
    fail(env, function, "wrong number of arguments");
    return false;
  }
  return true;
}

void* string_result(void* env, const std::string& s) { return EnvAddSymbol(env, s.c_str()); }
void* empty_string(void* env) { return EnvAddSymbol(env, ""); }

template <typename F>
int boolean_function(void* env, const char* name, int args, F&& body) {
  try {
    if (!check_count(env, name, args, args)) return FALSE;
    std::string_view a, b;
    if (!lexeme_arg(env, name, 1, &a)) return FALSE;
    if (args == 2 && !lexeme_arg(env, name, 2, &b)) return FALSE;
    return body(a, b) ? TRUE : FALSE;
  } catch (const std::exception& e) {
    fail(env, name, e.what());
  } catch (...) {
    fail(env, name, "internal error");
  }
  return FALSE;
}

template <typename F>
void* string_function(void* env, const char* name, int min, int max, F&& body) {
  try {
    if (!check_count(env, name, min, max)) return empty_string(env);
    std::string_view a, b;
    if (min >= 1 && !lexeme_arg(env, name, 1, &a)) return empty_string(env);
    if (EnvRtnArgCount(env) >= 2 && !lexeme_arg(env, name, 2, &b)) return empty_string(env);
    return string_result(env, body(a, b));
  } catch (const std::exception& e) {
    fail(env, name, e.what());
  } catch (...) {
    fail(env, name, "internal error");
  }
  return empty_string(env);
}

extern "C" int RegexMatchFn(void* env) {
  return boolean_function(env, "regex-match", 2,
                          [env](std::string_view pattern, std::string_view s) {
                            bool matched = false;
                            std::string error;
                            if (!context(env).regexes.search(pattern, s, &matched, &error))
                              throw std::runtime_error("bad regex: " + error);
                            return matched;
                          });
}

extern "C" int GlobMatchFn(void* env) {
  return boolean_function(env, "glob-match", 2,
                          [](std::string_view g, std::string_view s) { return glob::match(g, s); });
}

// Both take the same view as the path fact's in-workspace slot: inside only if the lexical
// path and the path after symlinks both lie inside the (equally resolved) root.
extern "C" int PathWithinFn(void* env) {
  return boolean_function(env, "path-within", 2, [env](std::string_view p, std::string_view root) {
    BindingContext& c = context(env);
    return paths::within(c.resolver.locate(p, c.workspace_root, c.home),
                         c.resolver.locate(root, c.workspace_root, c.home));
  });
}

extern "C" int InWorkspaceFn(void* env) {
  return boolean_function(env, "in-workspace", 1, [env](std::string_view p, std::string_view) {
    BindingContext& c = context(env);
    return paths::within(c.resolver.locate(p, c.workspace_root, c.home),
                         c.resolver.locate(c.workspace_root, "", c.home));
  });
}

extern "C" int LooksLikeSecretFn(void* env) {
  return boolean_function(env, "looks-like-secret", 1, [env](std::string_view s, std::string_view) {
    // Memoized by content: the same value is often tested by many rules in one decision.
    auto& memo = context(env).secret_memo;
    const bool cacheable = s.size() <= BindingContext::kMaxMemoBytes;
    if (cacheable) {
      if (auto it = memo.find(s); it != memo.end()) return it->second;
    }
    const bool found = secrets::looks_like_secret(s);  // throws on internal errors
    if (cacheable && memo.size() < BindingContext::kMaxMemoEntries)
      memo.emplace(std::string(s), found);
    return found;
  });
}

extern "C" int StrContainsFn(void* env) {
  return boolean_function(env, "str-contains", 2, [](std::string_view h, std::string_view n) {
    return h.find(n) != std::string_view::npos;
  });
}

extern "C" int StrPrefixFn(void* env) {
  return boolean_function(env, "str-prefix", 2, [](std::string_view p, std::string_view s) {
    return text::starts_with(s, p);
  });
}

extern "C" int StrSuffixFn(void* env) {
  return boolean_function(env, "str-suffix", 2, [](std::string_view p, std::string_view s) {
    return text::ends_with(s, p);
  });
}

extern "C" void* PathNormalizeFn(void* env) {
  return string_function(env, "path-normalize", 1, 2,
                         [env](std::string_view p, std::string_view cwd) {
                           const BindingContext& c = context(env);
                           return paths::normalize_at(p, cwd, c.workspace_root, c.home);
                         });
}

extern "C" void* PathResolveFn(void* env) {
  return string_function(
      env, "path-resolve", 1, 2, [env](std::string_view p, std::string_view cwd) {
        BindingContext& c = context(env);
        std::string base =
            cwd.empty() ? c.workspace_root : paths::normalize(cwd, c.workspace_root, c.home);
        return c.resolver.locate(p, base, c.home).resolved;
      });
}

// One reading per URL text and decision: a rule often asks url-host, url-ip-class and
// url-error about the same word.
const urls::Url& parsed_url(void* env, std::string_view text) { return context(env).url(text); }

// The url fact's host, ip-class and error for the same text: all three read urls::parse.
extern "C" void* UrlHostFn(void* env) {
  return string_function(env, "url-host", 1, 1, [env](std::string_view u, std::string_view) {
    const urls::Url& url = parsed_url(env, u);
    return url.valid ? url.host : std::string();
  });
}

extern "C" void* UrlIpClassFn(void* env) {
  return string_function(env, "url-ip-class", 1, 1, [env](std::string_view u, std::string_view) {
    const urls::Url& url = parsed_url(env, u);
    return url.valid ? url.ip_class : std::string();
  });
}

extern "C" void* UrlErrorFn(void* env) {
  return string_function(env, "url-error", 1, 1, [env](std::string_view u, std::string_view) {
    return parsed_url(env, u).error;
  });
}

extern "C" void* RedactSecretsFn(void* env) {
  return string_function(env, "redact-secrets", 1, 1,
                         [](std::string_view s, std::string_view) { return secrets::redact(s); });
}

extern "C" void* StrLowerFn(void* env) {
  return string_function(env, "str-lower", 1, 1,
                         [](std::string_view s, std::string_view) { return text::ascii_lower(s); });
}

extern "C" void* WorkspaceRootFn(void* env) {
  return string_function(env, "workspace-root", 0, 0, [env](std::string_view, std::string_view) {
    return context(env).workspace_root;
  });
}

extern "C" void* HomeDirFn(void* env) {
  return string_function(env, "home-dir", 0, 0,
                         [env](std::string_view, std::string_view) { return context(env).home; });
}

std::int64_t decision_clock(void* env) {
  const BindingContext& c = context(env);
  if (c.clock) return c.clock();
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

extern "C" long long NowFn(void* env) {
  if (!check_count(env, "now", 0, 0)) return 0;
  return decision_clock(env);
}

// (local-… ZONE [TIME]): the decision's clock (or TIME, seconds since the epoch) as the wall
// clock of ZONE shows it. Computed when called, never per decision. False (with an evaluation
// error naming the cause: an unknown zone, a TIME that is not an integer) when it cannot.
bool local_fields(void* env, const char* name, local_time::Fields* out) {
  if (!check_count(env, name, 1, 2)) return false;
  std::string_view zone;
  if (!lexeme_arg(env, name, 1, &zone)) return false;
  std::int64_t at = 0;
  if (EnvRtnArgCount(env) == 2) {
    DATA_OBJECT arg;
    EnvRtnUnknown(env, 2, &arg);
    if (GetType(arg) != INTEGER) {
      fail(env, name, "argument 2 must be an integer (seconds since the epoch)");
      return false;
    }
    at = DOToLong(arg);
  } else {
    at = decision_clock(env);
  }
  std::string error;
  auto fields = local_time::in_zone(zone, at, &error);
  if (!fields) {
    fail(env, name, error);
    return false;
  }
  *out = *fields;
  return true;
}

template <typename F>
auto local_function(void* env, const char* name, F&& body,
                    decltype(body(local_time::Fields{})) failed) {
  try {
    local_time::Fields f;
    if (local_fields(env, name, &f)) return body(f);
  } catch (const std::exception& e) {
    fail(env, name, e.what());
  } catch (...) {
    fail(env, name, "internal error");
  }
  return failed;
}

// mon … sun, a SYMBOL: (eq (local-weekday "Europe/Berlin") sat).
extern "C" void* LocalWeekdayFn(void* env) {
  auto day = [env](const local_time::Fields& f) {
    return EnvAddSymbol(env, std::string(local_time::weekday_name(f.weekday)).c_str());
  };
  return local_function(env, "local-weekday", day, EnvAddSymbol(env, "nil"));
}

extern "C" long long LocalHourFn(void* env) {
  auto hour = [](const local_time::Fields& f) { return static_cast<long long>(f.hour); };
  return local_function(env, "local-hour", hour, -1LL);
}

extern "C" long long LocalMinuteFn(void* env) {
  auto minute = [](const local_time::Fields& f) { return static_cast<long long>(f.minute); };
  return local_function(env, "local-minute", minute, -1LL);
}

// "YYYY-MM-DD", a STRING.
extern "C" void* LocalDateFn(void* env) {
  auto date = [env](const local_time::Fields& f) {
    return string_result(env, local_time::date_text(f));
  };
  return local_function(env, "local-date", date, empty_string(env));
}

// The data set a data-… call names; throws (failing the call) when the rule set has none so
// named. `warden check` refuses a constant name no data file defines (E_DATA_SET), so this
// is reached only by a name computed at run time.
const DataSets::Set& data_set(void* env, std::string_view name) {
  const DataSets* data = context(env).data.get();
  const DataSets::Set* set = data ? data->find(name) : nullptr;
  if (!set)
    throw std::runtime_error("no data file defines a data set named \"" +
                             std::string(name.substr(0, 80)) + "\"");
  return *set;
}

// (data-member SET VALUE): VALUE is on the list SET (a key of the map SET), byte for byte.
extern "C" int DataMemberFn(void* env) {
  return boolean_function(
      env, "data-member", 2, [env](std::string_view name, std::string_view value) {
        const DataSets::Set& set = data_set(env, name);
        return set.kind == DataSets::Kind::List ? set.members.find(value) != set.members.end()
                                                : set.map.find(value) != set.map.end();
      });
}

// (data-value MAP KEY): the string the map MAP holds for KEY, "" when it holds none.
extern "C" void* DataValueFn(void* env) {
  return string_function(env, "data-value", 2, 2,
                         [env](std::string_view name, std::string_view key) {
                           const DataSets::Set& set = data_set(env, name);
                           if (set.kind != DataSets::Kind::Map)
                             throw std::runtime_error("data set \"" + std::string(name) +
                                                      "\" is a list: data-value reads a map");
                           auto it = set.map.find(key);
                           return it == set.map.end() ? std::string() : it->second;
                         });
}

struct FunctionEntry {
  const char* name;
  int return_type;  // CLIPS codes: 'b' boolean, 's' string, 'w' symbol, 'g' long long
  int (*function)(void*);
  const char* c_name;
  // min, max, the default argument type, then each argument's ("k" = string or symbol,
  // "i" integer, "*" any)
  const char* restrictions;
};

// The registration table: every function rule files can call.
const FunctionEntry kFunctions[] = {
    {"regex-match", 'b', PTIEF RegexMatchFn, "RegexMatchFn", "22k"},
    {"glob-match", 'b', PTIEF GlobMatchFn, "GlobMatchFn", "22k"},
    {"path-within", 'b', PTIEF PathWithinFn, "PathWithinFn", "22k"},
    {"in-workspace", 'b', PTIEF InWorkspaceFn, "InWorkspaceFn", "11k"},
    {"looks-like-secret", 'b', PTIEF LooksLikeSecretFn, "LooksLikeSecretFn", "11k"},
    {"str-contains", 'b', PTIEF StrContainsFn, "StrContainsFn", "22k"},
    {"str-prefix", 'b', PTIEF StrPrefixFn, "StrPrefixFn", "22k"},
    {"str-suffix", 'b', PTIEF StrSuffixFn, "StrSuffixFn", "22k"},
    {"path-normalize", 's', PTIEF PathNormalizeFn, "PathNormalizeFn", "12k"},
    {"path-resolve", 's', PTIEF PathResolveFn, "PathResolveFn", "12k"},
    {"url-host", 's', PTIEF UrlHostFn, "UrlHostFn", "11k"},
    {"url-ip-class", 's', PTIEF UrlIpClassFn, "UrlIpClassFn", "11k"},
    {"url-error", 's', PTIEF UrlErrorFn, "UrlErrorFn", "11k"},
    {"redact-secrets", 's', PTIEF RedactSecretsFn, "RedactSecretsFn", "11k"},
    {"str-lower", 's', PTIEF StrLowerFn, "StrLowerFn", "11k"},
    {"workspace-root", 's', PTIEF WorkspaceRootFn, "WorkspaceRootFn", "00"},
    {"home-dir", 's', PTIEF HomeDirFn, "HomeDirFn", "00"},
    {"now", 'g', PTIEF NowFn, "NowFn", "00"},
    {"local-weekday", 'w', PTIEF LocalWeekdayFn, "LocalWeekdayFn", "12*ki"},
    {"local-hour", 'g', PTIEF LocalHourFn, "LocalHourFn", "12*ki"},
    {"local-minute", 'g', PTIEF LocalMinuteFn, "LocalMinuteFn", "12*ki"},
    {"local-date", 's', PTIEF LocalDateFn, "LocalDateFn", "12*ki"},
    {"data-member", 'b', PTIEF DataMemberFn, "DataMemberFn", "22k"},
    {"data-value", 's', PTIEF DataValueFn, "DataValueFn", "22k"},
};

}  // namespace

const urls::Url& BindingContext::url(std::string_view text) {
  if (auto it = url_memo.find(text); it != url_memo.end()) return it->second;
  if (url_memo.size() >= 1024) url_memo.clear();
  return url_memo.emplace(std::string(text), urls::parse(text)).first->second;
}

std::vector<const char*> rule_function_names() {
  std::vector<const char*> names;
  for (const auto& f : kFunctions) names.push_back(f.name);
  return names;
}

bool register_functions(void* env) {
  bool ok = true;
  for (const auto& f : kFunctions)
    ok &= EnvDefineFunction2(env, f.name, f.return_type, f.function, f.c_name, f.restrictions) != 0;
  return ok;
}

}  // namespace warden
