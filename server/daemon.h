// The daemon (`warden serve`): startup as an ordered list of named steps, each logged, with
// the matching teardown in reverse; then the I/O loop until SIGTERM/SIGINT or request_stop(),
// which stop accepting, let in-flight requests finish within limits.shutdown_timeout and
// close what is left. Also owns reloads (SIGHUP, `reload`, watched rule files).
// Threads: run() is the I/O thread; decisions on the DeciderPool; submit runs on the
// PipelineWorkers; reloads on the Reloader.
// start()/run() from one thread; request_stop()/request_reload() from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "server/asio.h"
#include "server/audit_setup.h"
#include "server/config.h"
#include "server/connections.h"
#include "server/decider_pool.h"
#include "server/pipeline_workers.h"
#include "server/reloader.h"
#include "server/server_context.h"
#include "server/store_health.h"
#include "server/submit.h"
#include "server/transport.h"

namespace warden::server {

class ApprovalService;
class Notifier;
class Listener;
class MetricsServer;
struct PipelineParts;
struct ApprovalActuators;

class Daemon {
 public:
  struct Options {
    bool handle_signals = false;   // install SIGTERM/SIGINT/SIGHUP handlers (the CLI does)
    Logger logger;                 // null: make one from config.log_level / log_json
    EngineFactory engine_factory;  // null: the real Engine (tests inject build failures)
    std::string version;           // Warden's version, for the audit log's start record
    // What `submit` runs; null: the pipeline built from [reasoning] and [actuators] (tests
    // inject runs of their own).
    PipelineRunner pipeline_runner;
    // The decisions' clock, µs since the epoch; null: the system clock (tests set the time
    // their decisions are made at, e.g. to let session memory expire).
    std::function<std::int64_t()> clock_us;
  };
  struct StartResult {
    bool ok = false;
    int exit_code = 0;  // 2: configuration, tokens or rules; 4: system (bind, threads)
    std::string step;
    std::string message;
  };

  Daemon(Config config, Options options);
  explicit Daemon(Config config) : Daemon(std::move(config), Options{}) {}
  ~Daemon();
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;

  StartResult start();
  // The I/O loop; returns 0 after a graceful shutdown.
  int run();

  void request_stop();
  void request_reload(const std::string& trigger);

  std::uint16_t port() const { return port_; }
  std::string address() const { return address_; }
  // The Unix socket's path, or empty when there is none.
  std::string unix_path() const { return unix_path_; }
  // The metrics listener's HOST:PORT (its port when metrics.listen asked for port 0), or
  // empty when it is off.
  std::string metrics_address() const { return metrics_address_; }
  ServerContext& context() { return context_; }
  const Config& config() const { return config_; }

 private:
  // What a start step that fails reports: the exit code says whose fault it is.
  struct StepError {
    int exit_code;
    std::string message;
  };
  struct Step;
  // The start steps, in start()'s order (daemon_start.cpp); each logs what it did.
  std::optional<StepError> check_config();
  std::optional<StepError> check_workspace();
  std::optional<StepError> check_confinement();
  std::optional<StepError> raise_fd_limit();
  std::optional<StepError> load_tokens();
  std::optional<StepError> load_policy();
  std::optional<StepError> make_state_dir();
  std::optional<StepError> check_own_state();
  std::optional<StepError> open_audit();
  std::optional<StepError> start_workers();
  std::optional<StepError> start_pipeline();
  std::optional<StepError> start_notifier();
  std::optional<StepError> start_approvals();
  std::optional<StepError> start_reloader();
  std::optional<StepError> open_listeners();
  std::optional<StepError> open_metrics();
  std::optional<StepError> install_signals();
  ReloadReport reload_now(const std::string& trigger);
  void wait_for_signal();
  void begin_shutdown(const std::string& reason);
  void finish_shutdown();
  void teardown();

  Config config_;
  Options options_;
  ServerContext context_;
  boost::asio::io_context io_{1};
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_;
  boost::asio::signal_set signals_{io_};
  boost::asio::steady_timer shutdown_timer_{io_};
  Connections connections_;
  std::unique_ptr<SessionHistory> sessions_;  // before pool_: the workers use it until they stop
  AuditLog audit_;  // before pool_: decisions are appended until the workers stop
  std::unique_ptr<DeciderPool> pool_;
  // After pool_: pipeline threads wait for decisions, so they stop first.
  std::unique_ptr<PipelineParts> pipeline_parts_;
  std::unique_ptr<PipelineWorkers> pipelines_;
  // After pipelines_: its waits end first when stopping. Its actuators are the pipeline's,
  // or its own when no provider is configured.
  std::unique_ptr<ApprovalActuators> approval_actuators_;
  std::unique_ptr<StoreHealth> approvals_health_;  // before approvals_: its store reports here
  std::unique_ptr<Notifier> notifier_;             // before approvals_: it posts what they record
  std::unique_ptr<ApprovalService> approvals_;
  std::unique_ptr<Reloader> reloader_;
  std::optional<boost::asio::ssl::context> tls_;
  std::vector<std::shared_ptr<Listener>> listeners_;  // TCP (plain or TLS), Unix socket
  std::shared_ptr<MetricsServer> metrics_;            // [metrics] listen; null when off
  std::string metrics_address_;
  std::uint16_t port_ = 0;
  std::string address_;
  std::string unix_path_;
  bool started_ = false;
  bool shutting_down_ = false;
  bool torn_down_ = false;
  // The audit log could not write its `stop` record (or the closing checkpoint): the run
  // ends with exit code 4, not 0.
  std::string audit_close_error_;
};

}  // namespace warden::server
