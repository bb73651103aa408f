// Engine::decide: read the proposal, assert its facts, run the rules under a firing limit
// and a deadline, collect and combine the decisions, apply rewrites, clean up. Every failure
// after the input was read fails closed with a reason naming its cause.
#include "engine/engine.h"

#include <ctime>
#include <random>
#include <stdexcept>

#include "bindings/json.h"
#include "bindings/text.h"
#include "engine/clips_env.h"
#include "engine/fact_codec.h"
#include "engine/overlay.h"
#include "engine/path_classes.h"
#include "engine/policy_impl.h"
#include "engine/proposal_reader.h"
#include "engine/rule_inputs.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {

namespace {
constexpr const char* kProposalFactId = "p";

// Whether some defglobal's initial value may depend on the clock: the rule set names (now),
// or a function that reads time, anywhere (a global may call a deffunction that does). The
// same scan replay keys its cache with (engine/rule_inputs.h).
bool globals_read_clock(const PolicyImpl& policy) {
  bool any_global = false;
  RuleSources sources;
  for (const auto& c : policy.constructs) {
    any_global |= c.kind == "defglobal";
    sources.push_back(RuleSource{c.file, c.text});
  }
  return any_global && scan_rule_inputs(sources).uses_clock;
}

// A JSON text with no line break and no padding can be embedded in a JSON line as it is.
bool is_single_line(std::string_view json) {
  if (json.empty() || json.front() != '{' || json.back() != '}') return false;
  // Two scans for one character each (find_first_of would look up every character).
  return json.find('\n') == std::string_view::npos && json.find('\r') == std::string_view::npos;
}
}  // namespace

class EngineImpl {
 public:
  EngineImpl(std::shared_ptr<const Policy> policy, EngineOptions options)
      : policy_(std::move(policy)), options_(std::move(options)), random_(std::random_device{}()) {
    env_ = policy_impl(*policy_).take_spare();
    if (!env_) {
      env_ = std::make_unique<ClipsEnv>();
      policy_impl(*policy_).load_into(*env_);
    }
    EnvState& s = env_->state();
    s.workspace_root = options_.workspace_root;
    s.home = options_.home;
    // (now) answers the second read once at the start of each decision (decide()): every
    // call of one decision, and its history's ages, see the same second.
    s.clock = [this] { return now_; };
    clock_globals_ = globals_read_clock(policy_impl(*policy_));
    codec_ = std::make_unique<FactCodec>(*env_, policy_impl(*policy_).effects.get(),
                                         policy_impl(*policy_).path_classes.get());
    if (!options_.own_paths.empty()) {
      std::vector<paths::Location> own;
      for (const std::string& path : options_.own_paths) {
        paths::Location loc;
        loc.normalized = paths::normalize(path, "/", "/");
        loc.resolved = paths::resolve(paths::join(path, "/", "/"));
        // A path that cannot be normalized (it holds "$") is taken as written.
        if (loc.normalized.empty()) loc.normalized = path;
        own.push_back(std::move(loc));
      }
      codec_->set_own_paths(std::move(own));
    }
    // The path classes compile their matchers per home on first use: do it here, not inside
    // the first decision's deadline.
    if (const auto& classes = policy_impl(*policy_).path_classes)
      classes->classify("/", "", options_.home);
  }

  DecideResult decide(const DecideRequest& request);

  std::shared_ptr<const Policy> policy_;
  EngineOptions options_;

 private:
  std::string new_decision_id();
  void fail_closed(Decision* d, const char* code, const std::string& why);
  void combine(Decision* d) const;
  void apply_rewrites(Decision* d, rapidjson::Document* doc, std::vector<Leaf>* leaves) const;

  std::unique_ptr<ClipsEnv> env_;
  std::unique_ptr<FactCodec> codec_;
  std::mt19937_64 random_;
  std::int64_t counter_ = 0;
  std::int64_t now_ = 0;        // this decision's clock, seconds since the epoch
  bool clock_globals_ = false;  // some defglobal may read the clock: evaluate them per decision
  // The history filter's indexes of the last shared snapshots decided with, the latest last
  // (sessions' next decisions reuse them while their history does not change, and a session's
  // new snapshot starts from its last one's); each snapshot is held with its index.
  struct IndexedHistory {
    std::shared_ptr<const std::vector<HistoryEntry>> history;
    std::shared_ptr<const HistoryFilter::Index> index;
  };
  static constexpr std::size_t kIndexedHistories = 8;
  std::vector<IndexedHistory> indexed_;
  std::shared_ptr<const HistoryFilter::Index> own_index_;  // of a caller's own entries
  const HistoryFilter::Index* history_index(const DecideRequest& request);
  alignas(16) char json_pool_[16 * 1024];  // first block of each decision's JSON document
  std::string json_text_;                  // the proposal text the document is parsed in
};

std::string EngineImpl::new_decision_id() {
  std::string id(32, '0');
  std::uint64_t a = random_(), b = random_() ^ static_cast<std::uint64_t>(++counter_);
  for (int i = 0; i < 16; ++i) {
    id[i] = text::hex_digit(static_cast<unsigned>(a >> (i * 4)));
    id[16 + i] = text::hex_digit(static_cast<unsigned>(b >> (i * 4)));
  }
  return id;
}

void EngineImpl::fail_closed(Decision* d, const char* code, const std::string& why) {
  d->outcome = Outcome::Reject;
  d->error_code = code;
  d->reason = why;
  d->defaulted = false;
  d->approval_set = false;  // a failed decision rejects: it asks nobody for approval
  d->approval_expires_s = 0;
  d->approvers_needed = 1;
}

void EngineImpl::combine(Decision* d) const {
  bool any = false;
  Outcome outcome = Outcome::Approve;
  for (const auto& r : d->rules) {
    if (r.monitor) continue;
    outcome = any ? stricter(outcome, r.outcome) : r.outcome;
    any = true;
  }
  if (!any) {
    d->outcome = options_.default_outcome;
    d->defaulted = true;
    d->reason = "no rule decided; default outcome";
    return;
  }
  d->outcome = outcome;
  for (const auto& r : d->rules) {
    if (!r.monitor && r.outcome == outcome) {
      d->reason = r.reason.empty() ? r.rule : r.reason;
      break;
    }
  }
}

void EngineImpl::apply_rewrites(Decision* d, rapidjson::Document* doc,
                                std::vector<Leaf>* leaves) const {
  for (auto& w : d->rewrites) {
    if (w.monitor || w.key.rfind("payload.", 0) != 0) continue;  // only payload fields change
    for (auto& leaf : *leaves) {
      if (leaf.key != w.key || !leaf.value->IsString()) continue;
      w.old_value.assign(leaf.value->GetString(), leaf.value->GetStringLength());
      leaf.value->SetString(w.new_value.data(),
                            static_cast<rapidjson::SizeType>(w.new_value.size()),
                            doc->GetAllocator());
      w.applied = true;
    }
  }
}

// The history filter's index of the request's history; null to assert every entry (an
// explained decision shows them all).
const HistoryFilter::Index* EngineImpl::history_index(const DecideRequest& request) {
  const HistoryFilter* filter = policy_impl(*policy_).history_filter.get();
  if (!filter || request.explain || !request.history || request.history->empty()) return nullptr;
  if (request.shared_history && request.shared_history.get() == request.history) {
    for (auto it = indexed_.begin(); it != indexed_.end(); ++it) {
      if (it->history != request.shared_history) continue;
      std::rotate(it, it + 1, indexed_.end());
      return indexed_.back().index.get();
    }
    // A new snapshot: the latest held index whose entries it continues lends what it judged.
    const HistoryFilter::Index* previous = nullptr;
    for (const auto& held : indexed_)
      if (HistoryFilter::continues(*held.index, *request.shared_history))
        previous = held.index.get();
    auto index = filter->index(*request.shared_history, previous);
    if (indexed_.size() == kIndexedHistories) indexed_.erase(indexed_.begin());
    indexed_.push_back({request.shared_history, index});
    return index.get();
  }
  // Entries of the caller's own: indexed for this decision only.
  own_index_ = filter->index(*request.history);
  return own_index_.get();
}

DecideResult EngineImpl::decide(const DecideRequest& request) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + options_.deadline;  // covers reading, facts and rules
  DecideResult result;
  // The document's values live in the engine's buffer (more only if a proposal needs it).
  rapidjson::MemoryPoolAllocator<> pool(json_pool_, sizeof json_pool_);
  rapidjson::Document doc(&pool);
  ProposalFields fields;
  std::vector<Leaf> leaves;
  ReadLimits limits;
  limits.max_bytes = options_.max_input_bytes;
  limits.max_depth = options_.max_depth;
  limits.max_leaves = options_.max_leaves;
  if (auto error =
          read_proposal(request.proposal_json, limits, &doc, &fields, &leaves, &json_text_)) {
    result.error = std::move(*error);
    return result;
  }
  // The authenticated identity, never the proposal's claim, is what rules and actuators see.
  if (request.principal) override_principal(*request.principal, &doc, &fields, &leaves);
  fields.groups = request.groups;
  result.ok = true;
  Decision& d = result.decision;
  d.decision_id = request.decision_id.empty() ? new_decision_id() : request.decision_id;
  d.rules_digest = policy_->digest();
  // The same for every decision: only one proposal is in the environment at a time, and
  // rules can read the id, so an id that counted decisions would make a decision depend on
  // which engine made it and how many it made before (replay's cache could not reproduce
  // it). Short: CLIPS hashes it in every fact, twice.
  fields.id = kProposalFactId;
  fields.depth = request.depth;
  fields.attempt = request.attempt;
  now_ = request.now      ? *request.now
         : options_.clock ? options_.clock()
                          : static_cast<std::int64_t>(std::time(nullptr));

  void* env = env_->get();
  EnvState& state = env_->state();
  state.begin_decision();
  std::string error;
  bool failed = false;
  // A decision starts from a state that depends only on the policy and this request. The
  // reset after each decision cleared facts, agenda and focus; globals are constants (the
  // checker refuses `bind ?*x*`) evaluated once at load — unless an initial value may read
  // the clock: then they are evaluated again here, with this decision's clock.
  if (clock_globals_) {
    EnvSetResetGlobals(env, TRUE);
    const bool reset = env_->reset();
    EnvSetResetGlobals(env, FALSE);
    if (!reset) {
      fail_closed(&d, code::kRuntime,
                  "the rule engine's globals could not be evaluated for this decision");
      failed = true;
    }
  }
  FactLimits fact_limits;
  fact_limits.max_facts = options_.max_facts;
  fact_limits.shell.max_commands = options_.max_shell_commands;
  fact_limits.shell.max_words = options_.max_shell_words;
  fact_limits.shell.max_total_words = options_.max_shell_total_words;
  fact_limits.shell.deadline = deadline;
  fact_limits.deadline = deadline;
  FactError fact_error;
  // Armed before asserting: patterns' conditions (test CEs, deffunctions) run as facts are
  // asserted, and must stop at the deadline like rule actions do.
  env_->arm_deadline(std::chrono::duration_cast<std::chrono::microseconds>(
      deadline - std::chrono::steady_clock::now()));
  const bool asserted =
      !failed &&
      codec_->assert_all(fields, doc, leaves, *policy_impl(*policy_).patterns, fact_limits,
                         &fact_error, request.history, now_,
                         policy_impl(*policy_).history_filter.get(), history_index(request));
  if (!failed) d.effects = codec_->effects();
  d.history_asserted = codec_->history_asserted();
  if (failed) {
    env_->disarm_deadline();
  } else if (state.deadline_hit || (asserted && std::chrono::steady_clock::now() > deadline)) {
    env_->disarm_deadline();
    fail_closed(&d, code::kDeadline,
                "the decision deadline of " + std::to_string(options_.deadline.count()) +
                    " us passed before the rules ran");
    failed = true;
  } else if (!asserted) {
    env_->disarm_deadline();
    const std::string prefix =
        fact_error.code == code::kFacts ? "cannot present the proposal to the rules: " : "";
    fail_closed(&d, fact_error.code.c_str(), prefix + fact_error.message);
    failed = true;
  } else if (env_->over_memory()) {
    fail_closed(&d, code::kMemory,
                "matching the proposal's facts went over the rule memory budget");
    failed = true;
  } else {
    long long fired = EnvRun(env, options_.run_limit);
    env_->disarm_deadline();
    std::string output = env_->take_output();
    codec_->read_results(&d.rules, &d.rewrites, &d.allows, &d.hints, &error);
    const RuleOverlay* overlay = policy_impl(*policy_).overlay.get();
    codec_->read_approval(&d, &error, overlay);
    if (overlay) overlay->apply(&d);
    if (request.explain) d.facts_json = codec_->facts_json();
    if (state.deadline_hit) {
      fail_closed(
          &d, code::kDeadline,
          "rules ran past the deadline of " + std::to_string(options_.deadline.count()) + " us");
    } else if (state.memory_hit) {
      fail_closed(&d, code::kMemory,
                  "rules went over the memory budget of " +
                      std::to_string(kRuleMemoryBudget >> 20) + " MiB");
    } else if (fired >= options_.run_limit && EnvGetNextActivation(env, nullptr)) {
      fail_closed(&d, code::kRunLimit,
                  "rules fired " + std::to_string(fired) + " times, the run limit");
    } else if (GetEvaluationError(env) || GetHaltExecution(env) || has_error_message(output)) {
      std::string first = output.substr(0, output.find('\n'));
      fail_closed(
          &d, code::kRuntime,
          "rule runtime error: " + (first.empty() ? std::string("evaluation error") : first));
    } else if (!error.empty()) {
      fail_closed(&d, code::kRuntime, error);
    } else {
      combine(&d);
    }
    failed = !d.error_code.empty();
  }
  // Nothing a rule did may reach the next decision: every fact, global, activation and the
  // focus stack go back to their state after load (a failed decision takes the full reset).
  env_->clear_errors();
  if (!(failed ? env_->reset() : env_->end_decision()) && !failed) {
    fail_closed(&d, code::kRuntime, "the rule engine could not be reset after the decision");
    failed = true;
  }
  bool rewritten = false;
  if (!failed && !d.rewrites.empty()) {
    apply_rewrites(&d, &doc, &leaves);
    for (const auto& w : d.rewrites) rewritten |= w.applied;
  }
  if (!rewritten && !fields.renamed && is_single_line(request.proposal_json)) {
    d.action_json.assign(request.proposal_json);  // already valid JSON, unchanged
  } else {
    d.action_json = json::to_text(doc);
  }
  d.elapsed_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  return result;
}

Engine::Engine(std::shared_ptr<const Policy> policy, EngineOptions options)
    : impl_(std::make_unique<EngineImpl>(std::move(policy), std::move(options))) {}
Engine::~Engine() = default;
DecideResult Engine::decide(const DecideRequest& request) { return impl_->decide(request); }
const Policy& Engine::policy() const { return *impl_->policy_; }
const std::shared_ptr<const Policy>& Engine::policy_ptr() const { return impl_->policy_; }
const EngineOptions& Engine::options() const { return impl_->options_; }

}  // namespace warden
