// What a rule set can see of a decision besides the proposal: a static scan of its rule
// sources that answers "does any rule read the clock, a history fact's age or decision id,
// and which history facts can any rule's pattern reach for a given proposal". Replay
// (audit/replay.h) builds its decision cache key from the answer, so the key holds every
// input a decision can depend on.
//
// Why a scan is enough: rules run in the sandbox (engine/sandbox.h), so a rule reads facts
// only through its patterns and time only through (now) and the local-… time functions; fact queries, fact-slot-value,
// (time) and the like are not callable. The scan is still conservative: a construct that
// could read facts another way, or a history pattern it cannot read precisely, makes every
// history fact (with its age and decision id) count.
//
// Which history facts count, for one proposal:
// - a history pattern's constant constraints on its symbol slots (kind, object, class,
//   in-workspace): a fact that fails them never enters the pattern's alpha memory;
// - its guards: the `effect` patterns at the top of the same rule's LHS before it, with their
//   constant constraints. Rete joins run left to right, so when no effect of the proposal
//   satisfies a guard, no partial match ever reaches the history pattern and nothing about
//   the history fact is evaluated there. The proposal's effects come from the engine itself.
// A history pattern with a predicate constraint on its own variables only (evaluated on every
// fact of the template) makes every history fact count.
//
// Thread-safe; pure.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/decision.h"
#include "engine/rule_source.h"

namespace warden {

struct RuleInputs {
  bool uses_clock = false;  // some list calls (now) or a local-… time function
  // Some pattern may read the proposal fact's session or agent slot (context.session and
  // context.agent reach rules only there: they get no param or pattern-hit facts).
  bool uses_session = false;
  bool uses_agent = false;
  bool uses_history = false;           // some pattern names the history template
  bool uses_history_age = false;       // a history pattern reads `age` (or the scan is unsure)
  bool uses_history_decision = false;  // a history pattern reads `decision` (or unsure)
  // Every history fact may matter, whatever the proposal: see why_all_history.
  bool all_history = false;
  std::string why_all_history;

  // Constant constraints of one pattern: slot → the values it may hold ("" prefix-free;
  // string slots hold the string's bytes).
  using Values = std::set<std::string, std::less<>>;
  struct Filter {
    std::map<std::string, Values> slots;
  };
  // A history slot held by a plain variable that a guard binds first in one of its string
  // slots: a history fact joins only if its slot equals that slot of an effect passing the
  // guard. Only kept when the history pattern tests nothing with a function.
  struct Join {
    std::string slot;         // "target" or "program" of the history fact
    std::size_t guard = 0;    // index in guards
    std::string effect_slot;  // "target", "program", "subcommand" or "via"
  };
  struct HistoryPattern {
    Filter filter;               // on the history fact
    std::vector<Filter> guards;  // effect patterns before it at the top of its rule
    std::vector<Join> joins;
  };
  std::vector<HistoryPattern> history_patterns;  // at most 64 (else all_history)

  // Bit i set: the history fact built from `effect` passes pattern i's constants.
  std::uint64_t history_mask(const EffectRecord& effect) const;
  // Bit i set: every guard of pattern i is satisfied by one of the proposal's effects.
  std::uint64_t active_mask(const std::vector<EffectRecord>& effects) const;
  // For one proposal: the active patterns and, for those with joins, the values each joined
  // history slot may hold.
  struct Reach {
    std::uint64_t active = 0;
    std::uint64_t joined = 0;                                         // active patterns with joins
    std::vector<std::vector<std::pair<std::string, Values>>> values;  // per pattern
  };
  Reach reach(const std::vector<EffectRecord>& effects) const;
  // Whether a history fact with this mask and effect can match an active pattern.
  bool reaches(const Reach& reach, std::uint64_t mask, const EffectRecord& effect) const;
  // Whether a history fact can matter for a proposal: (history_mask & active_mask) != 0.
  // all_history: every bit set in both.
};

// Scans the .clp sources (tables and data, *.toml and *.data.json, are skipped: they hold no
// rules).
RuleInputs scan_rule_inputs(const RuleSources& sources);

}  // namespace warden
