// Reloads happen here, one at a time, on a background thread: `reload` requests, SIGHUP and
// (when watching) a change in the rule files noticed by polling a fingerprint. Requests that
// arrive during a reload are answered by the next one. The reload itself (compile beside the
// running rules, swap on success) is a function given by the daemon.
// request() is thread-safe; start()/stop() belong to the daemon's main thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/diagnostic.h"
#include "server/log.h"

namespace warden::server {

struct ReloadReport {
  bool ok = false;
  std::string trigger;       // "request:alice", "SIGHUP", "watch"
  std::string rules_digest;  // in force after the reload (the old one when it failed)
  std::string previous_digest;
  std::size_t rule_count = 0;
  std::size_t token_count = 0;
  // Pending approvals closed because the token that asked for them is no longer in the token
  // file (ApprovalService::revoke_missing_tokens).
  std::size_t approvals_cancelled = 0;
  Diagnostics diagnostics;  // every error and warning from the rule files
  std::vector<std::string> token_errors;
  // Non-empty when the new rules were valid but the audit log could not record the reload:
  // the reload failed (E_AUDIT), the old rules and tokens stay in force.
  std::string audit_error;

  // JSON members without braces: "rules_digest":…,"previous_digest":…,"diagnostics":[…]
  // (without "diagnostics" when with_diagnostics is false: an error reply carries them).
  std::string fields_json(bool with_diagnostics = true) const;
  std::string diagnostics_json() const;  // [{…},…]
  std::string summary() const;           // one line for messages and the log
};

class Reloader {
 public:
  using ReloadFn = std::function<ReloadReport(const std::string& trigger)>;
  using FingerprintFn = std::function<std::string()>;
  using DoneFn = std::function<void(const ReloadReport&)>;

  // fingerprint may be empty: no watching.
  Reloader(ReloadFn reload, FingerprintFn fingerprint, std::chrono::milliseconds interval,
           Logger log);
  ~Reloader();
  Reloader(const Reloader&) = delete;
  Reloader& operator=(const Reloader&) = delete;

  void start();
  void stop();
  // Queues a reload; done (may be empty) runs on the reloader thread with the report.
  // After stop(), done is not called.
  void request(std::string trigger, DoneFn done);

 private:
  struct Pending {
    std::string trigger;
    DoneFn done;
  };
  void run();

  ReloadFn reload_;
  FingerprintFn fingerprint_;
  std::chrono::milliseconds interval_;
  Logger log_;
  std::string baseline_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Pending> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace warden::server
