#include "server/metrics.h"

#include <chrono>
#include <cstdio>
#include <optional>

#include "audit/writer.h"
#include "engine/session_history.h"
#include "server/decider_pool.h"
#include "server/store_health.h"

namespace warden::server {

namespace {

// One exposition: each family's HELP and TYPE once, then its samples.
class Exposition {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // labels: "" or `key="value",…` (values already escaped).
  void sample(std::string_view name, std::string_view labels, std::uint64_t value) {
    begin(name, labels);
    out_ += std::to_string(value);
    out_ += '\n';
  }
  void sample_seconds(std::string_view name, std::string_view labels, std::uint64_t us) {
    begin(name, labels);
    char text[32];
    std::snprintf(text, sizeof text, "%llu.%06llu", static_cast<unsigned long long>(us / 1000000),
                  static_cast<unsigned long long>(us % 1000000));
    out_ += text;
    out_ += '\n';
  }
  // A family of one unlabelled sample.
  void single(const char* name, const char* type, const char* help, std::uint64_t value) {
    family(name, type, help);
    sample(name, "", value);
  }
  std::string take() { return std::move(out_); }

 private:
  void begin(std::string_view name, std::string_view labels) {
    out_ += name;
    if (!labels.empty()) {
      out_ += '{';
      out_ += labels;
      out_ += '}';
    }
    out_ += ' ';
  }
  std::string out_;
};

std::string label(std::string_view key, std::string_view value) {
  std::string out(key);
  out += "=\"";
  out += prometheus_label_value(value);
  out += '"';
  return out;
}

std::uint64_t get(const Stats::Counter& c) { return Stats::get(c); }

}  // namespace

// Prometheus, not JSON (text::append_json_string): its label values escape only \\, " and \n.
std::string prometheus_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string metrics_text(const ServerContext& ctx) {
  const Stats& s = ctx.stats;
  Exposition e;

  // ---- decisions ----
  e.family("warden_decisions_total", "counter", "Decisions given to their requesters, by outcome.");
  e.sample("warden_decisions_total", label("outcome", "approve"), get(s.approved));
  e.sample("warden_decisions_total", label("outcome", "reject"), get(s.rejected));
  e.sample("warden_decisions_total", label("outcome", "approval-required"),
           get(s.approval_required));
  e.family("warden_decisions_failed_closed_total", "counter",
           "Decisions that failed closed (rejected for an error, not by a rule), by error code.");
  for (std::size_t i = 0; i <= CodeCounters::kCodes; ++i) {
    if (std::uint64_t n = s.failed_closed_by_code.get(i)) {
      e.sample("warden_decisions_failed_closed_total", label("code", CodeCounters::name(i)), n);
    }
  }
  e.single("warden_decisions_defaulted_total", "counter",
           "Decisions no enforcing rule decided (default_outcome applied).", get(s.defaulted));
  e.family("warden_rule_decisions_total", "counter",
           "Decisions in which a rule in force asserted a decision, by rule and mode "
           "(enforce, monitor).");
  for (const RuleCounters::Row& row : s.rules.rows()) {
    const std::string rule = label("rule", row.rule);
    e.sample("warden_rule_decisions_total", rule + "," + label("mode", "enforce"), row.enforce);
    e.sample("warden_rule_decisions_total", rule + "," + label("mode", "monitor"), row.monitor);
  }
  e.single("warden_rule_decisions_unlisted_total", "counter",
           "Decision facts crediting a name that is no loaded rule.", s.rules.unlisted());
  {
    const char* name = "warden_decision_duration_seconds";
    e.family(name, "histogram", "Time the rules took to decide (the decision's elapsed_us).");
    LatencyHistogram::Snapshot h = s.decision_seconds.snapshot();
    for (std::size_t i = 0; i < LatencyHistogram::kBoundsText.size(); ++i) {
      e.sample("warden_decision_duration_seconds_bucket",
               label("le", LatencyHistogram::kBoundsText[i]), h.cumulative[i]);
    }
    e.sample("warden_decision_duration_seconds_bucket", label("le", "+Inf"), h.count());
    e.sample_seconds("warden_decision_duration_seconds_sum", "", h.sum_us);
    e.sample("warden_decision_duration_seconds_count", "", h.count());
  }

  // ---- decision workers ----
  if (ctx.pool) {
    DeciderPool::Status pool = ctx.pool->status();
    e.single("warden_decision_queue_depth", "gauge", "Decisions waiting for a worker.",
             pool.queued);
    e.single("warden_decision_workers", "gauge", "Decision worker threads.", ctx.pool->size());
    e.single("warden_decision_workers_busy", "gauge", "Decision workers deciding now.",
             ctx.pool->deciding());
    e.single("warden_decision_workers_behind", "gauge",
             "Decision workers whose last rebuild of the rules failed (their decisions fail "
             "closed).",
             pool.behind);
    e.single("warden_decisions_busy_total", "counter",
             "Decisions refused because the queue was full (E_BUSY).", pool.busy);
    e.single("warden_decisions_abandoned_total", "counter",
             "Decisions dropped unrun because their connection closed.", pool.abandoned);
  }

  // ---- connections and requests ----
  e.single("warden_connections_current", "gauge", "Open protocol connections.",
           get(s.connections_current));
  e.single("warden_connections_accepted_total", "counter", "Protocol connections accepted.",
           get(s.connections_accepted));
  e.single("warden_connections_refused_total", "counter",
           "Protocol connections refused or closed over a connection limit.",
           get(s.connections_refused));
  e.single("warden_requests_total", "counter", "Protocol requests read.", get(s.requests));
  e.single("warden_request_errors_total", "counter", "Error replies of any kind.", get(s.errors));
  e.single("warden_protocol_errors_total", "counter",
           "Framing errors and timeouts that closed a connection.", get(s.protocol_errors));
  e.single("warden_auth_failures_total", "counter", "Failed authentications (unknown token).",
           get(s.auth_failures));

  // ---- rules ----
  auto policy = ctx.policy.get();
  e.single("warden_rules_loaded", "gauge", "Rules in force.", policy ? policy->rule_count() : 0);
  e.single("warden_reloads_total", "counter", "Successful reloads of rules and tokens.",
           get(s.reloads));
  e.single("warden_reload_failures_total", "counter",
           "Failed reloads (the previous rules stayed in force).", get(s.reload_failures));

  // ---- audit log ----
  e.single("warden_audit_enabled", "gauge", "1 when decisions are recorded in the audit log.",
           ctx.audit ? 1 : 0);
  if (ctx.audit) {
    audit::WriterHealth h = ctx.audit->health();
    e.single("warden_audit_last_write_ok", "gauge",
             "1 when the audit log's last write succeeded (0: decisions fail closed).",
             h.ok ? 1 : 0);
    e.single("warden_audit_write_errors_total", "counter",
             "Audit records that could not be written.", h.failures);
    e.single("warden_audit_records_total", "counter", "Audit records written since start.",
             h.records);
  }

  // ---- approvals and session stores ----
  if (ctx.approvals_health) {
    StoreHealth::Snapshot h = ctx.approvals_health->get();
    e.single("warden_approvals_store_ok", "gauge",
             "1 when the approvals store's last call succeeded.", h.ok ? 1 : 0);
    e.single("warden_approvals_store_failures_total", "counter",
             "Approvals store calls that failed.", h.failures);
  }
  if (ctx.sessions) {
    SessionHistoryHealth h = ctx.sessions->health();
    e.single("warden_session_store_ok", "gauge",
             "1 when the session store answers (0: decisions in sessions fail closed).",
             h.ok ? 1 : 0);
    e.single("warden_sessions", "gauge", "Sessions the session memory holds.",
             ctx.sessions->session_count());
  }

  // ---- the daemon ----
  e.single("warden_health_ok", "gauge", "1 when /health answers 200 (the daemon can decide).",
           health_report(ctx).ok ? 1 : 0);
  e.single("warden_uptime_seconds", "gauge", "Seconds since the daemon started.",
           static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
                                          std::chrono::steady_clock::now() - ctx.started)
                                          .count()));
  e.family("warden_metrics_http_responses_total", "counter",
           "Answers of the metrics listener, by HTTP status code.");
  for (std::size_t i = 0; i < Stats::kHttpStatuses.size(); ++i) {
    e.sample("warden_metrics_http_responses_total",
             label("code", std::to_string(Stats::kHttpStatuses[i])), get(s.http_responses[i]));
  }
  e.single("warden_metrics_http_refused_total", "counter",
           "Metrics listener connections closed unanswered (metrics.max_connections open).",
           get(s.http_refused));
  return e.take();
}

HealthReport health_report(const ServerContext& ctx) {
  struct Check {
    const char* name;
    const char* state;  // "ok", "failing" or "off"
  };
  auto state = [](bool ok) { return ok ? "ok" : "failing"; };
  std::optional<DeciderPool::Status> pool;
  if (ctx.pool) pool = ctx.pool->status();
  const Check checks[] = {
      {"rules", state(ctx.policy.get() != nullptr)},
      // Every worker behind: no decision can be made on the rules in force.
      {"workers", state(pool && ctx.pool->size() > 0 && pool->behind < ctx.pool->size())},
      {"audit", ctx.audit ? state(ctx.audit->health().ok) : "off"},
      {"approvals", ctx.approvals_health ? state(ctx.approvals_health->get().ok) : "off"},
      {"sessions", ctx.sessions ? state(ctx.sessions->health().ok) : "off"},
  };
  std::string failing;
  std::string listed;
  for (const Check& c : checks) {
    listed += listed.empty() ? "" : ",";
    listed += '"';
    listed += c.name;
    listed += "\":\"";
    listed += c.state;
    listed += '"';
    if (std::string_view(c.state) == "failing") {
      failing += failing.empty() ? "\"" : ",\"";
      failing += c.name;
      failing += '"';
    }
  }
  const bool draining = ctx.draining.load();
  HealthReport r;
  r.ok = failing.empty() && !draining;
  r.body = "{\"status\":";
  r.body += draining ? "\"draining\"" : r.ok ? "\"ok\"" : "\"failing\"";
  if (!failing.empty()) r.body += ",\"failing\":[" + failing + "]";
  r.body += ",\"checks\":{" + listed + "}}";
  return r;
}

}  // namespace warden::server
