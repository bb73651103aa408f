// FactResults: what the rules asserted, read back after a run: decisions, rewrites, grants,
// hints and approval terms; and every other fact in CLIPS syntax for --explain.
// Part of FactCodec (engine/fact_codec.h); one environment, one thread.
#pragma once

#include <string>
#include <vector>

#include "engine/decision.h"
#include "engine/fact_writer.h"

namespace warden {

class RuleOverlay;  // engine/overlay.h

class FactResults {
 public:
  explicit FactResults(FactWriter& writer);  // binds the result templates

  // Decision and rewrite facts, in the order rules asserted them. Invalid outcome or mode
  // symbols are reported in *error.
  void read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites,
                    std::vector<Grant>* allows, std::vector<Hint>* hints, std::string* error);
  // The `approval` facts' terms into decision->approval_* (see FactCodec::read_approval).
  void read_approval(Decision* decision, std::string* error, const RuleOverlay* overlay);

  // Every fact except decisions, in CLIPS syntax, as a JSON array (for --explain).
  std::string facts_json();

 private:
  void* raw_;
  void* decision_;
  void* rewrite_;
  void* allow_;
  void* hint_;
  void* approval_;
  // Slot positions of the facts rules assert, read back by index after every run (by name,
  // CLIPS would intern and look up the slot's name for every read).
  struct {
    int decision_rule, decision_reason, decision_outcome, decision_mode;
    int rewrite_rule, rewrite_key, rewrite_value, rewrite_reason, rewrite_mode;
    int allow_rule, allow_capability, allow_reason, allow_mode;
    int hint_rule, hint_text;
  } result_slots_;
};

}  // namespace warden
