// What sessions and the request handler share: configuration, counters, the rules in force,
// the token store, the decision workers and the reloader. Owned by the Daemon, which
// outlives every session. Members are thread-safe as documented on their types; the token
// store is swapped under a mutex by reloads.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>

#include "pipeline/pipeline.h"
#include "server/active_policy.h"
#include "server/config.h"
#include "server/exec_envelopes.h"
#include "server/log.h"
#include "server/stats.h"
#include "server/throttled_log.h"
#include "server/tokens.h"

namespace warden {
class SessionHistory;
}  // namespace warden

namespace warden::audit {
class Masker;
class Writer;
}  // namespace warden::audit

namespace warden::server {

class ApprovalService;
class Notifier;
class StoreHealth;
class DeciderPool;
class PipelineWorkers;
class Reloader;
struct Identity;

struct ServerContext {
  const Config* config = nullptr;
  Logger log;
  Stats stats;
  ActivePolicy policy;
  DeciderPool* pool = nullptr;
  Reloader* reloader = nullptr;
  // Session memory (in this process, or in PostgreSQL for a fleet: [session] store); null
  // when [session] ttl_seconds = 0.
  SessionHistory* sessions = nullptr;
  // The audit log (thread-safe); null when audit.enabled is false. Every decision is
  // appended before it is answered. masker: secrets masked in records; null: not masked.
  audit::Writer* audit = nullptr;
  const audit::Masker* masker = nullptr;
  // `submit`: the pipeline threads and what a run does. run_pipeline is empty when no model
  // provider is configured (submit answers E_NO_PROVIDER).
  PipelineWorkers* pipelines = nullptr;
  std::function<pipeline::RunSummary(const pipeline::Signal&, const Identity&,
                                     std::shared_ptr<const std::atomic<bool>>,
                                     const pipeline::EventSink&)>
      run_pipeline;
  // Pending approvals: pending, approve, deny, and what approval-required leaves behind. Null
  // only in tests that build a context without one.
  ApprovalService* approvals = nullptr;
  // The approvals store's state as its last calls found it (server/store_health.h), for
  // health-check and status; null without a store.
  const StoreHealth* approvals_health = nullptr;
  // [approvals.notify]: approval events posted to a webhook (server/notifier.h); null when
  // not configured. Set before the approvals start, valid until the Daemon is destroyed.
  Notifier* notifier = nullptr;
  // Audit records that could not be written: logged, a few lines a minute (audit_setup.h).
  ThrottledLog audit_failures{5, std::chrono::seconds(60)};
  // Shell decisions of `decide` requests, for `warden exec` (the `envelope` request).
  ExecEnvelopes exec_envelopes;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::atomic<bool> draining{false};  // shutting down: no new work is accepted

  // No token file and --insecure-no-auth: every connection is "anonymous" with role agent.
  bool auth_required() const { return !config->insecure_no_auth; }

  std::shared_ptr<const TokenStore> tokens() const {
    std::lock_guard lock(tokens_mutex_);
    return tokens_;
  }
  void set_tokens(std::shared_ptr<const TokenStore> tokens) {
    std::lock_guard lock(tokens_mutex_);
    tokens_ = std::move(tokens);
  }

 private:
  mutable std::mutex tokens_mutex_;
  std::shared_ptr<const TokenStore> tokens_ = std::make_shared<TokenStore>();
};

}  // namespace warden::server
