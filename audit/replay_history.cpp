#include "audit/replay_history.h"

#include <algorithm>

namespace warden::audit::replay {

std::size_t session_overhead(std::string_view principal, std::string_view session) {
  return 128 + 2 * (principal.size() + session.size());
}

namespace {

std::size_t entry_bytes(const HistoryEntry& e) {
  const EffectRecord& f = e.effect;
  return sizeof(HistoryEntry) + e.decision_id.size() + f.kind.size() + f.object.size() +
         f.target.size() + f.program.size() + f.path_class.size() + f.subcommand.size() +
         f.via.size();
}

}  // namespace

void SessionHistory::expire(std::int64_t now, std::int64_t ttl) {
  items.erase(std::remove_if(items.begin(), items.end(),
                             [&](const HistoryItem& h) { return now - h.entry.time >= ttl; }),
              items.end());
  bytes = overhead;
  for (const auto& h : items) bytes += entry_bytes(h.entry);
}
void SessionHistory::record(const std::string& decision_id, std::int64_t time,
                            const std::vector<EffectRecord>& effects, const RuleInputs& inputs,
                            const SessionMemoryOptions& o) {
  if (effects.empty()) return;
  expire(time, o.ttl_seconds);
  for (const EffectRecord& e : effects) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      const EffectRecord& f = items[i].entry.effect;
      if (f.kind == e.kind && f.object == e.object && f.target == e.target &&
          f.program == e.program) {
        items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
        break;
      }
    }
    items.push_back({HistoryEntry{decision_id, time, e}, inputs.history_mask(e)});
    while (items.size() > o.max_entries) items.erase(items.begin());
  }
  bytes = overhead;
  for (const auto& h : items) bytes += entry_bytes(h.entry);
}

std::string describe(const SessionMemoryOptions& m) {
  if (m.ttl_seconds <= 0) return "off (ttl 0)";
  return "ttl " + std::to_string(m.ttl_seconds) + " s, " + std::to_string(m.max_entries) +
         " entries per session, " + std::to_string(m.max_sessions) + " sessions, " +
         std::to_string(m.max_bytes) + " bytes";
}

}  // namespace warden::audit::replay
