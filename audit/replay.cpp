#include "audit/replay.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include "audit/reader.h"
#include "audit/replay_cache.h"
#include "audit/replay_diff.h"
#include "audit/replay_history.h"
#include "audit/replay_read.h"
#include "audit/replay_worker.h"
#include "engine/engine.h"
#include "engine/rule_files.h"

namespace warden::audit {

using Clock = std::chrono::steady_clock;
using replay::CapBound;
using replay::LogRead;
using replay::SharedCache;
using replay::Worker;
using replay::WorkerResult;

bool run_replay(const ReplayOptions& options, ReplayReport* report, std::string* error,
                std::vector<std::string>* diagnostics) {
  const auto t0 = Clock::now();
  ReplayReport& rep = *report;
  rep = ReplayReport();

  // The rules: the one load path (read, then compile), and the same sources scanned.
  Diagnostics read_problems;
  RuleSources sources = read_rule_files(effective_rule_paths(options.rules), &read_problems);
  bool read_failed = false;
  for (const auto& d : read_problems) {
    if (diagnostics) diagnostics->push_back(d.to_text());
    read_failed |= d.severity == Severity::Error;
  }
  if (read_failed) {
    *error = "the rules cannot be read";
    return false;
  }
  Policy::Loaded loaded = Policy::compile(sources);
  if (diagnostics)
    for (const auto& d : loaded.diagnostics) diagnostics->push_back(d.to_text());
  if (!loaded.policy) {
    *error = "the rules do not compile";
    return false;
  }
  rep.rules_digest = loaded.policy->digest();
  rep.inputs = scan_rule_inputs(sources);

  // The logs.
  LogSet logs;
  if (!LogSet::open(expand_log_paths(options.logs), &logs, error)) return false;
  rep.files = logs.files();
  rep.bytes = logs.total_bytes();

  unsigned threads =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  rep.threads = threads;
  rep.cache = options.cache;

  LogRead read;
  if (!replay::read_logs(options, logs, threads, &rep, &read, error)) return false;
  const std::vector<replay::Segment>& segments = read.segments;
  EngineOptions eo = replay::replay_settings(options, read, &rep);

  // The workers: one engine, one session memory and one cache each.
  std::atomic<std::uint64_t> done{0};
  std::vector<std::unique_ptr<Worker>> workers;
  SharedCache cache;
  for (unsigned i = 0; i < threads; ++i)
    workers.push_back(std::make_unique<Worker>(loaded.policy, eo, rep.inputs,
                                               options.cache ? &cache : nullptr, segments, &done));
  std::vector<std::thread> pool;
  std::atomic<unsigned> running{threads};
  for (unsigned i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      workers[i]->run(read.work[i]);
      running.fetch_sub(1);
    });
  }
  if (options.progress) {
    while (running.load() > 0) {
      options.progress(done.load(std::memory_order_relaxed), rep.decisions);
      for (int k = 0; k < 20 && running.load() > 0; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  for (auto& t : pool) t.join();
  if (options.progress) options.progress(rep.decisions, rep.decisions);

  for (auto& w : workers) {
    WorkerResult& r = w->result;
    rep.replayed += r.replayed;
    rep.parse_errors += r.parse_errors;
    rep.masked += r.masked;
    rep.cache_hits += r.hits;
    rep.cache_misses += r.misses;
    rep.cache_new_proposals += r.new_proposals;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) rep.matrix[a][b] += r.matrix[a][b];
    for (auto& p : r.problems)
      if (rep.problems.size() < 20) rep.problems.push_back(std::move(p));
    for (auto& c : r.changes) rep.changes.push_back(std::move(c));
  }
  // SessionMemory's caps over all sessions are not applied (each worker holds only its own
  // sessions); a run whose bound stays under them had nothing evicted by them in the daemon.
  for (std::size_t i = 0; i < segments.size(); ++i) {
    CapBound bound;
    for (auto& w : workers) {
      bound.sessions += w->result.caps[i].sessions;
      bound.bytes += w->result.caps[i].bytes;
    }
    const auto& m = segments[i].memory;
    if (bound.sessions > m.max_sessions || bound.bytes > m.max_bytes)
      rep.warnings.push_back(
          "the daemon's session memory may have reached its caps over all sessions (" +
          std::to_string(m.max_sessions) + " sessions, " + std::to_string(m.max_bytes) +
          " bytes) " +
          (segments[i].start_seq ? "after start record seq " + std::to_string(segments[i].start_seq)
                                 : "in the log") +
          ": up to " + std::to_string(bound.sessions) + " sessions and " +
          std::to_string(bound.bytes) +
          " bytes were held; replay does not evict for them, so a session the daemon evicted still has its "
          "history here");
  }
  if (!options.cache) rep.cache_hits = rep.cache_misses = 0;
  replay::order_findings(&rep);
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

}  // namespace warden::audit
