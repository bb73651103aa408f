// The policy engine: rule sources in, decisions out. Start here.
//
//   auto loaded = Policy::compile(sources);            // read → check → compile, all diagnostics
//   if (!loaded.policy) print(loaded.diagnostics);
//   Engine engine(loaded.policy, options);              // one per thread
//   DecideResult r = engine.decide(proposal_json);      // prepare once, decide many
//
// A Policy is immutable and may be shared between threads. An Engine owns one CLIPS
// environment and must be used by one thread at a time. Deciding opens no file and writes
// nothing; it does look paths up on the host (lstat, readlink: bindings/paths.h resolve),
// so a path's `resolved` form is what the file system says when the decision is made.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decision.h"
#include "engine/defaults.h"
#include "engine/diagnostic.h"
#include "engine/overlay.h"
#include "engine/rule_source.h"

namespace warden {

struct EngineOptions {
  std::string workspace_root = kDefaultWorkspaceRoot;  // paths inside it are "in the workspace"
  std::string home = kDefaultHome;                     // what "~" and "$HOME" mean in paths
  // The daemon's own files and directories (config, tokens, rules, state, audit, keys,
  // socket, binary), absolute. A path effect on one of them, inside one, or matched by a
  // glob that may name one gets the path class `warden-own`; a directory holding one gets
  // `warden-own-dir` (kOwnPathClass, kOwnDirClass). Set by the daemon from its config,
  // never from a proposal.
  std::vector<std::string> own_paths;
  Outcome default_outcome = Outcome::ApprovalRequired;
  long long run_limit = 10000;  // maximum rule firings per decision
  // Maximum wall time per decision, from the start of decide(): reading the proposal,
  // parsing its shell line, asserting facts and running rules all count. Past it the
  // decision fails closed with E_DEADLINE.
  std::chrono::microseconds deadline{100000};
  std::size_t max_input_bytes = 1 << 20;  // proposal JSON size limit
  unsigned max_depth = 64;                // JSON nesting limit
  std::size_t max_leaves = 10000;         // JSON values per proposal (E_INPUT_TOO_LARGE)
  // Caps on derived facts; a cap hit fails the decision closed with E_INPUT_TOO_LARGE and
  // names the cap (never a silent truncation).
  std::size_t max_facts = 50000;          // facts asserted for one proposal
  std::size_t max_shell_commands = 4096;  // simple commands in one shell line
  std::size_t max_shell_words = 4096;     // words, assignments and redirects of one simple command
  std::size_t max_shell_total_words = 1 << 18;  // the same over the whole line
  // The decision clock, seconds since the epoch, read once at the start of each decision
  // that has no DecideRequest::now; null: the system clock. The daemon sets it to the time
  // it records in the audit log; replay to the recorded time.
  std::function<std::int64_t()> clock;
};

class PolicyImpl;

// One set of the rule set's data files (docs/RULES.md, "Data files"), as `warden check` shows it.
struct DataSetSummary {
  std::string name;
  std::string kind;     // "list" or "map"
  std::size_t entries;  // values of a list, keys of a map
  std::string at;       // "team/packages.data.toml:3"
};

// A checked and compiled rule set. Immutable; share it with shared_ptr.
class Policy {
 public:
  struct Loaded {
    std::shared_ptr<const Policy> policy;  // null when any error was found
    Diagnostics diagnostics;               // every error and warning, in file order
  };
  static Loaded compile(const RuleSources& sources);

  const std::string& digest() const;            // "sha256:…" over the sources
  std::vector<std::string> rule_names() const;  // every defrule, in load order
  // The defrules read from these files (paths as the sources named them), in load order.
  std::vector<std::string> rule_names(const std::vector<std::string>& files) const;
  std::size_t rule_count() const;
  // The overlay entries in force (each names a loaded rule), in load order; empty when the
  // set has no overlay file.
  const std::vector<OverlayEntry>& overlay() const;
  // The sets of the set's data files, by name; empty when it has none.
  std::vector<DataSetSummary> data_sets() const;

  ~Policy();

 private:
  // What the policy holds, for the engine's own units (engine/policy_impl.h).
  friend const PolicyImpl& policy_impl(const Policy& policy);
  explicit Policy(std::unique_ptr<PolicyImpl> impl);
  std::unique_ptr<PolicyImpl> impl_;
};

struct DecideRequest {
  std::string_view proposal_json;
  std::string decision_id;   // empty: the engine makes one
  bool explain = false;      // also report the derived facts
  std::int64_t depth = 0;    // pipeline depth (SPEC §2)
  std::int64_t attempt = 0;  // retry number
  // The decision's time, seconds since the epoch: what (now), the local-… time functions and
  // history ages read. Unset: EngineOptions::clock, else the system clock.
  std::optional<std::int64_t> now;
  // The authenticated principal (the daemon's token owner). When set it replaces
  // `context.principal` both in the `proposal` fact and in the returned action JSON.
  std::optional<std::string> principal;
  // The authenticated principal's groups, asserted as the `groups` multislot of the
  // `proposal` fact. Never read from the proposal JSON (`context.groups` there is a param).
  std::vector<std::string> groups;
  // Effects of earlier approved decisions of the same session (engine/session_memory.h),
  // asserted as `history` facts with `age` = now - time. Null or empty: no history.
  const std::vector<HistoryEntry>* history = nullptr;
  // The same entries when they are a store's shared snapshot (decide_in_session): the engine
  // then keeps what it learned of them (the history filter's index) for the session's next
  // decisions, while the snapshot is the same.
  std::shared_ptr<const std::vector<HistoryEntry>> shared_history;
};

struct DecideResult {
  bool ok = false;    // false: the input was not a proposal (see error)
  Decision decision;  // valid when ok
  Diagnostic error;   // E_INPUT_* when !ok
};

class EngineImpl;

class Engine {
 public:
  // Throws std::runtime_error if the environment cannot be built (out of memory).
  Engine(std::shared_ptr<const Policy> policy, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Decides one proposal. Never throws on bad input; any rule runtime error, run limit or
  // deadline fails closed (outcome reject, error_code and reason name the cause).
  DecideResult decide(const DecideRequest& request);
  DecideResult decide(std::string_view proposal_json) {
    DecideRequest request;
    request.proposal_json = proposal_json;
    return decide(request);
  }

  const Policy& policy() const;
  const std::shared_ptr<const Policy>& policy_ptr() const;
  const EngineOptions& options() const;

 private:
  std::unique_ptr<EngineImpl> impl_;
};

}  // namespace warden
