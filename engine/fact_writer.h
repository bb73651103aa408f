// FactWriter: how the fact codec's parts assert facts, through the fact API (never CLIPS
// text): templates bound once with their slots' positions, short strings kept interned, the
// budget of one proposal (the fact cap and the decision deadline; the first cause that stops
// the derivation is kept) and the pattern-hit facts every kind of derived value may add.
// The slot setters are inline in engine/fact_writer_inline.h. One environment, one thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bindings/shell_parser.h"
#include "engine/pattern_index.h"

namespace warden {

// Bounds on deriving the facts of one proposal.
struct FactLimits {
  std::size_t max_facts = 50000;  // facts asserted for one proposal
  shell::Limits shell;            // commands and words of the shell line
  std::optional<std::chrono::steady_clock::time_point> deadline;  // the decision's deadline
};

// Why facts could not be asserted: `code` is E_DEADLINE (deadline passed), E_INPUT_TOO_LARGE
// (a cap was hit) or E_FACTS (CLIPS refused a fact, a matcher failed).
struct FactError {
  std::string code;
  std::string message;
};

class FactWriter {
 public:
  explicit FactWriter(void* env);  // the CLIPS environment
  ~FactWriter();
  FactWriter(const FactWriter&) = delete;
  FactWriter& operator=(const FactWriter&) = delete;

  // Slots are addressed by position (resolved once from the template), not by name.
  // Lookups by string_view, so a cache hit allocates nothing.
  struct TextHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  template <class V>
  using TextMap = std::unordered_map<std::string, V, TextHash, std::equal_to<>>;
  struct Template {
    void* ptr = nullptr;
    TextMap<int> slots;
    int operator[](const char* name) const;  // throws when the template has no such slot
  };
  Template bind_template(const char* name);  // throws when the template is missing

  // One proposal's derivation: begin() resets the budget and interns the proposal's id
  // (every fact names it), end() lets go of it. `limits` and `patterns` must outlive end().
  void begin(const FactLimits& limits, const PatternIndex& patterns, const std::string& id);
  void end();

  void* env() const { return raw_; }
  void* id() const { return id_symbol_; }  // the proposal id, between begin() and end()
  const FactLimits& limits() const { return *limits_; }
  // The cause a cap or the deadline stopped the derivation with (code empty when none).
  const FactError& stopped() const { return stop_; }

  void* fact(const Template& tmpl);
  // Interned; frequent short strings are pinned and cached.
  void* symbol(const char* s);
  void* symbol(const std::string& s);
  void* symbol(std::string_view s);
  void put(void* f, int slot, unsigned short type, void* value);
  void put_string(void* f, int slot, const char* s);
  void put_symbol(void* f, int slot, const char* s);
  void put_string(void* f, int slot, const std::string& s);
  void put_symbol(void* f, int slot, const std::string& s);
  void put_integer(void* f, int slot, long long n);
  void put_strings(void* f, int slot, const std::vector<std::string>& items);
  // Asserts `f` (counted against the cap, the deadline checked); false, `f` released, once
  // the derivation is stopped.
  bool finish(void* f);
  void stop(const char* code, std::string message);  // a cap or the deadline ends the derivation
  bool past_deadline() const;
  bool count_fact();  // one more fact against the cap; false once stopped

  bool assert_hit(std::string_view key, const PatternIndex::Hit& hit);
  // The pattern-hit facts of one derived value under its derived key (see derived_key in
  // engine/pattern_index.h; e.g. derived_key::kEffectTarget with an effect's target, once
  // per effect fact). Does nothing unless some rule uses the key. False when the matcher or
  // an assert failed (the derivation is then stopped with the cause).
  bool assert_derived_hits(std::string_view key, std::string_view value,
                           const PatternIndex& patterns);
  // The same with the index of the current proposal (for callers that are not handed it).
  bool assert_derived_hits(std::string_view key, std::string_view value) {
    return !patterns_ || assert_derived_hits(key, value, *patterns_);
  }

 private:
  void* raw_;
  Template pattern_hit_;
  struct {
    int proposal, key, kind, pattern;
  } pattern_hit_slots_;
  TextMap<void*> pinned_;  // symbol cache, bounded
  bool failed_ = false;
  const FactLimits* limits_ = nullptr;      // set during a derivation
  const PatternIndex* patterns_ = nullptr;  // set during a derivation
  std::size_t asserted_ = 0;                // facts asserted for the current proposal
  FactError stop_;                          // set when a cap or the deadline stopped the derivation
  void* id_symbol_ = nullptr;               // the proposal id, during a derivation
};

}  // namespace warden
