#include "engine/clips_env.h"

#include <re2/re2.h>

#include <atomic>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "engine/rule_tokens.h"
#include "engine/sandbox.h"
#include "engine/source_layout.h"
#include "engine/templates.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {
namespace {

constexpr std::size_t kMaxCapturedBytes = 64 * 1024;
constexpr const char* kRouterName = "warden-capture";
constexpr const char* kSourceName = "warden-source";
constexpr std::chrono::microseconds kLoadDeadline{1000000};
constexpr std::size_t kSourcePad =
    4096;  // NULs after a construct's text (ClipsEnv::read_constructs)

EnvState& state_of(void* env) {
  return *static_cast<EnvState*>(static_cast<BindingContext*>(GetEnvironmentContext(env)));
}

// CLIPS's own output channels. String destinations (pretty-printing a fact into a buffer)
// use other names and must not be captured.
extern "C" int CaptureQuery(void*, const char* logical_name) {
  static const std::string_view kNames[] = {"t",       "stdout", "werror",  "wwarning", "wdisplay",
                                            "wdialog", "wtrace", "wprompt", "wclips"};
  for (auto name : kNames)
    if (name == logical_name) return TRUE;
  return FALSE;
}

extern "C" int CapturePrint(void* env, const char*, const char* text) {
  std::string& out = state_of(env).captured;
  if (out.size() < kMaxCapturedBytes)
    out.append(text, std::min(std::strlen(text), kMaxCapturedBytes - out.size()));
  return TRUE;
}

extern "C" void ParserError(void* env, const char*, const char*, const char* error, long line) {
  if (error && *error) state_of(env).error_lines.push_back(line);
}

void fail_memory(void* env, const char* what) {
  EnvState& s = state_of(env);
  s.memory_hit = true;
  EnvPrintRouter(env, WERROR, "[WARDEN3] rules went over the memory budget");
  if (what) {
    EnvPrintRouter(env, WERROR, " in ");
    EnvPrintRouter(env, WERROR, what);
  }
  EnvPrintRouter(env, WERROR, "\n");
  SetEvaluationError(env, TRUE);
  SetHaltExecution(env, TRUE);
  EnvSetHaltRules(env, TRUE);
}

// Called by CLIPS after every rule firing, deffunction return and loop iteration.
extern "C" void DeadlineCheck(void* env) {
  EnvState& s = state_of(env);
  if (s.deadline_armed && !s.deadline_hit && std::chrono::steady_clock::now() > s.deadline) {
    s.deadline_hit = true;
    EnvSetHaltRules(env, TRUE);
    SetHaltExecution(env, TRUE);
  }
  if (s.deadline_armed && !s.memory_hit && EnvMemUsed(env) > s.memory_limit)
    fail_memory(env, nullptr);
}

// CLIPS calls this when malloc fails; its default calls exit(). CLIPS cannot continue after a
// failed allocation (callers do not check for NULL), so the process stops here with a message
// instead of running exit handlers under other threads. The memory budget and the size
// limits of str-cat, sym-cat and create$ keep rules far from this point.
extern "C" int OutOfMemory(void*, size_t size) {
  std::fprintf(stderr, "warden: the rule engine could not allocate %zu bytes; stopping\n", size);
  std::abort();
}

// Stands in for every CLIPS function rules may not call (everything not in
// sandbox::allowed_builtins): a call, however it is reached (sort, funcall, a parser
// path the checker did not model), fails the decision.
extern "C" void DisabledFunction(void* env, DATA_OBJECT_PTR result) {
  const char* name = static_cast<const char*>(GetEnvironmentFunctionContext(env));
  EnvPrintRouter(env, WERROR, "[WARDEN2] function '");
  EnvPrintRouter(env, WERROR, name ? name : "?");
  EnvPrintRouter(env, WERROR, "' is disabled in rules\n");
  SetEvaluationError(env, TRUE);
  SetHaltExecution(env, TRUE);
  result->type = SYMBOL;
  result->value = EnvFalseSymbol(env);
}

// True if `extra` more bytes stay within the string limit and the memory budget.
bool may_allocate(void* env, std::size_t extra, const char* function) {
  EnvState& s = state_of(env);
  const bool over_limit = extra > kMaxRuleStringBytes;
  const bool over_budget =
      s.deadline_armed && EnvMemUsed(env) + static_cast<long>(extra) > s.memory_limit;
  if (over_limit || over_budget) {
    fail_memory(env, function);
    return false;
  }
  return true;
}

// str-cat and sym-cat, as CLIPS defines them, but sized before anything is allocated (CLIPS
// sums the lengths in an int and would try any size).
void concatenate(void* env, DATA_OBJECT_PTR result, unsigned short type, const char* function) {
  result->type = type;
  result->value = EnvAddSymbol(env, type == STRING ? "" : "nil");
  const int n = EnvRtnArgCount(env);
  std::vector<const char*> parts;
  parts.reserve(static_cast<std::size_t>(n));
  std::vector<std::string> numbers;  // FloatToString/LongIntegerToString reuse one buffer
  numbers.reserve(static_cast<std::size_t>(n));
  std::size_t total = 0;
  for (int i = 1; i <= n; ++i) {
    DATA_OBJECT arg;
    EnvRtnUnknown(env, i, &arg);
    if (GetEvaluationError(env)) return;
    switch (GetType(arg)) {
      case STRING:
      case SYMBOL:
      case INSTANCE_NAME:
        parts.push_back(DOToString(arg));
        break;
      case FLOAT:
        numbers.emplace_back(FloatToString(env, DOToDouble(arg)));
        parts.push_back(numbers.back().c_str());
        break;
      case INTEGER:
        numbers.emplace_back(LongIntegerToString(env, DOToLong(arg)));
        parts.push_back(numbers.back().c_str());
        break;
      default:
        ExpectedTypeError1(env, function, i, "string, instance name, symbol, float, or integer");
        SetEvaluationError(env, TRUE);
        return;
    }
    total += std::strlen(parts.back());
    if (total > kMaxRuleStringBytes) break;
  }
  if (!may_allocate(env, total, function)) return;
  std::string out;
  out.reserve(total);
  for (const char* p : parts) out += p;
  result->value = EnvAddSymbol(env, out.c_str());
}

extern "C" void BudgetedStrCat(void* env, DATA_OBJECT_PTR result) {
  try {
    concatenate(env, result, STRING, "str-cat");
  } catch (...) {
    fail_memory(env, "str-cat");
  }
}

extern "C" void BudgetedSymCat(void* env, DATA_OBJECT_PTR result) {
  try {
    concatenate(env, result, SYMBOL, "sym-cat");
  } catch (...) {
    fail_memory(env, "sym-cat");
  }
}

// create$, as CLIPS defines it (multifield arguments are spliced in), with its size checked
// before the multifield is allocated.
extern "C" void BudgetedCreate(void* env, DATA_OBJECT_PTR result) {
  try {
    const int n = EnvRtnArgCount(env);
    std::vector<DATA_OBJECT> args(static_cast<std::size_t>(n));
    std::size_t fields = 0;
    for (int i = 1; i <= n; ++i) {
      EnvRtnUnknown(env, i, &args[static_cast<std::size_t>(i - 1)]);
      if (GetEvaluationError(env)) break;
      const DATA_OBJECT& a = args[static_cast<std::size_t>(i - 1)];
      fields += GetType(a) == MULTIFIELD ? static_cast<std::size_t>(GetDOLength(a)) : 1;
    }
    if (GetEvaluationError(env) || fields > kMaxRuleFields ||
        !may_allocate(env, fields * sizeof(struct field), "create$")) {
      if (fields > kMaxRuleFields) fail_memory(env, "create$");
      EnvSetMultifieldErrorValue(env, result);
      return;
    }
    void* mf = EnvCreateMultifield(env, static_cast<long>(fields));
    long k = 1;
    for (const DATA_OBJECT& a : args) {
      if (GetType(a) == MULTIFIELD) {
        for (long j = GetDOBegin(a); j <= GetDOEnd(a); ++j, ++k) {
          SetMFType(mf, k, GetMFType(GetValue(a), j));
          SetMFValue(mf, k, GetMFValue(GetValue(a), j));
        }
      } else {
        SetMFType(mf, k, GetType(a));
        SetMFValue(mf, k, GetValue(a));
        ++k;
      }
    }
    SetpType(result, MULTIFIELD);
    SetpValue(result, mf);
    SetpDOBegin(result, 1);
    SetpDOEnd(result, static_cast<long>(fields));
  } catch (...) {
    fail_memory(env, "create$");
    EnvSetMultifieldErrorValue(env, result);
  }
}

void arithmetic_error(void* env, const char* function, const char* what) {
  EnvPrintRouter(env, WERROR, "[WARDEN4] ");
  EnvPrintRouter(env, WERROR, function);
  EnvPrintRouter(env, WERROR, ": ");
  EnvPrintRouter(env, WERROR, what);
  EnvPrintRouter(env, WERROR, "\n");
  SetEvaluationError(env, TRUE);
  SetHaltExecution(env, TRUE);
}

bool numeric_arg(void* env, const char* function, int i, DATA_OBJECT* out) {
  EnvRtnUnknown(env, i, out);
  if (GetEvaluationError(env)) return false;
  if (GetType(*out) == INTEGER || GetType(*out) == FLOAT) return true;
  ExpectedTypeError1(env, function, i, "integer or float");
  SetEvaluationError(env, TRUE);
  return false;
}

// An argument as an integer, floats truncated as CLIPS does; false if it has no integer value.
bool integer_arg(void* env, const char* function, int i, long long* out) {
  DATA_OBJECT a;
  if (!numeric_arg(env, function, i, &a)) return false;
  if (GetType(a) == INTEGER) {
    *out = DOToLong(a);
    return true;
  }
  const double d = DOToDouble(a);
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0)) {
    arithmetic_error(env, function, "number out of the integer range");
    return false;
  }
  *out = static_cast<long long>(d);
  return true;
}

// div and mod as CLIPS defines them, except that the smallest integer divided by -1 fails
// the decision: the installed CLIPS divides anyway and the process dies of SIGFPE.
extern "C" long long SafeDiv(void* env) {
  const int n = EnvRtnArgCount(env);
  long long total = 1;
  if (!integer_arg(env, "div", 1, &total)) return 1;
  for (int i = 2; i <= n; ++i) {
    long long d = 1;
    if (!integer_arg(env, "div", i, &d)) return 1;
    if (d == 0) {
      arithmetic_error(env, "div", "division by zero");
      return 1;
    }
    if (total == LLONG_MIN && d == -1) {
      arithmetic_error(env, "div", "integer overflow");
      return 1;
    }
    total /= d;
  }
  return total;
}

extern "C" void SafeMod(void* env, DATA_OBJECT_PTR result) {
  result->type = INTEGER;
  result->value = EnvAddLong(env, 0);
  DATA_OBJECT a, b;
  if (!numeric_arg(env, "mod", 1, &a) || !numeric_arg(env, "mod", 2, &b)) return;
  if (GetType(a) == FLOAT || GetType(b) == FLOAT) {
    const double x = GetType(a) == FLOAT ? DOToDouble(a) : static_cast<double>(DOToLong(a));
    const double y = GetType(b) == FLOAT ? DOToDouble(b) : static_cast<double>(DOToLong(b));
    if (y == 0.0) {
      arithmetic_error(env, "mod", "division by zero");
      return;
    }
    result->type = FLOAT;
    result->value = EnvAddDouble(env, x - std::trunc(x / y) * y);
    return;
  }
  const long long x = DOToLong(a), y = DOToLong(b);
  if (y == 0) {
    arithmetic_error(env, "mod", "division by zero");
    return;
  }
  result->value = EnvAddLong(env, y == -1 ? 0 : x % y);
}

// CLIPS's own assert, kept so GuardedAssert can call it (the same for every environment).
using AssertFunction = void (*)(void*, DATA_OBJECT_PTR);
std::atomic<AssertFunction> clips_assert{nullptr};

// assert as CLIPS parses and runs it, then a check that every fact it made is a decision or
// a rewrite (the checker refuses other asserts; this covers any path it did not model). A
// forged fact is retracted and the decision fails.
extern "C" void GuardedAssert(void* env, DATA_OBJECT_PTR result) {
  void* last = FactData(env)->LastFact;  // facts are listed in assertion order
  clips_assert.load()(env, result);
  std::vector<void*> forged;
  for (void* f = EnvGetNextFact(env, last); f; f = EnvGetNextFact(env, f)) {
    const std::string_view name = EnvGetDeftemplateName(env, EnvFactDeftemplate(env, f));
    // A reset asserts (initial-fact) through the same function.
    if (!sandbox::may_assert(name) && name != "initial-fact") forged.push_back(f);
  }
  if (forged.empty()) return;
  const std::string name = EnvGetDeftemplateName(env, EnvFactDeftemplate(env, forged.front()));
  for (void* f : forged) EnvRetract(env, f);
  EnvPrintRouter(
      env, WERROR,
      "[WARDEN5] rules may assert only decision, rewrite, allow, hint and approval facts, not '");
  EnvPrintRouter(env, WERROR, name.c_str());
  EnvPrintRouter(env, WERROR, "'\n");
  SetEvaluationError(env, TRUE);
  SetHaltExecution(env, TRUE);
  result->type = SYMBOL;
  result->value = EnvFalseSymbol(env);
}

// Enforces the allowlist in the environment itself: every function CLIPS defines that rules
// may not call becomes DisabledFunction; str-cat, sym-cat and create$ get their budgeted
// versions, div and mod their overflow-safe ones. Walks the live function list, so it covers whatever this CLIPS build defines.
bool install_sandbox(void* env) {
  std::vector<const char*> names;
  for (FunctionDefinition* f = GetFunctionList(env); f; f = f->next)
    names.push_back(ValueToString(f->callFunctionName));  // stable: the definition holds it
  bool ok = true;
  for (const char* name : names) {
    if (sandbox::keep_enabled(name)) continue;
    ok &= EnvDefineFunction2WithContext(env, name, 'u', PTIEF DisabledFunction, "DisabledFunction",
                                        nullptr, const_cast<char*>(name)) != 0;
  }
  ok &= EnvDefineFunction2(env, "str-cat", 'u', PTIEF BudgetedStrCat, "BudgetedStrCat", "1*") != 0;
  ok &= EnvDefineFunction2(env, "sym-cat", 'u', PTIEF BudgetedSymCat, "BudgetedSymCat", "1*") != 0;
  ok &=
      EnvDefineFunction2(env, "create$", 'm', PTIEF BudgetedCreate, "BudgetedCreate", nullptr) != 0;
  ok &= EnvDefineFunction2(env, "div", 'g', PTIEF SafeDiv, "SafeDiv", "2*n") != 0;
  // assert keeps its parser (the template syntax); only the function it runs is wrapped.
  FunctionDefinition* assert_fn = FindFunction(env, "assert");
  if (!assert_fn || !assert_fn->environmentAware) return false;
  if (assert_fn->functionPointer != PTIF GuardedAssert) {
    // CLIPS stores every function as int (*)(void) and calls it by its declared type ('u').
    clips_assert.store(
        reinterpret_cast<AssertFunction>(reinterpret_cast<void (*)()>(assert_fn->functionPointer)));
    assert_fn->functionPointer = PTIF GuardedAssert;
  }
  ok &= EnvDefineFunction2(env, "mod", 'n', PTIEF SafeMod, "SafeMod", "22n") != 0;
  return ok;
}

// Stable code for a CLIPS error message such as "[EXPRNPSR3] Missing function declaration".
// The checker finds these mistakes first, in the author's words; these are for what it misses.
const char* code_for(const std::string& message) {
  auto has = [&](const char* id) { return message.find(id) != std::string::npos; };
  if (has("[EXPRNPSR3]")) return code::kUnknownFunction;
  if (has("[PRNTUTIL2]")) return code::kParse;
  if (has("[TMPLTDEF1]")) return code::kUnknownSlot;     // invalid slot
  if (has("[PRCCODE3]")) return code::kUnboundVariable;  // undefined variable
  if (has("[CSTRNCHK1]") || has("[TMPLTDEF2]"))
    return code::kSlotValue;  // type, allowed values, one value
  return code::kCompile;
}

// After an error CLIPS echoes the construct up to the token it stopped at ("ERROR:\n(defrule
// MAIN::b\n   (test eq"). Split into tokens, the echo matches the construct's own tokens one
// for one (its name gains the module, MAIN::), so the last one is where CLIPS stopped: its
// index in `tokens`, or npos when the echo is missing or does not match.
std::size_t stop_index(const std::string& captured, const std::vector<Token>& tokens) {
  const std::size_t at = captured.rfind("ERROR:\n");
  if (at == std::string::npos) return std::string::npos;
  std::vector<Token> echo;
  TokenError error;
  if (!tokenize(std::string_view(captured).substr(at + 7), &echo, &error) || echo.empty() ||
      echo.size() > tokens.size())
    return std::string::npos;
  for (std::size_t i = 0; i < echo.size(); ++i) {
    const Token &e = echo[i], &s = tokens[i];
    if (e.type != s.type) return std::string::npos;
    const bool numbers = e.type == TokenType::Atom && !e.text.empty() && !s.text.empty() &&
                         (std::isdigit(static_cast<unsigned char>(e.text.back())) != 0) ==
                             (std::isdigit(static_cast<unsigned char>(s.text.back())) != 0) &&
                         std::strchr("+-.0123456789", e.text[0]) &&
                         std::strchr("+-.0123456789", s.text[0]);
    if (e.text != s.text && e.text != "MAIN::" + s.text && !numbers) return std::string::npos;
  }
  return echo.size() - 1;
}

// First meaningful line of what CLIPS printed, without the construct echo.
std::string first_message(const std::string& captured) {
  std::size_t start = captured.find('[');
  if (start == std::string::npos) start = 0;
  std::string line = captured.substr(start, captured.find('\n', start) - start);
  // "[PRNTUTIL2] Syntax Error:  Check appropriate syntax for defrule." and the next line
  // carries the detail for some errors; keep both when short.
  std::size_t next = captured.find('\n', start);
  if (next != std::string::npos) {
    std::size_t end = captured.find('\n', next + 1);
    std::string detail =
        captured.substr(next + 1, end == std::string::npos ? std::string::npos : end - next - 1);
    if (!detail.empty() && detail.size() < 120 && detail.find("ERROR:") == std::string::npos &&
        detail[0] != '(')
      line += " " + detail;
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

}  // namespace

ClipsEnv::ClipsEnv() {
  env_ = CreateEnvironment();
  if (!env_) throw std::runtime_error("cannot create a CLIPS environment");
  sandbox::note_builtins(env_);  // before anything is registered or disabled in it
  SetEnvironmentContext(env_, static_cast<BindingContext*>(&state_));
  if (!EnvAddRouter(env_, kRouterName, 40, CaptureQuery, CapturePrint, nullptr, nullptr, nullptr))
    throw std::runtime_error("cannot add the CLIPS output router");
  EnvSetParserErrorCallback(env_, ParserError);
  EnvSetOutOfMemoryFunction(env_, OutOfMemory);
  EnvAddPeriodicFunction(env_, "warden-deadline", DeadlineCheck, 0);
  if (!register_functions(env_)) throw std::runtime_error("cannot register rule functions");
  // No objects: without the initial-object definstances, a reset creates and deletes no
  // instance, so the object system's functions (all disabled) are never needed.
  if (void* initial = EnvFindDefinstances(env_, "initial-object")) EnvUndefinstances(env_, initial);
  EnvDeleteInstance(env_, nullptr);  // every instance: the initial-object made at creation
  if (EnvGetNextInstance(env_, nullptr)) throw std::runtime_error("cannot remove CLIPS instances");
  if (!install_sandbox(env_)) throw std::runtime_error("cannot disable CLIPS functions");
  Diagnostics diagnostics;
  if (!load(kTemplates, "<templates>", 1, "", &diagnostics))
    throw std::runtime_error("built-in templates do not load: " +
                             (diagnostics.empty() ? std::string() : diagnostics.front().message));
}

ClipsEnv::~ClipsEnv() {
  if (env_) DestroyEnvironment(env_);
}

bool ClipsEnv::read_constructs(const std::string& text, bool pretty_print, int* ok, bool* timed_out,
                               bool* overran) {
  state_.captured.clear();
  state_.error_lines.clear();
  // Globals' initial values are evaluated while loading: bound them like a decision.
  arm_deadline(kLoadDeadline);
  if (!OpenStringSource(env_, kSourceName, text.c_str(), 0)) return false;
  // The parser reads the text a character at a time. Through the routers each character
  // asks every router whether it serves the name and then finds the string source by name;
  // CLIPS's own "fast string get" (what it uses to parse text it generates) reads the same
  // characters straight from the text, with the same end, unget and line counting (the load
  // counts lines of the name it was given, this very pointer). The string source stays open
  // for anything that asks the routers about the name. Unlike the string source, which
  // answers "end" again to every read after the end, the fast get reads on past it: the text
  // is followed by NULs (each one the end again), far more than a parse reads after the end
  // (each read there returns the end, on which every parser level returns), checked after.
  source_.assign(text);
  source_.append(kSourcePad, '\0');
  struct routerData* routers = RouterData(env_);
  const char* const saved_router = routers->FastCharGetRouter;
  char* const saved_string = routers->FastCharGetString;
  const long saved_index = routers->FastCharGetIndex;
  routers->FastCharGetRouter = kSourceName;
  routers->FastCharGetString = source_.data();
  routers->FastCharGetIndex = 0;
  // Without pretty-printing the buffer still exists, empty: CLIPS copies it into each
  // construct it defines and echoes it after an error, and would read a null one.
  const int saved_pretty = SetPPBufferEnabled(env_, TRUE);
  if (!pretty_print) {
    const int saved_status = GetPPBufferStatus(env_);
    SetPPBufferStatus(env_, ON);
    SavePPBuffer(env_, " ");
    FlushPPBuffer(env_);
    SetPPBufferStatus(env_, saved_status);
    SetPPBufferEnabled(env_, FALSE);
  }
  *ok = LoadConstructsFromLogicalName(env_, kSourceName);
  *overran = routers->FastCharGetIndex > static_cast<long>(text.size() + kSourcePad / 2);
  SetPPBufferEnabled(env_, saved_pretty);
  routers->FastCharGetRouter = saved_router;
  routers->FastCharGetString = saved_string;
  routers->FastCharGetIndex = saved_index;
  CloseStringSource(env_, kSourceName);
  *timed_out = disarm_deadline();
  return true;
}

bool ClipsEnv::load(const std::string& text, const std::string& file, long first_line,
                    const std::string& construct_name, Diagnostics* out) {
  // Most constructs load cleanly, and CLIPS's pretty-print buffer (each construct's text as
  // CLIPS would print it back, which Warden never asks for) is then of no use: read without
  // it. One that does not load is read again with it, as it always was: CLIPS echoes that
  // buffer up to where it stopped, which places the diagnostic below. A failed read defines
  // no rule or function (CLIPS adds one only once it parsed whole; the globals a defglobal
  // defined before its error are defined again alike), so the second read says what a
  // single read would.
  int ok = 0;
  bool timed_out = false, overran = false;
  if (!read_constructs(text, false, &ok, &timed_out, &overran)) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "cannot open a string source"});
    return false;
  }
  if (!timed_out && !overran &&
      !(ok && state_.error_lines.empty() && !has_error_message(state_.captured)) &&
      !read_constructs(text, true, &ok, &timed_out, &overran)) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "cannot open a string source"});
    return false;
  }
  if (overran) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "CLIPS read on past the end of this construct"});
    clear_errors();
    return false;
  }
  if (timed_out) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "evaluating this construct at load ran past the deadline"});
    clear_errors();
    return false;
  }
  bool clean = ok && state_.error_lines.empty() && !has_error_message(state_.captured);
  if (!clean) {
    long line = state_.error_lines.empty() ? 1 : state_.error_lines.front();
    long column = 0;
    const char* code = code_for(state_.captured);
    std::string message = first_message(state_.captured);
    if (message.empty()) message = "CLIPS could not load this construct";
    std::vector<Token> tokens;
    TokenError error;
    const std::size_t stop =
        tokenize(text, &tokens, &error) ? stop_index(state_.captured, tokens) : std::string::npos;
    if (stop != std::string::npos) {
      const Token& at = tokens[stop];
      line = at.line;
      column = at.column;
      message += " (CLIPS stopped at `" +
                 (at.type == TokenType::String ? "\"" + at.text.substr(0, 40) + "\""
                                               : at.text.substr(0, 40)) +
                 "` on line " + std::to_string(first_line + at.line - 1) + ")";
      // A syntax error after a '(' the indentation says was left open, or after a ')' it says
      // closed a group early, is that parenthesis's doing.
      std::size_t evidence = stop + 1;
      const std::size_t open =
          code == code::kParse ? unclosed_by_indentation(tokens, 0, stop + 1, &evidence) : stop + 1;
      const std::size_t extra = code == code::kParse && open > stop
                                    ? extra_close_by_indentation(tokens, 0, stop + 1)
                                    : stop + 1;
      if (open <= stop) {
        line = tokens[open].line;
        column = tokens[open].column;
        message = quoted_group(tokens, open) + " opened on line " +
                  std::to_string(first_line + line - 1) +
                  " is probably not closed: its `)` belongs before line " +
                  std::to_string(first_line + tokens[evidence].line - 1) +
                  ", which is indented as its sibling. " + message;
      } else if (extra <= stop) {
        line = tokens[extra].line;
        column = tokens[extra].column;
        message =
            "this `)` is probably one too many: it closes a group early, and a later line is still indented "
            "as part of it. " +
            message;
      }
    }
    out->push_back(
        {code, Severity::Error, file, first_line + line - 1, construct_name, message, column});
  }
  state_.captured.clear();
  state_.error_lines.clear();
  return clean;
}

void ClipsEnv::arm_deadline(std::chrono::microseconds budget) {
  state_.deadline = std::chrono::steady_clock::now() + budget;
  state_.deadline_hit = false;
  state_.memory_hit = false;
  state_.memory_limit = EnvMemUsed(env_) + kRuleMemoryBudget;
  state_.deadline_armed = true;
}

bool ClipsEnv::over_memory() {
  if (EnvMemUsed(env_) > state_.memory_limit) state_.memory_hit = true;
  return state_.memory_hit;
}

bool ClipsEnv::disarm_deadline() {
  state_.deadline_armed = false;
  return state_.deadline_hit;
}

void ClipsEnv::clear_errors() {
  SetHaltExecution(env_, FALSE);
  SetEvaluationError(env_, FALSE);
  EnvSetHaltRules(env_, FALSE);
  state_.captured.clear();
  state_.error_lines.clear();
}

bool ClipsEnv::reset() {
  // After rules went over the budget, hand CLIPS's pooled blocks back to the allocator.
  if (state_.memory_hit) EnvReleaseMem(env_, -1);
  arm_deadline(kLoadDeadline);
  EnvReset(env_);
  bool timed_out = disarm_deadline();
  bool ok = !timed_out && !GetEvaluationError(env_) && !has_error_message(state_.captured);
  clear_errors();
  if (ok)
    mark_baseline();
  else
    baseline_.usable = false;
  return ok;
}

// A reset (EnvReset) runs every construct's reset function: the rules' (time tag back to 1,
// focus stack back to MAIN, "prime" joins of rules that start with `not`, `test` or no
// pattern at all retracted and matched again), the facts' (every fact retracted, oldest
// first; fact index back to 0), the deffacts' ((initial-fact) asserted), the globals' (off:
// they are constants). When the reset left nothing but (initial-fact), the rules have no
// prime join, and no pattern matches (initial-fact), every alpha and beta memory of the
// network is empty and the agenda holds nothing: a fact only ever matches patterns and
// joins through the decision's own facts. Retracting exactly the decision's facts, in the
// reset's order, then empties every memory and removes every activation the same way
// (each activation rests on a partial match, which rests on a decision fact), and what
// else the reset would change is put back by hand: focus stack, current module, time tag,
// next fact index. (initial-fact) itself, matched by nothing, stays instead of being
// retracted and asserted again with the same index and time tag.
void ClipsEnv::mark_baseline() {
  baseline_ = Baseline{};
  void* first = EnvGetNextFact(env_, nullptr);
  if (!first || EnvGetNextFact(env_, first)) return;
  auto* tmpl = static_cast<struct deftemplate*>(EnvFactDeftemplate(env_, first));
  if (!tmpl || std::strcmp(EnvGetDeftemplateName(env_, tmpl), "initial-fact") != 0 ||
      tmpl->patternNetwork)
    return;
  if (EnvGetNextActivation(env_, nullptr)) return;
  if (DefruleData(env_)->LeftPrimeJoins || DefruleData(env_)->RightPrimeJoins) return;
  void* main_module = EnvFindDefmodule(env_, "MAIN");
  if (!main_module) return;
  baseline_.initial_fact = first;
  baseline_.next_fact_index = FactData(env_)->NextFactIndex;
  baseline_.time_tag = DefruleData(env_)->CurrentEntityTimeTag;
  baseline_.main_module = main_module;
  baseline_.usable = true;
}

bool ClipsEnv::end_decision() {
  // Anything unusual (an error, the memory budget, a state the baseline does not describe)
  // takes the full reset.
  if (!baseline_.usable || state_.memory_hit || GetEvaluationError(env_) ||
      GetHaltExecution(env_) || EnvGetNextFact(env_, nullptr) != baseline_.initial_fact)
    return reset();
  arm_deadline(kLoadDeadline);
  // Oldest first, as the reset's RemoveAllFacts does.
  for (void* f = EnvGetNextFact(env_, baseline_.initial_fact); f;
       f = EnvGetNextFact(env_, baseline_.initial_fact))
    if (!EnvRetract(env_, f)) break;
  const bool timed_out = disarm_deadline();
  if (timed_out || GetEvaluationError(env_) || has_error_message(state_.captured) ||
      EnvGetNextFact(env_, baseline_.initial_fact) || EnvGetNextActivation(env_, nullptr))
    return reset();
  EnvClearFocusStack(env_);
  EnvFocus(env_, baseline_.main_module);
  EnvSetCurrentModule(env_, baseline_.main_module);
  DefruleData(env_)->CurrentEntityTimeTag = baseline_.time_tag;
  FactData(env_)->NextFactIndex = baseline_.next_fact_index;
  clear_errors();
  return true;
}

bool has_error_message(const std::string& output) {
  if (output.find('[') == std::string::npos) return false;  // every message id starts with one
  // CLIPS error and warning messages start a line with an id such as "[EXPRNPSR3]".
  static const RE2 kErrorId("(?m)^\\[[A-Z]+[0-9]+\\]");
  return RE2::PartialMatch(output, kErrorId);
}

std::string ClipsEnv::take_output() {
  std::string out;
  out.swap(state_.captured);
  return out;
}

}  // namespace warden
