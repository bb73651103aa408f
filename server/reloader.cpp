#include "server/reloader.h"

#include <exception>

#include "protocol/json_text.h"
#include "server/errors.h"

namespace warden::server {

std::string ReloadReport::diagnostics_json() const {
  std::string out = "[";
  for (std::size_t i = 0; i < diagnostics.size(); ++i) {
    if (i) out += ',';
    out += diagnostics[i].to_json();
  }
  out += ']';
  return out;
}

std::string ReloadReport::fields_json(bool with_diagnostics) const {
  std::string out = "\"trigger\":";
  append_json_string(out, trigger);
  out += ",\"rules_digest\":";
  append_json_string(out, rules_digest);
  out += ",\"previous_digest\":";
  append_json_string(out, previous_digest);
  out += ",\"rule_count\":" + std::to_string(rule_count);
  out += ",\"approvals_cancelled\":" + std::to_string(approvals_cancelled);
  if (with_diagnostics) out += ",\"diagnostics\":" + diagnostics_json();
  out += ",\"token_errors\":[";
  for (std::size_t i = 0; i < token_errors.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, token_errors[i]);
  }
  out += ']';
  return out;
}

std::string ReloadReport::summary() const {
  std::size_t errors = 0;
  for (const Diagnostic& d : diagnostics) errors += d.severity == Severity::Error;
  errors += token_errors.size();
  if (ok) {
    return "reload (" + trigger + ") succeeded: " + std::to_string(rule_count) + " rules, " +
           previous_digest + " -> " + rules_digest;
  }
  if (!audit_error.empty()) {
    return "reload (" + trigger + ") failed: the audit log cannot record it (" + audit_error +
           "); keeping " + rules_digest;
  }
  return "reload (" + trigger + ") failed with " + std::to_string(errors) + " error(s); keeping " +
         rules_digest;
}

Reloader::Reloader(ReloadFn reload, FingerprintFn fingerprint, std::chrono::milliseconds interval,
                   Logger log)
    : reload_(std::move(reload)),
      fingerprint_(std::move(fingerprint)),
      interval_(interval),
      log_(std::move(log)) {}

Reloader::~Reloader() { stop(); }

void Reloader::start() {
  // The baseline is taken before start() returns, so no later edit can be missed.
  if (fingerprint_) {
    try {
      baseline_ = fingerprint_();
    } catch (const std::exception& e) {
      log_->warn("cannot check the rule files for changes: {}", e.what());
    }
  }
  thread_ = std::thread([this] { run(); });
}

void Reloader::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Reloader::request(std::string trigger, DoneFn done) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    pending_.push_back({std::move(trigger), std::move(done)});
  }
  wake_.notify_all();
}

void Reloader::run() {
  std::string last_fingerprint = baseline_;
  auto fingerprint = [&]() -> std::string {
    try {
      return fingerprint_();
    } catch (const std::exception& e) {
      log_->warn("cannot check the rule files for changes: {}", e.what());
      return last_fingerprint;
    }
  };
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    bool woke = wake_.wait_for(lock, interval_, [this] { return stopping_ || !pending_.empty(); });
    if (stopping_) break;
    std::vector<Pending> batch;
    batch.swap(pending_);
    lock.unlock();

    std::string trigger;
    if (!woke && fingerprint_) {
      std::string now = fingerprint();
      if (now != last_fingerprint) {
        last_fingerprint = now;
        trigger = "watch";
      }
    }
    if (!batch.empty()) {
      trigger = batch.front().trigger;
      for (std::size_t i = 1; i < batch.size(); ++i) trigger += "," + batch[i].trigger;
      if (fingerprint_) last_fingerprint = fingerprint();
    }
    if (!trigger.empty()) {
      ReloadReport report;
      try {
        report = reload_(trigger);
      } catch (const std::exception& e) {
        report.ok = false;
        report.trigger = trigger;
        report.token_errors.push_back(std::string("internal error: ") + e.what());
      }
      for (Pending& p : batch) {
        if (!p.done) continue;
        try {
          p.done(report);
        } catch (const std::exception& e) {
          log_->error("reload completion failed: {}", e.what());
        }
      }
    }
    lock.lock();
  }
  // Requests never run are dropped with their callbacks (their sessions are closing).
  pending_.clear();
}

}  // namespace warden::server
