#include "engine/clips_env.h"

#include <re2/re2.h>

#include <cstring>
#include <stdexcept>

#include "engine/templates.h"
#include "engine/clips.h"  // last: CLIPS defines macros

namespace warden {
namespace {

constexpr std::size_t kMaxCapturedBytes = 64 * 1024;
constexpr const char* kRouterName = "warden-capture";
constexpr const char* kSourceName = "warden-source";
constexpr std::chrono::microseconds kLoadDeadline{1000000};

EnvState& state_of(void* env) {
  return *static_cast<EnvState*>(static_cast<BindingContext*>(GetEnvironmentContext(env)));
}

// CLIPS's own output channels. String destinations (pretty-printing a fact into a buffer)
// use other names and must not be captured.
extern "C" int CaptureQuery(void*, const char* logical_name) {
  static const std::string_view kNames[] = {"t", "stdout", "werror", "wwarning", "wdisplay",
                                            "wdialog", "wtrace", "wprompt", "wclips"};
  for (auto name : kNames)
    if (name == logical_name) return TRUE;
  return FALSE;
}

extern "C" int CapturePrint(void* env, const char*, const char* text) {
  std::string& out = state_of(env).captured;
  if (out.size() < kMaxCapturedBytes) out.append(text, std::min(std::strlen(text), kMaxCapturedBytes - out.size()));
  return TRUE;
}

extern "C" void ParserError(void* env, const char*, const char*, const char* error, long line) {
  if (error && *error) state_of(env).error_lines.push_back(line);
}

// Called by CLIPS after every rule firing and on every loop iteration inside a RHS.
extern "C" void DeadlineCheck(void* env) {
  EnvState& s = state_of(env);
  if (s.deadline_armed && !s.deadline_hit && std::chrono::steady_clock::now() > s.deadline) {
    s.deadline_hit = true;
    EnvSetHaltRules(env, TRUE);
    SetHaltExecution(env, TRUE);
  }
}

// Stands in for every disabled built-in, in case a call reaches it by a path the checker
// did not see.
extern "C" void DisabledFunction(void* env, DATA_OBJECT_PTR result) {
  EnvPrintRouter(env, WERROR, "[WARDEN2] a disabled function was called\n");
  SetEvaluationError(env, TRUE);
  SetHaltExecution(env, TRUE);
  result->type = SYMBOL;
  result->value = EnvFalseSymbol(env);
}

// Built-ins that reach outside the engine: replaced by DisabledFunction in every
// environment, as a second line behind the checker (which refuses every call to them).
const char* const kHostFunctions[] = {
    "exit", "system", "open", "close", "read", "readline", "read-number", "get-char", "put-char",
    "remove", "rename", "dribble-on", "dribble-off", "load", "load*", "batch", "batch*", "bload",
    "bsave", "save", "save-facts", "load-facts", "save-instances", "load-instances",
    "bsave-instances", "bload-instances", "restore-instances", "eval", "build", "seed",
    "set-locale"};

// Stable code for a CLIPS error message such as "[EXPRNPSR3] Missing function declaration".
const char* code_for(const std::string& message) {
  if (message.find("[EXPRNPSR3]") != std::string::npos) return code::kUnknownFunction;
  if (message.find("[PRNTUTIL2]") != std::string::npos) return code::kParse;
  return code::kCompile;
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
    std::string detail = captured.substr(next + 1, end == std::string::npos ? std::string::npos : end - next - 1);
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
  SetEnvironmentContext(env_, static_cast<BindingContext*>(&state_));
  if (!EnvAddRouter(env_, kRouterName, 40, CaptureQuery, CapturePrint, nullptr, nullptr, nullptr))
    throw std::runtime_error("cannot add the CLIPS output router");
  EnvSetParserErrorCallback(env_, ParserError);
  EnvAddPeriodicFunction(env_, "warden-deadline", DeadlineCheck, 0);
  for (const char* name : kHostFunctions)
    EnvDefineFunction2(env_, name, 'u', PTIEF DisabledFunction, "DisabledFunction", nullptr);
  if (!register_functions(env_)) throw std::runtime_error("cannot register rule functions");
  Diagnostics diagnostics;
  if (!load(kTemplates, "<templates>", 1, "", &diagnostics))
    throw std::runtime_error("built-in templates do not load: " +
                             (diagnostics.empty() ? std::string() : diagnostics.front().message));
}

ClipsEnv::~ClipsEnv() {
  if (env_) DestroyEnvironment(env_);
}

bool ClipsEnv::load(const std::string& text, const std::string& file, long first_line,
                    const std::string& construct_name, Diagnostics* out) {
  state_.captured.clear();
  state_.error_lines.clear();
  // Globals' initial values are evaluated while loading: bound them like a decision.
  arm_deadline(kLoadDeadline);
  if (!OpenStringSource(env_, kSourceName, text.c_str(), 0)) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "cannot open a string source"});
    return false;
  }
  int ok = LoadConstructsFromLogicalName(env_, kSourceName);
  CloseStringSource(env_, kSourceName);
  const bool timed_out = disarm_deadline();
  if (timed_out) {
    out->push_back({code::kCompile, Severity::Error, file, first_line, construct_name,
                    "evaluating this construct at load ran past the deadline"});
    clear_errors();
    return false;
  }
  bool clean = ok && state_.error_lines.empty() && !has_error_message(state_.captured);
  if (!clean) {
    long line = state_.error_lines.empty() ? 1 : state_.error_lines.front();
    std::string message = first_message(state_.captured);
    if (message.empty()) message = "CLIPS could not load this construct";
    out->push_back({code_for(state_.captured), Severity::Error, file, first_line + line - 1,
                    construct_name, message});
  }
  state_.captured.clear();
  state_.error_lines.clear();
  return clean;
}

void ClipsEnv::arm_deadline(std::chrono::microseconds budget) {
  state_.deadline = std::chrono::steady_clock::now() + budget;
  state_.deadline_hit = false;
  state_.deadline_armed = true;
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
  arm_deadline(kLoadDeadline);
  EnvReset(env_);
  bool timed_out = disarm_deadline();
  bool ok = !timed_out && !GetEvaluationError(env_) && !has_error_message(state_.captured);
  clear_errors();
  if (ok) return true;
  return false;
}

bool has_error_message(const std::string& output) {
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
