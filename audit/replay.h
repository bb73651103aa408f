// Replay (docs/REPLAY.md): every recorded decision of an audit log re-decided under other
// rules, as the daemon would have decided it — the recorded time as the engine's clock, the
// recorded principal, groups and decision id, and the recorded session history (the effects
// of the session's earlier approved records, in seq order) — and the differences reported.
//
// Work is split over threads, one Engine each: a decision record goes to the thread that
// owns its (principal, session), so a session's records are decided in seq order beside its
// own SessionMemory. Records are parsed on the threads; the main thread only finds line
// boundaries and reads `seq`, `kind`, `principal` and `session` without a JSON parser.
//
// The decision cache: a decision is a pure function of the proposal text, the principal,
// the groups, the history facts the rules can see and, when some rule calls (now), the
// clock's second (engine/rule_inputs.h scans the rule set to know which). Its key is the
// SHA-256 of exactly those inputs, so two records with the same key get the same decision
// and only one is run. Decisions that failed on a resource limit (E_DEADLINE, E_MEMORY) are
// never cached.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/decision.h"
#include "engine/rule_inputs.h"
#include "engine/session_memory.h"

namespace warden::audit {

struct ReplayOptions {
  std::vector<std::string> logs;   // log files; a live file brings its rotated siblings
  std::vector<std::string> rules;  // rule files or directories (empty: the shipped pack)
  // Engine settings; unset: the log's first `start` record's, else the engine defaults.
  std::optional<std::string> workspace_root, home;
  std::optional<Outcome> default_outcome;
  // The daemon's session memory ([session]); unset: each start record's (the records after a
  // start record get its settings and an empty memory, as the restarted daemon had), else
  // the defaults. Set: every run's.
  std::optional<std::int64_t> session_ttl_seconds;
  std::optional<std::size_t> session_max_entries, session_max_sessions, session_max_bytes;
  unsigned threads = 0;  // 0: std::thread::hardware_concurrency()
  bool cache = true;
  // Per decision. Generous: replay judges what the rules decide, and a busy machine must
  // not turn into E_DEADLINE changes.
  std::chrono::microseconds deadline{1000000};
  // Called on the calling thread about five times a second while deciding, and once at
  // the end: records decided so far, decision records in all.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
};

// widening: the new outcome is less strict (reject → approve, reject → approval-required,
// approval-required → approve).
bool is_widening(Outcome before, Outcome after);

struct ReplayChange {
  std::uint64_t seq = 0;
  std::int64_t time_us = 0;
  std::size_t file = 0;    // index in ReplayReport::files
  std::uint64_t line = 0;  // 1-based line in that file
  std::string principal, session, decision_id;
  std::string summary;  // target/action and the command, path or URL (not escaped)
  bool masked = false;  // the recorded input had secrets masked
  bool widening = false;
  Outcome old_outcome = Outcome::Reject, new_outcome = Outcome::Reject;
  std::string old_reason, new_reason, old_error, new_error;
  std::vector<FiredRule> old_rules, new_rules;
};

struct ReplayProblem {
  std::size_t file = 0;
  std::uint64_t line = 0;
  std::uint64_t seq = 0;  // 0 when unknown
  std::string message;
};

struct ReplayReport {
  std::vector<std::string> files;
  std::uint64_t bytes = 0;
  std::uint64_t records = 0;            // lines read
  std::uint64_t decisions = 0;          // decision records found
  std::uint64_t replayed = 0;           // decision records re-decided
  std::uint64_t parse_errors = 0;       // lines or decision records that could not be read
  std::vector<ReplayProblem> problems;  // the first 20 of them
  // Approval records: what people decided about approval-required actions (SPEC §6). Not
  // re-decided — no rule decided them — and not skipped as an unknown kind either.
  std::uint64_t approvals = 0;
  std::map<std::string, std::uint64_t> skipped_kinds;    // other records that are not decisions
  std::uint64_t masked = 0;                              // replayed records whose input was masked
  std::array<std::array<std::uint64_t, 3>, 3> matrix{};  // [old][new], Outcome order
  std::uint64_t changed = 0, widenings = 0;
  std::vector<ReplayChange> changes;  // widenings first, then narrowings; each by seq
  bool cache = true;
  // Engine runs saved and made; the proposals decided once without history (level 1 keys).
  std::uint64_t cache_hits = 0, cache_misses = 0, cache_new_proposals = 0;
  unsigned threads = 1;
  std::string rules_digest;
  std::string workspace_root, home;
  Outcome default_outcome = Outcome::ApprovalRequired;
  std::string options_from;      // "start record seq N", "defaults", plus "flags" when overridden
  SessionMemoryOptions session;  // of the first daemon run (later runs' differences: warnings)
  std::string session_from;
  RuleInputs inputs;  // what the rules can see besides the proposal
  std::vector<std::string> warnings;
  double seconds = 0;  // wall time of the replay (reading to report)
};

// Loads the rules and the logs and replays. False (*error says why, *diagnostics holds the
// rule diagnostics as text lines) when the rules do not compile or a log cannot be read:
// the command's exit 2. Unreadable records inside a log are counted, not fatal.
bool run_replay(const ReplayOptions& options, ReplayReport* report, std::string* error,
                std::vector<std::string>* diagnostics = nullptr);

// The report as text and as one JSON object; limit_changes 0: every change. `escape` makes
// each string that came from the log or the rules safe to print (the CLI passes
// cli::printable); null: as it is.
std::string report_text(const ReplayReport& report, std::size_t limit_changes = 0,
                        const std::function<std::string(std::string_view)>& escape = nullptr);
std::string report_json(const ReplayReport& report, std::size_t limit_changes = 0);

}  // namespace warden::audit
