// What the metrics listener (server/metrics_http.h) answers: the daemon's counters in the
// Prometheus text exposition format 0.0.4 (GET /metrics) and whether it can decide
// (GET /health). Built from the ServerContext on the I/O thread; reads only in-memory state
// (atomics and short locks), never a store or a file. Carries no secrets: no principal,
// session, token or payload appears, and every label takes values from a bounded set
// (outcomes, modes, stable error codes, the names of the rules loaded since start, the
// parts /health checks, the listener's status codes). docs/OPERATIONS.md lists every metric.
#pragma once

#include <string>

#include "server/server_context.h"

namespace warden::server {

// Prometheus' content type for metrics_text().
inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string metrics_text(const ServerContext& ctx);

// Whether the daemon can decide now: rules in force (and a worker that can build them), the
// audit log writable (when on), the approvals store and the session store answering (when
// there are), not shutting down. body is one JSON object:
//   {"status":"ok","checks":{"rules":"ok","workers":"ok","audit":"ok","approvals":"ok","sessions":"off"}}
//   {"status":"failing","failing":["audit"],"checks":{…,"audit":"failing",…}}
// ("draining" instead of "failing" while the daemon shuts down). Only the names of the failing
// parts: the causes are in the daemon's log and the `status` request.
struct HealthReport {
  bool ok = false;
  std::string body;
};
HealthReport health_report(const ServerContext& ctx);

// A label value in the exposition format: \ " and newline escaped.
std::string prometheus_label_value(std::string_view value);

}  // namespace warden::server
