// Querying an audit log (docs/AUDIT.md): the records that match a filter (time range, kind,
// outcome, rule, principal, session, proposal target), in log order, with a one-line summary
// of what each decision was about. Read-only over a LogSet; pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "audit/reader.h"
#include "engine/decision.h"

namespace warden::audit {

struct QueryFilter {
  std::optional<std::int64_t> since_us,
      until_us;                    // record time, µs; since inclusive, until exclusive
  std::string kind = "decision";   // a record kind, or "all"
  std::optional<Outcome> outcome;  // decisions only
  // The filters below match decisions and approval records (rule: one of the rules that
  // asked for the approval; principal: its requester; target: its action's target).
  std::string rule;  // a rule that fired (any outcome, any mode)
  std::string principal, session;
  std::string target;  // the proposal's "target" (shell, file, http …)
  // Approval records only: this approval's id, this event (created, approved, denied …).
  std::string approval_id, event;
  std::optional<std::uint64_t> seq;  // exactly this record
  std::size_t limit = 0;             // 0: no limit
};

// One matching record. For a decision, the decision's members; for an approval, its requester,
// session, rules, the event as outcome and "<approval id> <event>[ by <approver>]: <action
// summary>" as summary; for another kind, its kind and FIELDS as the summary.
struct QueryRow {
  std::uint64_t seq = 0;
  std::int64_t time_us = 0;
  std::string kind;
  std::string principal, session;
  std::string
      summary;  // "shell run: rm -rf build", "file write: /etc/passwd", "http get: https://…"
  std::string outcome;  // the decision's outcome, an approval's event, "" for other kinds
  std::vector<std::string>
      rules;  // the rules that fired, in order ("[monitor] name" for monitor mode)
  bool masked = false;
  std::string_view line;  // the original record (no '\n'), valid while the LogSet lives
};

struct QueryStats {
  std::uint64_t lines = 0;    // lines read
  std::uint64_t matched = 0;  // rows given to the callback
  std::uint64_t unreadable =
      0;  // lines of the requested kind that could not be parsed (torn, malformed)
};

// Calls `row` for each matching record in log order, at most filter.limit times.
QueryStats run_query(const LogSet& set, const QueryFilter& filter,
                     const std::function<void(const QueryRow&)>& row);

// What a proposal asks, in one line: "<target> <action>: <command|path|url|tool|name>" or the
// compact payload when it has none of those. Not escaped (callers escape for a terminal).
std::string proposal_summary(std::string_view proposal_json);

// A time for --since/--until: RFC 3339 ("2026-11-22T10:00:00Z", fraction and "+hh:mm" offset
// optional, or a date "2026-11-22" meaning midnight UTC), or a duration before `now_us`:
// "90s", "30m", "24h", "7d", "2w". False with the cause otherwise.
bool parse_time_arg(std::string_view text, std::int64_t now_us, std::int64_t* out,
                    std::string* error);

}  // namespace warden::audit
