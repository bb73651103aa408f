// Reading the logs for replay (audit/replay.h): one pass on the calling thread finds the
// line boundaries, reads seq and kind (and a decision's principal and session) without a
// JSON parser, and hands each decision record to the worker that owns its (principal,
// session); the start records give the engine settings and each daemon run's session
// memory. Then the settings the records are replayed with. One call of each per replay.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit/reader.h"
#include "audit/replay.h"
#include "audit/replay_history.h"
#include "audit/replay_worker.h"
#include "engine/engine.h"

namespace warden::audit::replay {

// ---- the start record --------------------------------------------------------------------

struct StartSettings {
  std::string workspace_root, home, default_outcome;
  std::optional<SessionMemoryOptions> session;  // absent in logs of daemons before it was recorded
};

// What the pass found besides the counts, problems and warnings it leaves in the report.
struct LogRead {
  std::vector<std::vector<Item>> work;  // per worker
  std::optional<StartSettings> start;   // the first complete start record
  std::uint64_t start_seq = 0;
  bool starts_differ = false;  // a later complete start record names other settings
  // One segment per daemon run (Segment): the first holds the records before any start record.
  std::vector<Segment> segments;
  std::vector<std::uint64_t> unrecorded_session;  // start records without the session settings
};

// The pass over `logs` (opened from options.logs), the decision records split over
// `threads` workers. False (*error says why) when a log given holds no record.
bool read_logs(const ReplayOptions& options, const LogSet& logs, unsigned threads,
               ReplayReport* report, LogRead* out, std::string* error);

// The engine settings the records are replayed with: the first start record's, the flags'
// over them; in the report with where they came from, each run's session memory and the
// warnings about both.
EngineOptions replay_settings(const ReplayOptions& options, const LogRead& read,
                              ReplayReport* report);

}  // namespace warden::audit::replay
