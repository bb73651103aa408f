#include "audit/replay.h"

#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "audit/chain.h"
#include "audit/line_scan.h"
#include "audit/reader.h"
#include "bindings/json.h"
#include "engine/engine.h"
#include "engine/proposal_reader.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"

namespace warden::audit {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t fnv1a(std::string_view a, std::string_view b) {
  std::uint64_t h = 1469598103934665603ull;
  for (char c : a) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;  // separator: ("ab","c") and ("a","bc") differ
  for (char c : b) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return h ^ (h >> 29);
}

// ---- the decision cache ------------------------------------------------------------------

using Key = std::array<unsigned char, 32>;
struct KeyHash {
  std::size_t operator()(const Key& k) const noexcept {
    std::size_t h;
    std::memcpy(&h, k.data(), sizeof h);
    return h;
  }
};

struct Cached {
  Outcome outcome = Outcome::Reject;
  bool defaulted = false;
  std::string reason, error_code;
  std::vector<FiredRule> rules;
};

class KeyBuilder {
 public:
  KeyBuilder() : ctx_(EVP_MD_CTX_new()) {}
  ~KeyBuilder() { EVP_MD_CTX_free(ctx_); }
  KeyBuilder(const KeyBuilder&) = delete;
  KeyBuilder& operator=(const KeyBuilder&) = delete;
  void begin() { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  // Length-prefixed, so no two sequences of fields hash the same bytes.
  void add(std::string_view s) {
    std::uint64_t n = s.size();
    EVP_DigestUpdate(ctx_, &n, sizeof n);
    EVP_DigestUpdate(ctx_, s.data(), s.size());
  }
  void add(std::int64_t v) { EVP_DigestUpdate(ctx_, &v, sizeof v); }
  Key finish() {
    Key k;
    unsigned int n = 0;
    EVP_DigestFinal_ex(ctx_, k.data(), &n);
    return k;
  }

 private:
  EVP_MD_CTX* ctx_;
};

// ---- the parts of a proposal rules cannot see ------------------------------------------

// The byte ranges of the string values of context.session and context.agent (those asked
// for): values that reach rules only through the proposal fact's slots of the same names.
// The engine also inspects each of them as it reads the proposal (a NUL, an invalid escape
// refuses the input), so a value is left out of the key only when the engine accepts it:
// accepted(raw value, "session"/"agent") says so. Every accepted value then gives the same
// decision as any other (the checks are per value; its length counts only against the input
// size, which is keyed, and against nothing else once the proposal was read).
template <class Accepted>
void unseen_ranges(std::string_view j, bool session, bool agent, Accepted&& accepted,
                   std::vector<std::pair<std::size_t, std::size_t>>* out) {
  out->clear();
  if (!session && !agent) return;
  scan::for_each_member(j, 0, [&](std::string_view key, std::size_t begin, std::size_t) {
    if (key != "context" || j[begin] != '{') return;
    scan::for_each_member(j, begin, [&](std::string_view k, std::size_t b, std::size_t e) {
      if (j[b] != '"') return;
      if (((session && k == "session") || (agent && k == "agent")) &&
          accepted(j.substr(b, e - b), k))
        out->emplace_back(b, e);
    });
  });
}

// Whether the engine's own reader (engine/proposal_reader.h) accepts `raw`, a JSON string
// as it stands in the text, as the value of context.<name>: the minimal proposal holding it
// there reads without error. The reader's checks of a string value (NUL, Unicode escapes,
// encoding) look at that value alone, so the answer holds in any proposal.
bool engine_accepts_context_value(std::string_view raw, std::string_view name) {
  std::string text = "{\"target\":\"x\",\"context\":{\"";
  text.append(name);
  text += "\":";
  text.append(raw);
  text += "}}";
  ReadLimits limits;
  limits.max_bytes = text.size();
  rapidjson::Document doc;
  ProposalFields fields;
  std::vector<Leaf> leaves;
  return !read_proposal(text, limits, &doc, &fields, &leaves).has_value();
}

// ---- work items and per-thread results ---------------------------------------------------

struct Item {
  std::string_view text;
  std::uint32_t file = 0;
  std::uint64_t line = 0;
  std::uint32_t segment = 0;  // the daemon run: 0 before the first start record, k after the k-th
};

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

struct WorkerResult {
  std::uint64_t replayed = 0, parse_errors = 0, masked = 0, hits = 0, misses = 0, new_proposals = 0;
  std::array<std::array<std::uint64_t, 3>, 3> matrix{};
  std::vector<ReplayChange> changes;
  std::vector<ReplayProblem> problems;
  std::vector<CapBound> caps;  // per segment
};

std::string summarize_proposal(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::string(json.substr(0, 200));
  auto str = [](const rapidjson::Value& o, const char* name) -> std::string {
    if (!o.IsObject()) return {};
    auto it = o.FindMember(name);
    if (it == o.MemberEnd()) return {};
    if (it->value.IsString())
      return std::string(it->value.GetString(), it->value.GetStringLength());
    return {};
  };
  std::string out = str(doc, "target");
  std::string action = str(doc, "action");
  if (!action.empty()) out += "/" + action;
  auto payload = doc.FindMember("payload");
  if (payload != doc.MemberEnd() && payload->value.IsObject()) {
    for (const char* name : {"command", "path", "url", "tool", "text"}) {
      std::string v = str(payload->value, name);
      if (v.empty()) continue;
      if (v.size() > 200) v = v.substr(0, 200) + "…";
      out += std::string(" ") + name + "=" + v;
      break;
    }
  }
  return out;
}

int index_of(Outcome o) { return static_cast<int>(o); }

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
std::size_t session_overhead(std::string_view principal, std::string_view session) {
  return 128 + 2 * (principal.size() + session.size());
}
std::size_t entry_bytes(const HistoryEntry& e) {
  const EffectRecord& f = e.effect;
  return sizeof(HistoryEntry) + e.decision_id.size() + f.kind.size() + f.object.size() +
         f.target.size() + f.program.size() + f.path_class.size() + f.subcommand.size() +
         f.via.size();
}

struct SessionHistory {
  std::vector<HistoryItem> items;
  std::size_t overhead = 0, bytes = 0, peak = 0;  // for CapBound

  void expire(std::int64_t now, std::int64_t ttl) {
    items.erase(std::remove_if(items.begin(), items.end(),
                               [&](const HistoryItem& h) { return now - h.entry.time >= ttl; }),
                items.end());
    bytes = overhead;
    for (const auto& h : items) bytes += entry_bytes(h.entry);
  }
  void record(const std::string& decision_id, std::int64_t time,
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
};

// What one proposal (text, principal, groups, and the clock's second when rules read it)
// decides with no history, from an engine whose fact cap leaves room for a full history,
// and which history patterns its effects activate.
struct Probe {
  bool usable = false;  // false: decide every record of this proposal in full, never cached
  RuleInputs::Reach reach;
  Cached result;
};

// The caches every worker shares: one mutex each, held only to look up or insert. Entries
// are never removed (node addresses stay valid); past kMaxEntries nothing more is kept.
class SharedCache {
 public:
  static constexpr std::size_t kMaxEntries = 2000000;
  const Probe* find_probe(const Key& k) {
    std::lock_guard lock(probes_mutex_);
    auto it = probes_.find(k);
    return it == probes_.end() ? nullptr : &it->second;
  }
  // The entry now under k (another worker's, if it got there first); null when full.
  const Probe* add_probe(const Key& k, Probe p) {
    std::lock_guard lock(probes_mutex_);
    if (probes_.size() >= kMaxEntries) return nullptr;
    return &probes_.emplace(k, std::move(p)).first->second;
  }
  const Cached* find(const Key& k) {
    std::lock_guard lock(decisions_mutex_);
    auto it = decisions_.find(k);
    return it == decisions_.end() ? nullptr : &it->second;
  }
  const Cached* add(const Key& k, Cached c) {
    std::lock_guard lock(decisions_mutex_);
    if (decisions_.size() >= kMaxEntries) return nullptr;
    return &decisions_.emplace(k, std::move(c)).first->second;
  }

 private:
  std::mutex probes_mutex_, decisions_mutex_;
  std::unordered_map<Key, Probe, KeyHash> probes_;
  std::unordered_map<Key, Cached, KeyHash> decisions_;
};

class Worker {
 public:
  Worker(std::shared_ptr<const Policy> policy, EngineOptions options, const RuleInputs& inputs,
         SharedCache* cache, const std::vector<Segment>& segments, std::atomic<std::uint64_t>* done)
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
    // history cannot reach the real cap with any history (engine/fact_codec.cpp counts
    // history facts with the proposal's). The largest history of any run.
    std::size_t max_history = 0;
    for (const auto& seg : segments_) max_history = std::max(max_history, seg.memory.max_entries);
    probe.max_facts = options.max_facts > max_history ? options.max_facts - max_history : 0;
    max_input_bytes_ = options.max_input_bytes;
    engine_ = std::make_unique<Engine>(policy, std::move(options));
    if (cache_enabled_)
      probe_engine_ = std::make_unique<Engine>(std::move(policy), std::move(probe));
  }

  void run(const std::vector<Item>& items) {
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

  WorkerResult result;

 private:
  static Cached from_result(DecideResult&& r) {
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

  static bool resource_limit(const std::string& code) {
    return code == code::kDeadline || code == code::kMemory || code == code::kInputTooLarge;
  }

  // Decides with the session's history: all of it (reach null), or only the facts that can
  // match a pattern some partial match reaches — leaving the others out changes nothing
  // (the probe engine showed the fact cap has room for all of them).
  Cached decide_full(const DecisionRecord& rec, SessionHistory* session,
                     const RuleInputs::Reach* reach = nullptr) {
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

  void decide(const DecisionRecord& rec, const Item& item) {
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
      ReplayChange c;
      c.seq = rec.seq;
      c.time_us = rec.time_us;
      c.file = item.file;
      c.line = item.line;
      c.principal = rec.principal;
      c.session = rec.session;
      c.decision_id = rec.decision_id;
      c.summary = summarize_proposal(rec.proposal_json);
      c.masked = rec.masked;
      c.widening = is_widening(rec.outcome, got->outcome);
      c.old_outcome = rec.outcome;
      c.new_outcome = got->outcome;
      c.old_reason = before.reason;
      c.new_reason = got->reason;
      c.old_error = rec.error_code;
      c.new_error = got->error_code;
      c.old_rules = before.rules;
      c.new_rules = got->rules;
      result.changes.push_back(std::move(c));
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

  const RuleInputs& inputs_;
  bool cache_enabled_;
  SharedCache* shared_;
  std::atomic<std::uint64_t>* done_;
  // Whether the engine's reader accepts a context value (engine_accepts_context_value),
  // remembered per value: sessions repeat.
  bool accepted(std::string_view raw, std::string_view name) {
    auto& known = name == "session" ? accepted_sessions_ : accepted_agents_;
    if (auto it = known.find(raw); it != known.end()) return it->second;
    const bool ok = engine_accepts_context_value(raw, name);
    if (known.size() >= 100000) known.clear();
    known.emplace(std::string(raw), ok);
    return ok;
  }

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

// ---- the start record --------------------------------------------------------------------

struct StartSettings {
  std::string workspace_root, home, default_outcome;
  std::optional<SessionMemoryOptions> session;  // absent in logs of daemons before it was recorded
};

// "session":{"ttl_seconds","max_entries","max_sessions","max_bytes"}; false when absent or
// of another shape.
bool read_session_settings(const rapidjson::Value& doc, SessionMemoryOptions* out) {
  auto it = doc.FindMember("session");
  if (it == doc.MemberEnd() || !it->value.IsObject()) return false;
  auto num = [&](const char* name, std::uint64_t* v) {
    auto m = it->value.FindMember(name);
    if (m == it->value.MemberEnd() || !m->value.IsUint64()) return false;
    *v = m->value.GetUint64();
    return true;
  };
  std::uint64_t ttl = 0, entries = 0, sessions = 0, bytes = 0;
  if (!num("ttl_seconds", &ttl) || !num("max_entries", &entries) ||
      !num("max_sessions", &sessions) || !num("max_bytes", &bytes) ||
      ttl > (std::uint64_t(1) << 62))
    return false;
  out->ttl_seconds = static_cast<std::int64_t>(ttl);
  out->max_entries = entries;
  out->max_sessions = sessions;
  out->max_bytes = bytes;
  return true;
}

bool read_start(std::string_view line, StartSettings* out) {
  rapidjson::Document doc;
  doc.Parse(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) return false;
  auto get = [&](const char* name, std::string* v) {
    auto it = doc.FindMember(name);
    if (it == doc.MemberEnd() || !it->value.IsString()) return false;
    v->assign(it->value.GetString(), it->value.GetStringLength());
    return true;
  };
  SessionMemoryOptions session;
  if (read_session_settings(doc, &session)) out->session = session;
  return get("workspace_root", &out->workspace_root) && get("home", &out->home) &&
         get("default_outcome", &out->default_outcome) &&
         parse_outcome(out->default_outcome).has_value();
}

std::string describe(const SessionMemoryOptions& m) {
  if (m.ttl_seconds <= 0) return "off (ttl 0)";
  return "ttl " + std::to_string(m.ttl_seconds) + " s, " + std::to_string(m.max_entries) +
         " entries per session, " + std::to_string(m.max_sessions) + " sessions, " +
         std::to_string(m.max_bytes) + " bytes";
}

// Two names of one file (as expand_log_paths tells them apart).
bool same_file(const std::string& a, const std::string& b) {
  if (a == b) return true;
  std::error_code ea, eb;
  const std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea);
  const std::filesystem::path cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

}  // namespace

bool is_widening(Outcome before, Outcome after) { return after < before; }

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

  // One pass on this thread: line boundaries, seq and kind, and each decision's owner.
  std::vector<std::vector<Item>> work(threads);
  std::optional<StartSettings> start;
  std::uint64_t start_seq = 0;
  std::uint64_t round_robin = 0;
  bool starts_differ = false;
  // One segment per daemon run: a start record begins one (the daemon's session memory
  // starts empty there, with that run's [session] settings). The flags override each run's.
  auto with_flags = [&](SessionMemoryOptions m) {
    if (options.session_ttl_seconds) m.ttl_seconds = *options.session_ttl_seconds;
    if (options.session_max_entries) m.max_entries = *options.session_max_entries;
    if (options.session_max_sessions) m.max_sessions = *options.session_max_sessions;
    if (options.session_max_bytes) m.max_bytes = *options.session_max_bytes;
    return m;
  };
  std::vector<Segment> segments{{with_flags(SessionMemoryOptions{}), 0}};
  std::vector<std::uint64_t> unrecorded_session;  // start records without the session settings
  // Per file: lines, and lines that are records (seq, prev and kind where a record has them).
  std::vector<std::uint64_t> file_lines(rep.files.size()), file_records(rep.files.size());
  logs.for_each_line([&](const LogLine& line) {
    if (line.text.empty() && !line.terminated) return;  // nothing after the last '\n'
    ++rep.records;
    ++file_lines[line.file];
    std::uint64_t seq = 0;
    std::string_view kind;
    if (!peek_seq_kind(line.text, &seq, &kind)) {
      ++rep.parse_errors;
      if (rep.problems.size() < 20)
        rep.problems.push_back({line.file, line.line, 0,
                                "not a record: the line does not start with seq, prev and kind"});
      return;
    }
    ++file_records[line.file];
    if (kind == "decision") {
      ++rep.decisions;
      std::size_t from = 0;
      std::string_view principal = scan::raw_string_member(line.text, ",\"principal\":\"", &from);
      std::string_view session = scan::raw_string_member(line.text, ",\"session\":\"", &from);
      std::size_t owner =
          session.empty() ? (round_robin++ % threads) : fnv1a(principal, session) % threads;
      work[owner].push_back({line.text, static_cast<std::uint32_t>(line.file), line.line,
                             static_cast<std::uint32_t>(segments.size() - 1)});
      return;
    }
    if (kind == "approval") {
      ++rep.approvals;
      return;
    }
    ++rep.skipped_kinds[std::string(kind)];
    if (kind == "start") {
      StartSettings s;
      const bool complete = read_start(line.text, &s);
      if (!s.session) unrecorded_session.push_back(seq);
      segments.push_back({with_flags(s.session.value_or(SessionMemoryOptions{})), seq});
      if (!complete) {
        rep.warnings.push_back("start record seq " + std::to_string(seq) +
                               " lacks workspace_root, home or default_outcome");
      } else if (!start) {
        start = s;
        start_seq = seq;
      } else if (s.workspace_root != start->workspace_root || s.home != start->home ||
                 s.default_outcome != start->default_outcome) {
        starts_differ = true;
      }
    }
  });

  // A log given that holds no record (with its rotated siblings) is not a log replayed
  // without change: a CI gate pointed at the wrong path, an empty file, a file of something
  // else. It fails the replay, naming the log.
  for (const std::string& given : options.logs) {
    std::uint64_t lines = 0, records = 0;
    std::size_t files = 0;
    for (const std::string& f : log_files(given)) {
      for (std::size_t i = 0; i < rep.files.size(); ++i) {
        if (!same_file(rep.files[i], f)) continue;
        ++files;
        lines += file_lines[i];
        records += file_records[i];
      }
    }
    if (records == 0) {
      *error = given + ": no audit record read (" + std::to_string(lines) + " line(s) in " +
               std::to_string(files) +
               " file(s), none of them a record): not an audit log, or an empty one";
      return false;
    }
  }

  EngineOptions eo;
  rep.options_from = start ? "start record seq " + std::to_string(start_seq) : "engine defaults";
  if (start) {
    eo.workspace_root = start->workspace_root;
    eo.home = start->home;
    eo.default_outcome = *parse_outcome(start->default_outcome);
  }
  if (options.workspace_root || options.home || options.default_outcome)
    rep.options_from += ", flags";
  if (options.workspace_root) eo.workspace_root = *options.workspace_root;
  if (options.home) eo.home = *options.home;
  if (options.default_outcome) eo.default_outcome = *options.default_outcome;
  if (starts_differ)
    rep.warnings.push_back(
        "the log's start records name different workspace, home or default outcome; "
        "every record is replayed with one setting (" +
        rep.options_from + ")");
  {
    bool flags = options.session_ttl_seconds || options.session_max_entries ||
                 options.session_max_sessions || options.session_max_bytes;
    // ttl and max_entries shape each session's history; the caps over all sessions only the
    // warning below.
    if (!unrecorded_session.empty() &&
        !(options.session_ttl_seconds && options.session_max_entries))
      rep.warnings.push_back(
          std::to_string(unrecorded_session.size()) + " start record(s) (the first seq " +
          std::to_string(unrecorded_session.front()) +
          ") do not record the daemon's session memory settings; the defaults (" +
          describe(SessionMemoryOptions{}) + ") are assumed for the records after them");
    // The runs the records are in (segment 0 only holds records before any start record).
    std::size_t first = segments.size() > 1 ? 1 : 0;
    rep.session = segments[first].memory;
    rep.session_from =
        (segments[first].start_seq ? "start record seq " + std::to_string(segments[first].start_seq)
                                   : std::string("defaults")) +
        (flags ? ", flags" : "");
    for (std::size_t i = first + 1; i < segments.size(); ++i) {
      const auto& a = segments[i - 1].memory;
      const auto& b = segments[i].memory;
      if (a.ttl_seconds != b.ttl_seconds || a.max_entries != b.max_entries ||
          a.max_sessions != b.max_sessions || a.max_bytes != b.max_bytes)
        rep.warnings.push_back("session memory from start record seq " +
                               std::to_string(segments[i].start_seq) + " on: " + describe(b));
    }
  }
  eo.deadline = options.deadline;
  rep.workspace_root = eo.workspace_root;
  rep.home = eo.home;
  rep.default_outcome = eo.default_outcome;

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
      workers[i]->run(work[i]);
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
  std::sort(rep.problems.begin(), rep.problems.end(),
            [](const ReplayProblem& a, const ReplayProblem& b) {
              return std::tie(a.file, a.line) < std::tie(b.file, b.line);
            });
  std::sort(rep.changes.begin(), rep.changes.end(),
            [](const ReplayChange& a, const ReplayChange& b) {
              if (a.widening != b.widening) return a.widening;
              return a.seq < b.seq;
            });
  rep.changed = rep.changes.size();
  rep.widenings = static_cast<std::uint64_t>(std::count_if(
      rep.changes.begin(), rep.changes.end(), [](const ReplayChange& c) { return c.widening; }));
  rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return true;
}

// ---- output ------------------------------------------------------------------------------

namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

// UTC "YYYY-MM-DDTHH:MM:SS.ffffffZ", as the log writes it.
std::string format_time_text(std::int64_t us) {
  std::int64_t secs = us >= 0 ? us / 1000000 : -((-us + 999999) / 1000000);
  std::int64_t frac = us - secs * 1000000;
  std::time_t t = static_cast<std::time_t>(secs);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

std::string rule_line(const FiredRule& r) {
  std::string s = r.rule + " → " + std::string(outcome_name(r.outcome));
  if (r.monitor) s += " (monitor)";
  if (!r.reason.empty()) s += ": " + r.reason;
  return s;
}

}  // namespace

std::string report_text(const ReplayReport& rep, std::size_t limit,
                        const std::function<std::string(std::string_view)>& esc) {
  auto e = [&](std::string_view s) { return esc ? esc(s) : std::string(s); };
  std::string out;
  out += "replay of " + std::to_string(rep.files.size()) + " file(s), " +
         std::to_string(rep.bytes) + " bytes, under " + e(rep.rules_digest) + "\n";
  out += "  records " + std::to_string(rep.records) + ", decisions " +
         std::to_string(rep.decisions) + ", replayed " + std::to_string(rep.replayed) +
         ", unreadable " + std::to_string(rep.parse_errors);
  if (rep.approvals)
    out += ", approval records " + std::to_string(rep.approvals) +
           " (a person decided: not re-decided)";
  std::string skipped;
  for (const auto& [kind, n] : rep.skipped_kinds)
    skipped += (skipped.empty() ? "" : ", ") + e(kind) + " " + std::to_string(n);
  out += skipped.empty() ? "\n" : "; skipped: " + skipped + "\n";
  out += "  engine: workspace " + e(rep.workspace_root) + ", home " + e(rep.home) +
         ", default outcome " + std::string(outcome_name(rep.default_outcome)) + " (from " +
         rep.options_from + ")\n";
  out += "  session memory: " + describe(rep.session) + " (from " + rep.session_from + ")\n";
  out += "  the rules see: the clock " + std::string(rep.inputs.uses_clock ? "yes" : "no") +
         ", context.session " + (rep.inputs.uses_session ? "yes" : "no") + ", context.agent " +
         (rep.inputs.uses_agent ? "yes" : "no") + ", session history " +
         std::string(rep.inputs.uses_history ? "yes" : "no");
  if (rep.inputs.uses_history)
    out += std::string(" (age ") + (rep.inputs.uses_history_age ? "yes" : "no") + ", decision id " +
           (rep.inputs.uses_history_decision ? "yes" : "no") + ")";
  if (rep.inputs.all_history)
    out += "; every history fact counts: " + e(rep.inputs.why_all_history);
  out += "\n";
  out += "  " + std::to_string(rep.threads) + " thread(s), " + fixed(rep.seconds, 2) + " s, " +
         fixed(rep.seconds > 0 ? static_cast<double>(rep.replayed) / rep.seconds : 0, 0) +
         " records/s";
  if (rep.cache) {
    const std::uint64_t n = rep.cache_hits + rep.cache_misses;
    out += ", cache hits " + std::to_string(rep.cache_hits) + " (" +
           fixed(n ? 100.0 * static_cast<double>(rep.cache_hits) / static_cast<double>(n) : 0, 1) +
           "%), " + std::to_string(rep.cache_new_proposals) + " distinct proposals";
  } else {
    out += ", no cache";
  }
  out += "\n";
  if (rep.masked)
    out += "  " + std::to_string(rep.masked) +
           " replayed record(s) had secrets masked in their input\n";
  for (const auto& w : rep.warnings) out += "warning: " + e(w) + "\n";
  for (const auto& p : rep.problems)
    out += "unreadable: " + e(rep.files[p.file]) + ":" + std::to_string(p.line) +
           (p.seq ? " seq " + std::to_string(p.seq) : std::string()) + ": " + e(p.message) + "\n";

  out += "\noutcomes (rows: recorded, columns: replayed)\n";
  const char* names[3] = {"approve", "approval-required", "reject"};
  out += pad("", 19);
  for (const char* n : names) out += pad(n, 19);
  out += "\n";
  for (int a = 0; a < 3; ++a) {
    out += pad(names[a], 19);
    for (int b = 0; b < 3; ++b) out += pad(std::to_string(rep.matrix[a][b]), 19);
    out += "\n";
  }
  out += "\n" + std::to_string(rep.changed) + " changed, " + std::to_string(rep.widenings) +
         " widening\n";

  std::size_t shown = 0;
  for (const auto& c : rep.changes) {
    if (limit && shown == limit) {
      out += "… " + std::to_string(rep.changes.size() - shown) +
             " more change(s) not shown (--limit-changes)\n";
      break;
    }
    ++shown;
    out += "\n";
    out += c.widening ? "WIDENING " : "narrowing ";
    out += "seq " + std::to_string(c.seq) + " " + e(rep.files[c.file]) + ":" +
           std::to_string(c.line) + " " + e(format_time_text(c.time_us)) + " principal " +
           e(c.principal) + " session " + e(c.session) + (c.masked ? " [input masked]" : "") + "\n";
    out += "  " + e(c.summary) + "\n";
    out += "  before: " + std::string(outcome_name(c.old_outcome)) +
           (c.old_error.empty() ? "" : " (" + e(c.old_error) + ")") + ": " + e(c.old_reason) + "\n";
    for (const auto& r : c.old_rules) out += "    " + e(rule_line(r)) + "\n";
    out += "  now:    " + std::string(outcome_name(c.new_outcome)) +
           (c.new_error.empty() ? "" : " (" + e(c.new_error) + ")") + ": " + e(c.new_reason) + "\n";
    for (const auto& r : c.new_rules) out += "    " + e(rule_line(r)) + "\n";
  }
  return out;
}

std::string report_json(const ReplayReport& rep, std::size_t limit) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  auto str = [&](std::string_view s) {
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  };
  auto rules = [&](const std::vector<FiredRule>& list) {
    w.StartArray();
    for (const auto& r : list) {
      w.StartObject();
      w.Key("rule");
      str(r.rule);
      w.Key("outcome");
      str(outcome_name(r.outcome));
      w.Key("reason");
      str(r.reason);
      w.Key("mode");
      str(r.monitor ? "monitor" : "enforce");
      w.EndObject();
    }
    w.EndArray();
  };
  w.StartObject();
  w.Key("files");
  w.StartArray();
  for (const auto& f : rep.files) str(f);
  w.EndArray();
  w.Key("rules_digest");
  str(rep.rules_digest);
  w.Key("engine");
  w.StartObject();
  w.Key("workspace_root");
  str(rep.workspace_root);
  w.Key("home");
  str(rep.home);
  w.Key("default_outcome");
  str(outcome_name(rep.default_outcome));
  w.Key("from");
  str(rep.options_from);
  w.Key("session");
  w.StartObject();
  w.Key("ttl_seconds");
  w.Int64(rep.session.ttl_seconds);
  w.Key("max_entries");
  w.Uint64(rep.session.max_entries);
  w.Key("max_sessions");
  w.Uint64(rep.session.max_sessions);
  w.Key("max_bytes");
  w.Uint64(rep.session.max_bytes);
  w.Key("from");
  str(rep.session_from);
  w.EndObject();
  w.EndObject();
  w.Key("rules_see");
  w.StartObject();
  w.Key("clock");
  w.Bool(rep.inputs.uses_clock);
  w.Key("history");
  w.Bool(rep.inputs.uses_history);
  w.Key("history_age");
  w.Bool(rep.inputs.uses_history_age);
  w.Key("history_decision");
  w.Bool(rep.inputs.uses_history_decision);
  w.EndObject();
  w.Key("totals");
  w.StartObject();
  w.Key("bytes");
  w.Uint64(rep.bytes);
  w.Key("records");
  w.Uint64(rep.records);
  w.Key("decisions");
  w.Uint64(rep.decisions);
  w.Key("replayed");
  w.Uint64(rep.replayed);
  w.Key("unreadable");
  w.Uint64(rep.parse_errors);
  w.Key("approvals");
  w.Uint64(rep.approvals);
  w.Key("skipped");
  w.StartObject();
  for (const auto& [kind, n] : rep.skipped_kinds) {
    w.Key(kind.c_str(), static_cast<rapidjson::SizeType>(kind.size()));
    w.Uint64(n);
  }
  w.EndObject();
  w.Key("masked");
  w.Uint64(rep.masked);
  w.Key("changed");
  w.Uint64(rep.changed);
  w.Key("widening");
  w.Uint64(rep.widenings);
  w.Key("threads");
  w.Uint(rep.threads);
  w.Key("seconds");
  w.Double(rep.seconds);
  w.Key("cache");
  w.Bool(rep.cache);
  w.Key("cache_hits");
  w.Uint64(rep.cache_hits);
  w.Key("cache_misses");
  w.Uint64(rep.cache_misses);
  w.Key("distinct_proposals");
  w.Uint64(rep.cache_new_proposals);
  w.EndObject();
  w.Key("matrix");
  w.StartObject();
  const char* names[3] = {"approve", "approval-required", "reject"};
  for (int a = 0; a < 3; ++a) {
    w.Key(names[a]);
    w.StartObject();
    for (int b = 0; b < 3; ++b) {
      w.Key(names[b]);
      w.Uint64(rep.matrix[a][b]);
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("warnings");
  w.StartArray();
  for (const auto& s : rep.warnings) str(s);
  w.EndArray();
  w.Key("unreadable_records");
  w.StartArray();
  for (const auto& p : rep.problems) {
    w.StartObject();
    w.Key("file");
    str(rep.files[p.file]);
    w.Key("line");
    w.Uint64(p.line);
    w.Key("seq");
    w.Uint64(p.seq);
    w.Key("error");
    str(p.message);
    w.EndObject();
  }
  w.EndArray();
  w.Key("changes");
  w.StartArray();
  std::size_t shown = 0;
  for (const auto& c : rep.changes) {
    if (limit && shown++ == limit) break;
    w.StartObject();
    w.Key("seq");
    w.Uint64(c.seq);
    w.Key("time");
    str(format_time_text(c.time_us));
    w.Key("file");
    str(rep.files[c.file]);
    w.Key("line");
    w.Uint64(c.line);
    w.Key("principal");
    str(c.principal);
    w.Key("session");
    str(c.session);
    w.Key("decision_id");
    str(c.decision_id);
    w.Key("summary");
    str(c.summary);
    w.Key("masked");
    w.Bool(c.masked);
    w.Key("widening");
    w.Bool(c.widening);
    w.Key("before");
    w.StartObject();
    w.Key("outcome");
    str(outcome_name(c.old_outcome));
    w.Key("reason");
    str(c.old_reason);
    w.Key("error_code");
    str(c.old_error);
    w.Key("rules");
    rules(c.old_rules);
    w.EndObject();
    w.Key("after");
    w.StartObject();
    w.Key("outcome");
    str(outcome_name(c.new_outcome));
    w.Key("reason");
    str(c.new_reason);
    w.Key("error_code");
    str(c.new_error);
    w.Key("rules");
    rules(c.new_rules);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace warden::audit
