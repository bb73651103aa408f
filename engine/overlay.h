// RuleOverlay: a team's changes to rules of the loaded set, by rule name, as data: a *.toml
// file of the set with [[rule]] entries (docs/RULES.md, "Customise the shipped pack"). An
// entry disables a rule or makes its decisions count as another outcome, optionally with
// another reason. The rules themselves are loaded and run unchanged; the overlay maps what
// they asserted when a decision is read back (apply), so a rule other rules or tests rely on
// still fires, and its name stays in the decision with a mark saying which entry changed it.
// Nothing of an overlay is ever turned into rule code. Immutable after compile.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decision.h"
#include "engine/diagnostic.h"

namespace warden {

struct TomlDocument;  // engine/toml_document.h (internal): a *.toml file parsed once

struct OverlayEntry {
  std::string rule;                   // the rule's name
  std::string file;                   // the overlay file, as given
  long line = 0;                      // the line of its `name`
  bool disable = false;               // its decisions are reported as monitor, never applied
  std::optional<Outcome> outcome;     // its decisions count as this outcome
  std::optional<std::string> reason;  // and carry this reason
  // The outcomes the rule's actions assert, as written ("approval-required", several joined
  // by '|', "?" for one computed at run time); filled in by Policy::compile.
  std::string declared;

  std::string at() const { return file + ":" + std::to_string(line); }
  // "approval-required → approve (team/overlay.toml:3)", as `warden check` prints it.
  std::string summary() const;
};

class RuleOverlay {
 public:
  // Reads one overlay file, parsed as TOML by Policy::compile (which reports its syntax
  // errors as E_OVERLAY). Every problem is an E_OVERLAY error with the file and line; null
  // when there was one (a malformed overlay never half-applies).
  static std::shared_ptr<RuleOverlay> parse(const TomlDocument& document, Diagnostics* diagnostics);
  // Adds the entries of a later file; a rule named again is an E_OVERLAY error.
  void merge(const RuleOverlay& other, Diagnostics* diagnostics);
  // Warns (E_OVERLAY_RULE) about each entry naming no rule in `rule_names`, and drops it.
  void keep_loaded(const std::vector<std::string>& rule_names, Diagnostics* diagnostics);

  const OverlayEntry* find(std::string_view rule) const;
  const std::vector<OverlayEntry>& entries() const { return entries_; }
  std::vector<OverlayEntry>& mutable_entries() { return entries_; }

  // Maps what the rules asserted for one decision, before the outcomes are combined: a
  // disabled rule's decisions, rewrites and allows become monitor (reported, never applied)
  // and its hints are dropped; a changed rule's decisions take the entry's outcome and reason.
  // Each changed decision is marked with the entry (FiredRule::overlay).
  void apply(Decision* decision) const;
  // Whether a rule's approval terms (`approval` facts) count: not when it is disabled.
  bool approval_counts(std::string_view rule) const;

 private:
  void reindex();
  std::vector<OverlayEntry> entries_;
  std::map<std::string, std::size_t, std::less<>> index_;  // rule name → entry
};

}  // namespace warden
