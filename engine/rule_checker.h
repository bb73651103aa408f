// RuleChecker: the "check" stage of loading rules (read → check → compile). Splits rule
// sources into constructs with their lines, placing a parenthesis or quote that does not pair
// up where the author left it out; finds what CLIPS would accept but Warden must not
// (forbidden constructs and functions, duplicate names, global mutation, bad constant regexes,
// decisions credited to another rule) and, in the author's words at the token of the mistake,
// what CLIPS would refuse or load as a dead rule (engine/fact_checks.h). It also gathers the
// indexed `pattern-hit` patterns, what each `history` pattern's constants accept and the data
// sets named as constants. Pure; thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/history_filter.h"
#include "engine/rule_source.h"

namespace warden {

struct Construct {
  std::string kind;  // "defrule", "deffunction", "defglobal"
  std::string name;  // rule or function name; empty for defglobal
  std::string file;
  long line = 0;     // line of the opening parenthesis
  std::string text;  // exact source text
  bool ok = true;    // false: has check errors and must not reach CLIPS
};

// A constant pattern-hit pattern found anywhere in a rule's conditions (also inside not, or,
// and, exists, forall, logical), with where it was written for diagnostics.
struct IndexedPattern {
  std::string key;   // empty: every string leaf; or a derived key (url.host, …)
  std::string kind;  // regex, substring, prefix, suffix, exact, glob, path-within
  std::string pattern;
  std::string file;
  long line = 0;
  std::string rule;
};

// A data set a construct names as a constant (`(data-member "team-packages" ?p)`), checked
// against the rule set's data files when it compiles (E_DATA_SET).
struct DataReference {
  std::string function;  // data-member or data-value
  std::string name;
  std::string file;
  long line = 0;
  std::string rule;  // the construct's name
};

struct CheckedSources {
  std::vector<Construct> constructs;  // in source order
  std::vector<IndexedPattern> patterns;
  std::vector<HistoryPattern> history_patterns;  // every `history` pattern of every rule
  std::map<std::string, std::set<std::string>> function_calls;  // deffunction → what it calls
  std::vector<DataReference> data_references;
};

// Whether calling `name` from a history pattern can neither fail, print nor assert, whatever
// its arguments (with `functions`, what each deffunction calls). member$ counts when its
// second argument is a global the caller checks to be a multifield.
bool total_call(const std::string& name,
                const std::map<std::string, std::set<std::string>>& functions);

CheckedSources check_sources(const RuleSources& sources, Diagnostics* diagnostics);

}  // namespace warden
