// The deciders (agents/decider.h): in-process over the shipped rules, and against a real
// `warden serve` child; every way of not getting a decision is ok == false with its code.
#include "agents/decider.h"

#include <rapidjson/document.h>
#include <stdlib.h>

#include <catch2/catch.hpp>

#include "tests/agents/serve_child.h"
#include "tests/server/server_fixture.h"

using namespace warden;
using namespace warden::agents;
using namespace warden::agents::testing;
using namespace std::chrono_literals;

namespace {

const char* kLs = R"({"target":"shell","action":"run","explanation":"list the files",)"
                  R"("context":{"agent":"claude-code","session":"s1","source":"hook"},)"
                  R"("payload":{"command":"ls","cwd":"/home/user/project"}})";
const char* kRmRf = R"({"target":"shell","action":"run","explanation":"clean up",)"
                    R"("context":{"agent":"claude-code","session":"s1","source":"hook"},)"
                    R"("payload":{"command":"rm -rf /","cwd":"/home/user/project"}})";

// A rule that rewrites `echo old` into `echo new` and approves it.
const char* kRewriteRules = R"CLP(
(defrule echo-rewrite
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value "echo old"))
  =>
  (assert (rewrite (proposal ?id) (key "payload.command") (value "echo new")
                   (rule echo-rewrite) (reason "old is new")))
  (assert (decision (proposal ?id) (outcome approve) (rule echo-rewrite) (reason "rewritten"))))
(defrule watch-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule watch-shell) (reason "watching")
                    (mode monitor))))
)CLP";

DeciderConfig daemon_config(const ServeChild& d) {
  DeciderConfig c;
  c.addr = d.address();
  c.token_file = d.token_file();
  return c;
}

std::unique_ptr<Decider> make(const DeciderConfig& c) {
  std::string error;
  auto d = make_decider(c, &error);
  INFO(error);
  REQUIRE(d);
  return d;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

TEST_CASE("in-process: the shipped rules approve ls and reject rm -rf /", "[agents][decider]") {
  DeciderConfig c;
  c.rules = {kShippedRules};
  auto d = make(c);
  CHECK(d->describe().find("in-process") != std::string::npos);

  Verdict ls = d->decide(kLs);
  INFO(ls.error_code << " " << ls.error_message << " " << ls.decision_json);
  REQUIRE(ls.ok);
  CHECK(ls.outcome == Outcome::Approve);
  CHECK(has(ls.rules, "everyday-shell"));
  CHECK_FALSE(ls.rewritten);
  CHECK_FALSE(ls.decision_id.empty());

  Verdict rm = d->decide(kRmRf);
  REQUIRE(rm.ok);
  CHECK(rm.outcome == Outcome::Reject);
  CHECK(has(rm.rules, "shell-destructive-rm"));
  CHECK_FALSE(rm.reason.empty());
  rapidjson::Document doc;
  doc.Parse(rm.decision_json.c_str());
  REQUIRE(doc.IsObject());
  CHECK(std::string(doc["outcome"].GetString()) == "reject");
}

TEST_CASE("in-process: a rewrite is reported with the approved action; monitor rules are not",
          "[agents][decider]") {
  TempDir dir;
  dir.write("rules/rewrite.clp", kRewriteRules);
  DeciderConfig c;
  c.rules = {(dir.path() / "rules").string()};
  auto d = make(c);
  Verdict v = d->decide(R"({"target":"shell","action":"run","payload":{"command":"echo old"}})");
  REQUIRE(v.ok);
  CHECK(v.outcome == Outcome::Approve);
  CHECK(v.rewritten);
  CHECK(v.rules == std::vector<std::string>{"echo-rewrite"});  // not the monitor reject
  rapidjson::Document action;
  action.Parse(v.action_json.c_str());
  REQUIRE(action.IsObject());
  CHECK(std::string(action["payload"]["command"].GetString()) == "echo new");

  Verdict plain = d->decide(R"({"target":"shell","action":"run","payload":{"command":"echo x"}})");
  REQUIRE(plain.ok);
  CHECK_FALSE(plain.rewritten);
}

TEST_CASE("in-process: broken rules give no decider; a non-proposal is ok == false",
          "[agents][decider]") {
  TempDir dir;
  dir.write("rules/broken.clp", server::testing::kBrokenRules);
  DeciderConfig c;
  c.rules = {(dir.path() / "rules").string()};
  std::string error;
  CHECK_FALSE(make_decider(c, &error));
  CHECK(error.find("E_") != std::string::npos);

  c.rules = {kShippedRules};
  auto d = make(c);
  Verdict v = d->decide("[1,2]");
  CHECK_FALSE(v.ok);
  CHECK(v.error_code.rfind("E_INPUT", 0) == 0);
}

TEST_CASE("daemon: decisions over TCP, the connection kept between them", "[agents][decider]") {
  TempDir dir;
  ServeChild serve(dir);
  auto d = make(daemon_config(serve));
  CHECK(d->describe() == "daemon " + serve.address());
  for (int i = 0; i < 3; ++i) {
    Verdict ls = d->decide(kLs);
    INFO(ls.error_code << " " << ls.error_message);
    REQUIRE(ls.ok);
    CHECK(ls.outcome == Outcome::Approve);
    CHECK(has(ls.rules, "everyday-shell"));
    Verdict rm = d->decide(kRmRf);
    REQUIRE(rm.ok);
    CHECK(rm.outcome == Outcome::Reject);
    CHECK(has(rm.rules, "shell-destructive-rm"));
    CHECK(rm.reason.find("/") != std::string::npos);
  }
}

TEST_CASE("daemon: a rewrite comes back as the approved action", "[agents][decider]") {
  TempDir dir;
  dir.write("rewrite/rewrite.clp", kRewriteRules);
  ServeChild serve(dir, {(dir.path() / "rewrite").string()});
  auto d = make(daemon_config(serve));
  Verdict v = d->decide(R"({"target":"shell","action":"run","payload":{"command":"echo old"}})");
  INFO(v.error_code << " " << v.error_message);
  REQUIRE(v.ok);
  CHECK(v.rewritten);
  CHECK(v.rules == std::vector<std::string>{"echo-rewrite"});
  CHECK(v.action_json.find("echo new") != std::string::npos);
}

TEST_CASE("daemon: the default address is the daemon's Unix socket in its state directory",
          "[agents][decider]") {
  TempDir dir;
  ServeChild serve(dir);
  // STATE_DIR is $XDG_STATE_HOME/warden, as the daemon derives it.
  const std::string state_home = (dir.path() / "state").string();
  const char* old_xdg = std::getenv("XDG_STATE_HOME");
  const std::string saved = old_xdg ? old_xdg : "";
  ::setenv("XDG_STATE_HOME", state_home.c_str(), 1);
  ::unsetenv("WARDEN_ADDR");
  DeciderConfig c;
  c.token_file = serve.token_file();
  auto d = make(c);
  if (old_xdg)
    ::setenv("XDG_STATE_HOME", saved.c_str(), 1);
  else
    ::unsetenv("XDG_STATE_HOME");
  CHECK(d->describe() == "daemon unix:" + serve.socket_path());
  Verdict ls = d->decide(kLs);
  INFO(ls.error_code << " " << ls.error_message);
  REQUIRE(ls.ok);
  CHECK(ls.outcome == Outcome::Approve);
}

TEST_CASE("daemon: the connection is opened again once when the daemon closed it",
          "[agents][decider]") {
  TempDir dir;
  const std::string config = dir.write("warden.toml", "[limits]\nidle_timeout_ms = 100\n");
  ServeChild serve(dir, {kShippedRules}, {"--config", config});
  auto d = make(daemon_config(serve));
  REQUIRE(d->decide(kLs).ok);
  // The daemon closes the idle connection; the next decide notices and reconnects.
  std::this_thread::sleep_for(600ms);
  Verdict again = d->decide(kLs);
  INFO(again.error_code << " " << again.error_message);
  REQUIRE(again.ok);
  CHECK(again.outcome == Outcome::Approve);
}

TEST_CASE("daemon down: no decision, E_UNAVAILABLE", "[agents][decider]") {
  DeciderConfig c;
  c.addr = closed_address();
  c.token = "whatever";
  auto d = make(c);
  Verdict v = d->decide(kLs);
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_UNAVAILABLE");
  CHECK(v.error_message.find(c.addr) != std::string::npos);

  c.addr = "unix:/nonexistent/warden.sock";
  v = make(c)->decide(kLs);
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_UNAVAILABLE");
}

TEST_CASE("daemon: a wrong token is refused with the daemon's code", "[agents][decider]") {
  TempDir dir;
  ServeChild serve(dir);
  DeciderConfig c;
  c.addr = serve.address();
  c.token = "wdn_not_a_token";
  Verdict v = make(c)->decide(kLs);
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_AUTH_FAILED");

  c.token.clear();
  c.token_file = (dir.path() / "missing.token").string();
  v = make(c)->decide(kLs);
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_CONFIG");
  CHECK(v.error_message.find("missing.token") != std::string::npos);
}

TEST_CASE("daemon: a listener that never answers runs out the budget, E_TIMEOUT",
          "[agents][decider]") {
  SilentListener silent;
  DeciderConfig c;
  c.addr = silent.address();
  c.token = "whatever";
  c.budget = 300ms;
  Verdict v = make(c)->decide(kLs);
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_TIMEOUT");
}

TEST_CASE("daemon: a proposal that is not a JSON object is refused before sending",
          "[agents][decider]") {
  DeciderConfig c;
  c.addr = closed_address();
  Verdict v = make(c)->decide("not json");
  CHECK_FALSE(v.ok);
  CHECK(v.error_code == "E_INPUT_JSON");
}

TEST_CASE("daemon: TLS settings that cannot work are E_CONFIG", "[agents][decider]") {
  DeciderConfig c;
  c.addr = "unix:/tmp/x.sock";
  c.tls = true;
  c.token = "t";
  CHECK(make(c)->decide(kLs).error_code == "E_CONFIG");
  c.addr = "127.0.0.1:1";
  c.pin = "sha256:zz";
  CHECK(make(c)->decide(kLs).error_code == "E_CONFIG");
}

namespace {

void run_ok(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
  INFO("command: " << command << "\noutput: " << output);
  REQUIRE(::pclose(pipe) == 0);
}

// A CA, a daemon certificate it signed for 127.0.0.1, and an unrelated CA (openssl command).
struct TestPki {
  std::string ca, other_ca, cert, key;
  explicit TestPki(const TempDir& dir) {
    const std::string p = (dir.path() / "pki").string();
    std::filesystem::create_directories(p);
    const std::string ec = "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    run_ok(ec + "-x509 -keyout '" + p + "/ca.key' -out '" + p +
           "/ca.pem' -subj /CN=test-ca -days 2");
    run_ok(ec + "-x509 -keyout '" + p + "/o.key' -out '" + p + "/o.pem' -subj /CN=other -days 2");
    run_ok(ec + "-keyout '" + p + "/d.key' -out '" + p + "/d.csr' -subj /CN=localhost");
    std::ofstream(p + "/ext.cnf") << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    run_ok("openssl x509 -req -in '" + p + "/d.csr' -CA '" + p + "/ca.pem' -CAkey '" + p +
           "/ca.key' -CAcreateserial -out '" + p + "/d.pem' -days 2 -extfile '" + p + "/ext.cnf'");
    ca = p + "/ca.pem";
    other_ca = p + "/o.pem";
    cert = p + "/d.pem";
    key = p + "/d.key";
    std::filesystem::permissions(
        key, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
        std::filesystem::perm_options::replace);
  }
};

}  // namespace

TEST_CASE("daemon over TLS: the certificate is checked before the token is sent",
          "[agents][decider]") {
  TempDir dir;
  TestPki pki(dir);
  const std::string config =
      dir.write("warden.toml", "[tls]\ncert = \"" + pki.cert + "\"\nkey = \"" + pki.key + "\"\n");
  ServeChild serve(dir, {kShippedRules}, {"--config", config});
  DeciderConfig c = daemon_config(serve);
  c.ca = pki.ca;  // implies TLS
  Verdict ok = make(c)->decide(kLs);
  INFO(ok.error_code << " " << ok.error_message);
  REQUIRE(ok.ok);
  CHECK(ok.outcome == Outcome::Approve);

  c.ca = pki.other_ca;
  Verdict untrusted = make(c)->decide(kLs);
  CHECK_FALSE(untrusted.ok);
  CHECK(untrusted.error_code == "E_TLS");

  c.ca.clear();
  c.pin = "sha256:" + std::string(64, '0');
  Verdict pinned = make(c)->decide(kLs);
  CHECK_FALSE(pinned.ok);
  CHECK(pinned.error_code == "E_TLS");
}
