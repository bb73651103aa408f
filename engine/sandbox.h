// The rule sandbox's one table: the CLIPS built-ins rule files may call, the templates rules
// may assert, and the names CLIPS itself defines. Read by the rule checker (refuses other
// calls at check time) and by ClipsEnv (disables every other function at run time).
// Immutable tables built once; thread-safe.
#pragma once

#include <string_view>
#include <vector>

namespace warden::sandbox {

struct AllowedFunction {
  const char* name;
  const char* group;  // for the documentation: "comparison", "arithmetic", "string", …
};

// Every CLIPS built-in a rule may call, in documentation order. Warden's own rule functions
// (bindings/clips_functions) and the rule set's deffunctions are allowed besides these.
const std::vector<AllowedFunction>& allowed_builtins();

// CLIPS-internal helpers (names in parentheses, which no rule can spell) that allowed
// constructs compile into: loop counters, progn$ fields, sequence expansion.
const std::vector<const char*>& internal_helpers();

// True if a rule may call `name` directly (built-in on the list, or a Warden rule function).
bool may_call(std::string_view name);
// True if the running environment must keep `name` callable (may_call or internal helper).
bool keep_enabled(std::string_view name);
// True if this CLIPS build defines a function called `name` (allowed or not).
bool is_clips_builtin(std::string_view name);
// Hands is_clips_builtin the functions of an environment just created (nothing registered or
// disabled in it yet), which spares it making a scratch environment of its own.
void note_builtins(void* fresh_env);
// Templates a rule may assert: decision and rewrite. Everything else is the engine's input.
bool may_assert(std::string_view template_name);

}  // namespace warden::sandbox
