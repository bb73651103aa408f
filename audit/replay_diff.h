// Comparing (audit/replay.h): a recorded decision against the one replay made — the change
// a report lists, with a one-line summary of its proposal — and the order of the findings in
// the report (widenings first). Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "audit/reader.h"
#include "audit/replay.h"
#include "audit/replay_cache.h"

namespace warden::audit::replay {

// The change from `recorded` to `now`, read at line `line` of file `file`; `before` is the
// record read in full (the rules that fired then, and the reason).
ReplayChange change_of(const DecisionRecord& recorded, const DecisionRecord& before,
                       const Cached& now, std::size_t file, std::uint64_t line);

// target/action and the first of command, path, url, tool and text (200 bytes at most), or
// the proposal's first 200 bytes when it is no JSON object (bindings/json.h reads it).
std::string summarize_proposal(std::string_view json);

// Problems by file and line; changes widenings first, then by seq; the counts of both.
void order_findings(ReplayReport* report);

}  // namespace warden::audit::replay
