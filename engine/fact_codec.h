// FactCodec: asserts one proposal as CLIPS facts through the fact API (never CLIPS text):
// the proposal, a param per JSON leaf, and facts derived from the JSON structure (shell
// commands, assignments, redirects, paths with their class, URLs, pattern hits, the effects
// of what the proposal would do, the session's history) under a fact cap and the decision
// deadline; reads decisions and rewrites back. One environment, one thread.
#pragma once

#include <rapidjson/document.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "bindings/paths.h"
#include "bindings/shell_parser.h"
#include "engine/decision.h"
#include "engine/effects.h"
#include "engine/history_filter.h"
#include "engine/path_classes.h"
#include "engine/pattern_index.h"

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

class FactCodec {
 public:
  // `effects` and `classes` are the policy's tables (either may be null: no effects table
  // means no effect facts, no classes table means every class is none); they must outlive
  // the codec.
  explicit FactCodec(ClipsEnv& env, const EffectsTable* effects = nullptr,
                     const PathClasses* classes = nullptr);

  // The daemon's own paths (EngineOptions::own_paths), located once: their class overrides
  // the table's (kOwnPathClass, kOwnDirClass in engine/path_classes.h).
  void set_own_paths(std::vector<paths::Location> own);
  ~FactCodec();

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
  const std::vector<EffectRecord>& effects() const { return effect_records_; }

  // Decision and rewrite facts, in the order rules asserted them. Invalid outcome or mode
  // symbols are reported in *error.
  void read_results(std::vector<FiredRule>* rules, std::vector<Rewrite>* rewrites,
                    std::vector<Grant>* allows, std::vector<Hint>* hints, std::string* error);
  // The `approval` facts' terms into decision->approval_*: the smallest expires-in (> 0) and
  // the largest approvers. A value out of range (expires-in < 0, approvers not 1 or 2) sets
  // *error, naming the rule, if it is still empty. Those of a rule the overlay disables are
  // left out.
  void read_approval(Decision* decision, std::string* error, const RuleOverlay* overlay = nullptr);

  // How many history facts the last assert_all() asserted.
  std::size_t history_asserted() const { return history_asserted_; }

  // Every fact except decisions, in CLIPS syntax, as a JSON array (for --explain).
  std::string facts_json();

 private:
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
    int operator[](const char* name) const;
  };
  Template bind_template(const char* name);
  void* fact(const Template& tmpl);
  // Interned; frequent short strings are pinned and cached.
  void* symbol(const char* s);
  void* symbol(const std::string& s);
  void* symbol(std::string_view s);
  void put(void* f, int slot, unsigned short type, void* value);
  void put_string(void* f, int slot, const char* s) { put(f, slot, STRING_TYPE, symbol(s)); }
  void put_symbol(void* f, int slot, const char* s) { put(f, slot, SYMBOL_TYPE, symbol(s)); }
  void put_string(void* f, int slot, const std::string& s) { put(f, slot, STRING_TYPE, symbol(s)); }
  void put_symbol(void* f, int slot, const std::string& s) { put(f, slot, SYMBOL_TYPE, symbol(s)); }
  void put_integer(void* f, int slot, long long n);
  void put_strings(void* f, int slot, const std::vector<std::string>& items);
  static const unsigned short STRING_TYPE, SYMBOL_TYPE;
  bool finish(void* f);
  void stop(const char* code, std::string message);  // a cap or the deadline ends the derivation
  bool past_deadline() const;
  bool assert_param(const Leaf& leaf);
  bool assert_shell(const std::string& command, const std::string& cwd,
                    const PatternIndex& patterns);
  bool assert_derived(const ProposalFields& p, const rapidjson::Value& doc,
                      const std::vector<Leaf>& leaves, const PatternIndex& patterns,
                      FactError* error);
  bool assert_shell_command(long long index, const shell::SimpleCommand& cmd,
                            const std::string& cwd, const PatternIndex& patterns);
  bool assert_path(const std::string& key, const std::string& raw, const std::string& cwd,
                   const PatternIndex& patterns);
  bool assert_url(const std::string& key, const std::string& raw, const PatternIndex& patterns);
  bool assert_hit(std::string_view key, const PatternIndex::Hit& hit);
  // The pattern-hit facts of one derived value under its derived key (see derived_key in
  // engine/pattern_index.h; e.g. derived_key::kEffectTarget with an effect's target, once
  // per effect fact). Does nothing unless some rule uses the key. False when the matcher or
  // an assert failed (the derivation is then stopped with the cause).
  bool assert_derived_hits(std::string_view key, std::string_view value,
                           const PatternIndex& patterns);
  // The same with the index of the current assert_all (for callers that are not handed it).
  bool assert_derived_hits(std::string_view key, std::string_view value) {
    return !patterns_ || assert_derived_hits(key, value, *patterns_);
  }
  bool assert_effect(long long index, const Effect& effect, const std::string& cwd);
  bool assert_command_effects(long long index, const shell::SimpleCommand& cmd,
                              const std::string& cwd);
  bool assert_proposal_effects(const ProposalFields& p, const rapidjson::Value& doc,
                               const std::string& cwd);
  bool assert_history(const HistoryEntry& entry, std::int64_t now);
  bool count_fact();                  // one more fact against the cap; false once stopped
  std::size_t history_asserted_ = 0;  // by the last assert_all()
  const char* path_class(const paths::Location& loc);
  void glob_class(const std::string& glob, EffectRecord* rec);
  const paths::Location& workspace_root();

  ClipsEnv& env_;
  void* raw_;
  Template proposal_, param_, shell_command_, shell_assignment_, shell_redirect_, shell_error_,
      path_, url_, pattern_hit_, effect_, history_;
  // Slot positions of each template, resolved once: facts are filled by index.
  struct {
    int proposal, key, value;
  } param_slots_;
  struct {
    int proposal, key, kind, pattern;
  } pattern_hit_slots_;
  struct {
    int proposal, key, raw, normalized, resolved, in_workspace, path_class;
  } path_slots_;
  struct {
    int proposal, decision, age, kind, object, target, program, path_class, in_workspace;
  } history_slots_;
  struct {
    int proposal, key, raw, valid, scheme, host, port, path, ip, ip_class, error;
  } url_slots_;
  struct {
    int proposal, index, program, argv, flags, args, paths, wrappers, assignments, depth, cwd,
        dynamic, runs;
  } shell_command_slots_;
  struct {
    int proposal, index, name, value, dynamic;
  } shell_assignment_slots_;
  struct {
    int proposal, index, op, fd, target, path;
  } shell_redirect_slots_;
  struct {
    int proposal, message;
  } shell_error_slots_;
  struct {
    int id, target, action, explanation, agent, session, source, principal, groups, depth, attempt;
  } proposal_slots_;
  struct EffectSlots {
    int proposal, index, kind, object, target, program, subcommand, via, path_class, in_workspace,
        dynamic;
  } effect_slots_;  // resolved once: effect facts are the most numerous derived facts
  const EffectsTable* effects_;
  const PathClasses* classes_;
  std::vector<paths::Location> own_paths_;  // the daemon's own files, normalized and resolved
  std::vector<std::string> own_patterns_;   // match() patterns: each own path and what lies below
  std::vector<std::string> own_dir_patterns_;  // match() patterns: each directory above one
  const char* own_class(const paths::Location& loc) const;
  const char* own_glob_class(const paths::Location& loc) const;
  std::vector<EffectRecord> effect_records_;  // effect facts of the current proposal
  bool dotglob_ = false;               // the shell line turns dotglob on (or sets GLOBIGNORE)
  std::vector<Effect> effect_buffer_;  // reused per command
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
  TextMap<void*> pinned_;  // symbol cache, bounded
  bool failed_ = false;
  const FactLimits* limits_ = nullptr;      // set during assert_all
  const PatternIndex* patterns_ = nullptr;  // set during assert_all
  std::size_t asserted_ = 0;                // facts asserted for the current proposal
  FactError stop_;                          // set when a cap or the deadline stopped the derivation
  void* id_symbol_ = nullptr;               // the proposal id, during assert_all
  std::optional<paths::Location> root_;     // the workspace root, located for the current proposal
};

}  // namespace warden
