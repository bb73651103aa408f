// ApprovalService's lifetime and threads: start (the store's notifications, the workers, the
// sweeper, interrupted approvals refused), stop, the work and runner queues, the connections
// results are pushed to, and the audit record of every transition.
#include "server/approval_service.h"

#include <exception>
#include <system_error>

#include "audit/record.h"
#include "audit/writer.h"
#include "protocol/json_text.h"
#include "server/approval_text.h"
#include "server/audit_setup.h"
#include "server/errors.h"
#include "server/notifier.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

constexpr int kWorkers = 4;
// Approved submit actions run on threads of their own, started as needed up to this many at
// once (more wait their turn): a long action never holds a thread that decides, lists or
// answers approvals.
constexpr std::size_t kMaxRunners = 16;
// An approval claimed longer ago than this and still not finished was interrupted, whichever
// daemon claimed it (its own claims a daemon recovers whatever their age as it starts).
constexpr std::chrono::milliseconds kClaimBound = std::chrono::hours(1);

}  // namespace

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
  approval_text::member(result, "reason", kReason);
  result += '}';
  const std::int64_t now = approval_text::now_ms();
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

ApprovalService::Counters ApprovalService::counters() const {
  std::lock_guard c(counters_mutex_);
  return counters_;
}

}  // namespace warden::server
