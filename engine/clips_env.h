// ClipsEnv: one sandboxed CLIPS environment with Warden's templates and rule functions,
// its output captured (CLIPS never prints on its own), a deadline hook, and a loader that
// turns CLIPS load errors into diagnostics with file lines. One thread at a time.
#pragma once

#include <chrono>
#include <string>

#include "bindings/clips_functions.h"
#include "engine/diagnostic.h"

namespace warden {

// Per-environment state, reachable from CLIPS callbacks through the environment context.
struct EnvState : BindingContext {
  std::string captured;              // what CLIPS printed since the last take_output()
  std::vector<long> error_lines;     // lines the parser reported errors at (current load)
  std::chrono::steady_clock::time_point deadline{};
  bool deadline_armed = false;
  bool deadline_hit = false;
};

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

  // Resets the environment (globals re-evaluated under a deadline); false on any error.
  bool reset();
  // The deadline checked after every rule firing and loop iteration.
  void arm_deadline(std::chrono::microseconds budget);
  bool disarm_deadline();  // true if it was hit
  // Clears CLIPS's sticky halt and error flags and the captured output.
  void clear_errors();

 private:
  void* env_ = nullptr;
  EnvState state_;
};

}  // namespace warden
