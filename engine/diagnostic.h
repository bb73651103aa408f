// Diagnostic: one problem found while loading rules or reading input, with a stable code.
// Produced by the rule loader and the proposal reader; printed by the CLI and the daemon.
// Plain values, no shared state: safe to copy between threads.
#pragma once

#include <string>
#include <vector>

namespace warden {

// Stable error codes. Tests and users match on these, never on the wording.
namespace code {
inline constexpr const char* kParse = "E_PARSE";                      // CLIPS syntax error
inline constexpr const char* kUnbalanced = "E_UNBALANCED";            // parentheses or string not closed
inline constexpr const char* kUnknownFunction = "E_UNKNOWN_FUNCTION"; // call to an undefined function
inline constexpr const char* kForbiddenFunction = "E_FORBIDDEN_FUNCTION";  // a CLIPS function not on the allowlist
inline constexpr const char* kForbiddenAssert = "E_FORBIDDEN_ASSERT";  // assert of a fact other than decision/rewrite
inline constexpr const char* kRecursion = "E_RECURSION";              // deffunction that calls itself
inline constexpr const char* kWildcardParameter = "E_WILDCARD_PARAM"; // deffunction with a $? parameter
inline constexpr const char* kForbiddenConstruct = "E_FORBIDDEN_CONSTRUCT";  // deftemplate, defmodule ...
inline constexpr const char* kDuplicateRule = "E_DUPLICATE_RULE";     // same rule name twice in a set
inline constexpr const char* kDuplicateFunction = "E_DUPLICATE_FUNCTION";
inline constexpr const char* kGlobalMutation = "E_GLOBAL_MUTATION";   // bind of a ?*global* at run time
inline constexpr const char* kBadRegex = "E_BAD_REGEX";               // constant pattern RE2 cannot compile
inline constexpr const char* kBadPattern = "E_BAD_PATTERN";           // pattern-hit without constant kind/pattern
inline constexpr const char* kPatternTooLarge = "E_PATTERN_TOO_LARGE";  // indexed pattern over the matcher's memory budget
inline constexpr const char* kRuleName = "E_RULE_NAME";               // decision/rewrite credited to another rule
inline constexpr const char* kCompile = "E_COMPILE";                  // any other CLIPS load error
inline constexpr const char* kNoRules = "E_NO_RULES";                 // nothing to load
inline constexpr const char* kRead = "E_READ";                        // rule file cannot be read
inline constexpr const char* kInputJson = "E_INPUT_JSON";             // proposal is not valid JSON / UTF-8
inline constexpr const char* kInputShape = "E_INPUT_SHAPE";           // proposal JSON has the wrong shape
inline constexpr const char* kInputTooLarge = "E_INPUT_TOO_LARGE";    // size or nesting over the limit
}  // namespace code

enum class Severity { Error, Warning };

struct Diagnostic {
  std::string code;
  Severity severity = Severity::Error;
  std::string file;     // rule file path as given; empty for input errors
  long line = 0;        // 1-based; 0 when unknown
  std::string rule;     // construct name when known
  std::string message;

  // "rules/shell.clp:42: error E_PARSE: message"
  std::string to_text() const;
  // {"code":…,"severity":…,"file":…,"line":…,"rule":…,"message":…}
  std::string to_json() const;
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& diagnostics);

}  // namespace warden
