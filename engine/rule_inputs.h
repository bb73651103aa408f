// What a rule set can see of a decision besides the proposal: a static scan of its rule
// sources that answers "does any rule read the clock, a history fact's age or decision id,
// and which history facts can any rule's pattern match at all". Replay (audit/replay.h)
// builds its decision cache key from the answer, so the key holds every input a decision
// can depend on and nothing more.
//
// Why a scan is enough: rules run in the sandbox (engine/sandbox.h), so a rule reads facts
// only through its patterns and time only through (now); fact queries, fact-slot-value,
// (time) and the like are not callable. The scan is still conservative: any construct that
// could read facts another way, or a history pattern it cannot read precisely, makes every
// history fact (with its age and decision id) count. Thread-safe; pure.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/decision.h"
#include "engine/rule_source.h"

namespace warden {

struct RuleInputs {
  bool uses_clock = false;             // some list calls (now)
  bool uses_history = false;           // some pattern names the history template
  bool uses_history_age = false;       // a history pattern reads `age` (or the scan is unsure)
  bool uses_history_decision = false;  // a history pattern reads `decision` (or unsure)
  // Every history fact may matter: a pattern the scan could not read, or a construct that
  // reads facts outside patterns. Then history_filters is not used.
  bool all_history = false;
  std::string why_all_history;  // the construct that forced all_history, for reports
  // One per history pattern: the symbol slots (kind, object, class, in-workspace) it
  // requires to hold one of a set of constants. A history fact that satisfies no filter
  // matches no history pattern, so no rule can see it.
  struct HistoryFilter {
    std::map<std::string, std::set<std::string>> slots;
  };
  std::vector<HistoryFilter> history_filters;

  // Whether the history fact built from this effect could match some history pattern.
  bool history_relevant(const EffectRecord& effect) const;
};

// Scans the .clp sources (tables, *.toml, are skipped: they hold no rules).
RuleInputs scan_rule_inputs(const RuleSources& sources);

}  // namespace warden
