// Daemon configuration (SPEC §10): warden.toml read with toml++, every key with a default,
// so `warden serve` works without a file. Errors name the key; any error stops startup.
// Plain values: build once on the main thread, then read-only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "actuators/config.h"
#include "engine/defaults.h"
#include "protocol/address.h"
#include "reasoning/config.h"

namespace warden::server {

struct Limits {
  std::size_t max_frame_bytes = 1 << 20;              // incoming frame payload, bytes
  std::size_t max_connections = 1024;                 // open client connections
  std::size_t max_connections_per_principal = 64;     // authenticated, of one principal
  std::size_t reserved_connections = 16;              // approvers, admins; <= max_connections/4
  std::chrono::milliseconds auth_timeout{5000};       // handshake to successful auth
  std::chrono::milliseconds idle_timeout{300000};     // no complete request, nothing in flight
  std::size_t max_in_flight = 64;                     // unanswered requests per connection
  std::size_t max_queue = 1024;                       // decisions waiting for a worker, in all
  std::size_t max_queue_per_principal = 256;          // decisions waiting, per principal
  long long run_limit = 10000;                        // rule firings per decision
  std::chrono::milliseconds deadline{100};            // wall time per decision
  int depth = 10;                                     // pipeline depth (SPEC §2)
  int retries = 3;                                    // reasoning retries (SPEC §2)
  std::size_t max_json_depth = 64;                    // nesting of a proposal
  std::chrono::milliseconds shutdown_timeout{10000};  // SIGTERM: finish in-flight work
};

// ---- transports and pre-auth budgets (docs/PROTOCOL.md "Transports") ----
struct UnixSocketConfig {
  bool enabled = true;               // [unix] enabled
  std::string path;                  // [unix] path; empty: STATE_DIR/warden.sock
  unsigned mode = 0600;              // [unix] mode: 0600 or 0660 (never world-accessible)
  std::vector<unsigned> allow_uids;  // [unix] allow_uids; empty: any uid may connect
};
struct TlsConfig {
  std::string cert;              // [tls] cert: PEM certificate chain; with key, TCP is TLS
  std::string key;               // [tls] key: PEM private key
  bool allow_plaintext = false;  // [tls] allow_plaintext: plain TCP on a non-loopback address
  bool enabled() const { return !cert.empty() || !key.empty(); }
};
struct PreAuthLimits {
  std::size_t max_connections = 512;   // [preauth] connections not yet authenticated, in all
  std::size_t max_per_peer = 64;       // [preauth] per peer address or uid (not loopback TCP)
  std::size_t max_frame_bytes = 4096;  // [preauth] frame limit until auth succeeds
};
// ---- end of transports ----

// [metrics]: the operations listener (server/metrics_http.h, docs/OPERATIONS.md): plain HTTP,
// GET /metrics (Prometheus) and GET /health. Off while listen is empty.
struct MetricsConfig {
  std::string listen;  // [metrics] listen: HOST:PORT (e.g. 127.0.0.1:9106); empty: off
  std::size_t max_connections = 16;  // [metrics] max_connections: more are closed unanswered
  // [metrics] timeout_ms: a request must arrive, and its answer leave, within this
  std::chrono::milliseconds timeout{5000};
  bool enabled() const { return !listen.empty(); }
};

// The most entries `[session] max_entries` may keep per session.
inline constexpr std::size_t kMaxSessionEntries = 4096;

// [session]: session memory (engine/session_memory.h), what approved decisions of a session
// did, shown to its later decisions as `history` facts.
struct SessionConfig {
  std::int64_t ttl_seconds =
      3600;  // [session] ttl_seconds: how long an effect is remembered; 0 = off
  std::size_t max_entries = 512;  // [session] max_entries: per session, oldest dropped first
  std::size_t max_sessions =
      10000;  // [session] max_sessions: in all, least recently used dropped first
  std::size_t max_bytes = 64u << 20;  // [session] max_bytes: memory for all sessions' entries
  // [session] store: where the memory lives. "memory": this daemon's process; "postgres":
  // the approvals store's PostgreSQL database, shared by the fleet and kept across restarts
  // (max_sessions and max_bytes are then each principal's share); "auto": postgres when
  // [approvals] store = "postgres", else memory.
  std::string store = "auto";
};

// [audit]: the hash-chained, signed audit log (audit/, docs/AUDIT.md). Its path is the
// top-level `audit_log`. Paths here are resolved against the config file's directory; empty
// paths get their defaults in the state directory (resolve_state_paths).
struct AuditConfig {
  bool enabled = true;                        // [audit] enabled: false = no log (status warns)
  std::string durability = "group";           // [audit] durability: fsync, group or write
  std::chrono::milliseconds group_commit{2};  // [audit] group_commit_ms: a batch waits this long
  std::uint64_t rotate_bytes = 64ull << 20;   // [audit] rotate_bytes: 0 = never
  std::int64_t rotate_seconds = 86400;        // [audit] rotate_seconds: 0 = never
  std::uint64_t checkpoint_records = 1000;    // [audit] checkpoint_records
  std::int64_t checkpoint_seconds = 60;       // [audit] checkpoint_seconds
  std::string signing_key;           // [audit] signing_key; empty: STATE_DIR/audit-signing.pem
  bool signing_key_default = false;  // set by resolve_state_paths: created (with .pub) when missing
  bool mask_secrets = true;          // [audit] mask_secrets
  std::string mask_key;              // [audit] mask_key; empty: STATE_DIR/audit-mask.key
  bool mask_key_default = false;     // set by resolve_state_paths: created when missing
  std::string daemon_id;             // [audit] daemon_id; empty: the host name, sanitized
};

// [approvals.notify]: a webhook told of approval events (server/notifier.h, docs/PROTOCOL.md
// "Notifications"). Off while neither url nor url_env is set.
struct NotifyConfig {
  std::string url;  // [approvals.notify] url: https://…, or http:// to a loopback address only
  std::string url_env;  // [approvals.notify] url_env: else the URL is read from this variable
  // [approvals.notify] events: which events are posted (default all of them)
  std::vector<std::string> events = {"created", "approved", "denied",
                                     "expired", "executed", "refused"};
  std::string format = "slack";  // [approvals.notify] format: "slack" ({"text":…}) or "json"
  std::chrono::milliseconds timeout{5000};       // [approvals.notify] timeout_ms: one attempt
  int max_attempts = 5;                          // [approvals.notify] max_attempts: per event
  std::chrono::milliseconds backoff{1000};       // [approvals.notify] backoff_ms: first retry
  std::chrono::milliseconds backoff_max{60000};  // [approvals.notify] backoff_max_ms: the cap
  std::size_t max_queue = 1000;  // [approvals.notify] max_queue: events waiting; oldest dropped
  bool enabled() const { return !url.empty() || !url_env.empty(); }
};

// [approvals]: pending approvals (approvals/store.h, docs/PROTOCOL.md "Approvals"). SQLite in
// one file (default: state_db) for one daemon; PostgreSQL for a fleet sharing approvals.
struct ApprovalsConfig {
  std::string store = "sqlite";  // [approvals] store: sqlite or postgres
  std::string path;              // [approvals] path: the SQLite file; empty: state_db
  std::string conninfo;          // [approvals] conninfo: libpq conninfo (no password here)
  std::string conninfo_env =
      "WARDEN_APPROVALS_CONNINFO";        // [approvals] conninfo_env: else read from this variable
  std::int64_t expiry_seconds = 3600;     // [approvals] expiry_seconds: rules may ask for less
  std::int64_t max_wait_seconds = 3600;   // [approvals] max_wait_seconds: longest wait_s accepted
  std::int64_t max_scope_minutes = 1440;  // [approvals] max_scope_minutes: longest scoped approval
  // [approvals] max_pending_per_principal: live pending approvals one principal may hold; an
  // approval-required decision past it is refused (E_TOO_MANY_APPROVALS), nothing stored
  std::int64_t max_pending_per_principal = 100;
  // [approvals] retain_days: closed approvals (denied, expired, executed, refused) are deleted
  // this many days after they closed
  std::int64_t retain_days = 30;
  NotifyConfig notify;  // [approvals.notify]
};

// [reasoning] and [actuators]: the perceive → reason → act pipeline behind `submit`
// (docs/REASONING.md, docs/ACTUATORS.md, docs/PIPELINE.md). Without providers, `submit`
// answers E_NO_PROVIDER; `decide` never needs them.
struct PipelineConfig {
  reasoning::ReasoningConfig
      reasoning;               // [reasoning], [[reasoning.providers]], [[reasoning.selector]]
  unsigned threads = 2;        // [reasoning] threads: pipeline runs at once
  std::size_t max_queue = 64;  // [reasoning] max_queue: submits waiting for a thread
  // [actuators], [actuators.shell|file|http]. An empty shell workspace or file root means
  // workspace_root (resolved when the daemon starts, after command-line flags).
  actuators::ActuatorsConfig actuators = default_actuators();

  static actuators::ActuatorsConfig default_actuators() {
    actuators::ActuatorsConfig a;
    a.shell.workspace.clear();
    a.file.root.clear();
    return a;
  }
};

struct Config {
  std::string source;                              // the file read, or empty for defaults only
  std::string listen = protocol::kDefaultAddress;  // HOST:PORT ([v6]:PORT); port 0 = ephemeral
  std::vector<std::string> rules;                  // empty: the shipped rule pack
  std::string tokens;             // token file; empty: refuse to start (fail closed)
  bool insecure_no_auth = false;  // command line only: no tokens, role agent for all
  // The agent's workspace and home (engine/defaults.h when not configured; never the
  // daemon's cwd). The daemon refuses to start when the workspace holds its own files.
  std::string workspace_root = kDefaultWorkspaceRoot;
  std::string home = kDefaultHome;
  std::string default_outcome = "approval-required";
  unsigned workers = 0;      // decision threads; 0 = one per core
  bool watch_rules = false;  // poll rule files and reload on change
  std::chrono::milliseconds watch_interval{2000};
  std::string log_level = "info";  // trace, debug, info, warn, error, off
  bool log_json = false;           // JSON lines on stderr
  std::string state_dir;           // empty: $XDG_STATE_HOME/warden or ~/.local/state/warden
  std::string audit_log;           // the audit log; default STATE_DIR/audit.jsonl
  std::string state_db;            // pending approvals (SQLite); default STATE_DIR/state.db
  Limits limits;
  UnixSocketConfig unix_socket;
  TlsConfig tls;
  PreAuthLimits preauth;
  MetricsConfig metrics;
  SessionConfig session;
  AuditConfig audit;
  ApprovalsConfig approvals;
  PipelineConfig pipeline;
};

// The actuators' configuration with the workspace defaults filled in: an empty shell
// workspace or file root becomes workspace_root.
actuators::ActuatorsConfig effective_actuators(const Config& config);

// The session store in effect ([session] store, "auto" resolved): "memory", "postgres", or
// "" when [session] ttl_seconds = 0 (no session memory).
std::string effective_session_store(const Config& config);

struct ConfigError {
  std::string key;  // dotted key, e.g. "limits.max_frame_bytes"; empty for syntax errors
  std::string message;
  int line = 0;  // the line of the file the value is on, when known (0: not known)
  // "warden.toml: limits.x: message", or "warden.toml:12: limits.x: message" with a line
  std::string to_text(std::string_view source) const;
};
using ConfigErrors = std::vector<ConfigError>;

// Reads TOML text over the defaults in *config. Relative paths (rules, tokens, state files)
// are resolved against base_dir when it is not empty. Unknown keys, wrong types and values
// out of range are errors; all of them are reported.
ConfigErrors parse_config(std::string_view text, std::string_view base_dir, Config* config);
ConfigErrors load_config_file(const std::string& path, Config* config);

// Checks values that may also come from the command line (listen address, outcome, ...).
ConfigErrors validate_config(const Config& config);

// Fills state_dir, audit_log and state_db defaults from the environment: state_dir is
// $XDG_STATE_HOME/warden, else $HOME/.local/state/warden (never the current directory).
// Also the audit defaults: audit.signing_key, audit.mask_key (in the state directory) and
// audit.daemon_id (the host name). An error (key "state_dir") when neither variable is an
// absolute path.
ConfigErrors resolve_state_paths(Config* config);

// Warnings about a valid but risky config (default_outcome = approve), for the log and
// `status`. Empty when there is nothing to say.
std::vector<std::string> config_warnings(const Config& config);

// What the start-up log, `status` and `health-check` say while `[actuators.shell] confine`
// is "off".
inline constexpr const char* kConfineOffWarning =
    "actuators.shell.confine is \"off\": approved shell actions run UNCONFINED, with the "
    "daemon's user, files and network; a wrong prediction of the rules is damage";

// True when `id` is a valid audit daemon id: 1-64 of A-Z a-z 0-9 . _ : -
bool valid_daemon_id(std::string_view id);
// The host name made a valid daemon id (other characters become '-'; "warden" if empty).
std::string default_daemon_id();

// HOST:PORT parsing is the clients' own (protocol/address.h).
using protocol::split_host_port;

}  // namespace warden::server
