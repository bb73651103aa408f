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

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace warden {

// A history fact's slot values as the engine asserts them (engine/fact_codec.cpp).
struct HistoryValues {
  std::string_view kind, object, path_class;   // symbols
  bool in_workspace = false;                   // the symbol TRUE or FALSE
  std::string_view target, program, decision;  // strings
};

// A constant of a pattern's slot constraint: a string ("tar") or a symbol (write).
struct SlotConstant {
  bool is_string = false;
  std::string text;
};

// For each constrained slot of a pattern, the constants it accepts (one of them must equal the
// fact's value, of the same type). A slot not listed accepts any value.
using SlotConstants = std::vector<std::pair<std::string, std::vector<SlotConstant>>>;

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

// One `history` pattern: what its constants accept of a history fact, and the gates of its rule.
struct HistoryPattern {
  std::string rule;
  std::string file;
  long line = 0;
  SlotConstants slots;
  std::vector<HistoryGate> gates;
};

class HistoryFilter {
 public:
  explicit HistoryFilter(std::vector<HistoryPattern> patterns);

  // Which patterns are live for the decision whose facts are in `env` (a CLIPS environment
  // holding the proposal's facts and no history yet): those whose rule's gates all hold. A rule
  // that cannot fire for this proposal needs none of the session's history, whatever it
  // tests of it (`not`, `exists`, `forall` included): its other conditions fail anyway.
  std::vector<char> live(void* env) const;

  // True when a live pattern may match a fact with these values; false when none can.
  bool may_match(const HistoryValues& values, const std::vector<char>& live) const;

  const std::vector<HistoryPattern>& patterns() const { return patterns_; }

 private:
  std::vector<HistoryPattern> patterns_;
  // Every gate's patterns by template name: (pattern index, gate index, alternative).
  struct GateRef {
    std::size_t pattern, gate, alternative;
  };
  std::vector<std::pair<std::string, std::vector<GateRef>>> by_template_;
  std::size_t gate_count_ = 0;
};

}  // namespace warden
