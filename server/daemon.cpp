// Daemon: construction, the I/O loop, shutdown and teardown, reloads. Its start steps are
// in daemon_start.cpp.
#include "server/daemon.h"

#include <csignal>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "approvals/store.h"
#include "engine/decision.h"
#include "server/approval_service.h"
#include "server/audit_setup.h"
#include "server/errors.h"
#include "server/listener.h"
#include "server/metrics_http.h"
#include "server/notifier.h"
#include "server/own_files.h"
#include "server/pipeline_setup.h"
#include "server/rule_loader.h"
#include "server/session_history_pg.h"

namespace warden::server {

namespace asio = boost::asio;

Daemon::Daemon(Config config, Options options)
    : config_(std::move(config)), options_(std::move(options)) {
  context_.config = &config_;
  context_.log =
      options_.logger ? options_.logger : make_logger(config_.log_level, config_.log_json);
}

Daemon::~Daemon() { teardown(); }

int Daemon::run() {
  if (!started_) return 4;
  for (;;) {
    try {
      io_.run();
      break;
    } catch (const std::exception& e) {
      // Handlers catch their own errors; this is the last line of defence.
      context_.log->error("I/O loop: unexpected exception: {}", e.what());
    }
  }
  teardown();
  if (!audit_close_error_.empty()) {
    // The log does not say the daemon stopped: a verifier cannot tell this end from a
    // truncation, so neither may the exit code.
    context_.log->error("warden stopped, but the audit log could not record it: {}",
                        audit_close_error_);
    context_.log->flush();
    return 4;
  }
  context_.log->info("warden stopped");
  context_.log->flush();
  return 0;
}

void Daemon::request_stop() {
  asio::post(io_, [this] { begin_shutdown("stop requested"); });
}

void Daemon::request_reload(const std::string& trigger) {
  if (reloader_) reloader_->request(trigger, nullptr);
}

void Daemon::wait_for_signal() {
  signals_.async_wait([this](boost::system::error_code ec, int signo) {
    if (ec) return;
    if (signo == SIGHUP) {
      context_.log->info("SIGHUP: reloading rules and tokens");
      request_reload("SIGHUP");
    } else if (shutting_down_) {
      context_.log->warn("second {}: closing every connection now",
                         signo == SIGINT ? "SIGINT" : "SIGTERM");
      connections_.close_all();
    } else {
      begin_shutdown(signo == SIGINT ? "SIGINT" : "SIGTERM");
    }
    wait_for_signal();
  });
}

void Daemon::begin_shutdown(const std::string& reason) {
  if (shutting_down_ || !started_) return;
  shutting_down_ = true;
  context_.draining = true;
  context_.log->info("{}: stopping; draining {} connection(s) (up to {} ms)", reason,
                     connections_.size(), config_.limits.shutdown_timeout.count());
  for (auto& listener : listeners_) listener->stop();
  connections_.drain_all();
  shutdown_timer_.expires_after(config_.limits.shutdown_timeout);
  shutdown_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    context_.log->warn("shutdown deadline: closing {} connection(s) with work in flight",
                       connections_.size());
    connections_.close_all();
  });
  connections_.when_empty([this] { finish_shutdown(); });
}

void Daemon::finish_shutdown() {
  // The metrics listener said "draining" on /health until now.
  if (metrics_) metrics_->stop();
  boost::system::error_code ec;
  shutdown_timer_.cancel();
  signals_.cancel(ec);
  work_.reset();
  io_.stop();
}

void Daemon::teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  // Reverse order of the startup steps.
  boost::system::error_code ec;
  signals_.cancel(ec);
  // Only safe while the I/O loop is not running, which is the case here.
  if (metrics_) metrics_->stop();
  for (auto& listener : listeners_) listener->stop();
  connections_.close_all();
  connections_.throttled().flush(context_.log);
  if (reloader_) reloader_->stop();
  // Waits for approvals end now (a run waiting for one ends suspended); the service stays
  // reachable for what is still running.
  if (approvals_) approvals_->stop();
  // Runs of closed connections stop at their next step; their decisions still need the pool.
  if (pipelines_) {
    context_.pipelines = nullptr;
    pipelines_->stop();
  }
  if (pool_) pool_->stop();
  // Nothing records approval events any more: the webhook's queue ends unsent (promptly: a
  // transfer in flight is aborted, a backoff not waited out).
  if (notifier_) notifier_->stop();
  // After the workers: their last records are written, then the stop record and the final
  // signed checkpoint.
  if (audit_.writer) {
    context_.audit = nullptr;
    audit_.writer->close();
    audit::WriterHealth health = audit_.writer->health();
    context_.audit_failures.flush(context_.log);
    if (!health.ok) {
      // close() writes `stop` and the closing checkpoint; its health is theirs.
      audit_close_error_ = health.error.empty() ? "unknown error" : health.error;
      context_.log->error("audit log: the stop record cannot be written: {} (last seq {})",
                          audit_close_error_, health.last_seq);
    } else {
      context_.log->info("audit log closed at seq {}", health.last_seq);
    }
  }
  // After the log's last records: their approved effects are stored (a bounded wait).
  if (sessions_) sessions_->close();
  work_.reset();
}

ReloadReport Daemon::reload_now(const std::string& trigger) {
  ReloadReport report;
  report.trigger = trigger;
  auto old = context_.policy.get();
  report.previous_digest = old ? old->digest() : "";
  LoadedPolicy loaded = load_rules(config_.rules);
  report.diagnostics = std::move(loaded.diagnostics);
  std::shared_ptr<TokenStore> tokens;
  if (!config_.tokens.empty()) {
    tokens = std::make_shared<TokenStore>();
    if (!TokenStore::load(config_.tokens, tokens.get(), &report.token_errors)) tokens.reset();
  }
  Logger& log = context_.log;
  for (const Diagnostic& d : report.diagnostics) {
    if (d.severity == Severity::Error) {
      log->error("reload: {}", d.to_text());
    } else {
      log->warn("reload: {}", d.to_text());
    }
  }
  for (const std::string& e : report.token_errors) log->error("reload: {}", e);
  // The daemon's state is checked again: a reload does not succeed while others could
  // change the approvals database, the audit log or a key.
  Diagnostics state_problems = own_state_problems(config_);
  for (const Diagnostic& d : state_problems) log->error("reload: {}", d.to_text());
  const bool state_ok = state_problems.empty();
  report.diagnostics.insert(report.diagnostics.end(), state_problems.begin(), state_problems.end());
  if (loaded.policy && report.token_errors.empty() && state_ok && context_.audit) {
    // Recorded before it takes effect: the reload record is durable before the new rules
    // (and tokens) are in force, so no decision is made under rules the log does not
    // announce. A reload that cannot be recorded fails; the old rules and tokens stay.
    audit::AppendResult appended = context_.audit->append_wait(
        "reload", audit_now_us(),
        audit_reload_fields(loaded.policy->digest(), report.previous_digest, trigger));
    if (!appended.ok) {
      report.audit_error = appended.error.empty() ? "unknown error" : appended.error;
      log->error("reload: the audit log cannot record the reload to {}: {}",
                 loaded.policy->digest(), report.audit_error);
    }
  }
  if (loaded.policy && report.token_errors.empty() && state_ok && report.audit_error.empty()) {
    // Swap both or neither.
    context_.policy.set(loaded.policy);
    context_.stats.rules.loaded(loaded.policy->rule_names());
    if (tokens) {
      report.token_count = tokens->size();
      context_.set_tokens(std::move(tokens));
      // Sessions authenticated under the old set re-check their tokens now (and before
      // their next request, whichever comes first).
      asio::post(io_, [this] { connections_.recheck_auth_all(); });
      // What a revoked token started does not outlive it: its pending approvals are
      // cancelled (their waiting requesters answered), the grants its approvals left end.
      if (approvals_) {
        try {
          report.approvals_cancelled = approvals_->revoke_missing_tokens();
        } catch (const std::exception& e) {
          // Each is still refused when someone approves it, and its grants when used.
          log->error("reload: the approvals of revoked tokens cannot be cancelled now: {}",
                     e.what());
        }
      }
    }
    report.ok = true;
    report.rules_digest = loaded.policy->digest();
    report.rule_count = loaded.policy->rule_count();
    Stats::add(context_.stats.reloads);
    log->info("{}", report.summary());
  } else {
    report.ok = false;
    report.rules_digest = report.previous_digest;
    report.rule_count = old ? old->rule_count() : 0;
    Stats::add(context_.stats.reload_failures);
    log->error("{}", report.summary());
  }
  return report;
}

}  // namespace warden::server
