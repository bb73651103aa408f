// Re-deciding (audit/replay.h): a Worker decides its share of a log's decision records —
// every record of a (principal, session) goes to one worker, in seq order — under the new
// rules, as the daemon decided them: the recorded clock second, principal, groups and
// session history, with the decision cache shared between workers (replay_cache.h); what
// it finds is its WorkerResult. One Worker per thread; run() once, then read result.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "audit/reader.h"
#include "audit/replay.h"
#include "audit/replay_cache.h"
#include "audit/replay_history.h"
#include "engine/engine.h"

namespace warden::audit::replay {

struct Item {
  std::string_view text;
  std::uint32_t file = 0;
  std::uint64_t line = 0;
  std::uint32_t segment = 0;  // the daemon run: 0 before the first start record, k after the k-th
};

struct WorkerResult {
  std::uint64_t replayed = 0, parse_errors = 0, masked = 0, hits = 0, misses = 0, new_proposals = 0;
  std::array<std::array<std::uint64_t, 3>, 3> matrix{};
  std::vector<ReplayChange> changes;
  std::vector<ReplayProblem> problems;
  std::vector<CapBound> caps;  // per segment
};

class Worker {
 public:
  Worker(std::shared_ptr<const Policy> policy, EngineOptions options, const RuleInputs& inputs,
         SharedCache* cache, const std::vector<Segment>& segments,
         std::atomic<std::uint64_t>* done);

  void run(const std::vector<Item>& items);

  WorkerResult result;

 private:
  static Cached from_result(DecideResult&& r);
  static bool resource_limit(const std::string& code);

  // Decides with the session's history: all of it (reach null), or only the facts that can
  // match a pattern some partial match reaches — leaving the others out changes nothing
  // (the probe engine showed the fact cap has room for all of them).
  Cached decide_full(const DecisionRecord& rec, SessionHistory* session,
                     const RuleInputs::Reach* reach = nullptr);
  void decide(const DecisionRecord& rec, const Item& item);

  const RuleInputs& inputs_;
  bool cache_enabled_;
  SharedCache* shared_;
  std::atomic<std::uint64_t>* done_;
  // Whether the engine's reader accepts a context value (engine_accepts_context_value),
  // remembered per value: sessions repeat.
  bool accepted(std::string_view raw, std::string_view name);

  std::int64_t now_ = 0;
  // The session memory settings of the daemon run in hand (segments_[segment_]). Its caps over
  // all sessions (max_sessions, max_bytes) are not applied — one thread here holds only some
  // of the sessions — but bounded (result.caps): the replay warns when they may have bitten.
  const std::vector<Segment>& segments_;
  std::uint32_t segment_ = 0;
  SessionMemoryOptions memory_options_;
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, bool, StringHash, std::equal_to<>> accepted_sessions_,
      accepted_agents_;
  std::unordered_map<std::string, SessionHistory> sessions_;
  std::string session_key_;
  std::vector<HistoryEntry> history_;
  std::vector<std::pair<std::size_t, std::size_t>> ranges_;
  bool full_ = false;  // the record in hand was read by parse_decision
  std::size_t max_input_bytes_ = 0;
  std::unique_ptr<Engine> engine_, probe_engine_;
  KeyBuilder keys_;
};

}  // namespace warden::audit::replay
