// PolicyImpl: what a compiled Policy holds (checked constructs in load order, digest, pattern
// index) and a spare environment left over from compilation for the first Engine to take.
// Internal to the engine library. Immutable after compile except the spare, behind a mutex.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/clips_env.h"
#include "engine/pattern_index.h"
#include "engine/rule_checker.h"

namespace warden {

class PolicyImpl {
 public:
  std::vector<Construct> constructs;  // load order: deffunctions and defglobals, then defrules
  std::vector<std::string> rule_names;
  std::string digest;
  std::unique_ptr<PatternIndex> patterns;

  // Loads the constructs into `env`. Throws if CLIPS refuses one (they compiled before).
  void load_into(ClipsEnv& env) const;
  std::unique_ptr<ClipsEnv> take_spare() const;
  void set_spare(std::unique_ptr<ClipsEnv> env) const;

 private:
  mutable std::mutex spare_mutex_;
  mutable std::unique_ptr<ClipsEnv> spare_;
};

}  // namespace warden
