// Approvers are told (SPEC §6, docs/PROTOCOL.md "Notifications"): each approval event —
// created, approved, denied, expired, executed, refused — is POSTed as JSON to the webhook
// of [approvals.notify], so a person need not sit in `warden pending --watch`.
//
//   ApprovalService::record ──notify()──▶ bounded queue ──notifier thread──▶ libcurl POST
//                                          (full: the oldest        (retried with exponential
//                                           event is dropped,         backoff on connection
//                                           a warning logged)         errors, 5xx and 429)
//
// notify() only copies the event into the queue: a slow, failing or unreachable webhook never
// delays or fails a decision or an approval. The body is rendered on the notifier thread:
// the approval's id, its action as it will run (secrets masked as the audit log masks them,
// Warden's own tokens too, control characters made visible, bounded), its digest, requester,
// agent, session, rules, reason, expiry, status and approvers needed — never a token.
//
// A fleet sharing a PostgreSQL store posts each event once: the daemon on which the
// transition happened (the store transaction that made it) posts it; the others hear of it
// through the store and post nothing. Delivery is at most once per attempt that succeeds,
// from memory: events queued when the daemon stops are not sent (the audit log and
// `warden pending` remain the record).
//
// stop() ends the thread promptly: a transfer in flight is aborted, a backoff is not waited
// out. Thread-safe.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "approvals/store.h"
#include "server/config.h"
#include "server/log.h"
#include "server/throttled_log.h"

namespace warden::audit {
class Masker;
}  // namespace warden::audit

namespace warden::server {

// The events a webhook can be told of, in the order an approval lives them.
inline constexpr std::array<std::string_view, 6> kNotifyEvents = {"created", "approved", "denied",
                                                                  "expired", "executed", "refused"};
bool is_notify_event(std::string_view name);

// Why `url` cannot be a webhook URL ("" when it can): it must be an absolute https:// URL, or
// http:// to a loopback address (127.0.0.0/8, ::1, localhost) — what the webhook carries must
// not cross a network in the clear. The message never repeats the URL (it is a secret).
std::string notify_url_problem(std::string_view url);

class Notifier {
 public:
  // What `status` reports (approvals.notify).
  struct Counts {
    std::uint64_t sent = 0;     // events the webhook accepted (2xx)
    std::uint64_t failed = 0;   // events given up on (a 4xx other than 429, or attempts spent)
    std::uint64_t retried = 0;  // failed attempts that were tried again
    std::uint64_t dropped = 0;  // events dropped unsent: the queue was full, or at stop
    std::uint64_t queued = 0;   // events waiting now
    std::string last_error;     // the last failed attempt's error ("" before any)
  };

  // url: the webhook (checked: notify_url_problem). masker: the audit log's masker; null
  // (masking off in the audit log, or no audit log): the notifier masks with a key of its own,
  // since a webhook never carries a secret. daemon_id: named in each event.
  Notifier(NotifyConfig config, std::string url, Logger log, const audit::Masker* masker,
           std::string daemon_id);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  std::string start();  // the delivery thread; an error text on failure
  void stop();          // idempotent; prompt

  // An approval transition as ApprovalService records it: `event` is the audit record's
  // event ("granted", a decide's approval carried out, is posted as "executed"; events not
  // configured, "vote" and "scoped-use" are not posted). by/note: who and why (the approver,
  // the denier, "expiry"); result_json: what happened (executed, refused). Never blocks on
  // the network; false when the event is not posted (not configured, or stopped).
  bool notify(std::string_view event, const approvals::Approval& approval, std::string_view by,
              std::string_view note, std::string_view result_json);

  Counts counts() const;
  // The webhook's scheme and host, for logs and status (never its path, query or userinfo:
  // a chat webhook URL is itself a credential).
  const std::string& where() const { return where_; }

  // The POST body for an event (what the delivery thread sends), rendered as `format` says.
  // Exposed for tests.
  struct Event {
    std::string event;  // one of kNotifyEvents
    approvals::Approval approval;
    std::string by, note, result_json;
    std::int64_t at_ms = 0;
  };
  std::string body(const Event& event) const;

 private:
  void run();
  // Posts one event until the webhook accepts it, refuses it, or the attempts are spent.
  void deliver(const Event& event, const std::string& body);
  // One POST: 2xx → ""; otherwise the error, whether it is worth another attempt, and how
  // long the webhook asked to wait (Retry-After).
  std::string post(const std::string& body, bool* retryable,
                   std::chrono::milliseconds* retry_after);

  NotifyConfig config_;
  std::string url_;
  std::string where_;
  Logger log_;
  const audit::Masker* masker_;
  std::unique_ptr<audit::Masker> own_masker_;
  std::string daemon_id_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Event> queue_;
  bool stopping_ = false;
  bool started_ = false;
  std::atomic<bool> abort_{false};  // set by stop(): the transfer in flight ends
  void* multi_ = nullptr;           // libcurl's multi handle (CURLM), woken by stop()
  std::thread thread_;
  Counts counts_;
  ThrottledLog drops_{5, std::chrono::seconds(60)};  // "queue full" warnings
};

}  // namespace warden::server
