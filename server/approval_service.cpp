#include "server/approval_service.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <climits>
#include <exception>
#include <future>
#include <system_error>

#include "actuators/action.h"
#include "audit/record.h"
#include "audit/writer.h"
#include "engine/json_writer.h"
#include "engine/session_memory.h"
#include "pipeline/action_json.h"
#include "pipeline/events.h"
#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "server/act_record.h"
#include "server/audit_setup.h"
#include "server/daemon_decider.h"
#include "server/decision_record.h"
#include "server/errors.h"
#include "server/notifier.h"
#include "server/submit.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

constexpr std::size_t kMaxToken = 256;
constexpr std::size_t kMaxNote = 4096;
constexpr std::size_t kMaxFilter = 256;
constexpr int kWorkers = 4;
// Approved submit actions run on threads of their own, started as needed up to this many at
// once (more wait their turn): a long action never holds a thread that decides, lists or
// answers approvals.
constexpr std::size_t kMaxRunners = 16;
constexpr std::size_t kShownHistory = 20;
// An approval claimed longer ago than this and still not finished was interrupted, whichever
// daemon claimed it (its own claims a daemon recovers whatever their age as it starts).
constexpr std::chrono::milliseconds kClaimBound =
    std::chrono::hours(1);  // history entries shown with a pending approval
constexpr auto kSweepEvery = std::chrono::milliseconds(200);
constexpr auto kExpireEvery = std::chrono::milliseconds(1000);
// A wait also asks the store now and then, in case a notification was lost (a PostgreSQL
// listener reconnecting, or notifications dropped in a flood of them).
constexpr auto kPollEvery = std::chrono::milliseconds(2000);
// Closed approvals are pruned this often (and once as the daemon starts).
constexpr auto kPruneEvery = std::chrono::minutes(10);
constexpr std::int64_t kDayMs = 86400LL * 1000;
// Approvals re-read per batch after notifications; the next batch queues behind other work.
constexpr std::size_t kRereadBatch = 32;
// A notification about an approval that closed longer ago than this, and that watchers were
// not told of lately, tells them nothing (it is stale, or not from a daemon).
constexpr std::int64_t kStaleCloseMs = 3600LL * 1000;
// What watchers were told of an approval is remembered this long.
constexpr auto kForgetAnnounced = std::chrono::hours(2);
// A listed action's preview, in bytes.
constexpr std::size_t kPreviewBytes = 512;

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "apr_" and 24 lowercase hex digits: the ids the store makes.
bool is_approval_id(std::string_view text) {
  if (text.size() != 4 + 24 || text.substr(0, 4) != "apr_") return false;
  for (char c : text.substr(4)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// At most `max` bytes of `text`, not cutting a UTF-8 sequence.
std::string_view utf8_prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return text;
  std::size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return text.substr(0, n);
}

bool is_final(Status s) {
  return s == Status::Denied || s == Status::Expired || s == Status::Executed ||
         s == Status::Refused;
}

// `text` when it is a JSON object, else null: the store is shared, and what the protocol
// embeds must be one JSON value whatever a row holds.
void append_object_or_null(std::string& out, std::string_view text) {
  rapidjson::Document d;
  d.Parse(text.data(), text.size());
  if (d.HasParseError() || !d.IsObject()) {
    out += "null";
    return;
  }
  out += to_json_text(d);
}

// ,"result":{…}|null: what happened on approval, once there is something.
void append_result(std::string& out, const Approval& a) {
  out += ",\"result\":";
  if (a.result_json.empty()) {
    out += "null";
  } else {
    append_object_or_null(out, a.result_json);
  }
}

void append_strings(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, items[i]);
  }
  out += ']';
}

void member(std::string& out, std::string_view name, std::string_view value) {
  out += ",\"";
  out += name;
  out += "\":";
  append_json_string(out, value);
}

// The context.agent of an action, or "".
std::string agent_of(const std::string& action_json) {
  rapidjson::Document d;
  d.Parse(action_json.data(), action_json.size());
  if (d.HasParseError() || !d.IsObject()) return {};
  const rapidjson::Value* context = find_member(d, "context");
  if (!context || !context->IsObject()) return {};
  const rapidjson::Value* agent = find_member(*context, "agent");
  return agent && agent->IsString() ? std::string(agent->GetString(), agent->GetStringLength())
                                    : std::string();
}

// What a grant is bound to: the whole request as the rules decided it (the decided action
// JSON: target, action, payload and context — which tool asked, from which agent and source —
// and anything else the proposal carried), less the members that name one request rather
// than what it asks for: its "id", the agent's "explanation" text and context.tool_use_id;
// and less context.session, which the grant matches on its own beside the principal. The
// members are taken from what was decided, not from a list of what matters, so a member a
// rule may read is never left out; the few removed are per-request identifiers. Re-written
// compactly in the member order it came in, then hashed. Not JSON: the text's own hash.
std::string grant_key(const std::string& action_json) {
  rapidjson::Document d;
  d.Parse(action_json.data(), action_json.size());
  if (d.HasParseError() || !d.IsObject()) return approvals::action_hash(action_json);
  // EraseMember keeps the other members' order; a name given twice is erased each time.
  while (d.EraseMember("id")) {
  }
  while (d.EraseMember("explanation")) {
  }
  for (auto& m : d.GetObject()) {
    if (m.name == "context" && m.value.IsObject()) {
      while (m.value.EraseMember("tool_use_id")) {
      }
      while (m.value.EraseMember("session")) {
      }
    }
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  d.Accept(writer);
  return approvals::action_hash(std::string_view(buffer.GetString(), buffer.GetSize()));
}

std::string result_json_of(std::string_view target, const actuators::Result& r, bool with_output) {
  std::string out = "{\"target\":";
  append_json_string(out, target);
  out += ",\"ok\":";
  out += r.ok ? "true" : "false";
  out += ",\"exit_code\":" + std::to_string(r.exit_code);
  member(out, "error_code", r.error_code);
  member(out, "error", r.error);
  out += ",\"truncated\":";
  out += r.truncated ? "true" : "false";
  if (with_output) member(out, "output", r.output);
  out += '}';
  return out;
}

// The scope a claimed approval grants: the smallest scope_minutes of its votes, 0 (one use)
// when any vote asked for none. `claimer`: the completing vote's, when the votes are missing.
int strictest_scope(const Approval& a, int claimer) {
  if (a.votes.empty()) return claimer;
  int out = a.votes.front().scope_minutes;
  for (const approvals::Vote& v : a.votes) out = std::min(out, v.scope_minutes);
  return std::max(out, 0);
}

// An actuator result that means the action never started: no actuator for its target, or
// one that refused it before running it (malformed, needs a shell it was not granted, an
// unknown tool, refused by its confinement).
bool not_run(const actuators::Result& r) {
  for (const char* code :
       {code::kActNoActuator, actuators::code::kBadAction, actuators::code::kShellSyntax,
        actuators::code::kUnknownTool, actuators::code::kDenied}) {
    if (r.error_code == code) return true;
  }
  return false;
}

}  // namespace

std::vector<approvals::CapabilityGrant> approval_grants(const Decision& decision) {
  std::vector<approvals::CapabilityGrant> out;
  if (!decision.error_code.empty()) return out;
  for (const Grant& a : decision.allows) {
    if (a.monitor) continue;  // reported, never granted
    approvals::CapabilityGrant g{a.capability, a.rule, a.reason};
    if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(std::move(g));
  }
  return out;
}

std::vector<std::string> capabilities_of(const std::vector<approvals::CapabilityGrant>& grants) {
  std::vector<std::string> out;
  for (const approvals::CapabilityGrant& g : grants) out.push_back(g.capability);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> intersect_capabilities(const std::vector<std::string>& approved,
                                                const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  std::set_intersection(approved.begin(), approved.end(), allowed.begin(), allowed.end(),
                        std::back_inserter(out));
  return out;
}

Decision approved_by_grant(Decision decision, const approvals::Grant& grant,
                           const std::vector<std::string>& approved) {
  decision.outcome = Outcome::Approve;
  decision.reason = "approved for this session by " + grant.approver + " (approval " +
                    grant.approval_id + (grant.uses_left == 0 ? ", scoped" : "") + ")";
  // A capability is in force only when the approval a person answered granted it and the
  // rules deciding now still allow it.
  std::erase_if(decision.allows, [&](const Grant& a) {
    return !a.monitor &&
           std::find(approved.begin(), approved.end(), a.capability) == approved.end();
  });
  return decision;
}

Decision too_many_approvals(Decision decision, const approvals::PendingLimit& limit,
                            const std::string& principal) {
  decision.outcome = Outcome::Reject;
  decision.error_code = err::kTooManyApprovals;
  decision.reason = "approval required (" + decision.reason + "), but " + principal +
                    " already has " + std::to_string(limit.pending) +
                    " pending approvals, the most one principal may have ([approvals] "
                    "max_pending_per_principal = " +
                    std::to_string(limit.limit) +
                    "): nothing was stored; wait for answers, or withdraw some (warden deny)";
  return decision;
}

std::string answer_reason(const Approval& a) {
  switch (a.status) {
    case Status::Denied:
      return "denied by " + a.closed_by + (a.close_note.empty() ? "" : ": " + a.close_note);
    case Status::Expired:
      return "the approval expired before anyone approved it";
    case Status::Refused: {
      rapidjson::Document d;
      d.Parse(a.result_json.data(), a.result_json.size());
      const rapidjson::Value* reason = d.IsObject() ? find_member(d, "reason") : nullptr;
      return "approved, but not run: " + (reason && reason->IsString()
                                              ? std::string(reason->GetString())
                                              : std::string("the rules refused it"));
    }
    case Status::Executed:
      return "approved";
    default:
      return "not answered";
  }
}

ApprovalService::ApprovalService(ServerContext& context, std::unique_ptr<approvals::Store> store,
                                 actuators::Registry* actuators)
    : context_(context), store_(std::move(store)), actuators_(actuators) {}

ApprovalService::~ApprovalService() { stop(); }

std::string ApprovalService::start() {
  try {
    store_->listen(
        [this](std::string_view kind, std::string_view id) { on_notification(kind, id); });
  } catch (const std::exception& e) {
    return std::string("the approvals store cannot notify: ") + e.what();
  }
  try {
    for (int i = 0; i < kWorkers; ++i) workers_.emplace_back([this] { run_worker(); });
    sweeper_ = std::thread([this] { run_sweeper(); });
  } catch (const std::exception& e) {
    stop();
    return std::string("cannot start the approval threads: ") + e.what();
  }
  try {
    recover_interrupted();
  } catch (const approvals::StoreError& e) {
    stop();
    return std::string("the approvals store cannot recover interrupted approvals: ") + e.what();
  }
  return {};
}

void ApprovalService::recover_interrupted() {
  static constexpr char kReason[] =
      "interrupted: the daemon carrying it out stopped before it finished; it is not run again "
      "(an action it had started may have run in part)";
  std::string result = "{\"error_code\":";
  append_json_string(result, err::kApprovalRefused);
  member(result, "reason", kReason);
  result += '}';
  const std::int64_t now = now_ms();
  std::vector<Approval> recovered = store_->recover_claimed(context_.config->audit.daemon_id,
                                                            now - kClaimBound.count(), result, now);
  for (const Approval& a : recovered) {
    context_.log->warn("approvals: {} was approved but never finished (claimed by {}): refused",
                       a.id, a.votes.empty() ? std::string("?") : a.votes.back().approver);
    try {
      record("refused", a, "warden", kReason, {}, result);
    } catch (const std::exception& e) {
      context_.log->error("approvals: {}", e.what());
    }
  }
}

void ApprovalService::stop() {
  std::multimap<std::string, Waiter> waiters;
  std::vector<Watcher> watchers;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && workers_.empty() && runners_.empty() && !sweeper_.joinable()) return;
    stopping_ = true;
  }
  work_ready_.notify_all();
  action_ready_.notify_all();
  sweeper_wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  // Approved actions running finish (their actuators bound them); those still queued are
  // refused, each answering its approver.
  std::vector<std::thread> runners;
  {
    std::lock_guard lock(mutex_);
    runners.swap(runners_);
  }
  for (std::thread& t : runners) t.join();
  if (sweeper_.joinable()) sweeper_.join();
  {
    std::lock_guard lock(mutex_);
    waiters.swap(waiters_);
    watchers.swap(watchers_);
    connections_.clear();
    work_.clear();
  }
  for (auto& [id, w] : waiters) {
    try {
      w.answer(std::nullopt);
    } catch (...) {
    }
  }
  for (Watcher& w : watchers) {
    try {
      w.send(Reply{});  // releases the request; its connection is closing
    } catch (...) {
    }
  }
}

void ApprovalService::attach(std::shared_ptr<const std::atomic<bool>> closed, Push push) {
  std::lock_guard lock(mutex_);
  for (auto& [c, p] : connections_) {
    if (c.get() == closed.get()) return;
  }
  connections_.emplace_back(std::move(closed), std::move(push));
}

ApprovalService::Push ApprovalService::pusher(const std::atomic<bool>* closed) {
  std::lock_guard lock(mutex_);
  for (auto& [c, p] : connections_) {
    if (c.get() == closed) return p;
  }
  return {};
}

bool ApprovalService::post(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    work_.push_back(std::move(fn));
  }
  work_ready_.notify_one();
  return true;
}

bool ApprovalService::run_action(std::function<void(bool stopping)> fn) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return false;
    actions_.push_back(std::move(fn));
    if (idle_runners_ == 0 && runners_.size() < kMaxRunners) {
      try {
        runners_.emplace_back([this] { run_runner(); });
      } catch (const std::system_error& e) {
        // No new thread: a running one takes it when it is free.
        context_.log->warn("approvals: cannot start a thread for an approved action: {}", e.what());
        if (runners_.empty()) {
          actions_.pop_back();
          return false;
        }
      }
    }
  }
  action_ready_.notify_one();
  return true;
}

void ApprovalService::run_runner() {
  std::unique_lock lock(mutex_);
  for (;;) {
    ++idle_runners_;
    action_ready_.wait(lock, [this] { return stopping_ || !actions_.empty(); });
    --idle_runners_;
    if (actions_.empty()) return;  // stopping, nothing left
    std::function<void(bool)> fn = std::move(actions_.front());
    actions_.pop_front();
    const bool stopping = stopping_;  // queued, never started: refused, not run
    lock.unlock();
    try {
      fn(stopping);
    } catch (const std::exception& e) {
      context_.log->error("approvals: {}", e.what());
    } catch (...) {
      context_.log->error("approvals: unknown error");
    }
    lock.lock();
  }
}

void ApprovalService::run_worker() {
  for (;;) {
    std::function<void()> fn;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !work_.empty(); });
      if (work_.empty()) return;  // stopping, nothing left
      fn = std::move(work_.front());
      work_.pop_front();
    }
    try {
      fn();
    } catch (const std::exception& e) {
      context_.log->error("approvals: {}", e.what());
    } catch (...) {
      context_.log->error("approvals: unknown error");
    }
  }
}

void ApprovalService::run_sweeper() {
  auto next_expiry = Clock::now();
  auto next_prune = Clock::now();
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    sweeper_wake_.wait_for(lock, kSweepEvery);
    if (stopping_) break;
    const auto now = Clock::now();
    // Waits that ended: a closed connection or a deadline; and those due a poll.
    std::vector<Waiter> ended;
    std::vector<std::string> poll;
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      Waiter& w = it->second;
      if ((w.closed && w.closed->load()) || now >= w.deadline) {
        ended.push_back(std::move(w));
        it = waiters_.erase(it);
        continue;
      }
      if (now >= w.next_poll) {
        w.next_poll = now + kPollEvery;
        poll.push_back(w.approval_id);
      }
      ++it;
    }
    std::vector<Watcher> gone;
    for (auto it = watchers_.begin(); it != watchers_.end();) {
      if (it->closed->load()) {
        gone.push_back(std::move(*it));
        it = watchers_.erase(it);
      } else {
        ++it;
      }
    }
    std::erase_if(connections_, [](const auto& entry) { return entry.first->load(); });
    std::erase_if(announced_,
                  [&](const auto& entry) { return now - entry.second.at > kForgetAnnounced; });
    const bool expire = now >= next_expiry;
    if (expire) next_expiry = now + kExpireEvery;
    const bool prune = now >= next_prune;
    if (prune) next_prune = now + kPruneEvery;
    lock.unlock();
    for (Waiter& w : ended) {
      try {
        w.answer(std::nullopt);
      } catch (...) {
      }
    }
    for (Watcher& w : gone) w.send(Reply{});
    try {
      if (expire) {
        for (const Approval& a : store_->expire_due(now_ms())) record("expired", a, "expiry", "");
      }
      for (const std::string& id : poll) {
        std::optional<Approval> a = store_->get(id);
        if (a && is_final(a->status)) settle(*a);
      }
    } catch (const std::exception& e) {
      context_.log->warn("approvals: the sweeper cannot reach the store: {}", e.what());
    }
    if (prune) {
      try {
        const std::int64_t at = now_ms();
        approvals::Pruned pruned =
            store_->prune(at - context_.config->approvals.retain_days * kDayMs, at);
        {
          std::lock_guard c(counters_mutex_);
          counters_.pruned_approvals += static_cast<std::uint64_t>(pruned.approvals);
          counters_.pruned_grants += static_cast<std::uint64_t>(pruned.grants);
        }
        if (pruned.approvals > 0 || pruned.grants > 0) {
          context_.log->info(
              "approvals: pruned {} approval(s) closed over {} day(s) ago and {} grant(s) "
              "that ended",
              pruned.approvals, context_.config->approvals.retain_days, pruned.grants);
        }
      } catch (const std::exception& e) {
        context_.log->warn("approvals: closed approvals cannot be pruned: {}", e.what());
      }
    }
    lock.lock();
  }
}

void ApprovalService::on_notification(std::string_view kind, std::string_view approval_id) {
  bool start = false;
  {
    std::lock_guard c(counters_mutex_);
    ++counters_.notes_received;
    // Only what a daemon sends: anything else is not worth a read of the store.
    if ((kind != "created" && kind != "closed" && kind != "finished") ||
        !is_approval_id(approval_id)) {
      ++counters_.notes_ignored;
      return;
    }
  }
  {
    std::lock_guard lock(notes_mutex_);
    std::string id(approval_id);
    if (due_ids_.count(id)) {
      std::lock_guard c(counters_mutex_);
      ++counters_.notes_coalesced;
      return;
    }
    if (due_ids_.size() >= kMaxDueNotes) {
      std::lock_guard c(counters_mutex_);
      ++counters_.notes_dropped;
      return;
    }
    due_ids_.insert(id);
    due_.push_back(std::move(id));
    if (!rereading_) rereading_ = start = true;
  }
  if (start && !post([this] { reread_due(); })) {
    std::lock_guard lock(notes_mutex_);
    rereading_ = false;
  }
}

void ApprovalService::reread_due() {
  std::vector<std::string> batch;
  {
    std::lock_guard lock(notes_mutex_);
    while (!due_.empty() && batch.size() < kRereadBatch) {
      due_ids_.erase(due_.front());
      batch.push_back(std::move(due_.front()));
      due_.pop_front();
    }
  }
  for (const std::string& id : batch) {
    try {
      refresh(id);
    } catch (const std::exception& e) {
      context_.log->warn("approvals: {} cannot be read after a notification: {}", id, e.what());
    }
  }
  {
    std::lock_guard lock(notes_mutex_);
    if (due_.empty()) {
      rereading_ = false;
      return;
    }
  }
  // More are due: behind whatever else is queued (answers, listings), one batch at a time.
  if (!post([this] { reread_due(); })) {
    std::lock_guard lock(notes_mutex_);
    rereading_ = false;
  }
}

void ApprovalService::refresh(const std::string& approval_id) {
  {
    std::lock_guard c(counters_mutex_);
    ++counters_.rereads;
  }
  // The store is the truth; the notification only said where to look.
  std::optional<Approval> a = store_->get(approval_id);
  if (!a) return;
  bool tell = false;
  {
    std::lock_guard lock(mutex_);
    auto it = announced_.find(a->id);
    if (it != announced_.end()) {
      tell = it->second.status != a->status;
    } else {
      tell = a->status == Status::Pending || a->closed_ms >= now_ms() - kStaleCloseMs;
    }
    if (tell) announced_[a->id] = Announced{a->status, Clock::now()};
  }
  if (tell) broadcast(a->status == Status::Pending ? "approval-created" : "approval-closed", *a);
  if (is_final(a->status)) settle(*a);
}

void ApprovalService::settle(const Approval& approval) {
  std::vector<Waiter> done;
  {
    std::lock_guard lock(mutex_);
    auto [first, last] = waiters_.equal_range(approval.id);
    for (auto it = first; it != last; ++it) done.push_back(std::move(it->second));
    waiters_.erase(first, last);
  }
  for (Waiter& w : done) {
    try {
      w.answer(approval);
    } catch (...) {
    }
  }
}

void ApprovalService::broadcast(std::string_view event, const Approval& approval) {
  std::string payload = "{\"event\":";
  append_json_string(payload, event);
  payload += ",\"approval\":" + listed_json(approval) + "}";
  std::vector<Watcher> watchers;
  {
    std::lock_guard lock(mutex_);
    watchers = watchers_;
  }
  for (const Watcher& w : watchers) {
    if (w.closed->load()) continue;
    std::string message = event_message(w.id_json, payload);
    if (message.size() > kMaxEncodableFrame) continue;
    w.send(Reply{std::move(message), false, true});
  }
}

void ApprovalService::wait(const std::string& approval_id, Clock::time_point deadline,
                           std::shared_ptr<const std::atomic<bool>> closed, Answer answer) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      waiters_.emplace(approval_id, Waiter{approval_id, deadline, std::move(closed),
                                           std::move(answer), Clock::now() + kPollEvery});
      return;
    }
  }
  answer(std::nullopt);
}

// ---- requester side ----

approvals::Created ApprovalService::create(const Requester& who, const Decision& decision,
                                           const std::string& action_json,
                                           const std::string& origin) {
  const Config& config = *context_.config;
  approvals::NewApproval n;
  n.action_json = action_json;
  n.proposal_json = action_json;
  n.principal = who.principal;
  n.groups = who.groups;
  n.session = who.session;
  n.agent = who.agent.empty() ? agent_of(action_json) : who.agent;
  for (const FiredRule& r : decision.rules) {
    if (!r.monitor && r.outcome == Outcome::ApprovalRequired) n.rules.push_back(r.rule);
  }
  n.reason = decision.reason;
  n.decision_id = decision.decision_id;
  n.origin = origin;
  n.daemon_id = config.audit.daemon_id;
  n.created_ms = now_ms();
  std::int64_t expiry_s = config.approvals.expiry_seconds;
  if (decision.approval_expires_s > 0 && decision.approval_expires_s < expiry_s) {
    expiry_s = decision.approval_expires_s;
  }
  n.expires_ms = n.created_ms + expiry_s * 1000;
  n.approvers_needed = std::clamp(decision.approvers_needed, 1, 2);
  // What approving grants: the decision's enforcing allows, shown to the approver and bound
  // into the digest they answer with.
  n.grants = approval_grants(decision);
  n.requester_token_id = who.token_id;
  n.max_pending = config.approvals.max_pending_per_principal;
  approvals::Created created;
  try {
    created = store_->create(n);
  } catch (const approvals::PendingLimit& e) {
    {
      std::lock_guard c(counters_mutex_);
      ++counters_.limited;
    }
    // Nothing stored; the log says why this approval-required decision went no further.
    Approval refused;
    refused.action_hash = approvals::action_hash(action_json);
    refused.principal = who.principal;
    refused.session = who.session;
    refused.agent = n.agent;
    refused.origin = origin;
    refused.rules = n.rules;
    refused.reason = decision.reason;
    refused.decision_id = decision.decision_id;
    refused.approvers_needed = n.approvers_needed;
    record("limited", refused, "warden",
           who.principal + " already has " + std::to_string(e.pending) +
               " pending approvals ([approvals] max_pending_per_principal = " +
               std::to_string(e.limit) + "): none stored");
    throw;
  }
  try {
    record("created", created.approval, who.principal, "", decision.decision_id);
  } catch (...) {
    // Unrecorded, it must not be answerable: closed at once (denied by the daemon itself).
    try {
      store_->deny(created.approval.id, "warden", "the audit log could not record it", now_ms());
    } catch (const std::exception& e) {
      context_.log->error("approvals: {} could not be closed: {}", created.approval.id, e.what());
    }
    throw;
  }
  return created;
}

std::string ApprovalService::requester_json(const approvals::Created& created) {
  std::string out = "{\"id\":";
  append_json_string(out, created.approval.id);
  member(out, "token", created.token);
  member(out, "action_hash", created.approval.action_hash);
  member(out, "digest", created.approval.digest);
  out += ",\"status\":\"pending\",\"expires_ms\":" + std::to_string(created.approval.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(created.approval.approvers_needed);
  member(out, "how", "warden approve " + created.approval.id);
  out += '}';
  return out;
}

std::string ApprovalService::suspend(const Identity& identity,
                                     std::shared_ptr<const std::atomic<bool>> closed,
                                     const Decision& decision, const std::string& action_json,
                                     const pipeline::Signal& signal,
                                     const pipeline::EventSink& sink) {
  Requester who{identity.principal, identity.groups, signal.session, signal.agent,
                identity.token_id};
  approvals::Created created;
  try {
    created = create(who, decision, action_json, "submit");
  } catch (const approvals::PendingLimit& e) {
    sink(pipeline::events::approval_required(decision));
    sink(pipeline::events::error(err::kTooManyApprovals,
                                 too_many_approvals(decision, e, identity.principal).reason));
    return "rejected";
  } catch (const std::exception& e) {
    sink(pipeline::events::approval_required(decision));
    sink(pipeline::events::error(err::kApprovalStore,
                                 std::string("no pending approval could be stored: ") + e.what()));
    return "failed";
  }
  std::string event = pipeline::events::approval_required(decision);
  event.insert(event.size() - 1, ",\"approval\":" + requester_json(created));
  sink(event);
  const std::string id = created.approval.id;
  if (signal.approval_wait_s > 0) {
    auto answered = std::make_shared<std::promise<std::optional<Approval>>>();
    std::future<std::optional<Approval>> future = answered->get_future();
    wait(id, Clock::now() + std::chrono::seconds(signal.approval_wait_s), closed,
         [answered](std::optional<Approval> a) { answered->set_value(std::move(a)); });
    std::optional<Approval> a = future.get();
    if (a) {
      sink(result_event(*a));
      return a->status == Status::Executed ? "done" : "rejected";
    }
    if (closed && closed->load()) return "cancelled";
  }
  // Not waiting (or no longer): the result reaches the connection while it is open.
  if (Push push = pusher(closed.get())) {
    const auto left = std::chrono::milliseconds(
        std::max<std::int64_t>(0, created.approval.expires_ms - now_ms()));
    wait(id, Clock::now() + left + std::chrono::seconds(5), closed,
         [push](std::optional<Approval> a) {
           if (a) push(event_message("null", result_event(*a)));
         });
  }
  return "suspended";
}

std::optional<approvals::Grant> ApprovalService::use_grant(const Requester& who,
                                                           const std::string& action_json,
                                                           const std::string& decision_id,
                                                           std::vector<std::string>* capabilities) {
  capabilities->clear();
  std::optional<approvals::Grant> grant =
      store_->use_grant(who.principal, who.session, grant_key(action_json), now_ms());
  if (!grant) return std::nullopt;
  std::optional<Approval> approval = store_->get(grant->approval_id);
  if (approval && !requester_valid(approval->requester_token_id, approval->principal)) {
    // Its requester's token was revoked (on this daemon, perhaps before the store heard of
    // it): the grant approves nothing, and whatever else that token started ends with it.
    cancel_requester(approval->requester_token_id, approval->principal);
    return std::nullopt;
  }
  Approval shown = approval ? *approval : Approval{};
  if (!approval) shown.id = grant->approval_id;
  // No approval to read its grants from: the grant carries no capability.
  if (approval) *capabilities = capabilities_of(approval->grants);
  record("scoped-use", shown, grant->approver, "", decision_id);
  return grant;
}

// ---- revoked tokens ----

bool ApprovalService::requester_valid(std::string_view token_id, std::string_view principal) const {
  if (token_id.empty()) return true;  // not asked for with a token
  std::optional<Identity> now = context_.tokens()->find_by_id(token_id);
  return now && now->principal == principal &&
         (role_allows(now->role, "decide") || role_allows(now->role, "submit"));
}

std::size_t ApprovalService::cancel_requester(const std::string& token_id,
                                              const std::string& principal) {
  std::vector<Approval> cancelled =
      store_->cancel_requester(token_id, principal, "warden", kRevokedNote, now_ms());
  for (const Approval& a : cancelled) {
    context_.log->warn(
        "approvals: {} of {} cancelled: the token that asked for it ({}) is no "
        "longer valid",
        a.id, a.principal, a.requester_token_id);
    try {
      record("denied", a, "warden", kRevokedNote);
    } catch (const std::exception& e) {
      context_.log->error("approvals: {}", e.what());
    }
  }
  return cancelled.size();
}

std::size_t ApprovalService::revoke_missing_tokens() {
  std::size_t n = 0;
  for (const approvals::TokenRequester& r : store_->open_requesters(now_ms())) {
    if (!requester_valid(r.token_id, r.principal)) n += cancel_requester(r.token_id, r.principal);
  }
  return n;
}

// ---- records ----

void ApprovalService::record(std::string_view event, const Approval& a, std::string_view by,
                             std::string_view note, std::string_view decision_id,
                             std::string_view result_json) {
  if (context_.audit) append_record(event, a, by, note, decision_id, result_json);
  // Recorded, so it happened: the webhook is told (queued; never waits for the network).
  // Each transition is recorded by the one daemon that made it, so a fleet posts it once.
  if (context_.notifier) context_.notifier->notify(event, a, by, note, result_json);
}

void ApprovalService::append_record(std::string_view event, const Approval& a, std::string_view by,
                                    std::string_view note, std::string_view decision_id,
                                    std::string_view result_json) {
  audit::ApprovalEvent e;
  e.event = std::string(event);
  e.approval_id = a.id;
  e.action_hash = a.action_hash;
  e.decision_id = decision_id.empty() ? a.decision_id : std::string(decision_id);
  e.by = std::string(by);
  e.note = std::string(note);
  e.requester = a.principal;
  e.session = a.session;
  e.agent = a.agent;
  e.origin = a.origin;
  if (event == "created") e.action_json = a.action_json;
  e.rules = a.rules;
  e.reason = a.reason;
  e.approvers_needed = a.approvers_needed;
  e.votes = static_cast<int>(a.votes.size());
  e.expires_ms = a.expires_ms;
  e.result_json = std::string(result_json);
  if (!a.grants.empty()) {
    e.grants_json = approvals::grants_json(a.grants);
    e.digest = a.digest;
  }
  e.requester_token_id = a.requester_token_id;
  audit::AppendResult appended = context_.audit->append_wait(
      "approval", audit_now_us(), audit::approval_fields(e, context_.masker));
  if (!appended.ok) {
    throw std::runtime_error("the audit log cannot record approval " + a.id + " " +
                             std::string(event) + ": " + appended.error);
  }
}

// ---- approver side ----

Reply ApprovalService::fail(const std::string& id_json, std::string_view action,
                            std::string_view code, std::string message) {
  Stats::add(context_.stats.errors);
  return Reply{error_response(id_json, action, {code, message})};
}

std::optional<Reply> ApprovalService::pending(const Request& request, const Identity&,
                                              std::shared_ptr<const std::atomic<bool>> closed,
                                              ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  approvals::Filter filter;
  std::string error;
  std::int64_t min_age_s = 0;
  std::int64_t limit = kDefaultPageLimit;
  bool watch = false;
  std::string only_id, after;
  if (!string_field(payload, "id", kMaxToken, &only_id, &error) ||
      !string_field(payload, "agent", kMaxFilter, &filter.agent, &error) ||
      !string_field(payload, "session", kMaxFilter, &filter.session, &error) ||
      !string_field(payload, "rule", kMaxFilter, &filter.rule, &error) ||
      !int_field(payload, "min_age_s", 0, 366LL * 86400, &min_age_s, &error) ||
      !int_field(payload, "limit", 1, kMaxPageLimit, &limit, &error) ||
      !string_field(payload, "after", kMaxFilter, &after, &error)) {
    return fail(request.id_json, "pending", err::kBadRequest, error);
  }
  if (const rapidjson::Value* w = find_member(payload, "watch")) {
    if (!w->IsBool()) {
      return fail(request.id_json, "pending", err::kBadRequest,
                  "\"payload.watch\" must be a boolean");
    }
    watch = w->GetBool();
  }
  if (!only_id.empty() && watch) {
    return fail(request.id_json, "pending", err::kBadRequest,
                "\"payload.id\" shows one approval; it cannot be watched");
  }
  if (!after.empty()) {
    filter.after = parse_cursor(after);
    if (!filter.after) {
      return fail(request.id_json, "pending", err::kBadRequest,
                  "\"payload.after\" must be the \"next\" of an earlier pending reply");
    }
  }
  filter.min_age_ms = min_age_s * 1000;
  // One more than the page: whether there is more.
  filter.limit = static_cast<std::size_t>(limit) + 1;
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued = post([this, id = request.id_json, filter, limit, only_id, watch, send,
                            closed] {
    approvals::Filter f = filter;
    f.now_ms = now_ms();
    std::vector<Approval> list;
    try {
      if (only_id.empty()) {
        list = store_->list(f);
      } else if (std::optional<Approval> one = store_->get(only_id)) {
        // One approval by its id, whatever its state, in full: what `warden approve ID` shows.
        std::string reply =
            ok_response(id, "pending", "\"approvals\":[" + shown_json(*one) + "],\"more\":false");
        if (reply.size() > kMaxEncodableFrame) {
          (*send)(fail(id, "pending", err::kResponseTooLarge,
                       "approval " + only_id + " does not fit in one frame"));
          return;
        }
        (*send)(Reply{std::move(reply)});
        return;
      } else {
        (*send)(fail(id, "pending", err::kApprovalNotFound, "no approval has the id " + only_id));
        return;
      }
    } catch (const std::exception& e) {
      (*send)(fail(id, "pending", err::kApprovalStore, e.what()));
      return;
    }
    // The page: at most `limit` approvals, within kListBudget bytes (each listed within
    // kMaxListedBytes, so every page holds at least one).
    bool more = list.size() > static_cast<std::size_t>(limit);
    std::string items = "[";
    std::size_t shown = 0;
    for (std::size_t i = 0; i < list.size() && i < static_cast<std::size_t>(limit); ++i) {
      std::string item = listed_json(list[i]);
      if (shown > 0 && items.size() + item.size() + 512 > kListBudget) {
        more = true;
        break;
      }
      if (shown++) items += ',';
      items += item;
    }
    items += ']';
    std::string paging = ",\"more\":";
    paging += more ? "true" : "false";
    if (more && shown > 0) paging += ",\"next\":" + json_string(cursor_text(list[shown - 1]));
    if (!watch) {
      (*send)(Reply{ok_response(id, "pending", "\"approvals\":" + items + paging)});
      return;
    }
    // Watching: the first page now, then every approval that arrives or closes (no response;
    // the request ends with the connection).
    (*send)(
        Reply{event_message(id, "{\"event\":\"approvals\",\"approvals\":" + items + paging + "}"),
              false, true});
    std::lock_guard lock(mutex_);
    for (std::size_t i = 0; i < shown; ++i) {
      announced_.emplace(list[i].id, Announced{list[i].status, Clock::now()});
    }
    watchers_.push_back(Watcher{closed, [send](Reply r) { (*send)(std::move(r)); }, id});
  });
  if (!queued)
    return fail(request.id_json, "pending", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

std::optional<Reply> ApprovalService::approve(const Request& request, const Identity& identity,
                                              ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  std::string approval_id, digest, note, error;
  std::int64_t scope_minutes = 0;
  if (find_member(payload, "token")) {
    // The requester's token is a handle for withdrawing its request, never an approval: an
    // approver answers what they were shown, by id and digest.
    return fail(request.id_json, "approve", err::kBadRequest,
                "a token does not approve: approve by the approval's id and the digest of the "
                "action you were shown (warden approve ID)");
  }
  const rapidjson::Value* i = find_member(payload, "id");
  if (!i || !i->IsString() || i->GetStringLength() == 0) {
    return fail(request.id_json, "approve", err::kBadRequest,
                "\"payload.id\" must be the approval's id (warden approve ID)");
  }
  const rapidjson::Value* g = find_member(payload, "digest");
  if (!g || !g->IsString() || g->GetStringLength() == 0) {
    return fail(request.id_json, "approve", err::kBadRequest,
                "\"payload.digest\" must be the action_hash of the approval you were shown "
                "(\"sha256:…\")");
  }
  if (!string_field(payload, "id", kMaxToken, &approval_id, &error) ||
      !string_field(payload, "digest", kMaxToken, &digest, &error) ||
      !string_field(payload, "note", kMaxNote, &note, &error) ||
      !int_field(payload, "scope_minutes", 1, context_.config->approvals.max_scope_minutes,
                 &scope_minutes, &error)) {
    return fail(request.id_json, "approve", err::kBadRequest, error);
  }
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued =
      post([this, id = request.id_json, identity, approval_id, digest, note, scope_minutes, send] {
        std::optional<Reply> reply;
        try {
          reply = approve_now(id, identity, approval_id, digest, note,
                              static_cast<int>(scope_minutes), send);
        } catch (const approvals::StoreError& e) {
          reply = fail(id, "approve", err::kApprovalStore, e.what());
        } catch (const std::exception& e) {
          reply = fail(id, "approve", err::kAudit, e.what());
        }
        if (reply) (*send)(std::move(*reply));
      });
  if (!queued)
    return fail(request.id_json, "approve", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

std::optional<Reply> ApprovalService::approve_now(const std::string& id_json,
                                                  const Identity& identity,
                                                  const std::string& approval_id,
                                                  const std::string& digest,
                                                  const std::string& note, int scope_minutes,
                                                  std::shared_ptr<ReplyFn> send) {
  // An approval whose requester's token this daemon no longer accepts is cancelled, not
  // voted on (a reload here may not have reached the store yet).
  if (std::optional<Approval> asked = store_->get(approval_id);
      asked && asked->status == Status::Pending &&
      !requester_valid(asked->requester_token_id, asked->principal)) {
    cancel_requester(asked->requester_token_id, asked->principal);
  }
  approvals::ApproveOutcome outcome =
      store_->approve(approval_id, digest, identity.principal, note, now_ms(), scope_minutes,
                      context_.config->audit.daemon_id);
  using R = approvals::ApproveResult;
  const std::string which = outcome.approval ? "approval " + outcome.approval->id : "approval";
  switch (outcome.result) {
    case R::NotFound:
      return fail(id_json, "approve", err::kApprovalNotFound, "no approval has this id");
    case R::DigestMismatch:
      return fail(id_json, "approve", err::kApprovalDigest,
                  which + ": " + digest +
                      " is not its digest (its action and what approving it grants): nothing "
                      "was approved; look at it again (warden approve " +
                      approval_id + ")");
    case R::Closed:
      if (outcome.approval->status == Status::Expired) {
        return fail(id_json, "approve", err::kApprovalExpired,
                    which + " expired before it was approved");
      }
      return fail(
          id_json, "approve", err::kApprovalClosed,
          which + " is already " + std::string(approvals::status_name(outcome.approval->status)) +
              (outcome.approval->closed_by == "warden" && !outcome.approval->close_note.empty()
                   ? " (" + outcome.approval->close_note + ")"
                   : std::string()) +
              ": an approval is answered once");
    case R::Expired:
      record("expired", *outcome.approval, "expiry", "");
      return fail(id_json, "approve", err::kApprovalExpired,
                  which + " expired before it was approved");
    case R::SelfApproval:
      return fail(
          id_json, "approve", err::kSelfApproval,
          which + " was requested by " + identity.principal + ": another approver must answer it");
    case R::AlreadyApproved:
      return fail(id_json, "approve", err::kAlreadyApproved,
                  which + ": you already approved it; it needs another approver");
    case R::NeedMore: {
      record("vote", *outcome.approval, identity.principal, note);
      std::string fields =
          "\"status\":\"pending\",\"approval\":" + approval_json(*outcome.approval);
      return Reply{ok_response(id_json, "approve", fields)};
    }
    case R::Claimed:
      break;
  }
  const Approval& approval = *outcome.approval;
  try {
    record("approved", approval, identity.principal, note);
  } catch (const std::exception& e) {
    // Not recorded, so not run.
    store_->finish(approval.id, Status::Refused,
                   std::string("{\"error_code\":\"") + err::kAudit +
                       "\",\"reason\":\"the approval could not be recorded\"}",
                   now_ms());
    throw;
  }
  return carry_out(id_json, identity, approval, scope_minutes, std::move(send));
}

std::optional<Reply> ApprovalService::carry_out(const std::string& id_json,
                                                const Identity& approver, const Approval& approval,
                                                int scope_minutes, std::shared_ptr<ReplyFn> send) {
  if (!requester_valid(approval.requester_token_id, approval.principal)) {
    // The token that asked was revoked after the vote was counted: claimed, never run.
    static constexpr char kReason[] =
        "the token that asked for it was revoked before it ran; it is not run";
    std::string result = "{\"error_code\":";
    append_json_string(result, err::kApprovalRefused);
    member(result, "reason", kReason);
    result += '}';
    store_->finish(approval.id, Status::Refused, result, now_ms());
    record("refused", approval, approver.principal, kReason, {}, result);
    cancel_requester(approval.requester_token_id, approval.principal);
    std::optional<Approval> now = store_->get(approval.id);
    Stats::add(context_.stats.errors);
    return Reply{error_response(id_json, "approve",
                                {err::kApprovalRefused,
                                 std::string("not run: ") + kReason,
                                 {},
                                 "\"approval\":" + approval_json(now ? *now : approval)})};
  }
  // The last mile: the rules in force decide the stored action again, as its requester.
  Identity requester{approval.principal, Role::Agent, approval.groups, approval.requester_token_id};
  pipeline::Signal signal;
  signal.principal = approval.principal;
  signal.session = approval.session;
  signal.agent = approval.agent;
  signal.source = "approval";
  pipeline::Decider decide = make_daemon_decider(context_, requester, nullptr, false);
  Decision last = decide(approval.action_json, signal, pipeline::DecideStage::LastMile, 1);
  std::string decision_json = decision_to_json(last, false);
  std::string refusal;
  if (last.outcome == Outcome::Reject) {
    refusal = "the rules in force now reject it: " + last.reason;
  } else if (last.action_json != approval.action_json) {
    refusal = "the rules in force now change the action (decision " + last.decision_id + ")";
  }
  if (!refusal.empty()) {
    std::string result = "{\"decision_id\":";
    append_json_string(result, last.decision_id);
    member(result, "outcome", outcome_name(last.outcome));
    member(result, "reason", refusal);
    result += '}';
    store_->finish(approval.id, Status::Refused, result, now_ms());
    record("refused", approval, approver.principal, refusal, last.decision_id, result);
    std::optional<Approval> now = store_->get(approval.id);
    Stats::add(context_.stats.errors);
    return Reply{error_response(id_json, "approve",
                                {err::kApprovalRefused,
                                 "not run: " + refusal,
                                 {},
                                 "\"approval\":" + approval_json(now ? *now : approval) +
                                     ",\"decision\":" + decision_json})};
  }
  if (approval.origin != "submit") {
    return conclude(id_json, approver, approval, scope_minutes, last, decision_json, "granted",
                    "{\"granted\":true}", "{\"granted\":true}");
  }
  // A submit's action runs on a runner thread, which answers the approver when it is done.
  const bool queued = run_action([this, id_json, approver, approval, scope_minutes, last,
                                  decision_json, send](bool stopping) {
    Reply reply;
    try {
      reply = stopping ? refuse_stopped(id_json, approver, approval, last, decision_json)
                       : dispatch(id_json, approver, approval, scope_minutes, last, decision_json);
    } catch (const approvals::StoreError& e) {
      reply = fail(id_json, "approve", err::kApprovalStore, e.what());
    } catch (const std::exception& e) {
      reply = fail(id_json, "approve", err::kAudit, e.what());
    }
    (*send)(std::move(reply));
  });
  if (!queued) {
    return refuse_stopped(id_json, approver, approval, last, decision_json);
  }
  return std::nullopt;
}

Reply ApprovalService::refuse_stopped(const std::string& id_json, const Identity& approver,
                                      const Approval& approval, const Decision& last,
                                      const std::string& decision_json) {
  pipeline::ResolvedTarget resolved = pipeline::resolve_target(last.action_json, "", "");
  actuators::Result r;
  r.error_code = err::kShuttingDown;
  r.error = "the daemon stopped before it ran";
  return refuse_unrun(id_json, approver, approval, last, decision_json, resolved.target, r);
}

Reply ApprovalService::refuse_unrun(const std::string& id_json, const Identity& approver,
                                    const Approval& approval, const Decision& last,
                                    const std::string& decision_json, const std::string& target,
                                    const actuators::Result& r) {
  // Approved, but it never ran: closed refused, and said so to both sides.
  const std::string what = r.error_code + (r.error.empty() ? "" : ": " + r.error);
  std::string failed = result_json_of(target, r, false);
  failed.insert(failed.size() - 1, ",\"reason\":" + json_string("it could not run: " + what));
  store_->finish(approval.id, Status::Refused, failed, now_ms());
  record("refused", approval, approver.principal, "it could not run: " + what, last.decision_id,
         failed);
  std::optional<Approval> now = store_->get(approval.id);
  Stats::add(context_.stats.errors);
  return Reply{error_response(id_json, "approve",
                              {err::kApprovalRefused,
                               "approved, but it could not run: " + what,
                               {},
                               "\"approval\":" + approval_json(now ? *now : approval) +
                                   ",\"decision\":" + decision_json + ",\"result\":" + failed})};
}

Reply ApprovalService::dispatch(const std::string& id_json, const Identity& approver,
                                const Approval& approval, int scope_minutes, const Decision& last,
                                const std::string& decision_json) {
  pipeline::ResolvedTarget resolved = pipeline::resolve_target(last.action_json, "", "");
  actuators::Actuator* actuator =
      actuators_ && !resolved.target.empty() ? actuators_->find(resolved.target) : nullptr;
  actuators::Result r;
  std::vector<std::string> capabilities;  // what the action ran with
  if (!actuator) {
    r.error_code = code::kActNoActuator;
    r.error = "no actuator for target " + resolved.target + " on daemon " +
              context_.config->audit.daemon_id;
  } else {
    actuators::Context c;
    c.decision_id = last.decision_id;
    c.principal = approval.principal;
    c.session = approval.session;
    c.agent = approval.agent;
    c.source = "approval";
    // What the approver saw granted, and only as far as the rules in force still allow it:
    // a rule change narrows what a person approved, never widens it.
    c.allowed =
        intersect_capabilities(capabilities_of(approval.grants), allowed_capabilities(last));
    capabilities = c.allowed;
    c.effects = last.effects;
    try {
      r = actuator->act(last.action_json, c);
    } catch (...) {
      r = actuators::Result{};
      r.error_code = code::kActCrashed;
      r.error = "the actuator threw";
    }
    record_act(context_, last.decision_id, resolved.target, approval.principal, r);
  }
  if (!actuator || not_run(r)) {
    return refuse_unrun(id_json, approver, approval, last, decision_json, resolved.target, r);
  }
  // A person's yes made it run: its effects are now part of what its session did.
  Decision ran = last;
  ran.outcome = Outcome::Approve;
  remember_granted(context_, approval.principal, approval.session, ran);
  std::string result = result_json_of(resolved.target, r, true);
  std::string recorded = result_json_of(resolved.target, r, false);
  std::string ran_with = ",\"capabilities\":";
  append_strings(ran_with, capabilities);
  result.insert(result.size() - 1, ran_with);
  recorded.insert(recorded.size() - 1, ran_with);
  return conclude(id_json, approver, approval, scope_minutes, last, decision_json, "executed",
                  std::move(result), std::move(recorded));
}

Reply ApprovalService::conclude(const std::string& id_json, const Identity& approver,
                                const Approval& approval, int scope_minutes, const Decision& last,
                                const std::string& decision_json, const std::string& status,
                                std::string result, std::string recorded) {
  // The strictest terms of all votes hold: one use when any approver asked for no scope,
  // else the shortest scope asked for.
  scope_minutes = strictest_scope(approval, scope_minutes);
  if (scope_minutes > 0 || approval.origin != "submit") {
    approvals::Grant g;
    g.approval_id = approval.id;
    g.principal = approval.principal;
    g.session = approval.session;
    g.action_hash = grant_key(approval.action_json);
    g.approver = approver.principal;
    if (scope_minutes > 0) {
      g.expires_ms = now_ms() + std::int64_t{scope_minutes} * 60000;
      g.uses_left = 0;  // any number of uses until it expires
    } else {
      g.expires_ms = now_ms() + context_.config->approvals.expiry_seconds * 1000;
      g.uses_left = 1;
    }
    // Never beyond the approval's own expiry (the rule's expires-in, else the daemon's
    // expiry_seconds): what could not be approved after then is not approved after then.
    g.expires_ms = std::min(g.expires_ms, approval.expires_ms);
    store_->add_grant(g);
    std::string grant = "{\"uses\":" + std::to_string(g.uses_left) +
                        ",\"expires_ms\":" + std::to_string(g.expires_ms) +
                        ",\"scope_minutes\":" + std::to_string(scope_minutes) + "}";
    result.insert(result.size() - 1, ",\"grant\":" + grant);
    recorded.insert(recorded.size() - 1, ",\"grant\":" + grant);
  }
  store_->finish(approval.id, Status::Executed, result, now_ms());
  record(approval.origin == "submit" ? "executed" : "granted", approval, approver.principal, "",
         last.decision_id, recorded);
  std::optional<Approval> now = store_->get(approval.id);
  std::string fields = "\"status\":";
  append_json_string(fields, status);
  fields += ",\"approval\":" + approval_json(now ? *now : approval);
  fields += ",\"decision\":" + decision_json;
  fields += ",\"result\":" + result;
  std::string reply = ok_response(id_json, "approve", fields);
  if (reply.size() > kMaxEncodableFrame) {
    return Reply{ok_response(id_json, "approve",
                             "\"status\":" + json_string(status) + ",\"approval\":{\"id\":" +
                                 json_string(approval.id) + "},\"truncated\":true")};
  }
  return Reply{std::move(reply)};
}

std::optional<Reply> ApprovalService::deny(const Request& request, const Identity& identity,
                                           ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  std::string token, id, note, error;
  if (!string_field(payload, "token", kMaxToken, &token, &error) ||
      !string_field(payload, "id", kMaxToken, &id, &error) ||
      !string_field(payload, "note", kMaxNote, &note, &error)) {
    return fail(request.id_json, "deny", err::kBadRequest, error);
  }
  if (token.empty() == id.empty()) {
    return fail(request.id_json, "deny", err::kBadRequest,
                "give exactly one of \"payload.token\" and \"payload.id\"");
  }
  auto send = std::make_shared<ReplyFn>(std::move(later));
  const bool queued = post([this, rid = request.id_json, identity,
                            which = token.empty() ? id : token, note, send] {
    try {
      approvals::DenyOutcome outcome = store_->deny(which, identity.principal, note, now_ms());
      switch (outcome.result) {
        case approvals::DenyResult::NotFound:
          (*send)(fail(rid, "deny", err::kApprovalNotFound, "no approval has this token or id"));
          return;
        case approvals::DenyResult::Closed:
          (*send)(fail(rid, "deny", err::kApprovalClosed,
                       "approval " + outcome.approval->id + " is already " +
                           std::string(approvals::status_name(outcome.approval->status))));
          return;
        case approvals::DenyResult::Expired:
          record("expired", *outcome.approval, "expiry", "");
          (*send)(fail(rid, "deny", err::kApprovalExpired,
                       "approval " + outcome.approval->id + " had already expired"));
          return;
        case approvals::DenyResult::Denied:
          break;
      }
      record("denied", *outcome.approval, identity.principal, note);
      (*send)(Reply{ok_response(rid, "deny", "\"approval\":" + approval_json(*outcome.approval))});
    } catch (const approvals::StoreError& e) {
      (*send)(fail(rid, "deny", err::kApprovalStore, e.what()));
    } catch (const std::exception& e) {
      (*send)(fail(rid, "deny", err::kAudit, e.what()));
    }
  });
  if (!queued)
    return fail(request.id_json, "deny", err::kShuttingDown, "the daemon is shutting down");
  return std::nullopt;
}

// ---- JSON ----

std::string ApprovalService::approval_json(const Approval& a) {
  std::string out = "{\"id\":";
  append_json_string(out, a.id);
  member(out, "status", approvals::status_name(a.status));
  member(out, "principal", a.principal);
  member(out, "session", a.session);
  member(out, "agent", a.agent);
  member(out, "origin", a.origin);
  out += ",\"action\":";
  append_object_or_null(out, a.action_json);
  member(out, "action_hash", a.action_hash);
  member(out, "digest", a.digest);
  // What approving grants, written exactly as the digest covers it.
  out += ",\"grants\":" + approvals::grants_json(a.grants);
  out += ",\"rules\":";
  append_strings(out, a.rules);
  member(out, "reason", a.reason);
  member(out, "decision_id", a.decision_id);
  member(out, "daemon_id", a.daemon_id);
  member(out, "requester_token_id", a.requester_token_id);
  out += ",\"created_ms\":" + std::to_string(a.created_ms);
  out += ",\"expires_ms\":" + std::to_string(a.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(a.approvers_needed);
  out += ",\"votes\":[";
  for (std::size_t i = 0; i < a.votes.size(); ++i) {
    if (i) out += ',';
    out += "{\"approver\":";
    append_json_string(out, a.votes[i].approver);
    member(out, "note", a.votes[i].note);
    out += ",\"at_ms\":" + std::to_string(a.votes[i].at_ms) + "}";
  }
  out += ']';
  member(out, "closed_by", a.closed_by);
  member(out, "close_note", a.close_note);
  out += ",\"closed_ms\":" + std::to_string(a.closed_ms);
  append_result(out, a);
  out += '}';
  return out;
}

std::string ApprovalService::listed_json(const Approval& a) const {
  if (a.action_json.size() <= kListedActionBytes) {
    std::string whole = shown_json(a);
    if (whole.size() <= kMaxListedBytes) return whole;
  }
  // The action too large to list: a preview of its JSON text instead. The digest stays the
  // whole action's; `pending {"id"}` shows it in full.
  Approval cut = a;
  cut.action_json.clear();
  std::string out = shown_json(cut);
  std::string extra =
      ",\"truncated\":true,\"action_bytes\":" + std::to_string(a.action_json.size());
  extra += ",\"action_preview\":" + json_string(utf8_prefix(a.action_json, kPreviewBytes));
  out.insert(out.size() - 1, extra);
  if (out.size() <= kMaxListedBytes) return out;
  // Still too large (a huge reason, notes or history): only what names it.
  out = "{\"id\":";
  append_json_string(out, a.id);
  member(out, "status", approvals::status_name(a.status));
  member(out, "principal", utf8_prefix(a.principal, 256));
  member(out, "action_hash", a.action_hash);
  out += ",\"created_ms\":" + std::to_string(a.created_ms);
  out += ",\"expires_ms\":" + std::to_string(a.expires_ms);
  out += ",\"approvers_needed\":" + std::to_string(a.approvers_needed);
  out += ",\"truncated\":true,\"action_bytes\":" + std::to_string(a.action_json.size()) + "}";
  return out;
}

std::string ApprovalService::cursor_text(const Approval& a) {
  return std::to_string(a.created_ms) + ":" + a.id;
}

std::optional<approvals::Cursor> ApprovalService::parse_cursor(std::string_view text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > 19) return std::nullopt;
  approvals::Cursor c;
  for (char ch : text.substr(0, colon)) {
    if (ch < '0' || ch > '9') return std::nullopt;
    if (c.created_ms > (INT64_MAX - (ch - '0')) / 10) return std::nullopt;
    c.created_ms = c.created_ms * 10 + (ch - '0');
  }
  c.id = std::string(text.substr(colon + 1));
  if (!is_approval_id(c.id)) return std::nullopt;
  return c;
}

ApprovalService::Counters ApprovalService::counters() const {
  std::lock_guard c(counters_mutex_);
  return counters_;
}

std::string ApprovalService::shown_json(const Approval& a) const {
  std::string out = approval_json(a);
  // The requester session's recent history, as the session memory holds it (the effects of
  // its latest approved decisions; the fleet's, with [session] store = "postgres"): what the
  // agent did before asking.
  std::vector<HistoryEntry> history;
  if (context_.sessions && !a.session.empty()) {
    try {
      history = context_.sessions->snapshot(a.principal, a.session, now_ms() / 1000);
    } catch (const SessionHistoryError& e) {
      // The approver is told the history is unknown, not shown an empty one.
      std::string note = ",\"history_error\":";
      append_json_string(note, e.what());
      out.insert(out.size() - 1, note);
    }
  }
  out.insert(out.size() - 1, ",\"history\":[");
  {
    const std::size_t from = history.size() > kShownHistory ? history.size() - kShownHistory : 0;
    std::string items;
    for (std::size_t i = from; i < history.size(); ++i) {
      const HistoryEntry& h = history[i];
      if (!items.empty()) items += ',';
      items += "{\"decision_id\":";
      append_json_string(items, h.decision_id);
      items += ",\"time\":" + std::to_string(h.time);
      member(items, "kind", h.effect.kind);
      member(items, "object", h.effect.object);
      member(items, "target", h.effect.target);
      member(items, "program", h.effect.program);
      items += '}';
    }
    out.insert(out.size() - 1, items);
  }
  out.insert(out.size() - 1, "]");
  return out;
}

std::string ApprovalService::result_event(const Approval& a) {
  std::string out = "{\"event\":\"approval-result\",\"approval_id\":";
  append_json_string(out, a.id);
  member(out, "status", approvals::status_name(a.status));
  std::string by = a.closed_by;
  std::string note = a.close_note;
  if (by.empty() && !a.votes.empty()) {
    by = a.votes.back().approver;
    note = a.votes.back().note;
  }
  member(out, "by", by);
  member(out, "note", note);
  append_result(out, a);
  out += '}';
  return out;
}

}  // namespace warden::server
