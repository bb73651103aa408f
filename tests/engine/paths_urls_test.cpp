// Paths and URLs through decide: the shipped rule pack judging symlinks inside a real
// temporary workspace and URLs that hide their host, plus the contract that rule functions
// (url-host, url-ip-class, in-workspace) agree with the facts. Single-threaded.
#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include "engine/rule_files.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using warden::test::fired;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

std::shared_ptr<const Policy> shipped_pack() {
  Diagnostics diagnostics;
  RuleSources sources = read_rule_files({WARDEN_SOURCE_DIR "/rules"}, &diagnostics);
  auto loaded = Policy::compile(sources);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

// A workspace in a fresh temporary directory with `etc_link -> /etc` and `src/` inside.
struct Workspace {
  warden::testing::TempDir dir{"warden-ws"};
  std::string root = std::filesystem::canonical(dir.path()).string();
  Workspace() {
    std::filesystem::create_directories(root + "/src");
    std::ofstream(root + "/src/main.c") << "int main(){}";
    std::filesystem::create_symlink("/etc", root + "/etc_link");
  }
};

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string proposal(const std::string& target, const std::string& action,
                     const std::string& payload) {
  return R"({"target":")" + target + R"(","action":")" + action + R"(","payload":)" + payload +
         R"(,"explanation":"doing the task","context":{"agent":"a","session":"s","source":"cli","principal":"p"}})";
}

Decision decide_checked(Engine& engine, const std::string& json, bool explain = false) {
  DecideRequest request;
  request.proposal_json = json;
  request.explain = explain;
  DecideResult r = engine.decide(request);
  INFO(json);
  INFO(r.error.to_text());
  REQUIRE(r.ok);
  return r.decision;
}

}  // namespace

TEST_CASE("a symlink inside the workspace no longer approves reads and writes outside it",
          "[decide][paths]") {
  Workspace ws;
  EngineOptions o = test_options();
  o.workspace_root = ws.root;
  Engine engine(shipped_pack(), o);

  // File actuator: was approved by files-read-workspace as "inside the workspace".
  Decision read =
      decide_checked(engine, proposal("file", "read", R"({"path":"etc_link/shadow"})"), true);
  INFO(read.reason);
  CHECK(read.outcome == Outcome::Reject);
  CHECK(fired(read, "credentials-file-read"));
  CHECK_FALSE(fired(read, "files-read-workspace"));
  CHECK(read.facts_json.find(R"((resolved \"/etc/shadow\"))") != std::string::npos);
  CHECK(read.facts_json.find("(in-workspace FALSE)") != std::string::npos);

  // A system file through the link is read as the system file it is (approved as such),
  // never as a workspace file.
  Decision passwd =
      decide_checked(engine, proposal("file", "read", R"({"path":"etc_link/hostname"})"));
  CHECK(fired(passwd, "files-read-system"));
  CHECK_FALSE(fired(passwd, "files-read-workspace"));

  Decision write = decide_checked(
      engine, proposal("file", "write", R"({"path":"etc_link/cron.d/job","content":"x"})"));
  CHECK(write.outcome == Outcome::Reject);
  CHECK(fired(write, "files-write-outside-workspace"));
  CHECK_FALSE(fired(write, "files-write-workspace"));

  // Shell: `cat etc_link/shadow` was approved by everyday-shell.
  Decision cat = decide_checked(
      engine, proposal("shell", "run",
                       R"({"command":"cat etc_link/shadow","cwd":)" + quote(ws.root) + "}"));
  CHECK(cat.outcome == Outcome::Reject);
  CHECK(fired(cat, "credentials-shell-read"));
  CHECK_FALSE(fired(cat, "everyday-shell"));
  Decision redirect = decide_checked(
      engine,
      proposal("shell", "run",
               R"({"command":"echo x > etc_link/cron.d/job","cwd":)" + quote(ws.root) + "}"));
  CHECK(redirect.outcome == Outcome::Reject);
  CHECK(fired(redirect, "files-shell-write-outside-workspace"));
  Decision in_cwd = decide_checked(
      engine, proposal("shell", "run",
                       R"({"command":"cat shadow","cwd":)" + quote(ws.root + "/etc_link") + "}"));
  CHECK(in_cwd.outcome == Outcome::Reject);
  CHECK(fired(in_cwd, "credentials-shell-read"));
  Decision ls = decide_checked(
      engine, proposal("shell", "run",
                       R"({"command":"cat etc_link/passwd","cwd":)" + quote(ws.root) + "}"));
  CHECK_FALSE(fired(ls, "everyday-shell"));

  // Near misses: real workspace files stay approved.
  CHECK(decide_checked(engine, proposal("file", "read", R"({"path":"src/main.c"})")).outcome ==
        Outcome::Approve);
  CHECK(decide_checked(engine,
                       proposal("file", "write", R"({"path":"src/new/file.c","content":"x"})"))
            .outcome == Outcome::Approve);
  CHECK(decide_checked(engine,
                       proposal("shell", "run",
                                R"({"command":"cat src/main.c","cwd":)" + quote(ws.root) + "}"))
            .outcome == Outcome::Approve);
}

TEST_CASE("URLs that hide their host or an internal address are no longer approved",
          "[decide][urls]") {
  Engine engine(shipped_pack(), test_options());
  // libcurl connects to evil.example; this was approved as a read from github.com.
  Decision d = decide_checked(
      engine,
      proposal("http", "request", R"({"method":"GET","url":"https://github.com\\@evil.example/"})"),
      true);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(fired(d, "egress-http-invalid-url"));
  CHECK_FALSE(fired(d, "egress-http-read-allowlisted"));
  CHECK(d.facts_json.find(R"((error \"backslash in the URL\"))") != std::string::npos);

  // The metadata address spelled as IPv4-mapped IPv6 was only "not allowlisted".
  d = decide_checked(
      engine,
      proposal("http", "request", R"({"url":"http://[::ffff:a9fe:a9fe]/latest/meta-data/"})"),
      true);
  CHECK(d.outcome == Outcome::Reject);
  CHECK(fired(d, "egress-http-metadata"));
  CHECK(d.facts_json.find(R"((ip \"169.254.169.254\") (ip-class \"metadata\"))") !=
        std::string::npos);

  for (const char* url : {"http://0x7f.1/", "http://2130706433/", "http://017700000001/",
                          "http://127.1/", "http://[::1]/", "http://localhost:2375/"}) {
    INFO(url);
    d = decide_checked(engine,
                       proposal("http", "request", std::string(R"({"url":")") + url + "\"}"));
    CHECK(d.outcome == Outcome::Reject);
    CHECK(fired(d, "egress-http-internal-address"));
  }
  d = decide_checked(
      engine, proposal("shell", "run",
                       R"({"command":"curl -s http://[::ffff:a9fe:a9fe]/latest/meta-data/iam/"})"));
  CHECK(d.outcome == Outcome::Reject);
  CHECK(fired(d, "egress-network-metadata"));
  d = decide_checked(
      engine,
      proposal("shell", "run", R"({"command":"curl 'https://github.com\\@evil.example/'"})"));
  CHECK(d.outcome == Outcome::Reject);
  CHECK(fired(d, "egress-shell-invalid-url"));
  // Near miss: a plain allowlisted read stays approved.
  CHECK(
      decide_checked(engine, proposal("http", "request", R"({"url":"https://api.github.com/zen"})"))
          .outcome == Outcome::Approve);
}

// A rule that rejects whenever a function disagrees with the fact it mirrors.
const char* kAgreement = R"(
(defrule url-host-differs
  (url (proposal ?id) (raw ?u) (host ?h) (ip-class ?c) (error ?e))
  (test (or (neq (url-host ?u) ?h) (neq (url-ip-class ?u) ?c) (neq (url-error ?u) ?e)))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule url-host-differs) (reason ?u))))
(defrule in-workspace-differs
  (path (proposal ?id) (key "payload.path") (raw ?p) (in-workspace ?w) (resolved ?r))
  (test (or (neq ?w (in-workspace ?p)) (neq ?r (path-resolve ?p))))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule in-workspace-differs) (reason ?p))))
(defrule agree
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule agree) (reason "functions agree with facts"))))
)";

TEST_CASE("url-host, url-ip-class, url-error, in-workspace and path-resolve agree with the facts",
          "[decide][urls][paths]") {
  Workspace ws;
  EngineOptions o = test_options();
  o.workspace_root = ws.root;
  Engine engine(must_compile(kAgreement), o);
  for (const char* url :
       {"https://github.com/", "https://GitHub.com./x", "https://github.com\\@evil.example/",
        "http://[::ffff:a9fe:a9fe]/", "http://0x7f.1/", "http://%65vil.com/", "not a url",
        "http://a.com:80@b.com/", "ssh://git@github.com/o/r", "http://[::1]:8080/"}) {
    INFO(url);
    Decision d =
        decide_checked(engine, proposal("http", "request", R"({"url":)" + quote(url) + "}"));
    CHECK(d.outcome == Outcome::Approve);
  }
  for (const char* path : {"src/main.c", "etc_link/shadow", "etc_link", "missing/../src", "../x",
                           "/etc/passwd", "etc_link/../x"}) {
    INFO(path);
    Decision d =
        decide_checked(engine, proposal("file", "read", R"({"path":)" + quote(path) + "}"));
    CHECK(d.outcome == Outcome::Approve);
  }
}

TEST_CASE("indexed path-within patterns hit the resolved path too", "[decide][paths]") {
  Workspace ws;
  EngineOptions o = test_options();
  o.workspace_root = ws.root;
  Engine engine(must_compile(R"(
(defrule no-etc
  (pattern-hit (proposal ?id) (key "payload.path") (kind path-within) (pattern "/etc"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-etc) (reason "under /etc"))))
(defrule fine (proposal (id ?id))
  => (assert (decision (proposal ?id) (outcome approve) (rule fine) (reason "fine"))))
)"),
                o);
  CHECK(
      decide_checked(engine, proposal("file", "read", R"({"path":"etc_link/hostname"})")).outcome ==
      Outcome::Reject);
  CHECK(decide_checked(engine, proposal("file", "read", R"({"path":"/etc/hostname"})")).outcome ==
        Outcome::Reject);
  CHECK(decide_checked(engine, proposal("file", "read", R"({"path":"src/main.c"})")).outcome ==
        Outcome::Approve);
}
