// Daemon::start: the start steps in order (the table in start()), one function each; the
// teardown in reverse is Daemon::teardown (daemon.cpp).
#include "server/daemon.h"

#include <sys/resource.h>

#include <exception>
#include <filesystem>
#include <thread>
#include <vector>

#include "actuators/builtin.h"
#include "actuators/confine.h"
#include "approvals/store.h"
#include "engine/decision.h"
#include "engine/file_modes.h"
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
using tcp = asio::ip::tcp;

namespace {

EngineOptions engine_options(const Config& c) {
  EngineOptions o;
  o.workspace_root = c.workspace_root;
  o.home = c.home;
  // The daemon's own files: every decision rejects effects on them, wherever they are.
  o.own_paths = own_paths(c);
  o.default_outcome = parse_outcome(c.default_outcome).value_or(Outcome::ApprovalRequired);
  o.run_limit = c.limits.run_limit;
  o.deadline = std::chrono::duration_cast<std::chrono::microseconds>(c.limits.deadline);
  o.max_input_bytes = c.limits.max_frame_bytes;
  o.max_depth = static_cast<unsigned>(c.limits.max_json_depth);
  return o;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string join(const std::vector<FileModeProblem>& problems) {
  std::vector<std::string> parts;
  for (const auto& p : problems) parts.push_back(p.to_text());
  return join(parts);
}

std::optional<tcp::endpoint> resolve_listen(const std::string& listen, std::string* error,
                                            const std::string& key = "listen") {
  std::string host;
  std::uint16_t port = 0;
  if (!split_host_port(listen, &host, &port)) {
    *error = key + ": must be HOST:PORT, not '" + listen + "'";
    return std::nullopt;
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, port);
  asio::io_context io;
  tcp::resolver resolver(io);
  auto results = resolver.resolve(host, std::to_string(port), ec);
  if (ec || results.empty()) {
    *error = key + ": cannot resolve '" + host + "': " + ec.message();
    return std::nullopt;
  }
  return results.begin()->endpoint();
}

}  // namespace

struct Daemon::Step {
  const char* name;
  std::optional<StepError> (Daemon::*run)();
};

Daemon::StartResult Daemon::start() {
  Logger& log = context_.log;
  // In order; a step that fails tears down what the steps before it built.
  static constexpr Step kSteps[] = {
      {"config", &Daemon::check_config},
      {"workspace", &Daemon::check_workspace},
      {"confinement", &Daemon::check_confinement},
      {"fd-limit", &Daemon::raise_fd_limit},
      {"tokens", &Daemon::load_tokens},
      {"rules", &Daemon::load_policy},
      {"state-dir", &Daemon::make_state_dir},
      {"own-state", &Daemon::check_own_state},
      {"audit", &Daemon::open_audit},
      {"workers", &Daemon::start_workers},
      {"pipeline", &Daemon::start_pipeline},
      {"notify", &Daemon::start_notifier},
      {"approvals", &Daemon::start_approvals},
      {"reloader", &Daemon::start_reloader},
      {"listener", &Daemon::open_listeners},
      {"metrics", &Daemon::open_metrics},
      {"signals", &Daemon::install_signals},
  };

  work_.emplace(io_.get_executor());
  for (const Step& step : kSteps) {
    log->debug("startup step: {}", step.name);
    std::optional<StepError> error;
    try {
      error = (this->*step.run)();
    } catch (const std::exception& e) {
      error = StepError{4, e.what()};
    }
    if (error) {
      log->error("startup step '{}' failed: {}", step.name, error->message);
      teardown();
      return {false, error->exit_code, step.name, error->message};
    }
    log->info("startup step '{}' done", step.name);
  }
  started_ = true;
  log->info("warden serving on {} (protocol 1, auth {})", address_,
            context_.auth_required() ? "token" : "OFF");
  return {true, 0, {}, {}};
}

// Step "config": the configuration valid, its state paths resolved, its file's modes strict.
std::optional<Daemon::StepError> Daemon::check_config() {
  Logger& log = context_.log;
  ConfigErrors errors = validate_config(config_);
  if (errors.empty()) errors = resolve_state_paths(&config_);
  if (!errors.empty()) {
    std::string message;
    for (const auto& e : errors)
      message += (message.empty() ? "" : "; ") + e.to_text(config_.source);
    return StepError{2, message};
  }
  if (!config_.source.empty()) {
    if (auto problems = check_file_modes(config_.source); !problems.empty()) {
      return StepError{2, join(problems)};
    }
  }
  log->info("config: {}", config_.source.empty() ? "defaults (no config file)" : config_.source);
  for (const std::string& warning : config_warnings(config_)) log->warn("{}", warning);
  return std::nullopt;
}

// Step "workspace": the agent's workspace and the actuators' roots hold none of warden's files.
std::optional<Daemon::StepError> Daemon::check_workspace() {
  Logger& log = context_.log;
  // An agent approved to act in the workspace must not reach the daemon's own files.
  auto conflicts = workspace_conflicts(config_.workspace_root, own_files(config_));
  if (!conflicts.empty()) {
    return StepError{2,
                     join(conflicts) +
                         ". An agent allowed to act in its workspace could read the tokens, "
                         "rewrite the rules or replace warden: set workspace_root (--workspace) to "
                         "the agent's workspace and keep rules, tokens, config, state and the "
                         "binary outside it"};
  }
  // The actuators' own roots, when configured apart from the workspace, likewise.
  actuators::ActuatorsConfig a = effective_actuators(config_);
  for (const auto& [key, root] :
       {std::pair<const char*, std::string>{"actuators.shell.workspace", a.shell.workspace},
        {"actuators.file.root", a.file.root}}) {
    if (root == config_.workspace_root) continue;
    auto more = workspace_conflicts(root, own_files(config_));
    if (!more.empty()) {
      return StepError{2, std::string(key) + ": " + join(more) +
                              ": an actuator confined there could reach warden's own "
                              "files"};
    }
  }
  log->info("workspace {}, home {}", config_.workspace_root, config_.home);
  return std::nullopt;
}

// Step "confinement": the kernel can confine approved shell actions, unless confinement is off.
std::optional<Daemon::StepError> Daemon::check_confinement() {
  Logger& log = context_.log;
  // Approved shell actions run in their decision's envelope: fail closed on a kernel
  // that cannot build it, unless the operator turned it off in so many words.
  if (!effective_actuators(config_).shell.confine) return std::nullopt;  // warned above
  const actuators::confine::Support& s = actuators::confine::probe();
  if (!s.ok) {
    return StepError{2, std::string(actuators::confine::kUnsupported) +
                            ": the shell actuator cannot confine what it runs: " + s.error +
                            ". Set [actuators.shell] confine = \"off\" to run shell "
                            "actions unconfined (status and health-check will say so)"};
  }
  log->info("confinement: on (Landlock ABI {}, namespaces, seccomp, process cap {})",
            s.landlock_abi, s.pid_limit ? "pid_max" : "RLIMIT_NPROC");
  return std::nullopt;
}

// Step "fd-limit": the open file limit raised for limits.max_connections.
std::optional<Daemon::StepError> Daemon::raise_fd_limit() {
  Logger& log = context_.log;
  // Each connection is a descriptor; raise the soft limit as far as allowed.
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
    rlim_t want = std::min<rlim_t>(rl.rlim_max, config_.limits.max_connections + 256);
    if (want > rl.rlim_cur) {
      rl.rlim_cur = want;
      setrlimit(RLIMIT_NOFILE, &rl);
    }
  }
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < config_.limits.max_connections + 64) {
    log->warn("open file limit {} is low for limits.max_connections = {}",
              static_cast<unsigned long long>(rl.rlim_cur), config_.limits.max_connections);
  }
  return std::nullopt;
}

// Step "tokens": the token file, or authentication off when asked for in so many words.
std::optional<Daemon::StepError> Daemon::load_tokens() {
  Logger& log = context_.log;
  if (config_.tokens.empty()) {
    if (!config_.insecure_no_auth) {
      return StepError{2,
                       "no token file: give --tokens FILE (make tokens with `warden "
                       "token new`), or --insecure-no-auth to let every client in "
                       "as role agent"};
    }
    log->warn(
        "authentication is OFF (--insecure-no-auth): every connection is "
        "principal 'anonymous' with role agent");
    return std::nullopt;
  }
  auto store = std::make_shared<TokenStore>();
  std::vector<std::string> errors;
  if (!TokenStore::load(config_.tokens, store.get(), &errors)) {
    return StepError{2, join(errors)};
  }
  if (store->size() == 0 && !config_.insecure_no_auth) {
    log->warn("token file {} has no tokens: no client can authenticate", config_.tokens);
  }
  log->info("tokens: {} from {}", store->size(), config_.tokens);
  context_.set_tokens(std::move(store));
  return std::nullopt;
}

// Step "rules": the rules, through the one load path; their diagnostics logged.
std::optional<Daemon::StepError> Daemon::load_policy() {
  Logger& log = context_.log;
  auto paths = effective_rule_paths(config_.rules);
  LoadedPolicy loaded = load_rules(config_.rules);
  for (const Diagnostic& d : loaded.diagnostics) {
    if (d.severity == Severity::Error) {
      log->error("{}", d.to_text());
    } else {
      log->warn("{}", d.to_text());
    }
  }
  if (!loaded.policy) {
    std::string where;
    for (const auto& p : paths) where += (where.empty() ? "" : ", ") + p;
    std::vector<std::string> errors;
    for (const Diagnostic& d : loaded.diagnostics) {
      if (d.severity == Severity::Error && errors.size() < 5) errors.push_back(d.to_text());
    }
    return StepError{2, "rules in " + where + " have errors: " + join(errors)};
  }
  context_.policy.set(loaded.policy);
  context_.stats.rules.loaded(loaded.policy->rule_names());
  log->info("rules: {} rules, {}", loaded.policy->rule_count(), loaded.policy->digest());
  return std::nullopt;
}

// Step "state-dir": the state directory, created 0700 and checked.
std::optional<Daemon::StepError> Daemon::make_state_dir() {
  Logger& log = context_.log;
  std::error_code ec;
  std::filesystem::create_directories(config_.state_dir, ec);
  if (ec) {
    return StepError{2, "state_dir: cannot create " + config_.state_dir + ": " + ec.message()};
  }
  std::filesystem::permissions(config_.state_dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, ec);
  if (auto problems = check_file_modes(config_.state_dir); !problems.empty()) {
    return StepError{2, "state_dir: " + join(problems)};
  }
  log->info("state directory {}", config_.state_dir);
  return std::nullopt;
}

// Step "own-state": nobody else can change the approvals database, the audit directory or the keys.
std::optional<Daemon::StepError> Daemon::check_own_state() {
  // Whoever could change the approvals database could grant their own actions; the
  // audit directory, forge the record; the keys, impersonate the daemon.
  Diagnostics problems = own_state_problems(config_, /*audit_keys=*/false);
  if (!problems.empty()) {
    std::vector<std::string> parts;
    for (const Diagnostic& d : problems) parts.push_back(d.to_text());
    return StepError{2, join(parts)};
  }
  return std::nullopt;
}

// Step "audit": the audit log opened (server/audit_setup.h), its start record written.
std::optional<Daemon::StepError> Daemon::open_audit() {
  Logger& log = context_.log;
  if (!config_.audit.enabled) {
    log->warn("audit.enabled is false: decisions are not recorded");
    return std::nullopt;
  }
  AuditStart start;
  start.version = options_.version;
  auto policy = context_.policy.get();
  start.rules_digest = policy ? policy->digest() : "";
  std::vector<std::string> notes;
  std::string error = open_audit_log(config_, start, &audit_, &notes);
  for (const std::string& note : notes) log->info("{}", note);
  if (!error.empty()) return StepError{2, error};
  context_.audit = audit_.writer.get();
  context_.masker = audit_.masker.get();
  audit::WriterHealth health = audit_.writer->health();
  log->info("audit log {} (daemon {}, {} durability, key {}, seq {}{})", config_.audit_log,
            config_.audit.daemon_id, config_.audit.durability, audit_.key_id, health.last_seq,
            config_.audit.mask_secrets ? ", secrets masked" : ", secrets NOT masked");
  return std::nullopt;
}

// Step "workers": the session store and the decision workers.
std::optional<Daemon::StepError> Daemon::start_workers() {
  Logger& log = context_.log;
  unsigned n =
      config_.workers ? config_.workers : std::max(1u, std::thread::hardware_concurrency());
  PoolOptions pool;
  pool.workers = n;
  pool.max_queue = config_.limits.max_queue;
  pool.max_queue_per_principal = config_.limits.max_queue_per_principal;
  pool.engine_factory = options_.engine_factory;
  if (options_.clock_us) pool.clock_us = options_.clock_us;
  // [session] store: this process, or the approvals store's PostgreSQL (a fleet),
  // before the workers that use it start.
  try {
    sessions_ = open_session_history(config_, n, context_.log, options_.clock_us);
  } catch (const SessionHistoryError& e) {
    return StepError{4, e.what()};
  }
  context_.sessions = sessions_.get();
  if (sessions_ && sessions_->kind() == "postgres") {
    log->info(
        "session memory in PostgreSQL (ttl {} s, {} entries per session, {} "
        "sessions and {} bytes per principal)",
        config_.session.ttl_seconds, config_.session.max_entries, config_.session.max_sessions,
        config_.session.max_bytes);
  }
  pool.sessions = sessions_.get();
  pool_ =
      std::make_unique<DeciderPool>(context_.policy, engine_options(config_), pool, context_.log);
  context_.pool = pool_.get();
  if (std::string error = pool_->start(); !error.empty()) return StepError{4, error};
  log->info("{} decision workers", n);
  return std::nullopt;
}

// Step "pipeline": the pipeline behind submit, and its threads.
std::optional<Daemon::StepError> Daemon::start_pipeline() {
  Logger& log = context_.log;
  PipelineRunner runner = options_.pipeline_runner;
  if (!runner) {
    std::string error = build_pipeline(config_, context_, &pipeline_parts_, &runner);
    if (!error.empty()) return StepError{2, error};
  }
  if (!runner) {
    log->info("no model provider configured ([[reasoning.providers]]): submit answers {}",
              err::kNoProvider);
    return std::nullopt;
  }
  pipelines_ = std::make_unique<PipelineWorkers>(config_.pipeline.threads,
                                                 config_.pipeline.max_queue, context_.log);
  if (std::string error = pipelines_->start(); !error.empty()) return StepError{4, error};
  context_.pipelines = pipelines_.get();
  context_.run_pipeline = std::move(runner);
  log->info("{} pipeline threads (submit)", config_.pipeline.threads);
  return std::nullopt;
}

// Step "notify": the approval webhook ([approvals.notify]).
std::optional<Daemon::StepError> Daemon::start_notifier() {
  Logger& log = context_.log;
  // Before the approvals: what they record from the start (interrupted approvals
  // refused as they start) is posted too.
  const NotifyConfig& nc = config_.approvals.notify;
  if (!nc.enabled()) return std::nullopt;
  std::string url = nc.url;
  if (url.empty()) {
    const char* value = std::getenv(nc.url_env.c_str());
    if (!value || !*value) {
      return StepError{2, "approvals.notify.url_env: $" + nc.url_env +
                              " is not set: it must hold the webhook URL"};
    }
    url = value;
    // The value is not repeated: a chat webhook URL is a credential.
    if (std::string problem = notify_url_problem(url); !problem.empty()) {
      return StepError{2, "approvals.notify.url_env: the URL in $" + nc.url_env + " " + problem};
    }
  }
  notifier_ =
      std::make_unique<Notifier>(nc, url, context_.log, context_.masker, config_.audit.daemon_id);
  if (std::string error = notifier_->start(); !error.empty()) return StepError{4, error};
  context_.notifier = notifier_.get();
  std::string events;
  for (const std::string& e : nc.events) events += (events.empty() ? "" : ",") + e;
  log->info("approvals: events {} are posted to {} ({} format, {} attempts)", events,
            notifier_->where(), nc.format, nc.max_attempts);
  return std::nullopt;
}

// Step "approvals": the approvals store and service; what revoked tokens asked for cancelled.
std::optional<Daemon::StepError> Daemon::start_approvals() {
  Logger& log = context_.log;
  const ApprovalsConfig& ac = config_.approvals;
  std::unique_ptr<approvals::Store> store;
  std::string where;
  try {
    if (ac.store == "postgres") {
      std::string conninfo = ac.conninfo;
      if (conninfo.empty()) {
        const char* value = std::getenv(ac.conninfo_env.c_str());
        if (!value || !*value) {
          return StepError{
              2, "approvals.store is postgres: set approvals.conninfo or $" + ac.conninfo_env};
        }
        conninfo = value;
      }
      store = approvals::open_postgres(conninfo);
      where = "PostgreSQL";
    } else {
      where = ac.path.empty() ? config_.state_db : ac.path;
      std::error_code ec;
      std::filesystem::create_directories(std::filesystem::path(where).parent_path(), ec);
      store = approvals::open_sqlite(where);
    }
  } catch (const std::exception& e) {
    return StepError{4, std::string("approvals store: ") + e.what()};
  }
  actuators::Registry* registry = pipeline_parts_ ? &pipeline_parts_->actuators : nullptr;
  if (!registry) {
    approval_actuators_ = std::make_unique<ApprovalActuators>();
    actuators::add_builtin_tools(approval_actuators_->tools);
    actuators::register_builtin(
        approval_actuators_->actuators, effective_actuators(config_), &approval_actuators_->tools,
        [log](std::string_view line) { log->info("actuator: {}", log_text(line)); });
    registry = &approval_actuators_->actuators;
  }
  // Every store call's outcome is noted: health-check and status report a failing
  // store, and the log says when it starts failing and when it recovers.
  approvals_health_ = std::make_unique<StoreHealth>(context_.log);
  store = monitored_store(std::move(store), approvals_health_.get());
  context_.approvals_health = approvals_health_.get();
  approvals_ = std::make_unique<ApprovalService>(context_, std::move(store), registry);
  if (std::string error = approvals_->start(); !error.empty()) return StepError{4, error};
  context_.approvals = approvals_.get();
  // Started with a token file: what a token no longer in it asked for is cancelled
  // (it may have been removed while the daemon was down).
  if (!config_.tokens.empty()) {
    try {
      if (std::size_t n = approvals_->revoke_missing_tokens()) {
        log->warn("approvals: {} pending approval(s) of tokens no longer in {} cancelled", n,
                  config_.tokens);
      }
    } catch (const std::exception& e) {
      // Each is still refused when someone approves it, and its grants when used.
      log->error("approvals: the approvals of revoked tokens cannot be cancelled now: {}",
                 e.what());
    }
  }
  log->info("approvals: {} store {} (expiry {} s)", ac.store, where, ac.expiry_seconds);
  return std::nullopt;
}

// Step "reloader": the reloader, watching the rule files when asked to.
std::optional<Daemon::StepError> Daemon::start_reloader() {
  Logger& log = context_.log;
  Reloader::FingerprintFn fingerprint;
  if (config_.watch_rules) {
    std::vector<std::string> extra;
    if (!config_.tokens.empty()) extra.push_back(config_.tokens);
    fingerprint = [rules = config_.rules, extra] { return files_fingerprint(rules, extra); };
    log->info("watching rule files every {} ms", config_.watch_interval.count());
  }
  reloader_ =
      std::make_unique<Reloader>([this](const std::string& trigger) { return reload_now(trigger); },
                                 std::move(fingerprint), config_.watch_interval, context_.log);
  context_.reloader = reloader_.get();
  reloader_->start();
  return std::nullopt;
}

// Step "listener": the TCP (plain or TLS) and Unix socket listeners.
std::optional<Daemon::StepError> Daemon::open_listeners() {
  Logger& log = context_.log;
  std::string error;
  auto endpoint = resolve_listen(config_.listen, &error);
  if (!endpoint) return StepError{2, error};
  if (error = check_tcp_exposure(config_, *endpoint, log); !error.empty()) {
    return StepError{2, error};
  }
  if (config_.tls.enabled()) {
    tls_.emplace(asio::ssl::context::tls_server);
    if (error = make_server_tls(config_.tls, &*tls_); !error.empty()) {
      return StepError{2, error};
    }
  }
  auto tcp_listener = std::make_shared<Listener>(io_, context_, connections_);
  if (error = tcp_listener->open_tcp(*endpoint, tls_ ? &*tls_ : nullptr); !error.empty()) {
    return StepError{4, error};
  }
  listeners_.push_back(tcp_listener);
  auto bound = tcp_listener->local_endpoint();
  port_ = bound.port();
  address_ = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                     : bound.address().to_string();
  address_ += ":" + std::to_string(port_);
  log->info("listening on {} ({})", address_, tls_ ? "TLS" : "plain TCP");
  if (config_.unix_socket.enabled) {
    // The default socket (in the state directory) never stops startup; one that was
    // asked for does.
    bool defaulted = config_.unix_socket.path.empty();
    std::string path = defaulted
                           ? (std::filesystem::path(config_.state_dir) / "warden.sock").string()
                           : config_.unix_socket.path;
    auto unix_listener = std::make_shared<Listener>(io_, context_, connections_);
    error =
        unix_listener->open_unix(path, config_.unix_socket.mode, config_.unix_socket.allow_uids);
    if (error.empty()) {
      unix_path_ = path;
      listeners_.push_back(unix_listener);
      log->info("listening on unix:{} (mode {:o})", path, config_.unix_socket.mode);
    } else if (defaulted) {
      log->warn("no Unix socket: {}", error);
    } else {
      return StepError{2, error};
    }
  }
  for (auto& listener : listeners_) listener->start();
  return std::nullopt;
}

// Step "metrics": the metrics listener ([metrics] listen).
std::optional<Daemon::StepError> Daemon::open_metrics() {
  Logger& log = context_.log;
  if (!config_.metrics.enabled()) return std::nullopt;
  std::string error;
  auto endpoint = resolve_listen(config_.metrics.listen, &error, "metrics.listen");
  if (!endpoint) return StepError{2, error};
  metrics_ = std::make_shared<MetricsServer>(io_, context_, config_.metrics);
  if (error = metrics_->open(*endpoint); !error.empty()) return StepError{4, error};
  auto bound = metrics_->local_endpoint();
  metrics_address_ = bound.address().is_v6() ? "[" + bound.address().to_string() + "]"
                                             : bound.address().to_string();
  metrics_address_ += ":" + std::to_string(bound.port());
  if (!bound.address().is_loopback()) {
    // Nothing secret is served, but the counters say how busy the daemon is.
    log->warn(
        "metrics on {}, not a loopback address: anyone who can reach it can "
        "read the daemon's counters and health (plain HTTP)",
        metrics_address_);
  }
  metrics_->start();
  log->info("metrics on http://{}/metrics and /health", metrics_address_);
  return std::nullopt;
}

// Step "signals": SIGTERM, SIGINT and SIGHUP handled, SIGPIPE ignored (when asked to).
std::optional<Daemon::StepError> Daemon::install_signals() {
  if (options_.handle_signals) {
    signals_.add(SIGTERM);
    signals_.add(SIGINT);
    signals_.add(SIGHUP);
    std::signal(SIGPIPE, SIG_IGN);
    wait_for_signal();
  }
  return std::nullopt;
}

}  // namespace warden::server
