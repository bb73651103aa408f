// PolicyImpl: what a compiled Policy holds (checked constructs in load order, digest, pattern
// index, the command-effects and path classes tables, the data sets) and a spare environment left over from compilation for the first Engine to take.
// Internal to the engine library. Immutable after compile except the spare, behind a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/clips_env.h"
#include "engine/engine.h"
#include "engine/history_filter.h"
#include "engine/pattern_index.h"
#include "engine/rule_checker.h"

namespace warden {

class EffectsTable;  // engine/effects.h
class PathClasses;   // engine/path_classes.h
class RuleOverlay;   // engine/overlay.h
class DataSets;      // bindings/data_sets.h

class PolicyImpl {
 public:
  std::vector<Construct> constructs;  // load order: deffunctions and defglobals, then defrules
  std::vector<std::string> rule_names;
  std::string digest;
  std::unique_ptr<PatternIndex> patterns;
  // Which remembered effects the rules' `history` patterns can match: the others are never
  // asserted (engine/history_filter.h).
  std::unique_ptr<HistoryFilter> history_filter;
  // From the *.toml files of the set, merged in load order; null when the set has none
  // (no effects table: no effect facts; no path classes: every class is none).
  std::shared_ptr<const EffectsTable> effects;
  std::shared_ptr<const PathClasses> path_classes;
  // The [[rule]] entries of the set's overlay files, merged; null when it has none (then
  // decisions are read back as the rules asserted them, with no lookup).
  std::shared_ptr<const RuleOverlay> overlay;
  // The sets of the data files (*.data.toml, *.data.json), merged; null when it has none.
  // Every environment of the policy reads them (BindingContext::data).
  std::shared_ptr<const DataSets> data;

  // Loads the constructs into `env`. Throws if CLIPS refuses one (they compiled before).
  void load_into(ClipsEnv& env) const;
  std::unique_ptr<ClipsEnv> take_spare() const;
  void set_spare(std::unique_ptr<ClipsEnv> env) const;

 private:
  mutable std::mutex spare_mutex_;
  mutable std::unique_ptr<ClipsEnv> spare_;
};

// A compiled policy's PolicyImpl: not part of Policy's interface, reached only by the units
// that include this header.
inline const PolicyImpl& policy_impl(const Policy& policy) { return *policy.impl_; }

}  // namespace warden
