// The daemon's session memory as replay rebuilds it (audit/replay.h; the daemon's is
// engine/session_memory.h): the daemon runs a log holds (segments, each with its [session]
// settings), one session's history, and the bound of what the caps over all sessions held.
// A SessionHistory belongs to the one replay worker that owns its session: not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/rule_inputs.h"
#include "engine/session_memory.h"

namespace warden::audit::replay {

// What the daemon's session memory was in one run (between two start records).
struct Segment {
  SessionMemoryOptions memory;
  std::uint64_t start_seq = 0;  // 0: before any start record
};

// Per run, an upper bound of what the daemon's SessionMemory held at once over all
// sessions: every session created (counted again when replay drops an expired one and it
// comes back) and the sum of each session's largest size. When neither reaches the run's
// max_sessions and max_bytes, those caps evicted nothing in the daemon.
struct CapBound {
  std::uint64_t sessions = 0, bytes = 0;
};

// One session's history as the daemon's SessionMemory keeps it (engine/session_memory.h):
// entries older than the ttl expire, an identical effect (kind, object, target, program) is
// kept once (the newest, at the end), at most max_entries (the oldest go). Each entry also
// carries which history patterns its fact passes (RuleInputs::history_mask).
struct HistoryItem {
  HistoryEntry entry;
  std::uint64_t mask = 0;
};

// SessionMemory's accounting of the strings it holds (engine/session_memory.cpp), for the
// cap bound only.
std::size_t session_overhead(std::string_view principal, std::string_view session);

struct SessionHistory {
  std::vector<HistoryItem> items;
  std::size_t overhead = 0, bytes = 0, peak = 0;  // for CapBound

  void expire(std::int64_t now, std::int64_t ttl);
  void record(const std::string& decision_id, std::int64_t time,
              const std::vector<EffectRecord>& effects, const RuleInputs& inputs,
              const SessionMemoryOptions& o);
};

// A run's session memory settings in words ("ttl 600 s, 50 entries per session, …").
std::string describe(const SessionMemoryOptions& m);

}  // namespace warden::audit::replay
