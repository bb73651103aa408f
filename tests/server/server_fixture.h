// Test support for the daemon: a temporary directory with tiny rule sets and a token file,
// an in-process Daemon on an ephemeral loopback port (its I/O loop on a thread), and
// helpers to talk to it over real sockets. Each test owns its fixture; nothing is shared.
#pragma once

#include <rapidjson/document.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "protocol/client.h"
#include "server/daemon.h"
#include "server/tokens.h"
#include "tests/server/test_tokens.h"
#include "tests/support/temp_dir.h"

namespace warden::server::testing {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Rejects shell proposals; everything else falls to the default outcome.
inline const char* kRulesA = R"CLP(
(defrule no-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell) (reason "no shell"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

// Same behaviour, different text: a different digest.
inline const char* kRulesB = R"CLP(
(defrule no-shell-b
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell-b) (reason "still no"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

inline const char* kBrokenRules = "(defrule broken (proposal (id ?id)) => (assert (decision \n";

inline const char* kShellProposal =
    R"({"target":"shell","action":"run","payload":{"command":"rm -rf /"}})";
inline const char* kReplyProposal = R"({"target":"reply","payload":{"text":"hi"}})";

// Small limits so hostile-client tests finish fast.
inline Config test_config(const TempDir& dir) {
  Config c;
  c.listen = "127.0.0.1:0";
  dir.write("rules/policy.clp", kRulesA);
  c.rules = {(dir.path() / "rules").string()};
  c.tokens = dir.write("tokens", Tokens{}.file_text());
  // The daemon reads only a token file no one else can read or change.
  fs::permissions(c.tokens, fs::perms::owner_read | fs::perms::owner_write,
                  fs::perm_options::replace);
  c.state_dir = (dir.path() / "state").string();
  c.workers = 2;
  c.log_level = std::getenv("WARDEN_TEST_LOG") ? std::getenv("WARDEN_TEST_LOG") : "off";
  c.limits.auth_timeout = 2000ms;
  c.limits.idle_timeout = 5000ms;
  // A decision's wall-time budget is not under test here: a sanitizer build under load
  // must not turn a slow decision into E_DEADLINE (tests of the deadline set their own).
  c.limits.deadline = 10000ms;
  c.limits.shutdown_timeout = 3000ms;
  c.limits.max_frame_bytes = 64 * 1024;
  return c;
}

// A daemon serving on a thread for the lifetime of the object.
class RunningDaemon {
 public:
  explicit RunningDaemon(Config config, Daemon::Options options = {})
      : daemon_(std::make_unique<Daemon>(std::move(config), std::move(options))) {
    result_ = daemon_->start();
    if (result_.ok) thread_ = std::thread([this] { exit_code_ = daemon_->run(); });
  }
  ~RunningDaemon() { stop(); }

  bool ok() const { return result_.ok; }
  const Daemon::StartResult& start_result() const { return result_; }
  std::string address() const { return daemon_->address(); }
  Daemon& daemon() { return *daemon_; }
  int stop() {
    if (thread_.joinable()) {
      daemon_->request_stop();
      thread_.join();
    }
    return exit_code_;
  }

 private:
  std::unique_ptr<Daemon> daemon_;
  Daemon::StartResult result_;
  std::thread thread_;
  int exit_code_ = -1;
};

// A logger writing text lines into *out (read it after the daemon stopped).
inline Logger capture_logger(const std::shared_ptr<std::ostringstream>& out,
                             spdlog::level::level_enum level = spdlog::level::info) {
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(*out);
  auto logger = std::make_shared<spdlog::logger>("warden-test", sink);
  logger->set_pattern("%l %v");
  logger->set_level(level);
  return logger;
}

inline rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str(), json.size());
  return doc;
}

// The error code of a reply, or "" when it is ok; no Catch assertion (any thread may call it).
inline std::string reply_code(const std::string& json) {
  auto doc = parse(json);
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("payload") ||
      !doc["payload"].IsObject()) {
    return "<not json>";
  }
  const auto& p = doc["payload"];
  if (p.HasMember("ok") && p["ok"].IsBool() && p["ok"].GetBool()) return "";
  if (!p.HasMember("error") || !p["error"].IsObject() || !p["error"].HasMember("code") ||
      !p["error"]["code"].IsString()) {
    return "<no error code>";
  }
  return p["error"]["code"].GetString();
}

// The error code of a reply, or "" when it is ok (test thread only: it checks the code).
inline std::string error_code(const std::string& json) {
  std::string code = reply_code(json);
  if (code.empty() || code == "<not json>") return code;
  // Every code the daemon sends is one of the stable codes, in the one table.
  INFO("error code " << code);
  CHECK(warden::code::is_known(code));
  return code;
}

inline std::string reply_id(const std::string& json) {
  auto doc = parse(json);
  return doc["id"].IsString() ? doc["id"].GetString() : "<non-string>";
}

inline std::string read_or_fail(Client& client, std::chrono::milliseconds timeout = 5000ms) {
  std::string payload;
  auto status = client.read_message(&payload, timeout);
  if (status != Client::ReadStatus::Ok) {
    return "<read status " + std::to_string(static_cast<int>(status)) + ">";
  }
  return payload;
}

inline std::string decide_request(const std::string& id, const std::string& proposal) {
  return make_request(id, "decide", "\"proposal\":" + proposal);
}

// Connects `client` to the daemon and authenticates it as the test agent.
inline void connect_agent(Client& client, const RunningDaemon& daemon) {
  std::string error;
  REQUIRE(client.connect(daemon.address(), 5000ms, &error));
  REQUIRE(client.authenticate(Tokens{}.agent, 5000ms, &error));
}

// Waits until pred() holds, polling state that other threads change; false when the
// generous deadline passes first (the caller REQUIREs the result, so a hang fails the test).
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds deadline = 20000ms) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

// Blocks wait() until open(); wait() gives up (false) after a generous deadline.
class Gate {
 public:
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }
  bool wait(std::chrono::milliseconds deadline = 20000ms) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, deadline, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Holds a daemon's decision worker without timing: an engine factory (Daemon::Options) that
// stops inside the next rebuild until released. Declare it before the RunningDaemon.
struct HeldRebuild {
  std::atomic<bool> hold{false};
  Gate entered, release;
  EngineFactory factory() {
    return [this](std::shared_ptr<const Policy> p, const EngineOptions& o) {
      if (hold.exchange(false)) {
        entered.open();
        release.wait();
      }
      return std::make_unique<Engine>(std::move(p), o);
    };
  }
  Daemon::Options options() {
    Daemon::Options o;
    o.engine_factory = factory();
    return o;
  }
  // The next decision rebuilds (same rules, new generation) and waits in the factory.
  void arm(RunningDaemon& d) {
    hold = true;
    d.daemon().context().policy.set(d.daemon().context().policy.get());
  }
};

// Raises the soft descriptor limit (for many-connection tests).
inline void raise_fd_limit(rlim_t want) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
    rl.rlim_cur = std::min(want, rl.rlim_max);
    setrlimit(RLIMIT_NOFILE, &rl);
  }
}

}  // namespace warden::server::testing
