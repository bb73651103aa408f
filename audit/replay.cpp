#include "audit/replay.h"

#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "audit/reader.h"
#include "engine/engine.h"
#include "engine/rule_files.h"
#include "engine/session_memory.h"

namespace warden::audit {
namespace {

using Clock = std::chrono::steady_clock;

// ---- reading the envelope without a JSON parser ------------------------------------------

// The raw bytes (escapes kept) of the first `,"<name>":"…"` string member at or after `from`;
// npos when absent. A `"` inside a JSON string is always escaped, so the first raw match of
// `,"name":"` in a record is the member itself as long as no earlier member is an object
// holding one: in a decision record principal and session come before input.
std::string_view raw_string_member(std::string_view line, std::string_view marker, std::size_t* from) {
  std::size_t at = line.find(marker, *from);
  if (at == std::string_view::npos) return {};
  std::size_t start = at + marker.size(), i = start;
  while (i < line.size() && line[i] != '"') i += line[i] == '\\' ? 2 : 1;
  if (i > line.size()) i = line.size();
  *from = i;
  return line.substr(start, i - start);
}

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

std::size_t skip_ws(std::string_view j, std::size_t i) {
  while (i < j.size() && (j[i] == ' ' || j[i] == '\t' || j[i] == '\n' || j[i] == '\r')) ++i;
  return i;
}

// The end of the string starting at j[i] == '"' (one past its closing quote), npos if none.
std::size_t skip_string(std::string_view j, std::size_t i) {
  for (++i; i < j.size(); ++i) {
    if (j[i] == '\\') ++i;
    else if (j[i] == '"') return i + 1;
  }
  return std::string_view::npos;
}

// One past the JSON value at j[i], npos if it is cut short.
std::size_t skip_value(std::string_view j, std::size_t i) {
  if (i >= j.size()) return std::string_view::npos;
  if (j[i] == '"') return skip_string(j, i);
  if (j[i] == '{' || j[i] == '[') {
    int depth = 0;
    while (i < j.size()) {
      char c = j[i];
      if (c == '"') {
        i = skip_string(j, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  while (i < j.size() && j[i] != ',' && j[i] != '}' && j[i] != ']' && j[i] != ' ') ++i;
  return i;
}

// Calls f(key, value_begin, value_end) for each member of the object at j[i] == '{'; the key
// is raw (escapes kept). False when the text is not an object of that shape.
template <class F>
bool for_each_member(std::string_view j, std::size_t i, F&& f) {
  i = skip_ws(j, i);
  if (i >= j.size() || j[i] != '{') return false;
  i = skip_ws(j, i + 1);
  if (i < j.size() && j[i] == '}') return true;
  while (i < j.size()) {
    if (j[i] != '"') return false;
    std::size_t key_end = skip_string(j, i);
    if (key_end == std::string_view::npos) return false;
    std::string_view key = j.substr(i + 1, key_end - i - 2);
    i = skip_ws(j, key_end);
    if (i >= j.size() || j[i] != ':') return false;
    i = skip_ws(j, i + 1);
    std::size_t end = skip_value(j, i);
    if (end == std::string_view::npos) return false;
    f(key, i, end);
    i = skip_ws(j, end);
    if (i < j.size() && j[i] == ',') {
      i = skip_ws(j, i + 1);
      continue;
    }
    return i < j.size() && j[i] == '}';
  }
  return false;
}

// The byte ranges of the string values of context.session and context.agent (those asked
// for): values that reach rules only through the proposal fact's slots of the same names.
void unseen_ranges(std::string_view j, bool session, bool agent, std::vector<std::pair<std::size_t, std::size_t>>* out) {
  out->clear();
  if (!session && !agent) return;
  for_each_member(j, 0, [&](std::string_view key, std::size_t begin, std::size_t) {
    if (key != "context" || j[begin] != '{') return;
    for_each_member(j, begin, [&](std::string_view k, std::size_t b, std::size_t e) {
      if (j[b] != '"') return;
      if ((session && k == "session") || (agent && k == "agent")) out->emplace_back(b, e);
    });
  });
}

// ---- work items and per-thread results ---------------------------------------------------

struct Item {
  std::string_view text;
  std::uint32_t file = 0;
  std::uint64_t line = 0;
};

struct WorkerResult {
  std::uint64_t replayed = 0, parse_errors = 0, masked = 0, hits = 0, misses = 0, new_proposals = 0;
  std::array<std::array<std::uint64_t, 3>, 3> matrix{};
  std::vector<ReplayChange> changes;
  std::vector<ReplayProblem> problems;
};

std::string summarize_proposal(std::string_view json) {
  rapidjson::Document doc;
  doc.Parse(json.data(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::string(json.substr(0, 200));
  auto str = [](const rapidjson::Value& o, const char* name) -> std::string {
    if (!o.IsObject()) return {};
    auto it = o.FindMember(name);
    if (it == o.MemberEnd()) return {};
    if (it->value.IsString()) return std::string(it->value.GetString(), it->value.GetStringLength());
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

struct SessionHistory {
  std::vector<HistoryItem> items;

  void expire(std::int64_t now, std::int64_t ttl) {
    items.erase(std::remove_if(items.begin(), items.end(),
                               [&](const HistoryItem& h) { return now - h.entry.time >= ttl; }),
                items.end());
  }
  void record(const std::string& decision_id, std::int64_t time, const std::vector<EffectRecord>& effects,
              const RuleInputs& inputs, const SessionMemoryOptions& o) {
    if (effects.empty()) return;
    expire(time, o.ttl_seconds);
    for (const EffectRecord& e : effects) {
      for (std::size_t i = 0; i < items.size(); ++i) {
        const EffectRecord& f = items[i].entry.effect;
        if (f.kind == e.kind && f.object == e.object && f.target == e.target && f.program == e.program) {
          items.erase(items.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
      items.push_back({HistoryEntry{decision_id, time, e}, inputs.history_mask(e)});
      while (items.size() > o.max_entries) items.erase(items.begin());
    }
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

class Worker {
 public:
  Worker(std::shared_ptr<const Policy> policy, EngineOptions options, const RuleInputs& inputs, bool cache,
         std::atomic<std::uint64_t>* done)
      : inputs_(inputs), cache_enabled_(cache), done_(done) {
    options.clock = [this] { return now_; };
    EngineOptions probe = options;
    // Room for a whole session's history: a proposal that decides under this cap without
    // history cannot reach the real cap with any history (engine/fact_codec.cpp counts
    // history facts with the proposal's).
    probe.max_facts = options.max_facts > memory_options_.max_entries ? options.max_facts - memory_options_.max_entries : 0;
    max_input_bytes_ = options.max_input_bytes;
    engine_ = std::make_unique<Engine>(policy, std::move(options));
    if (cache_enabled_) probe_engine_ = std::make_unique<Engine>(std::move(policy), std::move(probe));
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
      rec = DecisionRecord();
      if (!parse_decision(item.text, &rec, &error)) {
        ++result.parse_errors;
        std::uint64_t seq = 0;
        std::string_view kind;
        peek_seq_kind(item.text, &seq, &kind);
        if (result.problems.size() < 20) result.problems.push_back({item.file, item.line, seq, error});
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
  Cached decide_full(const DecisionRecord& rec, SessionHistory* session, const RuleInputs::Reach* reach = nullptr) {
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
    if (!rec.session.empty()) {
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
      unseen_ranges(rec.proposal_json, !inputs_.uses_session, !inputs_.uses_agent, &ranges_);
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
      auto pit = probes_.find(k1);
      bool probed_now = false;
      if (pit == probes_.end()) {
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
        if (r.ok) p.reach = inputs_.reach(r.decision.effects);
        p.result = from_result(std::move(r));
        p.usable = !resource_limit(p.result.error_code);
        if (probes_.size() >= kMaxCacheEntries) probes_.clear();
        pit = probes_.emplace(k1, std::move(p)).first;
      }
      const Probe& probe = pit->second;
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
        auto it = cache_.find(k2);
        if (it != cache_.end()) {
          ++result.hits;
          got = &it->second;
        } else {
          fresh = decide_full(rec, session, &probe.reach);
          if (!resource_limit(fresh.error_code)) {
            if (cache_.size() >= kMaxCacheEntries) cache_.clear();
            got = &cache_.emplace(k2, std::move(fresh)).first->second;
          }
        }
      }
    }

    result.matrix[index_of(rec.outcome)][index_of(got->outcome)]++;
    if (got->outcome != rec.outcome) {
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
      c.old_reason = rec.reason;
      c.new_reason = got->reason;
      c.old_error = rec.error_code;
      c.new_error = got->error_code;
      c.old_rules = rec.rules;
      c.new_rules = got->rules;
      result.changes.push_back(std::move(c));
    }
    // What the daemon remembered: the recorded effects of a recorded approval.
    if (rec.outcome == Outcome::Approve && rec.error_code.empty() && !rec.session.empty() && !rec.effects.empty()) {
      if (!session) {
        session_key_.assign(rec.principal);
        session_key_.push_back('\0');
        session_key_.append(rec.session);
        session = &sessions_[session_key_];
      }
      session->record(rec.decision_id, now_, rec.effects, inputs_, memory_options_);
    }
  }

  static constexpr std::size_t kMaxCacheEntries = 1000000;
  const RuleInputs& inputs_;
  bool cache_enabled_;
  std::atomic<std::uint64_t>* done_;
  std::int64_t now_ = 0;
  // The daemon's defaults (server/daemon.cpp). Its caps over all sessions (max_sessions,
  // max_bytes) are not applied: one thread here holds only some of the sessions.
  SessionMemoryOptions memory_options_;
  std::unordered_map<std::string, SessionHistory> sessions_;
  std::string session_key_;
  std::vector<HistoryEntry> history_;
  std::vector<std::pair<std::size_t, std::size_t>> ranges_;
  std::size_t max_input_bytes_ = 0;
  std::unique_ptr<Engine> engine_, probe_engine_;
  KeyBuilder keys_;
  std::unordered_map<Key, Probe, KeyHash> probes_;
  std::unordered_map<Key, Cached, KeyHash> cache_;
};

// ---- the start record --------------------------------------------------------------------

struct StartSettings {
  std::string workspace_root, home, default_outcome;
};

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
  return get("workspace_root", &out->workspace_root) && get("home", &out->home) &&
         get("default_outcome", &out->default_outcome) && parse_outcome(out->default_outcome).has_value();
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

  unsigned threads = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  rep.threads = threads;
  rep.cache = options.cache;

  // One pass on this thread: line boundaries, seq and kind, and each decision's owner.
  std::vector<std::vector<Item>> work(threads);
  std::optional<StartSettings> start;
  std::uint64_t start_seq = 0;
  std::uint64_t round_robin = 0;
  bool starts_differ = false;
  logs.for_each_line([&](const LogLine& line) {
    if (line.text.empty() && !line.terminated) return;  // nothing after the last '\n'
    ++rep.records;
    std::uint64_t seq = 0;
    std::string_view kind;
    if (!peek_seq_kind(line.text, &seq, &kind)) {
      ++rep.parse_errors;
      if (rep.problems.size() < 20)
        rep.problems.push_back({line.file, line.line, 0, "not a record: the line does not start with seq, prev and kind"});
      return;
    }
    if (kind == "decision") {
      ++rep.decisions;
      std::size_t from = 0;
      std::string_view principal = raw_string_member(line.text, ",\"principal\":\"", &from);
      std::string_view session = raw_string_member(line.text, ",\"session\":\"", &from);
      std::size_t owner = session.empty() ? (round_robin++ % threads) : fnv1a(principal, session) % threads;
      work[owner].push_back({line.text, static_cast<std::uint32_t>(line.file), line.line});
      return;
    }
    ++rep.skipped_kinds[std::string(kind)];
    if (kind == "start") {
      StartSettings s;
      if (!read_start(line.text, &s)) {
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

  EngineOptions eo;
  rep.options_from = start ? "start record seq " + std::to_string(start_seq) : "engine defaults";
  if (start) {
    eo.workspace_root = start->workspace_root;
    eo.home = start->home;
    eo.default_outcome = *parse_outcome(start->default_outcome);
  }
  if (options.workspace_root || options.home || options.default_outcome) rep.options_from += ", flags";
  if (options.workspace_root) eo.workspace_root = *options.workspace_root;
  if (options.home) eo.home = *options.home;
  if (options.default_outcome) eo.default_outcome = *options.default_outcome;
  if (starts_differ)
    rep.warnings.push_back("the log's start records name different workspace, home or default outcome; "
                           "every record is replayed with one setting (" + rep.options_from + ")");
  eo.deadline = options.deadline;
  rep.workspace_root = eo.workspace_root;
  rep.home = eo.home;
  rep.default_outcome = eo.default_outcome;

  // The workers: one engine, one session memory and one cache each.
  std::atomic<std::uint64_t> done{0};
  std::vector<std::unique_ptr<Worker>> workers;
  for (unsigned i = 0; i < threads; ++i)
    workers.push_back(std::make_unique<Worker>(loaded.policy, eo, rep.inputs, options.cache, &done));
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
      for (int k = 0; k < 20 && running.load() > 0; ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
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
  if (!options.cache) rep.cache_hits = rep.cache_misses = 0;
  std::sort(rep.problems.begin(), rep.problems.end(), [](const ReplayProblem& a, const ReplayProblem& b) {
    return std::tie(a.file, a.line) < std::tie(b.file, b.line);
  });
  std::sort(rep.changes.begin(), rep.changes.end(), [](const ReplayChange& a, const ReplayChange& b) {
    if (a.widening != b.widening) return a.widening;
    return a.seq < b.seq;
  });
  rep.changed = rep.changes.size();
  rep.widenings = static_cast<std::uint64_t>(
      std::count_if(rep.changes.begin(), rep.changes.end(), [](const ReplayChange& c) { return c.widening; }));
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
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(frac));
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
  out += "replay of " + std::to_string(rep.files.size()) + " file(s), " + std::to_string(rep.bytes) + " bytes, under " +
         e(rep.rules_digest) + "\n";
  out += "  records " + std::to_string(rep.records) + ", decisions " + std::to_string(rep.decisions) + ", replayed " +
         std::to_string(rep.replayed) + ", unreadable " + std::to_string(rep.parse_errors);
  std::string skipped;
  for (const auto& [kind, n] : rep.skipped_kinds) skipped += (skipped.empty() ? "" : ", ") + e(kind) + " " + std::to_string(n);
  out += skipped.empty() ? "\n" : "; skipped: " + skipped + "\n";
  out += "  engine: workspace " + e(rep.workspace_root) + ", home " + e(rep.home) + ", default outcome " +
         std::string(outcome_name(rep.default_outcome)) + " (from " + rep.options_from + ")\n";
  out += "  the rules see: the clock " + std::string(rep.inputs.uses_clock ? "yes" : "no") + ", context.session " +
         (rep.inputs.uses_session ? "yes" : "no") + ", context.agent " + (rep.inputs.uses_agent ? "yes" : "no") +
         ", session history " +
         std::string(rep.inputs.uses_history ? "yes" : "no");
  if (rep.inputs.uses_history)
    out += std::string(" (age ") + (rep.inputs.uses_history_age ? "yes" : "no") + ", decision id " +
           (rep.inputs.uses_history_decision ? "yes" : "no") + ")";
  if (rep.inputs.all_history) out += "; every history fact counts: " + e(rep.inputs.why_all_history);
  out += "\n";
  out += "  " + std::to_string(rep.threads) + " thread(s), " + fixed(rep.seconds, 2) + " s, " +
         fixed(rep.seconds > 0 ? static_cast<double>(rep.replayed) / rep.seconds : 0, 0) + " records/s";
  if (rep.cache) {
    const std::uint64_t n = rep.cache_hits + rep.cache_misses;
    out += ", cache hits " + std::to_string(rep.cache_hits) + " (" +
           fixed(n ? 100.0 * static_cast<double>(rep.cache_hits) / static_cast<double>(n) : 0, 1) + "%), " +
           std::to_string(rep.cache_new_proposals) + " distinct proposals";
  } else {
    out += ", no cache";
  }
  out += "\n";
  if (rep.masked) out += "  " + std::to_string(rep.masked) + " replayed record(s) had secrets masked in their input\n";
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
  out += "\n" + std::to_string(rep.changed) + " changed, " + std::to_string(rep.widenings) + " widening\n";

  std::size_t shown = 0;
  for (const auto& c : rep.changes) {
    if (limit && shown == limit) {
      out += "… " + std::to_string(rep.changes.size() - shown) + " more change(s) not shown (--limit-changes)\n";
      break;
    }
    ++shown;
    out += "\n";
    out += c.widening ? "WIDENING " : "narrowing ";
    out += "seq " + std::to_string(c.seq) + " " + e(format_time_text(c.time_us)) + " principal " + e(c.principal) +
           " session " + e(c.session) + (c.masked ? " [input masked]" : "") + "\n";
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
  auto str = [&](std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); };
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
