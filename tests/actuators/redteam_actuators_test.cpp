// Red-team tests of the actuators (tests/actuators/REDTEAM.md): each case is an attack on
// "what the rules saw is exactly what the actuator does, and the actuator fails closed".
// Run with: actuators_tests "[redteam]".
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <string>

#include "actuators/file.h"
#include "actuators/http.h"
#include "actuators/shell.h"
#include "bindings/shell_parser.h"
#include "engine/json_writer.h"
#include "tests/support/http_fake.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using namespace warden::actuators;
using warden::append_json_string;
using warden::testing::TempDir;

namespace {

std::string shell_request(const std::string& command, const std::string& extra = "") {
  std::string out = R"({"target":"shell","action":"run","payload":{"command":)";
  append_json_string(out, command);
  return out + extra + "}}";
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Context granted(std::vector<std::string> allowed) {
  Context c;
  c.allowed = std::move(allowed);
  return c;
}

// The pid a descendant wrote to `file`, or -1. A live one is killed (the test's cleanup),
// and the answer says whether it was still alive after the run.
bool outlived_the_run(const std::string& file) {
  std::string text = slurp(file);
  pid_t pid = static_cast<pid_t>(std::atoi(text.c_str()));
  REQUIRE(pid > 1);
  const bool alive = ::kill(pid, 0) == 0;
  if (alive) ::kill(pid, SIGKILL);
  return alive;
}

}  // namespace

// --- shell: the granted shell must read the line as the parser did ---------------------

TEST_CASE("redteam: a granted shell line runs what the parser read ($'...' quoting)",
          "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  ShellActuator shell(config, false);
  // bash (and the parser) read one `echo` with one ANSI-C quoted word; a POSIX sh without
  // $'…' reads `echo $\ ; touch pwned ; # …` and runs `touch`.
  const std::string line = R"(echo $'\' ; touch pwned ; # \'')";
  warden::shell::ParseResult parsed = warden::shell::parse(line);
  REQUIRE(parsed.ok);
  REQUIRE(parsed.commands.size() == 1);
  REQUIRE(parsed.commands.front().program == "echo");
  Result r = shell.act(shell_request(line), granted({"shell-syntax"}));
  CHECK(r.ok);
  CHECK_FALSE(fs::exists(ws / "pwned"));
  CHECK(r.output == "' ; touch pwned ; # '\n");
}

// --- shell: nothing the command started outlives the run -------------------------------

TEST_CASE("redteam: a setsid descendant does not outlive a finished run", "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  // Host pids: the keeper of the unconfined mode (confined runs: confine_test.cpp).
  config.confine = false;
  ShellActuator shell(config, false);
  // The line waits until its escaped descendant has written its pid, then ends.
  const std::string line =
      "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 & "
      "while [ ! -s escaped.pid ]; do :; done";
  Result r = shell.act(shell_request(line), granted({"shell-syntax"}));
  REQUIRE(r.ok);
  CHECK_FALSE(outlived_the_run(ws / "escaped.pid"));
}

TEST_CASE("redteam: a setsid descendant does not outlive the time limit", "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  // Host pids: the keeper of the unconfined mode (confined runs: confine_test.cpp).
  config.confine = false;
  ShellActuator shell(config, false);
  const std::string line =
      "setsid sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 & "
      "while [ ! -s escaped.pid ]; do :; done; exec sleep 60";
  Result r = shell.act(shell_request(line, R"(,"timeout":1)"), granted({"shell-syntax"}));
  REQUIRE_FALSE(r.ok);
  CHECK(r.error_code == "E_ACT_TIMEOUT");
  CHECK_FALSE(outlived_the_run(ws / "escaped.pid"));
}

TEST_CASE("redteam: a descendant in its own process group does not outlive the run",
          "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  // Host pids: the keeper of the unconfined mode (confined runs: confine_test.cpp).
  config.confine = false;
  ShellActuator shell(config, false);
  // Job control gives the background job a process group of its own (same session).
  const std::string line =
      "set -m; sh -c 'echo $$ > escaped.pid; exec sleep 60' >/dev/null 2>&1 & "
      "while [ ! -s escaped.pid ]; do :; done";
  Result r = shell.act(shell_request(line), granted({"shell-syntax"}));
  REQUIRE(r.ok);
  CHECK_FALSE(outlived_the_run(ws / "escaped.pid"));
}

TEST_CASE("redteam: a program that stops its parent does not stop the time limit",
          "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  ShellActuator shell(config, false);
  const std::string line = "echo $PPID > parent.pid; kill -STOP $PPID; exec sleep 60";
  auto run = std::async(std::launch::async, [&] {
    return shell.act(shell_request(line, R"(,"timeout":1)"), granted({"shell-syntax"}));
  });
  const bool returned = run.wait_for(std::chrono::seconds(40)) == std::future_status::ready;
  CHECK(returned);
  if (!returned) {  // unstick it: the test's cleanup
    pid_t parent = static_cast<pid_t>(std::atoi(slurp(ws / "parent.pid").c_str()));
    if (parent > 1) ::kill(parent, SIGKILL);
  }
  Result r = run.get();
  CHECK(r.error_code == "E_ACT_TIMEOUT");
}

TEST_CASE("redteam: the child has no controlling terminal of the daemon's", "[redteam][shell]") {
  // `warden chat` runs at a person's terminal: a program with that terminal as its
  // controlling tty can write to it, read it, or push input into it (TIOCSTI). A helper
  // process plays the daemon in a session whose controlling tty is a fresh pty.
  TempDir ws;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  REQUIRE(master >= 0);
  REQUIRE(::grantpt(master) == 0);
  REQUIRE(::unlockpt(master) == 0);
  const std::string slave = ::ptsname(master);
  pid_t helper = ::fork();
  REQUIRE(helper >= 0);
  if (helper == 0) {
    if (::setsid() < 0) ::_exit(3);
    int tty = ::open(slave.c_str(), O_RDWR);  // becomes the controlling terminal
    if (tty < 0) ::_exit(3);
    int probe = ::open("/dev/tty", O_RDWR);
    if (probe < 0) ::_exit(3);  // the helper itself must have it
    ::close(probe);
    ShellConfig config;
    config.workspace = ws.str();
    ShellActuator shell(config, false);
    Result r = shell.act(
        shell_request("if : 3</dev/tty; then echo has-tty; else echo no-tty; fi 2>/dev/null",
                      R"(,"timeout":20)"),
        granted({"shell-syntax"}));
    ::_exit(r.output == "no-tty\n" ? 0 : r.output == "has-tty\n" ? 1 : 2);
  }
  int status = 0;
  REQUIRE(::waitpid(helper, &status, 0) == helper);
  ::close(master);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) != 3);
  CHECK(WEXITSTATUS(status) == 0);
}

// --- shell: daemon state does not leak into the child (held) ----------------------------

TEST_CASE("redteam: a descriptor the daemon holds without CLOEXEC is not inherited",
          "[redteam][shell]") {
  TempDir ws;
  { std::ofstream(ws / "secret.txt") << "daemon secret\n"; }
  int fd = ::open((ws / "secret.txt").c_str(), O_RDONLY);  // no O_CLOEXEC on purpose
  REQUIRE(fd >= 0);
  int high = ::fcntl(fd, F_DUPFD, 40);  // a number nothing in the child reuses
  ::close(fd);
  REQUIRE(high >= 40);
  ShellConfig config;
  config.workspace = ws.str();
  ShellActuator shell(config, false);
  Result r = shell.act(shell_request("cat /proc/self/fd/" + std::to_string(high)), Context{});
  ::close(high);
  CHECK_FALSE((r.ok && r.exit_code == 0));
  CHECK(r.output.find("daemon secret") == std::string::npos);
}

TEST_CASE("redteam: the daemon's environment does not reach the child", "[redteam][shell]") {
  TempDir ws;
  ::setenv("WARDEN_RT2_SECRET", "s3cr3t-value", 1);
  ::setenv("LD_PRELOAD", "", 0);
  ShellConfig config;
  config.workspace = ws.str();
  ShellActuator shell(config, false);
  Result r = shell.act(shell_request("env"), Context{});
  ::unsetenv("WARDEN_RT2_SECRET");
  REQUIRE(r.ok);
  CHECK(r.output.find("s3cr3t-value") == std::string::npos);
}

TEST_CASE("redteam: a program in the proposal's cwd is not found by its bare name",
          "[redteam][shell]") {
  TempDir ws;
  { std::ofstream(ws / "ls") << "#!/bin/sh\necho hijacked\n"; }
  ::chmod((ws / "ls").c_str(), 0755);
  ShellConfig config;
  config.workspace = ws.str();
  config.path = {"", ".", "/usr/bin", "/bin"};  // even a careless configured path
  ShellActuator shell(config, false);
  Result r = shell.act(shell_request("ls", R"(,"cwd":".")"), Context{});
  CHECK(r.output.find("hijacked") == std::string::npos);
  // PATH assigned on the line does not steer the lookup either.
  r = shell.act(shell_request("PATH=. ls"), Context{});
  CHECK(r.output.find("hijacked") == std::string::npos);
}

TEST_CASE("redteam: a workspace file named like a known program does not run as it",
          "[redteam][shell]") {
  // The rules see `program` "ls" for `./ls -c …` and judge it as ls (the shipped pack
  // approves it, and `cp /bin/sh ./ls` before it); the file is a shell.
  TempDir ws;
  fs::copy_file("/bin/sh", ws / "ls");
  ::chmod((ws / "ls").c_str(), 0755);
  fs::create_symlink("/bin/sh", ws / "cat");
  { std::ofstream(ws / "tool.sh") << "#!/bin/sh\necho workspace tool\n"; }
  ::chmod((ws / "tool.sh").c_str(), 0755);
  ShellConfig config;
  config.workspace = ws.str();
  ShellActuator shell(config, false);
  for (std::string line :
       {std::string("./ls -c 'echo pwned'"), ws / "ls -c 'echo pwned'",
        std::string("./cat -c 'echo pwned'"),
        std::string("../") + fs::path(ws.str()).filename().string() + "/ls -c 'echo pwned'"}) {
    INFO(line);
    Result r = shell.act(shell_request(line), Context{});
    CHECK_FALSE(r.ok);
    CHECK(r.output.find("pwned") == std::string::npos);
  }
  // A workspace program of its own name, and the real one by its path, still run.
  Result tool = shell.act(shell_request("./tool.sh"), Context{});
  CHECK(tool.ok);
  CHECK(tool.output == "workspace tool\n");
  Result ls = shell.act(shell_request("/bin/ls -d ."), Context{});
  CHECK(ls.ok);
  CHECK(ls.output == ".\n");
}

TEST_CASE("redteam: output of a bomb is capped and the run ends at its limit", "[redteam][shell]") {
  TempDir ws;
  ShellConfig config;
  config.workspace = ws.str();
  config.max_output_bytes = 4096;
  ShellActuator shell(config, false);
  Result r = shell.act(shell_request("yes", R"(,"timeout":1)"), Context{});
  CHECK(r.error_code == "E_ACT_TIMEOUT");
  CHECK(r.output.size() <= 4096);
  CHECK(r.truncated);
}

TEST_CASE("redteam: cwd escapes through .. and symlinks are refused", "[redteam][shell]") {
  TempDir ws;
  fs::create_directory(ws / "w");
  fs::create_directory_symlink("/etc", ws / "w/etc");
  ShellConfig config;
  config.workspace = ws / "w";
  ShellActuator shell(config, false);
  for (const char* cwd : {"..", "etc", "./etc/", "sub/../..", "//etc"}) {
    INFO(cwd);
    std::string extra = R"(,"cwd":)";
    append_json_string(extra, cwd);
    Result r = shell.act(shell_request("pwd", extra), Context{});
    CHECK_FALSE(r.ok);
  }
}

// --- file -------------------------------------------------------------------------------

namespace {
std::string file_request(const std::string& verb, const std::string& path,
                         const std::string& content = "") {
  std::string out = R"({"target":"file","action":)";
  append_json_string(out, verb);
  out += R"(,"payload":{"action":)";
  append_json_string(out, verb);
  out += R"(,"path":)";
  append_json_string(out, path);
  if (!content.empty()) {
    out += R"(,"content":)";
    append_json_string(out, content);
  }
  return out + "}}";
}
}  // namespace

TEST_CASE("redteam: reading a FIFO beneath the root fails instead of hanging", "[redteam][file]") {
  TempDir root;
  REQUIRE(::mkfifo((root / "pipe").c_str(), 0600) == 0);
  for (Resolve how : {Resolve::Auto, Resolve::Walk}) {
    FileConfig config;
    config.root = root.str();
    FileActuator file(config, false, how);
    Result r = file.act(file_request("read", "pipe"), Context{});
    CHECK_FALSE(r.ok);
    r = file.act(file_request("write", "pipe", "x"), Context{});
    CHECK_FALSE(r.ok);
  }
}

TEST_CASE("redteam: the root itself cannot be deleted or escaped", "[redteam][file]") {
  TempDir outer;
  fs::create_directory(outer / "root");
  { std::ofstream(outer / "outside.txt") << "outside\n"; }
  for (Resolve how : {Resolve::Auto, Resolve::Walk}) {
    FileConfig config;
    config.root = outer / "root";
    FileActuator file(config, false, how);
    for (std::string p : {std::string("."), std::string("./"), outer / "root", outer / "root/",
                          outer / "root/.", std::string(".."),
                          "/" + (outer / "root/../outside.txt"), std::string("../outside.txt")}) {
      INFO(p);
      Result r = file.act(file_request("delete", p), Context{});
      CHECK_FALSE(r.ok);
    }
    CHECK(fs::exists(outer / "root"));
    CHECK(fs::exists(outer / "outside.txt"));
  }
}

TEST_CASE("redteam: /proc magic links beneath the root are refused", "[redteam][file]") {
  TempDir root;
  fs::create_directory_symlink("/proc/self/root/etc", root / "procetc");
  fs::create_symlink("/proc/self/fd/0", root / "fd0");
  for (Resolve how : {Resolve::Auto, Resolve::Walk}) {
    FileConfig config;
    config.root = root.str();
    FileActuator file(config, false, how);
    CHECK_FALSE(file.act(file_request("read", "procetc/hostname"), Context{}).ok);
    CHECK_FALSE(file.act(file_request("read", "fd0"), Context{}).ok);
    CHECK_FALSE(file.act(file_request("write", "fd0", "x"), Context{}).ok);
  }
}

// --- http -------------------------------------------------------------------------------

namespace {
std::string http_get(const std::string& url, const std::string& extra = "") {
  std::string out = R"({"target":"http","action":"GET","payload":{"url":)";
  append_json_string(out, url);
  return out + extra + "}}";
}
}  // namespace

TEST_CASE("redteam: loopback spelled other ways is refused without private-network",
          "[redteam][http]") {
  warden::testing::HttpFake server;
  server.set_fallback({200, {}, "reached"});
  HttpConfig config;
  config.connect_timeout = std::chrono::milliseconds(2000);
  config.timeout = std::chrono::milliseconds(5000);
  const std::string port = std::to_string(server.port());
  config.resolve = {"rebind.example:" + port + ":127.0.0.1", "zero.example:" + port + ":0.0.0.0",
                    "mapped.example:" + port + ":[::ffff:127.0.0.1]"};
  HttpActuator http(config, false);
  for (std::string url :
       {"http://0.0.0.0:" + port + "/", "http://0:" + port + "/", "http://2130706433:" + port + "/",
        "http://0x7f.1:" + port + "/", "http://017700000001:" + port + "/",
        "http://[::ffff:127.0.0.1]:" + port + "/", "http://[::]:" + port + "/",
        "http://rebind.example:" + port + "/", "http://zero.example:" + port + "/",
        "http://mapped.example:" + port + "/", "http://localhost:" + port + "/"}) {
    INFO(url);
    Result r = http.act(http_get(url), Context{});
    CHECK_FALSE(r.ok);
    CHECK(r.output.find("reached") == std::string::npos);
  }
  CHECK(server.request_count() == 0);
}

TEST_CASE("redteam: private-network for a name does not reach the metadata endpoint",
          "[redteam][http]") {
  // A rule grants private-network to build.internal (docs/ACTUATORS.md's example); the name
  // resolves, or rebinds, to the cloud metadata address the rules never saw.
  HttpConfig config;
  config.connect_timeout = std::chrono::milliseconds(1000);
  config.timeout = std::chrono::milliseconds(2000);
  config.resolve = {"build.internal:8080:169.254.169.254", "build6.internal:8080:[fd00:ec2::254]",
                    "mapped.internal:8080:[::ffff:169.254.169.254]"};
  HttpActuator http(config, false);
  for (std::string host : {"build.internal", "build6.internal", "mapped.internal"}) {
    INFO(host);
    Result r = http.act(http_get("http://" + host + ":8080/latest/meta-data/"),
                        granted({"private-network"}));
    CHECK_FALSE(r.ok);
    CHECK(r.error_code == "E_ACT_DENIED");
  }
}

TEST_CASE("redteam: headers cannot redirect the request", "[redteam][http]") {
  warden::testing::HttpFake server;
  server.set_fallback({200, {}, "reached"});
  HttpActuator http(HttpConfig{}, false);
  for (const char* h : {R"({"Host":"evil.example"})", R"({"host":"evil.example"})",
                        R"({"Transfer-Encoding":"chunked"})", R"({"Content-Length":"0"})",
                        R"({"Host ":"x"})", R"({"X":"a\r\nHost: evil"})"}) {
    INFO(h);
    Result r = http.act(http_get(server.base_url() + "/", std::string(R"(,"headers":)") + h),
                        granted({"private-network"}));
    CHECK_FALSE(r.ok);
  }
  CHECK(server.request_count() == 0);
}

TEST_CASE("redteam: a redirect is reported, not followed, and a body bomb is capped",
          "[redteam][http]") {
  warden::testing::HttpFake server;
  server.push({302, {{"Location", "http://169.254.169.254/latest/meta-data/"}}, ""});
  server.push({200, {}, std::string(1 << 20, 'A')});
  HttpConfig config;
  config.max_response_bytes = 1000;
  HttpActuator http(config, false);
  Result r = http.act(http_get(server.base_url() + "/r"), granted({"private-network"}));
  CHECK_FALSE(r.ok);
  CHECK(r.error_code == "E_ACT_REDIRECT");
  r = http.act(http_get(server.base_url() + "/big"), granted({"private-network"}));
  CHECK(r.output.size() <= 1000);
  CHECK(r.truncated);
  CHECK(server.request_count() == 2);
}

TEST_CASE("redteam: proxy variables in the environment are not used", "[redteam][http]") {
  warden::testing::HttpFake proxy;
  proxy.set_fallback({200, {}, "via-proxy"});
  ::setenv("http_proxy", proxy.base_url().c_str(), 1);
  ::setenv("HTTP_PROXY", proxy.base_url().c_str(), 1);
  ::setenv("ALL_PROXY", proxy.base_url().c_str(), 1);
  HttpConfig config;
  config.connect_timeout = std::chrono::milliseconds(2000);
  config.timeout = std::chrono::milliseconds(3000);
  HttpActuator http(config, false);
  Result r = http.act(http_get("http://127.0.0.2:1/"), granted({"private-network"}));
  ::unsetenv("http_proxy");
  ::unsetenv("HTTP_PROXY");
  ::unsetenv("ALL_PROXY");
  CHECK(r.output.find("via-proxy") == std::string::npos);
  CHECK(proxy.request_count() == 0);
}
