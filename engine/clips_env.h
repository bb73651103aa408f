// ClipsEnv: one sandboxed CLIPS environment with Warden's templates and rule functions,
// every other CLIPS function disabled (engine/sandbox.h), its output captured, a deadline and
// memory budget checked while rules run, and a loader that turns CLIPS load errors into
// diagnostics with file lines. Created and used by the policy and the engine; one thread at a time.
#pragma once

#include <chrono>
#include <string>

#include "bindings/clips_functions.h"
#include "engine/diagnostic.h"

namespace warden {

// Per-environment state, reachable from CLIPS callbacks through the environment context.
struct EnvState : BindingContext {
  std::string captured;           // what CLIPS printed since the last take_output()
  std::vector<long> error_lines;  // lines the parser reported errors at (current load)
  std::chrono::steady_clock::time_point deadline{};
  bool deadline_armed = false;
  bool deadline_hit = false;
  long memory_limit = 0;    // EnvMemUsed ceiling while rules run (set when armed)
  bool memory_hit = false;  // rules went over the memory budget
};

// Memory rules may allocate in one decision (or one load/reset) above what the environment
// held when it was armed. Rules that go over it fail the decision with E_MEMORY.
inline constexpr long kRuleMemoryBudget = 64L << 20;
// Largest string str-cat/sym-cat may build and most fields create$ may build.
inline constexpr std::size_t kMaxRuleStringBytes = 16u << 20;
inline constexpr std::size_t kMaxRuleFields = 1u << 20;

// True if CLIPS output holds an error or warning message ("[EXPRNPSR3] …" at a line start).
bool has_error_message(const std::string& output);

class ClipsEnv {
 public:
  ClipsEnv();  // throws std::runtime_error if CLIPS cannot set up the environment
  ~ClipsEnv();
  ClipsEnv(const ClipsEnv&) = delete;
  ClipsEnv& operator=(const ClipsEnv&) = delete;

  void* get() const { return env_; }
  EnvState& state() { return state_; }

  // Loads the constructs in `text`, whose first line is line `first_line` of `file`.
  // Appends a diagnostic per CLIPS error; returns true if it loaded cleanly.
  bool load(const std::string& text, const std::string& file, long first_line,
            const std::string& construct_name, Diagnostics* out);

  std::string take_output();  // and clear it

  // Resets the environment: every fact, the agenda and focus stack gone, globals restored
  // (re-evaluated under a deadline). False on any error.
  bool reset();
  // After a decision: back to exactly the state the last reset() left, so that nothing a
  // rule did reaches the next decision. When that reset left only (initial-fact), which no
  // pattern matches, and no rule starts without a pattern (see the definition), this is the
  // decision's facts retracted as a reset retracts them, minus the rest of a reset's work;
  // otherwise, and after any error, it is reset(). False on any error.
  bool end_decision();
  // Whether end_decision() retracts (the last reset left a state it can return to).
  bool retracts_after_decisions() const { return baseline_.usable; }
  // The deadline (and the memory budget) checked after every rule firing, deffunction
  // return and loop iteration. Arming also sets the memory ceiling from current use.
  void arm_deadline(std::chrono::microseconds budget);
  bool disarm_deadline();  // true if it was hit
  // True (and memory_hit set) if the environment holds more than the armed ceiling.
  bool over_memory();
  // Clears CLIPS's sticky halt and error flags and the captured output.
  void clear_errors();

 private:
  // What the last reset() left, when end_decision() can return to it by retraction.
  struct Baseline {
    bool usable = false;
    void* initial_fact = nullptr;
    long long next_fact_index = 0;
    long long time_tag = 0;
    void* main_module = nullptr;
  };
  void mark_baseline();
  // One LoadConstructsFromLogicalName of `text`, with or without CLIPS's pretty-print buffer;
  // the output and error lines it produced are in state_. False if the text could not be
  // opened as a source. *overran: the parser read far past the text's end (it never should).
  bool read_constructs(const std::string& text, bool pretty_print, int* ok, bool* timed_out,
                       bool* overran);

  void* env_ = nullptr;
  EnvState state_;
  Baseline baseline_;
  std::string source_;  // read_constructs: the text the parser reads, NULs after it
};

}  // namespace warden
