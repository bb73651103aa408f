// `warden replay LOG… --rules DIR`: what a rule change would have done to recorded traffic
// (audit/replay.h, docs/REPLAY.md). Exit 0, or 1 with --fail-on-change / --fail-on-widening
// when such a change was found, 2 when the rules or the logs cannot be read.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/replay.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"

namespace warden::cli {
namespace {

// One line on stderr, rewritten in place: bar, count, rate and time left.
class ProgressBar {
 public:
  void update(std::uint64_t done, std::uint64_t total) {
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
    const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(kWidth - filled), '.');
    char eta[32] = "--";
    if (rate > 0 && total >= done) {
      long s = static_cast<long>(static_cast<double>(total - done) / rate);
      std::snprintf(eta, sizeof eta, "%ld:%02ld", s / 60, s % 60);
    }
    std::fprintf(stderr, "\r[%s] %3d%% %llu/%llu  %.0f records/s  ETA %s  ", bar.c_str(),
                 static_cast<int>(fraction * 100), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total), rate, eta);
    std::fflush(stderr);
  }
  void finish() {
    std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace

void register_replay_command(CLI::App& app, int* exit_code) {
  auto* cmd = app.add_subcommand(
      "replay", "Re-decide a log's recorded decisions under other rules and report what changes");
  struct Args {
    std::vector<std::string> logs;
    std::vector<std::string> rules;
    std::string workspace, home, default_outcome, format = "text";
    unsigned threads = 0;
    bool fail_on_change = false, fail_on_widening = false, no_progress = false, no_cache = false;
    std::size_t limit_changes = 0;
    long long deadline_ms = 1000;
    // -1: not given
    long long session_ttl = -1, session_max_entries = -1, session_max_sessions = -1,
              session_max_bytes = -1;
  };
  auto a = std::make_shared<Args>();
  cmd->add_option("logs", a->logs, "Audit log files (a live file brings its rotated siblings)")
      ->required();
  cmd->add_option("--rules", a->rules, "Rule files or directories to replay under")->required();
  cmd->add_option("--workspace", a->workspace, "Workspace root (default: the log's start record)");
  cmd->add_option("--home", a->home, "What ~ and $HOME mean (default: the log's start record)");
  cmd->add_option("--default-outcome", a->default_outcome,
                  "Outcome when no rule decides (default: the log's start record)")
      ->check(CLI::IsMember({"approve", "reject", "approval-required"}));
  cmd->add_option("--threads", a->threads,
                  "Worker threads, one engine each (default: the number of cores)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--format", a->format, "Output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_flag("--fail-on-change", a->fail_on_change, "Exit 1 when any outcome changed");
  cmd->add_flag("--fail-on-widening", a->fail_on_widening,
                "Exit 1 when any outcome became less strict");
  cmd->add_flag("--no-progress", a->no_progress,
                "No progress bar (there is none unless stderr is a terminal)");
  cmd->add_flag("--no-cache", a->no_cache,
                "Decide every record, even one whose inputs were already decided");
  cmd->add_option("--limit-changes", a->limit_changes,
                  "Print at most N changed records (0: all; counts stay exact)");
  // The session memory's settings; each left out keeps the start record's.
  struct SessionLimit {
    const char* name;
    long long* value;
    const char* help;
    long long max;
  };
  for (const SessionLimit& limit : {
           SessionLimit{"--session-ttl", &a->session_ttl,
                        "Session memory ttl in seconds, 0: off (default: each start record's "
                        "[session] settings)",
                        1LL << 40},
           SessionLimit{"--session-max-entries", &a->session_max_entries,
                        "Session memory entries per session (default: each start record's)",
                        1LL << 40},
           SessionLimit{"--session-max-sessions", &a->session_max_sessions,
                        "Session memory sessions in all (default: each start record's)", 1LL << 40},
           SessionLimit{"--session-max-bytes", &a->session_max_bytes,
                        "Session memory bytes in all (default: each start record's)", 1LL << 50},
       })
    cmd->add_option(limit.name, *limit.value, limit.help)->check(CLI::Range(0LL, limit.max));
  cmd->add_option("--deadline-ms", a->deadline_ms,
                  "Wall time one decision may take before it fails closed")
      ->check(CLI::Range(1LL, 600000LL))
      ->capture_default_str();
  cmd->callback([=] {
    audit::ReplayOptions o;
    o.logs = a->logs;
    o.rules = a->rules;
    if (!a->workspace.empty()) o.workspace_root = a->workspace;
    if (!a->home.empty()) o.home = a->home;
    if (!a->default_outcome.empty()) o.default_outcome = parse_outcome(a->default_outcome);
    if (a->session_ttl >= 0) o.session_ttl_seconds = a->session_ttl;
    if (a->session_max_entries >= 0)
      o.session_max_entries = static_cast<std::size_t>(a->session_max_entries);
    if (a->session_max_sessions >= 0)
      o.session_max_sessions = static_cast<std::size_t>(a->session_max_sessions);
    if (a->session_max_bytes >= 0)
      o.session_max_bytes = static_cast<std::size_t>(a->session_max_bytes);
    o.threads = a->threads;
    o.cache = !a->no_cache;
    o.deadline = std::chrono::milliseconds(a->deadline_ms);
    std::unique_ptr<ProgressBar> bar;
    if (!a->no_progress && ::isatty(STDERR_FILENO)) {
      bar = std::make_unique<ProgressBar>();
      o.progress = [&bar](std::uint64_t done, std::uint64_t total) { bar->update(done, total); };
    }
    audit::ReplayReport report;
    std::string error;
    std::vector<std::string> diagnostics;
    const bool ok = audit::run_replay(o, &report, &error, &diagnostics);
    if (bar) bar->finish();
    for (const auto& d : diagnostics) std::fprintf(stderr, "%s\n", printable(d).c_str());
    if (!ok) {
      std::fprintf(stderr, "warden: replay: %s\n", printable(error).c_str());
      *exit_code = kExitUsage;
      return;
    }
    if (a->format == "json") {
      std::printf("%s\n", json_for_terminal(audit::report_json(report, a->limit_changes)).c_str());
    } else {
      std::fputs(audit::report_text(report, a->limit_changes,
                                    [](std::string_view s) { return printable(s); })
                     .c_str(),
                 stdout);
    }
    std::fflush(stdout);
    *exit_code = kExitOk;
    if ((a->fail_on_change && report.changed > 0) || (a->fail_on_widening && report.widenings > 0))
      *exit_code = kExitRejected;
  });
}

}  // namespace warden::cli
