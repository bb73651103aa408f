// The daemon's own files: the workspace may not hold rules, tokens, config, state or the
// binary; files and directories others could change are refused at start and at every
// reload (strict modes); the quick-start defaults never point into the current directory.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>

#include "engine/defaults.h"
#include "engine/file_modes.h"
#include "engine/rule_files.h"
#include "server/errors.h"
#include "server/own_files.h"
#include "server_fixture.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;

namespace {

void chmod_or_fail(const fs::path& path, mode_t mode) { REQUIRE(::chmod(path.c_str(), mode) == 0); }

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A policy whose trusted uid is not the owner of files this process creates: as root, files
// are handed to uid 65534 (nobody); otherwise the policy trusts another uid than ours.
struct ForeignOwner {
  FileModePolicy policy;
  uid_t owner;
  explicit ForeignOwner(const fs::path& file) {
    if (::geteuid() == 0) {
      REQUIRE(::chown(file.c_str(), 65534, static_cast<gid_t>(-1)) == 0);
      owner = 65534;
    } else {
      policy.trusted_uid = ::geteuid() + 1;
      owner = ::geteuid();
    }
  }
};

// Runs the real `warden` with the arguments (and shell redirections) in `cwd`; returns the
// exit code, stderr in *err.
// `timeout` bounds a daemon that would otherwise keep serving.
int files_run_warden(const fs::path& cwd, const std::string& args, std::string* err) {
  const fs::path err_file = cwd / "warden.err";
  std::string command = "cd '" + cwd.string() +
                        "' && timeout 30 '" WARDEN_BINARY_DIR "/cli/warden' " + args +
                        " </dev/null 2>'" + err_file.string() + "'";
  int status = std::system(command.c_str());
  std::ifstream in(err_file);
  std::stringstream text;
  text << in.rdbuf();
  *err = text.str();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Daemon::StartResult start_result(const Config& config) {
  RunningDaemon d(config);
  return d.start_result();
}

}  // namespace

// ---- the workspace holds none of the daemon's files ------------------------------------

TEST_CASE("the daemon refuses a workspace that holds its own files", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);  // rules, tokens and state all under dir

  SECTION("the workspace contains rules, tokens and state") {
    config.workspace_root = dir.path().string();
    auto r = start_result(config);
    CHECK_FALSE(r.ok);
    CHECK(r.step == "workspace");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, "contains the rules directory " + config.rules[0]));
    CHECK(mentions(r.message, "contains the token file " + config.tokens));
    CHECK(mentions(r.message, "contains the state directory " + config.state_dir));
  }
  SECTION("the workspace contains only the token file") {
    fs::create_directories(dir.path() / "ws");
    config.tokens = dir.write("ws/tokens", Tokens{}.file_text());
    chmod_or_fail(config.tokens, 0600);
    config.workspace_root = (dir.path() / "ws").string();
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, "contains the token file"));
    CHECK_FALSE(mentions(r.message, "rules directory"));
  }
  SECTION("the workspace is the rules directory") {
    config.workspace_root = config.rules[0];
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(mentions(r.message, "is the rules directory"));
  }
  SECTION("the workspace lies inside the rules directory") {
    fs::create_directories(dir.path() / "rules/agent");
    config.workspace_root = (dir.path() / "rules/agent").string();
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(mentions(r.message, "lies inside the rules directory"));
  }
  SECTION("the workspace contains the config file") {
    fs::create_directories(dir.path() / "ws");
    config.source = dir.write("ws/warden.toml", "");
    config.workspace_root = (dir.path() / "ws").string();
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(mentions(r.message, "contains the config file"));
  }
  SECTION("the workspace contains the running binary") {
    std::string exe = own_binary_path();
    REQUIRE_FALSE(exe.empty());
    config.workspace_root = fs::path(exe).parent_path().string();
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(mentions(r.message, "contains the warden binary " + exe));
  }
  SECTION("the workspace is / ") {
    config.workspace_root = "/";
    auto r = start_result(config);
    CHECK(r.step == "workspace");
  }
  SECTION("a symlinked workspace is compared where it leads") {
    TempDir other;
    fs::create_symlink(dir.path(), other.path() / "ws");
    config.workspace_root = (other.path() / "ws").string();
    auto r = start_result(config);
    CHECK(r.step == "workspace");
    CHECK(mentions(r.message, "contains the token file"));
  }
  SECTION("a workspace beside the daemon's files, or inside its state directory, is fine") {
    fs::create_directories(dir.path() / "ws");
    config.workspace_root = (dir.path() / "ws").string();
    CHECK(start_result(config).ok);
    config.workspace_root = (dir.path() / "state/workspace").string();
    CHECK(start_result(config).ok);
  }
}

TEST_CASE("workspace_conflicts compares whole path components", "[server][files]") {
  std::vector<OwnFile> files{{"token file", "/srv/wardenx/tokens", false},
                             {"rules directory", "/srv/rules", true}};
  CHECK(workspace_conflicts("/srv/warden", files).empty());
  CHECK(workspace_conflicts("/srv/rules2", files).empty());
  CHECK(workspace_conflicts("/srv/wardenx/", files).size() == 1);
  CHECK(workspace_conflicts("/srv/rules/x/..", files).size() == 1);
  CHECK(workspace_conflicts("/srv", files).size() == 2);
}

TEST_CASE("warden serve has no workspace or state in the current directory", "[server][files]") {
  // The old defaults made the directory `serve` starts in the agent's workspace and put the
  // state (tokens of the quick start) in ./.warden.
  Config defaults;
  CHECK(defaults.workspace_root == kDefaultWorkspaceRoot);
  CHECK(defaults.home == kDefaultHome);
  CHECK(EngineOptions{}.workspace_root == kDefaultWorkspaceRoot);
  CHECK(EngineOptions{}.home == kDefaultHome);

  TempDir dir;
  Config config = test_config(dir);
  std::string err;
  // Started in the directory holding the rules and tokens: the workspace is not that
  // directory, so startup gets past the workspace check (and stops at the listener, the
  // last step: 192.0.2.1 is a documentation address no host has, in plain TCP).
  int code =
      files_run_warden(dir.path(),
                       "serve --listen 192.0.2.1:0 --rules rules --tokens tokens --state-dir state"
                       " --log-level info >/dev/null",
                       &err);
  INFO(err);
  CHECK(code != 0);
  CHECK(mentions(err, std::string("workspace ") + kDefaultWorkspaceRoot));
  CHECK(mentions(err, "cannot start (listener)"));

  // Asked for the workspace that holds them, it refuses with exit 2 and names the file.
  code =
      files_run_warden(dir.path(),
                       "serve --listen 127.0.0.1:0 --rules rules --tokens tokens --state-dir state"
                       " --workspace " +
                           dir.path().string() + " >/dev/null",
                       &err);
  CHECK(code == 2);
  CHECK(mentions(err, "cannot start (workspace)"));
  CHECK(mentions(err, "contains the token file"));
}

TEST_CASE("warden dry-run judges paths with the same workspace and home as serve",
          "[server][files]") {
  // dry-run used the current directory and $HOME; serve, test and the engine each had their
  // own defaults. Now all of them take engine/defaults.h.
  TempDir dir;
  const std::string in_cwd = (dir.path() / "a.txt").string();
  dir.write(
      "proposals.jsonl",
      R"({"target":"file","action":"read","payload":{"path":")" + in_cwd +
          R"("},"explanation":"x"})"
          "\n" +
          R"({"target":"file","action":"read","payload":{"path":")" + kDefaultWorkspaceRoot +
          R"(/a.txt"},"explanation":"x"})"
          "\n" +
          R"({"target":"file","action":"read","payload":{"path":"~/b.txt"},"explanation":"x"})"
          "\n");
  const fs::path out = dir.path() / "out.jsonl";
  std::string err;
  files_run_warden(dir.path(), "dry-run --explain proposals.jsonl >'" + out.string() + "'", &err);
  INFO(err);
  std::ifstream in(out);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  REQUIRE(lines.size() == 3);
  CHECK(mentions(lines[0], "(in-workspace FALSE)"));
  CHECK(mentions(lines[1], "(in-workspace TRUE)"));
  CHECK(mentions(lines[2], std::string("(normalized \\\"") + kDefaultHome + "/b.txt\\\")"));
}

TEST_CASE("the state directory defaults outside the current directory", "[server][files]") {
  const char* old_xdg = std::getenv("XDG_STATE_HOME");
  const char* old_home = std::getenv("HOME");
  std::string saved_xdg = old_xdg ? old_xdg : "";
  std::string saved_home = old_home ? old_home : "";

  ::setenv("XDG_STATE_HOME", "/xdg/state", 1);
  Config a;
  CHECK(resolve_state_paths(&a).empty());
  CHECK(a.state_dir == "/xdg/state/warden");
  CHECK(a.audit_log == "/xdg/state/warden/audit.jsonl");

  ::unsetenv("XDG_STATE_HOME");
  ::setenv("HOME", "/home/op", 1);
  Config b;
  CHECK(resolve_state_paths(&b).empty());
  CHECK(b.state_dir == "/home/op/.local/state/warden");

  ::setenv("HOME", "relative", 1);
  Config c;
  auto errors = resolve_state_paths(&c);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "state_dir");

  if (old_xdg)
    ::setenv("XDG_STATE_HOME", saved_xdg.c_str(), 1);
  else
    ::unsetenv("XDG_STATE_HOME");
  if (old_home)
    ::setenv("HOME", saved_home.c_str(), 1);
  else
    ::unsetenv("HOME");
}

// ---- strict modes ------------------------------------------------------------------------

TEST_CASE("file modes: writable by others, foreign-owned, readable secrets", "[server][files]") {
  TempDir dir;  // mkdtemp: 0700, under the sticky /tmp
  std::string file = dir.write("f.clp", "x");
  chmod_or_fail(file, 0644);
  CHECK(check_file_modes(file).empty());

  chmod_or_fail(file, 0664);
  auto problems = check_file_modes(file);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == file);
  CHECK(mentions(problems[0].message, "mode 0664 is group-writable"));

  chmod_or_fail(file, 0646);
  problems = check_file_modes(file);
  REQUIRE(problems.size() == 1);
  CHECK(mentions(problems[0].message, "mode 0646 is world-writable"));

  // A secret must be readable by its owner only.
  chmod_or_fail(file, 0640);
  FileModePolicy secret;
  secret.private_file = true;
  problems = check_file_modes(file, secret);
  REQUIRE(problems.size() == 1);
  CHECK(mentions(problems[0].message, "mode 0640 lets others read it"));
  chmod_or_fail(file, 0600);
  CHECK(check_file_modes(file, secret).empty());

  // A directory above that others may write (and that is not sticky) is refused.
  chmod_or_fail(dir.path(), 0777);
  problems = check_file_modes(file);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == dir.path().string());
  CHECK(mentions(problems[0].message, "mode 0777 is group- and world-writable"));
  // A sticky one (like /tmp) is accepted: nobody else can rename or delete our entries.
  chmod_or_fail(dir.path(), 01777);
  CHECK(check_file_modes(file).empty());
  chmod_or_fail(dir.path(), 0700);

  ForeignOwner foreign(file);
  problems = check_file_modes(file, foreign.policy);
  REQUIRE_FALSE(problems.empty());
  CHECK(problems[0].path == file);
  CHECK(mentions(problems[0].message, "owned by uid " + std::to_string(foreign.owner)));

  // A missing file is the loader's business, not a mode problem.
  CHECK(check_file_modes((dir.path() / "missing").string()).empty());
}

TEST_CASE("tree modes: every directory and rule file below a rules directory", "[server][files]") {
  TempDir dir;
  dir.write("rules/a.clp", "x");
  dir.write("rules/sub/b.clp", "x");
  dir.write("rules/sub/notes.txt", "x");
  const std::string rules = (dir.path() / "rules").string();
  for (const char* p : {"rules", "rules/sub"}) chmod_or_fail(dir.path() / p, 0755);
  for (const char* p : {"rules/a.clp", "rules/sub/b.clp"}) chmod_or_fail(dir.path() / p, 0644);
  CHECK(check_tree_modes(rules, {".clp"}).empty());

  chmod_or_fail(dir.path() / "rules/sub/notes.txt", 0666);  // not a rule file: not read
  CHECK(check_tree_modes(rules, {".clp"}).empty());

  // Inside a rules directory even a sticky directory is refused: anyone may add a file.
  chmod_or_fail(dir.path() / "rules/sub", 01777);
  auto problems = check_tree_modes(rules, {".clp"});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == (dir.path() / "rules/sub").string());
  chmod_or_fail(dir.path() / "rules/sub", 0755);

  chmod_or_fail(dir.path() / "rules/sub/b.clp", 0666);
  problems = check_tree_modes(rules, {".clp"});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == (dir.path() / "rules/sub/b.clp").string());
  chmod_or_fail(dir.path() / "rules/sub/b.clp", 0644);

  // A linked rule file is checked where it leads, with every directory above that.
  TempDir elsewhere;
  std::string target = elsewhere.write("open/evil.clp", "x");
  chmod_or_fail(target, 0644);
  chmod_or_fail(elsewhere.path() / "open", 0777);
  fs::create_symlink(target, dir.path() / "rules/linked.clp");
  problems = check_tree_modes(rules, {".clp"});
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].path == (elsewhere.path() / "open").string());
}

TEST_CASE("load_policy refuses rule files others could change only when asked", "[server][files]") {
  TempDir dir;
  std::string file = dir.write("rules/policy.clp", kRulesA);
  chmod_or_fail(file, 0666);
  const std::vector<std::string> paths{(dir.path() / "rules").string()};

  LoadedPolicy author = load_policy(paths);  // warden check / dry-run / test
  CHECK(author.policy);
  CHECK(author.files == 1);

  RuleLoadOptions strict;
  strict.check_modes = true;
  LoadedPolicy daemon = load_policy(paths, strict);
  CHECK_FALSE(daemon.policy);
  REQUIRE(daemon.diagnostics.size() == 1);
  CHECK(daemon.diagnostics[0].code == code::kFileMode);
  CHECK(daemon.diagnostics[0].file == file);
  CHECK(mentions(daemon.diagnostics[0].message, "0666"));
}

TEST_CASE("the daemon refuses to start on files others could change", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);

  SECTION("a world-writable rules directory") {
    chmod_or_fail(config.rules[0], 0777);
    auto r = start_result(config);
    CHECK(r.step == "rules");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, "E_FILE_MODE"));
    CHECK(mentions(r.message, config.rules[0]));
    CHECK(mentions(r.message, "0777"));
  }
  SECTION("a group-writable rule file") {
    chmod_or_fail(dir.path() / "rules/policy.clp", 0664);
    auto r = start_result(config);
    CHECK(r.step == "rules");
    CHECK(mentions(r.message, (dir.path() / "rules/policy.clp").string()));
  }
  SECTION("a token file others can read") {
    chmod_or_fail(config.tokens, 0644);
    auto r = start_result(config);
    CHECK(r.step == "tokens");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, config.tokens + ": mode 0644 lets others read it"));
  }
  SECTION("a token file others can write") {
    chmod_or_fail(config.tokens, 0622);
    auto r = start_result(config);
    CHECK(r.step == "tokens");
    CHECK(mentions(r.message, "mode 0622 is group- and world-writable"));
  }
  SECTION("a config file others can write") {
    config.source = dir.write("warden.toml", "");
    chmod_or_fail(config.source, 0666);
    auto r = start_result(config);
    CHECK(r.step == "config");
    CHECK(mentions(r.message, config.source + ": mode 0666"));
  }
  SECTION("a world-writable directory above everything") {
    chmod_or_fail(dir.path(), 0777);
    auto r = start_result(config);
    CHECK_FALSE(r.ok);
    CHECK(mentions(r.message, dir.path().string() + ": mode 0777"));
    chmod_or_fail(dir.path(), 0700);
  }
}

TEST_CASE("the daemon refuses to start on state others could change", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);
  const fs::path state = dir.path() / "state";
  fs::create_directories(state);
  chmod_or_fail(state, 0700);
  const std::string db = (state / "state.db").string();

  SECTION("a world-writable approvals database") {
    dir.write("state/state.db", "");
    chmod_or_fail(db, 0666);
    auto r = start_result(config);
    CHECK_FALSE(r.ok);
    CHECK(r.step == "own-state");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, "E_FILE_MODE"));
    CHECK(mentions(r.message, db + ": error E_FILE_MODE: approvals database: mode 0666"));
  }
  SECTION("a group-writable write-ahead log of the approvals database") {
    dir.write("state/state.db-wal", "");
    chmod_or_fail(db + "-wal", 0660);
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(mentions(r.message, db + "-wal: error E_FILE_MODE"));
  }
  SECTION("an approvals database owned by another user") {
    dir.write("state/state.db", "");
    chmod_or_fail(db, 0600);
    if (::geteuid() != 0) {
      WARN("not root: cannot hand a file to another user");
      return;
    }
    ForeignOwner foreign(db);
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(r.exit_code == 2);
    CHECK(mentions(r.message, db + ": error E_FILE_MODE: approvals database: owned by uid 65534"));
  }
  SECTION("an approvals database configured in an open directory") {
    fs::create_directories(dir.path() / "open");
    chmod_or_fail(dir.path() / "open", 0777);
    config.approvals.path = (dir.path() / "open/approvals.db").string();
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(mentions(r.message, (dir.path() / "open").string() + ": error E_FILE_MODE"));
    chmod_or_fail(dir.path() / "open", 0700);
  }
  SECTION("an audit directory others can write") {
    fs::create_directories(dir.path() / "audit");
    chmod_or_fail(dir.path() / "audit", 0777);
    config.audit_log = (dir.path() / "audit/audit.jsonl").string();
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(mentions(r.message, (dir.path() / "audit").string() +
                                  ": error E_FILE_MODE: audit directory: mode 0777"));
    chmod_or_fail(dir.path() / "audit", 0700);
  }
  SECTION("an audit directory still to be made, in a directory others can write") {
    fs::create_directories(dir.path() / "open");
    chmod_or_fail(dir.path() / "open", 0777);
    config.audit_log = (dir.path() / "open/audit/audit.jsonl").string();
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(mentions(r.message, (dir.path() / "open").string() +
                                  ": error E_FILE_MODE: a directory above the audit directory"));
    CHECK_FALSE(fs::exists(dir.path() / "open/audit"));
    chmod_or_fail(dir.path() / "open", 0700);
  }
  SECTION("an audit log others can write") {
    dir.write("state/audit.jsonl", "");
    chmod_or_fail(state / "audit.jsonl", 0646);
    auto r = start_result(config);
    CHECK(r.step == "own-state");
    CHECK(mentions(r.message, "audit log: mode 0646"));
  }
  SECTION("safe state starts") {
    dir.write("state/state.db", "");
    chmod_or_fail(db, 0600);
    RunningDaemon d(config);
    CHECK(d.ok());
  }
}

TEST_CASE("a reload refuses while the approvals database is writable by others",
          "[server][files][reload]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  const fs::path db = dir.path() / "state/state.db";
  REQUIRE(fs::exists(db));
  chmod_or_fail(db, 0666);
  Client admin;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(admin.send_message(make_request("r", "reload"), &error));
  std::string reply = read_or_fail(admin, 20000ms);
  INFO(reply);
  CHECK(error_code(reply) == err::kReloadFailed);
  auto doc = parse(reply);
  const auto& diagnostics = doc["payload"]["error"]["diagnostics"];
  REQUIRE(diagnostics.Size() >= 1);
  CHECK(std::string(diagnostics[0]["code"].GetString()) == "E_FILE_MODE");
  CHECK(std::string(diagnostics[0]["file"].GetString()) == db.string());
  chmod_or_fail(db, 0600);
  REQUIRE(admin.send_message(make_request("r2", "reload"), &error));
  CHECK(error_code(read_or_fail(admin, 20000ms)) == "");
}

TEST_CASE("warden serve exits 2 on a world-writable approvals database", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);
  fs::create_directories(dir.path() / "state");
  chmod_or_fail(dir.path() / "state", 0700);
  const std::string db = dir.write("state/state.db", "");
  chmod_or_fail(db, 0666);
  std::string err;
  int code =
      files_run_warden(dir.path(),
                       "serve --listen 127.0.0.1:0 --rules rules --tokens tokens --state-dir state"
                       " >/dev/null",
                       &err);
  INFO(err);
  CHECK(code == 2);
  CHECK(mentions(err, "cannot start (own-state)"));
  CHECK(mentions(err, "E_FILE_MODE"));
  CHECK(mentions(err, "state.db"));
}

// ---- reloads keep the old rules when files turn unsafe ----------------------------------

namespace {

std::string status_digest(Client& admin) {
  std::string error;
  REQUIRE(admin.send_message(make_request("s", "status"), &error));
  return parse(read_or_fail(admin))["payload"]["rules_digest"].GetString();
}

// Waits (bounded) until the daemon has counted `n` failed reloads.
bool wait_for_failed_reloads(RunningDaemon& d, std::uint64_t n) {
  auto deadline = std::chrono::steady_clock::now() + 10s;
  while (Stats::get(d.daemon().context().stats.reload_failures) < n) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

}  // namespace

TEST_CASE("a reload refuses unsafe files and keeps the old rules", "[server][files][reload]") {
  TempDir dir;
  RunningDaemon d(test_config(dir));
  REQUIRE(d.ok());
  Client admin;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  const std::string before = status_digest(admin);

  SECTION("reload request: a rule file turned world-writable") {
    const fs::path file = dir.path() / "rules/policy.clp";
    dir.write("rules/policy.clp", kRulesB);
    chmod_or_fail(file, 0646);
    REQUIRE(admin.send_message(make_request("r", "reload"), &error));
    std::string reply = read_or_fail(admin, 20000ms);
    INFO(reply);
    CHECK(error_code(reply) == err::kReloadFailed);
    auto doc = parse(reply);
    const auto& diagnostics = doc["payload"]["error"]["diagnostics"];
    REQUIRE(diagnostics.Size() >= 1);
    CHECK(std::string(diagnostics[0]["code"].GetString()) == "E_FILE_MODE");
    CHECK(std::string(diagnostics[0]["file"].GetString()) == file.string());
    CHECK(status_digest(admin) == before);
    // Decisions still use the old rules.
    Client agent;
    connect_agent(agent, d);
    REQUIRE(agent.send_message(decide_request("1", kShellProposal), &error));
    CHECK(std::string(
              parse(read_or_fail(agent))["payload"]["decision"]["rules"][0]["rule"].GetString()) ==
          "no-shell");
  }
  SECTION("SIGHUP: a token file turned readable by others") {
    chmod_or_fail(dir.path() / "tokens", 0644);
    dir.write("rules/policy.clp", kRulesB);
    d.daemon().request_reload("SIGHUP");
    REQUIRE(wait_for_failed_reloads(d, 1));
    CHECK(status_digest(admin) == before);
  }
}

TEST_CASE("watched rules: another user's approve-all rule in an open directory is refused",
          "[server][files][reload]") {
  TempDir dir;
  Config config = test_config(dir);
  config.watch_rules = true;
  config.watch_interval = 100ms;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string before = d.daemon().context().policy.get()->digest();
  chmod_or_fail(config.rules[0], 0777);
  dir.write("rules/zz_approve_all.clp", R"CLP(
(defrule approve-all (proposal (id ?id)) =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-all) (reason "x"))))
)CLP");
  REQUIRE(wait_for_failed_reloads(d, 1));
  CHECK(d.daemon().context().policy.get()->digest() == before);
  CHECK(Stats::get(d.daemon().context().stats.reloads) == 0);
}

// ---- default_outcome = approve is loud -------------------------------------------------------

TEST_CASE("default_outcome approve is a warning in status", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);
  config.default_outcome = "approve";
  CHECK(config_warnings(config).size() == 1);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  Client admin;
  std::string error;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(admin.send_message(make_request("s", "status"), &error));
  auto doc = parse(read_or_fail(admin));
  const auto& warnings = doc["payload"]["warnings"];
  REQUIRE(warnings.IsArray());
  REQUIRE(warnings.Size() == 1);
  CHECK(mentions(warnings[0].GetString(), "default_outcome is approve"));

  config.default_outcome = "approval-required";
  CHECK(config_warnings(config).empty());
}

TEST_CASE("warden serve warns at startup when default_outcome is approve", "[server][files]") {
  TempDir dir;
  Config config = test_config(dir);
  std::string path = dir.write("warden.toml", "default_outcome = \"approve\"\n");
  chmod_or_fail(path, 0644);
  std::string err;
  int code =
      files_run_warden(dir.path(),
                       "serve --config warden.toml --listen 192.0.2.1:0 --rules rules --tokens "
                       "tokens --state-dir state --log-level warn >/dev/null",
                       &err);
  INFO(err);
  CHECK(code != 0);
  CHECK(mentions(err, "cannot start (listener)"));  // the last step; the warning came before
  CHECK(mentions(err, " warning default_outcome is approve"));
  CHECK(mentions(err, "default_outcome is approve"));
}

// ---- warden token new prints groups --------------------------------------------------------

TEST_CASE("warden token new prints a token-file line with the principal's groups",
          "[server][files][tokens]") {
  TempDir dir;
  const fs::path out = dir.path() / "out.json";
  std::string err;
  int code = files_run_warden(dir.path(),
                              "token new --role agent --principal alice --group ops --group dev "
                              "--format json >'" +
                                  out.string() + "'",
                              &err);
  INFO(err);
  REQUIRE(code == 0);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  auto doc = parse(text.str());
  REQUIRE(doc.IsObject());
  const std::string line = doc["line"].GetString();
  CHECK(line.size() > 13);
  CHECK(line.substr(line.size() - 15) == " groups=ops,dev");
  // The line reads back with the groups, and the token authenticates as alice in them.
  TokenStore store;
  std::vector<std::string> errors;
  REQUIRE(TokenStore::parse(line, "printed", &store, &errors));
  auto identity = store.authenticate(doc["token"].GetString());
  REQUIRE(identity);
  CHECK(identity->principal == "alice");
  CHECK(identity->groups == std::vector<std::string>{"dev", "ops"});

  CHECK(files_run_warden(dir.path(), "token new --role agent --principal alice --group 'a,b'",
                         &err) == 2);
  CHECK(mentions(err, "--group 'a,b' must be"));
}
