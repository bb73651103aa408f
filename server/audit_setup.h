// The daemon's side of the audit log (audit/, docs/AUDIT.md): opening it at start — the
// signing and mask keys created when their default paths are missing, checked like the
// token file (0600/0400), the start record's fields — and the fields of the reload record.
// Called by Daemon::start and Daemon::reload_now; the Writer itself is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "audit/mask.h"
#include "audit/writer.h"
#include "server/config.h"
#include "server/server_context.h"

namespace warden::server {

struct AuditLog {
  std::unique_ptr<audit::Writer> writer;
  std::unique_ptr<audit::Masker> masker;  // null when audit.mask_secrets is false
  std::string key_id;                     // "ed25519:…" of the signing key
};

struct AuditStart {
  std::string version;       // Warden's version ("" when unknown)
  std::string rules_digest;  // the rules in force at start
};

// Opens the log for config (audit.enabled true, state paths resolved): creates the default
// signing key (and KEY.pub beside it) and the default mask key when missing, refuses an
// explicitly configured key that is missing, checks the key files' owner and mode, then
// audit::Writer::open with the start record's fields. Returns "" with *out filled, or the
// cause naming the key or file. *notes gets lines for the daemon's log (keys created).
std::string open_audit_log(const Config& config, const AuditStart& start, AuditLog* out,
                           std::vector<std::string>* notes);

// The start record's FIELDS (docs/AUDIT.md): version, pid, rules_digest, workspace_root,
// home, default_outcome, key_id, every_records, every_seconds, session (the [session] config:
// ttl_seconds, max_entries, max_sessions, max_bytes).
std::string audit_start_fields(const Config& config, const AuditStart& start,
                               const std::string& key_id);

// The reload record's FIELDS: rules_digest, previous_digest, by (what asked for the reload).
std::string audit_reload_fields(const std::string& rules_digest, const std::string& previous_digest,
                                const std::string& by);

// Logs that an audit record of `kind` ("decision", "act" …) could not be written, at error
// level and throttled (ServerContext::audit_failures): every such decision fails closed with
// E_AUDIT, and the operator must hear of it in the daemon's log, not only from agents.
void log_audit_failure(ServerContext& ctx, std::string_view kind, const std::string& error);

// The wall clock in microseconds since the epoch (a decision's time in the log).
std::int64_t audit_now_us();

}  // namespace warden::server
