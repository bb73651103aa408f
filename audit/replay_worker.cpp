#include "audit/replay_worker.h"

#include <algorithm>

#include "audit/replay_diff.h"

namespace warden::audit::replay {
namespace {

int index_of(Outcome o) { return static_cast<int>(o); }

}  // namespace

Worker::Worker(std::shared_ptr<const Policy> policy, EngineOptions options,
               const RuleInputs& inputs, SharedCache* cache, const std::vector<Segment>& segments,
               std::atomic<std::uint64_t>* done)
    : inputs_(inputs),
      cache_enabled_(cache != nullptr),
      shared_(cache),
      done_(done),
      segments_(segments) {
  options.clock = [this] { return now_; };
  memory_options_ = segments_[0].memory;
  result.caps.resize(segments_.size());
  EngineOptions probe = options;
  // Room for a whole session's history: a proposal that decides under this cap without
  // history cannot reach the real cap with any history (engine/history_facts.cpp counts
  // history facts with the proposal's). The largest history of any run.
  std::size_t max_history = 0;
  for (const auto& seg : segments_) max_history = std::max(max_history, seg.memory.max_entries);
  probe.max_facts = options.max_facts > max_history ? options.max_facts - max_history : 0;
  max_input_bytes_ = options.max_input_bytes;
  engine_ = std::make_unique<Engine>(policy, std::move(options));
  if (cache_enabled_) probe_engine_ = std::make_unique<Engine>(std::move(policy), std::move(probe));
}

void Worker::run(const std::vector<Item>& items) {
  DecisionRecord rec;
  std::string error;
  std::uint64_t since_report = 0;
  for (const Item& item : items) {
    if (++since_report == 64) {
      done_->fetch_add(since_report, std::memory_order_relaxed);
      since_report = 0;
    }
    if (item.segment != segment_) {
      // The daemon restarted: its session memory starts empty, with that run's settings.
      sessions_.clear();
      segment_ = item.segment;
      memory_options_ = segments_[segment_].memory;
    }
    rec.rules.clear();
    rec.reason.clear();
    full_ = false;
    if (read_decision_lean(item.text, &rec)) {
      decide(rec, item);
      continue;
    }
    rec = DecisionRecord();
    full_ = true;
    if (!parse_decision(item.text, &rec, &error)) {
      ++result.parse_errors;
      std::uint64_t seq = 0;
      std::string_view kind;
      peek_seq_kind(item.text, &seq, &kind);
      if (result.problems.size() < 20)
        result.problems.push_back({item.file, item.line, seq, error});
      continue;
    }
    decide(rec, item);
  }
  done_->fetch_add(since_report, std::memory_order_relaxed);
}

Cached Worker::from_result(DecideResult&& r) {
  Cached c;
  if (r.ok) {
    c.outcome = r.decision.outcome;
    c.defaulted = r.decision.defaulted;
    c.reason = std::move(r.decision.reason);
    c.error_code = std::move(r.decision.error_code);
    c.rules = std::move(r.decision.rules);
  } else {
    // Not a proposal: the daemon refuses such input closed.
    c.outcome = Outcome::Reject;
    c.error_code = r.error.code;
    c.reason = r.error.message;
  }
  return c;
}

bool Worker::resource_limit(const std::string& code) {
  return code == code::kDeadline || code == code::kMemory || code == code::kInputTooLarge;
}

Cached Worker::decide_full(const DecisionRecord& rec, SessionHistory* session,
                           const RuleInputs::Reach* reach) {
  ++result.misses;
  history_.clear();
  if (session)
    for (const auto& h : session->items)
      if (!reach || inputs_.reaches(*reach, h.mask, h.entry.effect)) history_.push_back(h.entry);
  DecideRequest req;
  req.proposal_json = rec.proposal_json;
  req.decision_id = rec.decision_id;
  req.principal = rec.principal;
  req.groups = rec.groups;
  req.history = &history_;
  return from_result(engine_->decide(req));
}

void Worker::decide(const DecisionRecord& rec, const Item& item) {
  ++result.replayed;
  if (rec.masked) ++result.masked;
  // The engine's clock gave the daemon this second (floor, also before 1970).
  now_ = rec.time_us >= 0 ? rec.time_us / 1000000 : -((-rec.time_us + 999999) / 1000000);
  SessionHistory* session = nullptr;
  const bool remembers = memory_options_.ttl_seconds > 0;  // [session] ttl_seconds = 0: no memory
  if (!rec.session.empty() && remembers) {
    session_key_.assign(rec.principal);
    session_key_.push_back('\0');
    session_key_.append(rec.session);
    auto it = sessions_.find(session_key_);
    if (it != sessions_.end()) {
      it->second.expire(now_, memory_options_.ttl_seconds);
      if (it->second.items.empty()) {
        sessions_.erase(it);
      } else {
        session = &it->second;
      }
    }
  }

  Cached fresh;
  const Cached* got = &fresh;
  if (!cache_enabled_) {
    fresh = decide_full(rec, session);
  } else {
    // Level 1: the proposal itself.
    keys_.begin();
    // The proposal's text, without the values rules cannot see; its size decides alone
    // whether the input is too large.
    unseen_ranges(
        rec.proposal_json, !inputs_.uses_session, !inputs_.uses_agent,
        [this](std::string_view raw, std::string_view name) { return accepted(raw, name); },
        &ranges_);
    std::string_view text = rec.proposal_json;
    std::size_t at = 0;
    for (const auto& [b, e] : ranges_) {
      keys_.add(text.substr(at, b - at));
      at = e;
    }
    keys_.add(text.substr(at));
    keys_.add(static_cast<std::int64_t>(ranges_.size()));
    keys_.add(static_cast<std::int64_t>(text.size() > max_input_bytes_));
    keys_.add(rec.principal);
    keys_.add(static_cast<std::int64_t>(rec.groups.size()));
    for (const auto& g : rec.groups) keys_.add(g);
    keys_.add(static_cast<std::int64_t>(inputs_.uses_clock));
    if (inputs_.uses_clock) keys_.add(now_);
    const Key k1 = keys_.finish();
    const Probe* found = shared_->find_probe(k1);
    Probe own;
    bool probed_now = false;
    if (!found) {
      ++result.misses;
      ++result.new_proposals;
      probed_now = true;
      DecideRequest req;
      req.proposal_json = rec.proposal_json;
      req.decision_id = rec.decision_id;
      req.principal = rec.principal;
      req.groups = rec.groups;
      DecideResult r = probe_engine_->decide(req);
      Probe p;
      const bool read = r.ok;
      if (r.ok) p.reach = inputs_.reach(r.decision.effects);
      p.result = from_result(std::move(r));
      // A refused input's message may depend on the left-out values (a byte offset): such
      // a key is decided in full for every record.
      p.usable = !resource_limit(p.result.error_code) && (read || ranges_.empty());
      found = shared_->add_probe(k1, p);
      if (!found) {
        own = std::move(p);
        found = &own;
      }
    }
    const Probe& probe = *found;
    // Level 2: the history facts some pattern of an active rule can reach, in order.
    bool relevant = false;
    if (session)
      for (const auto& h : session->items)
        if (inputs_.reaches(probe.reach, h.mask, h.entry.effect)) {
          relevant = true;
          break;
        }
    if (!probe.usable) {
      fresh = decide_full(rec, session);
    } else if (!relevant) {
      // The other history facts match no pattern that any partial match reaches: the
      // decision is the one without history.
      if (!probed_now) ++result.hits;
      got = &probe.result;
    } else {
      keys_.begin();
      keys_.add(std::string_view(reinterpret_cast<const char*>(k1.data()), k1.size()));
      for (const auto& h : session->items) {
        if (!inputs_.reaches(probe.reach, h.mask, h.entry.effect)) continue;
        const EffectRecord& e = h.entry.effect;
        keys_.add(e.kind);
        keys_.add(e.object);
        keys_.add(e.target);
        keys_.add(e.program);
        keys_.add(e.path_class);
        keys_.add(static_cast<std::int64_t>(e.in_workspace));
        if (inputs_.uses_history_age) keys_.add(now_ > h.entry.time ? now_ - h.entry.time : 0);
        if (inputs_.uses_history_decision) keys_.add(h.entry.decision_id);
      }
      const Key k2 = keys_.finish();
      if (const Cached* hit = shared_->find(k2)) {
        ++result.hits;
        got = hit;
      } else {
        fresh = decide_full(rec, session, &probe.reach);
        if (!resource_limit(fresh.error_code))
          if (const Cached* kept = shared_->add(k2, fresh)) got = kept;
      }
    }
  }

  result.matrix[index_of(rec.outcome)][index_of(got->outcome)]++;
  if (got->outcome != rec.outcome) {
    // The rules that fired before and the reason: read in full now.
    DecisionRecord whole;
    std::string error;
    const DecisionRecord& before =
        full_ || !parse_decision(item.text, &whole, &error) ? rec : whole;
    result.changes.push_back(change_of(rec, before, *got, item.file, item.line));
  }
  // What the daemon remembered: the recorded effects of a recorded approval.
  if (remembers && rec.outcome == Outcome::Approve && rec.error_code.empty() &&
      !rec.session.empty() && !rec.effects.empty()) {
    CapBound& bound = result.caps[segment_];
    if (!session) {
      session_key_.assign(rec.principal);
      session_key_.push_back('\0');
      session_key_.append(rec.session);
      auto [it, created] = sessions_.try_emplace(session_key_);
      session = &it->second;
      if (created || session->overhead == 0) {
        session->overhead = session->bytes = session->peak =
            session_overhead(rec.principal, rec.session);
        ++bound.sessions;
        bound.bytes += session->peak;
      }
    }
    session->record(rec.decision_id, now_, rec.effects, inputs_, memory_options_);
    if (session->bytes > session->peak) {
      bound.bytes += session->bytes - session->peak;
      session->peak = session->bytes;
    }
  }
}

bool Worker::accepted(std::string_view raw, std::string_view name) {
  auto& known = name == "session" ? accepted_sessions_ : accepted_agents_;
  if (auto it = known.find(raw); it != known.end()) return it->second;
  const bool ok = engine_accepts_context_value(raw, name);
  if (known.size() >= 100000) known.clear();
  known.emplace(std::string(raw), ok);
  return ok;
}

}  // namespace warden::audit::replay
