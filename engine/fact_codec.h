// FactCodec: asserts one proposal as CLIPS facts through the fact API (never CLIPS text):
// the proposal, a param per JSON leaf, and facts derived from the JSON structure (shell
// commands, assignments, redirects, paths with their class, URLs, pattern hits, the effects
// of what the proposal would do, the session's history) under a fact cap and the decision
// deadline; reads decisions and rewrites back. One environment, one thread.
// The façade over its parts: FactWriter (asserting, the cap and the deadline), PathFacts,
// ShellFacts, EffectFacts, HistoryFacts and FactResults; the proposal, param and url facts
// are its own.
#pragma once

#include <rapidjson/document.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bindings/paths.h"
#include "bindings/shell_parser.h"
#include "engine/decision.h"
#include "engine/effect_facts.h"
#include "engine/effects.h"
#include "engine/fact_results.h"
#include "engine/fact_writer.h"
#include "engine/history_facts.h"
#include "engine/history_filter.h"
#include "engine/path_classes.h"
#include "engine/path_facts.h"
#include "engine/pattern_index.h"
#include "engine/shell_facts.h"

namespace warden {

class RuleOverlay;  // engine/overlay.h

class ClipsEnv;

// A JSON leaf of the proposal: dotted key and the value in the document.
struct Leaf {
  std::string key;
  rapidjson::Value* value;
};

struct ProposalFields {
  std::string id;
  std::string target;  // lowercased name
  std::string action;  // lowercased name or empty
  std::string explanation, agent, session, source, principal;
  std::vector<std::string> groups;  // the authenticated principal's groups (never from JSON)
  long long depth = 0, attempt = 0;
  bool renamed = false;  // a name was lowercased in the document
};

class FactCodec {
 public:
  // `effects` and `classes` are the policy's tables (either may be null: no effects table
  // means no effect facts, no classes table means every class is none); they must outlive
  // the codec.
  explicit FactCodec(ClipsEnv& env, const EffectsTable* effects = nullptr,
                     const PathClasses* classes = nullptr);

  // The daemon's own paths (EngineOptions::own_paths), located once: their class overrides
  // the table's (kOwnPathClass, kOwnDirClass in engine/path_classes.h).
  void set_own_paths(std::vector<paths::Location> own) { paths_.set_own_paths(std::move(own)); }

  // Asserts every fact for the proposal. `doc` is the proposal document (facts are derived
  // from its structure: doc["payload"]["command"], never from joined key strings) and
  // `leaves` its JSON leaves. Returns false with *error set when a fact cannot be asserted,
  // a cap is hit or the deadline passes (the caller fails closed; nothing is truncated).
  // `history` (may be null) becomes `history` facts, their age counted from `now`: those
  // `filter` selects for this proposal (with `index`, its index of `history`), or all of
  // them when it is null.
  bool assert_all(const ProposalFields& fields, const rapidjson::Value& doc,
                  const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                  const FactLimits& limits, FactError* error,
                  const std::vector<HistoryEntry>* history = nullptr, std::int64_t now = 0,
                  const HistoryFilter* filter = nullptr,
                  const HistoryFilter::Index* index = nullptr);

  // The effect facts the last assert_all asserted, in order.
  const std::vector<EffectRecord>& effects() const {
    return effects_ ? effects_->records() : no_effects_;
  }

  // Decision and rewrite facts, in the order rules asserted them. Invalid outcome or mode
  // symbols are reported in *error.
  void read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites,
                    std::vector<Grant>* allows, std::vector<Hint>* hints, std::string* error) {
    results_.read_results(rules, rewrites, allows, hints, error);
  }
  // The `approval` facts' terms into decision->approval_*: the smallest expires-in (> 0) and
  // the largest approvers. A value out of range (expires-in < 0, approvers not 1 or 2) sets
  // *error, naming the rule, if it is still empty. Those of a rule the overlay disables are
  // left out.
  void read_approval(Decision* decision, std::string* error, const RuleOverlay* overlay = nullptr) {
    results_.read_approval(decision, error, overlay);
  }

  // How many history facts the last assert_all() asserted.
  std::size_t history_asserted() const { return history_.asserted(); }

  // Every fact except decisions, in CLIPS syntax, as a JSON array (for --explain).
  std::string facts_json() { return results_.facts_json(); }

 private:
  bool assert_param(const Leaf& leaf);
  bool assert_url(const std::string& key, const std::string& raw, const PatternIndex& patterns);
  bool assert_derived(const ProposalFields& p, const rapidjson::Value& doc,
                      const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                      FactError* error);

  ClipsEnv& env_;
  FactWriter writer_;
  FactWriter::Template proposal_, param_, url_;
  // Slot positions of each template, resolved once: facts are filled by index.
  struct {
    int id, target, action, explanation, agent, session, source, principal, groups, depth, attempt;
  } proposal_slots_;
  struct {
    int proposal, key, value;
  } param_slots_;
  struct {
    int proposal, key, raw, valid, scheme, host, port, path, ip, ip_class, error;
  } url_slots_;
  PathFacts paths_;
  std::unique_ptr<EffectFacts> effects_;  // null without an effects table
  ShellFacts shell_;
  HistoryFacts history_;
  FactResults results_;
  const std::vector<EffectRecord> no_effects_;
};

}  // namespace warden
