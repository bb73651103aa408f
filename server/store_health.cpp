#include "server/store_health.h"

#include <exception>
#include <utility>

namespace warden::server {

void StoreHealth::succeeded() {
  std::lock_guard lock(mutex_);
  if (state_.ok) return;
  state_.ok = true;
  log_->info("approvals store: reachable again after {} failed call(s)", state_.failures);
  state_.error.clear();
}

void StoreHealth::failed(const std::string& error) {
  std::lock_guard lock(mutex_);
  ++state_.failures;
  if (state_.ok) {
    // Once per outage: the calls themselves report each failure to their requester.
    log_->error(
        "approvals store: failing: {} (approval-required actions cannot be recorded, "
        "answered or run until it recovers)",
        error);
  }
  state_.ok = false;
  state_.error = error;
}

StoreHealth::Snapshot StoreHealth::get() const {
  std::lock_guard lock(mutex_);
  return state_;
}

namespace {

class MonitoredStore final : public approvals::Store {
 public:
  MonitoredStore(std::unique_ptr<approvals::Store> inner, StoreHealth* health)
      : inner_(std::move(inner)), health_(health) {}

  std::string_view kind() const override { return inner_->kind(); }
  approvals::Created create(const approvals::NewApproval& approval) override {
    return call([&] { return inner_->create(approval); });
  }
  std::optional<approvals::Approval> get(std::string_view id) override {
    return call([&] { return inner_->get(id); });
  }
  std::optional<approvals::Approval> find_by_token(std::string_view token) override {
    return call([&] { return inner_->find_by_token(token); });
  }
  std::vector<approvals::Approval> list(const approvals::Filter& filter) override {
    return call([&] { return inner_->list(filter); });
  }
  approvals::ApproveOutcome approve(std::string_view id, std::string_view digest,
                                    std::string_view approver, std::string_view note,
                                    std::int64_t now_ms, int scope_minutes,
                                    std::string_view daemon_id) override {
    return call([&] {
      return inner_->approve(id, digest, approver, note, now_ms, scope_minutes, daemon_id);
    });
  }
  approvals::DenyOutcome deny(std::string_view token_or_id, std::string_view by,
                              std::string_view note, std::int64_t now_ms) override {
    return call([&] { return inner_->deny(token_or_id, by, note, now_ms); });
  }
  bool finish(std::string_view id, approvals::Status status, std::string_view result_json,
              std::int64_t now_ms) override {
    return call([&] { return inner_->finish(id, status, result_json, now_ms); });
  }
  std::vector<approvals::Approval> recover_claimed(std::string_view daemon_id,
                                                   std::int64_t claimed_before_ms,
                                                   std::string_view result_json,
                                                   std::int64_t now_ms) override {
    return call(
        [&] { return inner_->recover_claimed(daemon_id, claimed_before_ms, result_json, now_ms); });
  }
  std::vector<approvals::Approval> expire_due(std::int64_t now_ms) override {
    return call([&] { return inner_->expire_due(now_ms); });
  }
  approvals::Pruned prune(std::int64_t closed_before_ms, std::int64_t now_ms) override {
    return call([&] { return inner_->prune(closed_before_ms, now_ms); });
  }
  void add_grant(const approvals::Grant& grant) override {
    call([&] {
      inner_->add_grant(grant);
      return 0;
    });
  }
  std::optional<approvals::Grant> use_grant(std::string_view principal, std::string_view session,
                                            std::string_view action_hash,
                                            std::int64_t now_ms) override {
    return call([&] { return inner_->use_grant(principal, session, action_hash, now_ms); });
  }
  void listen(approvals::Listener listener) override { inner_->listen(std::move(listener)); }
  std::vector<approvals::TokenRequester> open_requesters(std::int64_t now_ms) override {
    return call([&] { return inner_->open_requesters(now_ms); });
  }
  std::vector<approvals::Approval> cancel_requester(std::string_view token_id,
                                                    std::string_view principal, std::string_view by,
                                                    std::string_view note,
                                                    std::int64_t now_ms) override {
    return call([&] { return inner_->cancel_requester(token_id, principal, by, note, now_ms); });
  }

 private:
  template <typename F>
  auto call(F&& f) -> decltype(f()) {
    try {
      auto result = f();
      health_->succeeded();
      return result;
    } catch (const approvals::PendingLimit&) {
      health_->succeeded();  // the store answered: the requester is at its limit
      throw;
    } catch (const std::exception& e) {
      health_->failed(e.what());
      throw;
    } catch (...) {
      health_->failed("unknown error");
      throw;
    }
  }

  std::unique_ptr<approvals::Store> inner_;
  StoreHealth* health_;
};

}  // namespace

std::unique_ptr<approvals::Store> monitored_store(std::unique_ptr<approvals::Store> store,
                                                  StoreHealth* health) {
  return std::make_unique<MonitoredStore>(std::move(store), health);
}

}  // namespace warden::server
