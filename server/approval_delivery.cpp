// Following approvals (approval_service.h): waits for a final state, watchers told as
// approvals arrive and close (store notifications, coalesced and re-read), and the sweeper
// that expires approvals, prunes closed ones and ends waits that ran out.
#include "server/approval_service.h"

#include <exception>

#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "server/approval_text.h"
#include "server/submit.h"

namespace warden::server {

namespace {

using approvals::Approval;
using approvals::Status;

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

bool is_final(Status s) {
  return s == Status::Denied || s == Status::Expired || s == Status::Executed ||
         s == Status::Refused;
}

}  // namespace

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
        for (const Approval& a : store_->expire_due(approval_text::now_ms()))
          record("expired", a, "expiry", "");
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
        const std::int64_t at = approval_text::now_ms();
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
        !approval_text::is_approval_id(approval_id)) {
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
      tell =
          a->status == Status::Pending || a->closed_ms >= approval_text::now_ms() - kStaleCloseMs;
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

}  // namespace warden::server
