// CaseRunner: runs rule test cases (SPEC §4) against a compiled policy, as `warden test`
// does: each case's proposal is decided and compared with its expectation; rule coverage
// is gathered across cases. An engine error passes a case only when the case expects that
// error by code. A library so the CLI only reports. One thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rapidjson/fwd.h>

#include "engine/engine.h"

namespace warden {

// An effect a case expects among the derived ones (or not): only the fields given are
// compared ("expect_effects": [{"kind":"write","target":"/w/x","class":"none"}]).
struct EffectPattern {
  std::optional<std::string> kind, object, target, program, path_class, subcommand, via;
  std::optional<bool> in_workspace, dynamic;
  bool matches(const EffectRecord& e) const;
  std::string to_text() const;  // {kind=write target=/w/x}
};

// A case's time when it gives no "now": 2026-01-01T00:00:00Z (a Thursday; 01:00 in
// Europe/Berlin), so that what a case decides never depends on when it runs.
inline constexpr std::int64_t kDefaultCaseTime = 1767225600;

// One step of a case's "history": a proposal, decided, whose effects the session remembers if
// it is approved; or effects the session already remembers (`remembered`, `age` seconds
// before the case's time) whatever the rules would decide of them now: what a session holds
// after a reload to stricter rules, or from a fleet's daemon that ran other rules.
struct HistoryStep {
  std::string proposal_json;  // empty for a remembered step
  std::vector<EffectRecord> remembered;
  std::int64_t age = 0;
};

struct RuleCase {
  std::string file;
  long line = 0;
  std::string name;
  std::string proposal_json;
  std::string expect;  // outcome name ("reject" when only expect_error is given)
  std::string
      expect_error;  // optional: the engine must fail with this code (E_RUNTIME, E_INPUT_SHAPE …)
  std::string rule;  // optional: must fire
  std::string not_rule;   // optional: must not fire
  std::string workspace;  // optional override
  // optional: the daemon's own paths the case is decided with (EngineOptions::own_paths),
  // added to the runner's
  std::vector<std::string> own_paths;
  long long depth = 0;  // optional: pipeline depth the proposal arrives at
  // optional ("now", RFC 3339 with an offset): the decision's time, seconds since the epoch,
  // for the proposal and its history; kDefaultCaseTime when not given
  std::int64_t now = kDefaultCaseTime;
  // optional: the authenticated caller, as the daemon passes it (DecideRequest)
  std::optional<std::string> principal;
  std::vector<std::string> groups;
  // optional: earlier steps of the same session, in order, in one fresh session memory
  // (engine/session_memory.h): the history the case's proposal is decided with.
  std::vector<HistoryStep> history;
  std::vector<EffectPattern> expect_effects;  // optional: each must match a derived effect
  std::vector<EffectPattern> not_effects;     // optional: none may match a derived effect
};

struct CaseResult {
  const RuleCase* test = nullptr;
  bool passed = false;
  std::string failure;  // what differed, one line per difference
  std::string decision_json;
};

struct CaseReport {
  std::vector<CaseResult> results;
  // Rules that fired in no decision the engine completed without error: a rule that only
  // ever fires on the way to a runtime error, the run limit or the deadline is not covered.
  std::vector<std::string> uncovered_rules;
  std::size_t passed = 0, failed = 0;
};

// Reads one element of a case's "history" (index: its place, for the message): a proposal
// object or a remembered step. Returns why it is invalid, "" when *step is filled.
std::string read_history_step(const rapidjson::Value& item, std::size_t index, HistoryStep* step);

// Reads cases from .jsonl (one per line) and .json (an object or an array) files.
std::vector<RuleCase> read_cases(const std::string& file, const std::string& text,
                                 Diagnostics* diagnostics);

CaseReport run_cases(const std::shared_ptr<const Policy>& policy,
                     const std::vector<RuleCase>& cases, const EngineOptions& options);

}  // namespace warden
