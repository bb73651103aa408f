// The sandbox tables (see sandbox.h). The built-in names CLIPS defines are read once from a
// fresh environment, so the check matches the linked CLIPS build exactly.
#include "engine/sandbox.h"

#include <mutex>
#include <set>
#include <string>

#include "bindings/clips_functions.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden::sandbox {
namespace {

using NameSet = std::set<std::string, std::less<>>;

const NameSet& rule_functions() {
  static const NameSet names = [] {
    NameSet s;
    for (const char* n : rule_function_names()) s.insert(n);
    return s;
  }();
  return names;
}

const NameSet& allowed_set() {
  static const NameSet names = [] {
    NameSet s;
    for (const auto& f : allowed_builtins()) s.insert(f.name);
    return s;
  }();
  return names;
}

}  // namespace

const std::vector<AllowedFunction>& allowed_builtins() {
  // Pure functions of their arguments, local control flow, and assert (checked against
  // may_assert). Nothing here reads or writes outside the decision, builds code from
  // strings, calls a function by name, changes the engine, or is non-deterministic.
  static const std::vector<AllowedFunction> table = {
      {"eq", "comparison"},
      {"neq", "comparison"},
      {"=", "comparison"},
      {"<>", "comparison"},
      {"!=", "comparison"},
      {"<", "comparison"},
      {"<=", "comparison"},
      {">", "comparison"},
      {">=", "comparison"},
      {"str-compare", "comparison"},
      {"and", "logic"},
      {"or", "logic"},
      {"not", "logic"},
      {"numberp", "predicate"},
      {"integerp", "predicate"},
      {"floatp", "predicate"},
      {"lexemep", "predicate"},
      {"stringp", "predicate"},
      {"symbolp", "predicate"},
      {"multifieldp", "predicate"},
      {"evenp", "predicate"},
      {"oddp", "predicate"},
      {"+", "arithmetic"},
      {"-", "arithmetic"},
      {"*", "arithmetic"},
      {"/", "arithmetic"},
      {"div", "arithmetic"},
      {"mod", "arithmetic"},
      {"abs", "arithmetic"},
      {"min", "arithmetic"},
      {"max", "arithmetic"},
      {"float", "arithmetic"},
      {"integer", "arithmetic"},
      {"round", "arithmetic"},
      {"**", "arithmetic"},
      {"sqrt", "arithmetic"},
      {"exp", "arithmetic"},
      {"log", "arithmetic"},
      {"log10", "arithmetic"},
      {"str-cat", "string"},
      {"sym-cat", "string"},
      {"str-length", "string"},
      {"str-index", "string"},
      {"sub-string", "string"},
      {"upcase", "string"},
      {"lowcase", "string"},
      {"create$", "multifield"},
      {"length$", "multifield"},
      {"nth$", "multifield"},
      {"member$", "multifield"},
      {"subsetp", "multifield"},
      {"first$", "multifield"},
      {"rest$", "multifield"},
      {"subseq$", "multifield"},
      {"delete$", "multifield"},
      {"expand$", "multifield"},
      {"if", "control"},
      {"while", "control"},
      {"loop-for-count", "control"},
      {"progn", "control"},
      {"progn$", "control"},
      {"foreach", "control"},
      {"switch", "control"},
      {"break", "control"},
      {"return", "control"},
      {"bind", "control"},
      {"assert", "facts"},
      {"printout", "output"},  // goes only to the engine's capture buffer (64 KiB)
  };
  return table;
}

const std::vector<const char*>& internal_helpers() {
  static const std::vector<const char*> names = {"(get-loop-count)", "(get-progn$-field)",
                                                 "(get-progn$-index)", "(expansion-call)",
                                                 "(set-evaluation-error)"};
  return names;
}

bool may_call(std::string_view name) {
  return allowed_set().count(name) > 0 || rule_functions().count(name) > 0;
}

bool keep_enabled(std::string_view name) {
  if (may_call(name)) return true;
  for (const char* h : internal_helpers())
    if (name == h) return true;
  return false;
}

namespace {

// CLIPS's own function names, read from the first fresh environment: one note_builtins() is
// given, or else a scratch environment made for it.
std::mutex builtins_mutex;
const NameSet* builtins = nullptr;  // set once, never freed

NameSet function_names(void* env) {
  NameSet s;
  for (FunctionDefinition* f = GetFunctionList(env); f; f = f->next)
    s.insert(ValueToString(f->callFunctionName));
  return s;
}

}  // namespace

void note_builtins(void* fresh_env) {
  std::lock_guard<std::mutex> lock(builtins_mutex);
  if (!builtins) builtins = new NameSet(function_names(fresh_env));
}

bool is_clips_builtin(std::string_view name) {
  const NameSet* names;
  {
    std::lock_guard<std::mutex> lock(builtins_mutex);
    if (!builtins) {
      void* env = CreateEnvironment();
      builtins = new NameSet(env ? function_names(env) : NameSet());
      if (env) DestroyEnvironment(env);
    }
    names = builtins;
  }
  return names->count(name) > 0;
}

bool may_assert(std::string_view template_name) {
  return template_name == "decision" || template_name == "rewrite" || template_name == "allow" ||
         template_name == "hint" || template_name == "approval";
}

}  // namespace warden::sandbox
