// HistoryFilter: which remembered effects of a session a rule set can see at all.
//
// Every effect a session's history holds becomes a `history` fact of each later decision, and
// each fact costs CLIPS its hashing, every pattern's tests and its retraction (~15,000
// instructions with the shipped pack): 512 remembered effects made a decision 30 times
// slower. But a fact that no `history` pattern of any rule can match changes no decision:
// the sandbox lets rules read facts only through their patterns (no fact queries, no fact
// lists), and a pattern whose constants rule a fact out neither matches it nor is blocked by
// it (`not`, `exists`, `forall` alike). So the engine asserts only the entries some pattern
// may match, judged by the constants of each pattern's slots (`(kind write)`,
// `(class credential|secrets-config)`, `(program ?p&"tar"|"unzip")`); anything else in a
// constraint (a variable, a negation, a predicate) accepts every value. And only for rules
// that can fire for this proposal: a rule whose own conditions on the proposal's facts
// (`(effect (kind exec) (object path))`, `(shell-command (program "git"))`) match none of
// them sees no history. Decisions stay byte for byte what they were
// (tests/corpus/decisions.txt); `--explain` shows every entry.
//
// Immutable after construction; thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/decision.h"

namespace warden {

// A history fact's slot values as the engine asserts them: symbols for kind, object, class and
// in-workspace (TRUE / FALSE), strings for target, program and decision.
struct HistoryValues {
  std::string_view kind, object, path_class;
  bool in_workspace = false;
  std::string_view target, program, decision;
};
// The values `entry` is asserted with (an unknown kind is `unknown`, an unknown object or a
// malformed class `none`).
HistoryValues history_values(const HistoryEntry& entry);

// A constant of a pattern's slot constraint: a string ("tar") or a symbol (write).
struct SlotConstant {
  bool is_string = false;
  std::string text;
  bool operator==(const SlotConstant& o) const {
    return is_string == o.is_string && text == o.text;
  }
};

// What a slot's constraint accepts, judged by its constants: one of `values` (write,
// credential|secrets-config), or with `excluding` any value but them (?p&~"git"&~"").
struct SlotConstraint {
  std::string slot;
  bool excluding = false;
  std::vector<SlotConstant> values;
  bool accepts(const SlotConstant& value) const;
};
// A pattern's constrained slots; a slot not listed accepts any value.
using SlotConstants = std::vector<SlotConstraint>;

// A pattern on a template the engine alone asserts for the proposal (effect, shell-command,
// proposal, param …; not history, and none a rule may assert).
struct FactPattern {
  std::string name;  // the template
  SlotConstants slots;
};

// A condition a rule cannot fire without: a positive pattern of its own conjunction, or an
// `or` of such patterns (any one of them). It holds for a decision when some fact of the
// proposal passes the constants of one of its patterns.
struct HistoryGate {
  std::vector<FactPattern> any_of;
};

// A variable a history pattern of the rule's conjunction shares with another pattern of it
// (`(effect (target ?t)) (history (target ?t))`, `(history (decision ?d) …) (history
// (decision ?d) (kind network))`): an entry can take part only when its `slot` equals
// `other_slot` of something the other pattern's constants accept: a fact of the proposal
// (`fact`), or another entry (`history`, an index into the filter's patterns).
struct HistoryJoin {
  std::string slot;
  std::string other_slot;
  bool with_history = false;
  FactPattern fact;
  std::size_t history = 0;
};

// A term of a text a history predicate compares: a constant, a slot of the entry itself (`?t`
// bound by the pattern's own `(target ?t…)`), the workspace root (`(workspace-root)`), or a
// variable bound by a pattern of the rule's conjunction on the proposal's facts (any value a
// fact its constants accept holds there). Anything else (a number, another call, a variable
// bound elsewhere) is unknown.
struct PredicateTerm {
  enum class Kind { kUnknown, kConstant, kEntry, kRoot, kFact };
  Kind kind = Kind::kUnknown;
  SlotConstant constant;   // kConstant
  std::string slot;        // kEntry: the history slot; kFact: the fact's slot
  FactPattern fact;        // kFact: the pattern that binds the variable
  std::size_t values = 0;  // kFact: set by HistoryFilter (its collected values)
  int entry_slot = -1;     // kEntry: set by HistoryFilter (the slot it reads; -1: not one)
};
// An argument of a comparison: one term, or the string of several (`(str-cat ?t "/")`).
struct PredicateOperand {
  bool concatenated = false;
  std::vector<PredicateTerm> terms;
};
// A `:` predicate of a history slot as far as the filter can judge it for an entry: and, or,
// not, eq, neq and str-prefix of operands; anything else is kUnknown and may hold.
struct HistoryPredicate {
  enum class Kind { kUnknown, kAnd, kOr, kNot, kEq, kNeq, kStrPrefix };
  Kind kind = Kind::kUnknown;
  std::vector<HistoryPredicate> args;      // and, or, not
  std::vector<PredicateOperand> operands;  // eq, neq, str-prefix
};

// One `history` pattern: what its constants accept of a history fact, its rule's gates, and
// its joins (only for a pattern of the rule's own conjunction, never under not / exists /
// forall / or, where a missing entry could make the rule fire).
struct HistoryPattern {
  std::string rule;
  std::string file;
  long line = 0;
  SlotConstants slots;
  std::vector<HistoryGate> gates;
  std::vector<HistoryJoin> joins;
  // Its slots' `&:` predicates that a matching entry must pass (only for a pattern of the
  // rule's own conjunction, only a slot whose constraint has no `|` outside its calls):
  // `(target ?t&:(or (eq ?c ?t) (str-prefix (str-cat ?t "/") ?c)))` keeps only the entries
  // whose target is the command's directory or holds it.
  std::vector<HistoryPredicate> predicates;
  // The functions its constraints call (`:` and `=`), and the constants of its slots written
  // before the first one that calls any. CLIPS evaluates those calls on every history fact
  // that passes the slots before them, whether its rule can fire or not: unless each call is
  // one that can neither fail nor print nor assert (check_sources decides), such a pattern
  // keeps every entry `before_calls` accepts, with no gates and no joins.
  std::vector<std::string> calls;
  SlotConstants before_calls;
  // Every function its rule's conditions call (its other patterns, its tests): CLIPS evaluates
  // them on partial matches holding history facts even when a later condition fails, so the
  // gates and joins hold only when all of them are total too.
  std::vector<std::string> rule_calls;
  std::vector<std::string> multifield_globals;  // member$ second arguments it relies on
};

class HistoryFilter {
 public:
  explicit HistoryFilter(std::vector<HistoryPattern> patterns);
  HistoryFilter(const HistoryFilter&) = delete;  // fact_terms_ points into patterns_
  HistoryFilter& operator=(const HistoryFilter&) = delete;

  // What the filter knows of one session's entries whatever the proposal: which entries each
  // pattern's constants accept, and the values its joins with other history patterns offer.
  // Built once for a snapshot and reused while it is the same (a session's snapshot changes
  // only when the session records): a decision then costs only the entries its live rules
  // may match. Refers to `entries`, which must outlive it. With `previous` (this filter's
  // index of entries still alive, typically the session's last snapshot) an entry it holds
  // keeps what was judged of it there: a session that records at every decision costs the
  // new entries, not all 512 again.
  struct Index;
  std::shared_ptr<const Index> index(const std::vector<HistoryEntry>& entries,
                                     const Index* previous = nullptr) const;
  // TRUE when `entries` may be a later snapshot of the session `earlier` indexed: its first
  // entry is one of the first that `earlier` holds (a session drops its oldest first).
  static bool continues(const Index& earlier, const std::vector<HistoryEntry>& entries);
  // How many entries of `index` kept their judgement from `previous`.
  static std::size_t reused(const Index& index);
  // The index as text, a line per pattern: the entries its constants accept, the values its
  // joins with other history patterns offer. Two indexes of the same entries describe alike.
  std::string describe(const Index& index) const;

  // Which entries of the indexed history to assert for the decision whose facts are in `env`
  // (a CLIPS environment holding the proposal's facts and no history yet): those some pattern
  // whose rule can fire (its gates hold) may match, by its constants, its joins and its
  // predicates (`workspace_root`: what (workspace-root) returns). A rule that cannot fire for
  // this proposal needs no history, whatever it tests of it.
  std::vector<char> select(void* env, const Index& index, std::string_view workspace_root) const;

  const std::vector<HistoryPattern>& patterns() const { return patterns_; }

 private:
  // A history slot constraint with the slot as an index into an entry's values (slot_index).
  struct Test {
    int slot;
    bool excluding;
    std::set<std::string, std::less<>> strings, symbols;
    bool accepts(std::string_view text, bool is_string) const;
  };
  struct Compiled {
    std::vector<Test> tests;
    std::vector<int> join_slots;   // per join: this pattern's slot, or -1 when not judged
    std::vector<int> other_slots;  // per history join: the other pattern's slot, or -1
  };
  // Where a template's facts count: gate alternatives and fact joins of each pattern. Each
  // one's slots are indexes into `slots`, the names its template's facts are read by: a
  // decision finds their positions in the template once and reads each fact's slots by
  // position (CLIPS looks a slot up by name on every read).
  struct ByTemplate {
    std::string name;
    std::vector<std::string> slots;
    std::vector<std::array<std::size_t, 3>> gates;  // (pattern, gate, alternative)
    std::vector<std::array<std::size_t, 2>> joins;  // (pattern, join)
    std::vector<std::size_t> terms;                 // predicate terms (fact_terms_)
    // Per gate, join and term: its pattern's slots, then (joins, terms) the slot it collects.
    std::vector<std::vector<std::size_t>> gate_slots, join_slots, term_slots;
  };

  std::vector<HistoryPattern> patterns_;
  std::vector<Compiled> compiled_;
  std::vector<ByTemplate> by_template_;
  std::vector<const PredicateTerm*> fact_terms_;  // the predicates' kFact terms, by `values`
};

}  // namespace warden
