// Approvers are told: [approvals.notify] posts approval events to a webhook — here a real
// HTTP server on loopback the test starts (tests/support/http_fake.h), which records every
// request and answers as the test scripts it. Events carry the action and never a token;
// 5xx and 429 are retried, other 4xx not; a held or unreachable webhook delays no decide and
// no approve, and does not hold up a shutdown; a full queue drops its oldest event; a fleet
// sharing PostgreSQL posts each event once; config errors name the key and the line.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "server/notifier.h"
#include "tests/build_paths.h"
#include "tests/support/http_fake.h"
#include "tests/support/postgres_server.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::testing::HttpFake;
using warden::testing::HttpReply;
using warden::testing::HttpSeen;

namespace {

struct NotifyPending {
  std::string id, token, hash;
};

// alice decides `command` in session s1: approval-required.
NotifyPending notify_ask(Party& agent, const std::string& command,
                         const std::string& explanation = "needed") {
  std::string reply = agent.call(decide_request("d", shell_action(command, "s1", explanation)));
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto p = payload_of(reply);
  REQUIRE(str(p["decision"], "outcome") == "approval-required");
  NotifyPending out{str(p["approval"], "id"), str(p["approval"], "token"),
                    str(p["approval"], "action_hash")};
  REQUIRE(out.id.rfind("apr_", 0) == 0);
  REQUIRE(out.token.size() >= 40);
  return out;
}

std::string notify_approve(Party& approver, const NotifyPending& p) {
  return approver.call(make_request(
      "a", "approve", "\"id\":" + json_string(p.id) + ",\"digest\":" + json_string(p.hash)));
}

std::string deny(Party& approver, const NotifyPending& p, const std::string& note = "") {
  return approver.call(
      make_request("n", "deny", "\"id\":" + json_string(p.id) + ",\"note\":" + json_string(note)));
}

// The approvals daemon of approvals_fixture.h, its events posted to `url` (format json),
// retried quickly.
Config notify_config(const TempDir& dir, const std::string& url, const std::string& state = "state",
                     const std::string& conninfo = "") {
  Config c = approvals_config(dir, state, conninfo);
  NotifyConfig& n = c.approvals.notify;
  n.url = url;
  n.format = "json";
  n.timeout = 10000ms;
  n.max_attempts = 4;
  n.backoff = 5ms;
  n.backoff_max = 20ms;
  return c;
}

// The status request's approvals.notify object (as a document of its own).
rapidjson::Document notify_status(Party& admin) {
  std::string reply = admin.call(make_request("s", "status"));
  INFO(reply);
  REQUIRE(error_code(reply) == "");
  auto p = payload_of(reply);
  REQUIRE(p.HasMember("approvals"));
  REQUIRE(p["approvals"].HasMember("notify"));
  rapidjson::Document out;
  out.CopyFrom(p["approvals"]["notify"], out.GetAllocator());
  return out;
}

std::uint64_t count(const rapidjson::Value& status, const char* name) {
  return status.HasMember(name) && status[name].IsUint64() ? status[name].GetUint64() : 999999;
}

// The events posted so far: each request's body, parsed (a body that is not JSON fails).
struct Posted {
  std::string body;
  rapidjson::Document doc;
  std::string event() const { return str(doc, "event"); }
  std::string id() const { return doc.HasMember("approval") ? str(doc["approval"], "id") : ""; }
};
std::vector<Posted> posted(const HttpFake& server) {
  std::vector<Posted> out;
  for (const HttpSeen& seen : server.requests()) {
    Posted p;
    p.body = seen.body;
    p.doc.Parse(seen.body.c_str(), seen.body.size());
    INFO(seen.body);
    REQUIRE_FALSE(p.doc.HasParseError());
    REQUIRE(p.doc.IsObject());
    out.push_back(std::move(p));
  }
  return out;
}

// "event id" of each posted event, in the order they arrived.
std::vector<std::string> events_of(const std::vector<Posted>& list) {
  std::vector<std::string> out;
  for (const Posted& p : list) out.push_back(p.event() + " " + p.id());
  return out;
}

// A loopback port nothing listens on (bound, then closed): connections to it are refused.
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t length = sizeof a;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &length) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// Every secret the test daemons know: no posted body may hold one.
std::vector<std::string> all_tokens() {
  ApprovalTokens t;
  return {t.alice, t.dave, t.bob, t.carol, t.alice_approver, t.admin};
}

warden::test::PostgresServer& postgres() {
  static warden::test::PostgresServer server;  // throws (the test fails) when it cannot start
  return server;
}

}  // namespace

TEST_CASE("approval events are posted with the action as it will run, never a token",
          "[server][approvals][notify]") {
  HttpFake server;
  server.set_fallback(HttpReply{200, {}, "ok"});
  TempDir dir;
  RunningDaemon d(notify_config(dir, server.base_url() + "/hooks/T000/B000/secretpath"));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);

  // A command with credentials in it: a password for curl, the approver's and the agent's
  // Warden tokens.
  const std::string command = "touch a.txt; curl -u deploy:hunter2pw -H 'Authorization: Bearer " +
                              t.bob + "' https://example.com/x?t=" + t.alice;
  NotifyPending granted = notify_ask(alice, command);
  REQUIRE(error_code(notify_approve(bob, granted)) == "");
  NotifyPending denied = notify_ask(alice, "touch b.txt");
  REQUIRE(error_code(deny(bob, denied, "not today")) == "");
  NotifyPending expired = notify_ask(alice, "mkdir quick");  // the rule asks for a 1 s expiry

  // created, approved, executed (a decide's grant), created, denied, created, expired.
  REQUIRE(eventually([&] { return server.request_count() >= 7; }));
  auto list = posted(server);
  REQUIRE(list.size() == 7);
  CHECK(events_of(list) ==
        std::vector<std::string>{"created " + granted.id, "approved " + granted.id,
                                 "executed " + granted.id, "created " + denied.id,
                                 "denied " + denied.id, "created " + expired.id,
                                 "expired " + expired.id});

  for (const HttpSeen& seen : server.requests()) {
    INFO(seen.body);
    CHECK(seen.method == "POST");
    CHECK(seen.target == "/hooks/T000/B000/secretpath");
    CHECK(seen.header("Content-Type").rfind("application/json", 0) == 0);
    CHECK(seen.header("Authorization").empty());
    // Never a token: not the requesters' approval tokens, not any of the daemon's tokens,
    // not the password on the command line.
    for (const NotifyPending& p : {granted, denied, expired})
      CHECK(seen.body.find(p.token) == std::string::npos);
    for (const std::string& token : all_tokens()) CHECK(seen.body.find(token) == std::string::npos);
    CHECK(seen.body.find("hunter2pw") == std::string::npos);
    CHECK(seen.body.find("wapr_") == std::string::npos);
  }

  // What an approver needs, in the created event.
  const rapidjson::Value& a = list[0].doc["approval"];
  CHECK(str(a, "id") == granted.id);
  CHECK(str(a, "status") == "pending");
  CHECK(str(a, "action_hash") == granted.hash);
  CHECK(str(a, "principal") == "alice");
  CHECK(str(a, "agent") == "coder");
  CHECK(str(a, "session") == "s1");
  CHECK(str(a, "origin") == "decide");
  REQUIRE(a["rules"].IsArray());
  REQUIRE(a["rules"].Size() >= 1);
  CHECK(a["rules"][0].GetString() == std::string("touch-needs-approval"));
  CHECK(str(a, "reason").find("touch creates files") != std::string::npos);
  CHECK(a["approvers_needed"].GetInt() == 1);
  CHECK(a["expires_ms"].GetInt64() - a["created_ms"].GetInt64() == 3600 * 1000);
  CHECK(str(list[0].doc, "answer") == "warden approve " + granted.id);
  CHECK(str(list[0].doc, "daemon_id") == "state");
  // The action as it will run, its secrets masked the way the audit log masks them.
  const std::string action = str(a, "action");
  INFO(action);
  CHECK(action.find("touch a.txt; curl -u deploy:") != std::string::npos);
  CHECK(action.find("https://example.com/x?t=wdn_") != std::string::npos);
  CHECK(action.find("\"target\":\"shell\"") != std::string::npos);
  CHECK_FALSE(a["action_truncated"].GetBool());

  // approved: by whom; executed: what happened; denied: by whom and why; expired.
  CHECK(str(list[1].doc["approval"], "status") == "approved");
  CHECK(str(list[1].doc["approval"], "by") == "bob");
  CHECK(list[1].doc["approval"]["approvers"][0].GetString() == std::string("bob"));
  CHECK(str(list[2].doc["approval"], "status") == "executed");
  CHECK(list[2].doc["approval"]["result"]["granted"].GetBool());
  CHECK(str(list[2].doc, "summary").find("granted") != std::string::npos);
  CHECK(str(list[4].doc["approval"], "status") == "denied");
  CHECK(str(list[4].doc["approval"], "by") == "bob");
  CHECK(str(list[4].doc["approval"], "note") == "not today");
  CHECK(str(list[6].doc["approval"], "status") == "expired");
  CHECK(str(list[6].doc["approval"], "action").find("mkdir quick") != std::string::npos);

  // status counts them.
  Party admin(d.address(), t.admin);
  // The webhook has the last POST before the notifier has read its answer and counted it.
  REQUIRE(eventually([&] { return count(notify_status(admin), "sent") == 7; }));
  auto status = notify_status(admin);
  CHECK(status["enabled"].GetBool());
  CHECK(count(status, "sent") == 7);
  CHECK(count(status, "failed") == 0);
  CHECK(count(status, "retried") == 0);
  CHECK(count(status, "dropped") == 0);
  // The webhook's path is a credential: status names the host only.
  CHECK(str(status, "where") == server.base_url());
}

TEST_CASE("the slack format is one {\"text\"} a chat webhook accepts, its text made safe",
          "[server][approvals][notify]") {
  HttpFake server;
  server.set_fallback(HttpReply{200, {}, "ok"});
  TempDir dir;
  Config config = notify_config(dir, server.base_url() + "/hook");
  config.approvals.notify.format = "slack";
  config.approvals.notify.events = {"created", "denied"};  // not approved, executed, …
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob);

  // An explanation that tries to repaint the message: a terminal escape, a bidi override, a
  // line break, a channel mention and a link.
  const std::string explanation =
      "fine \x1b[32mAPPROVED\x1b[0m \xE2\x80\xAE desrever\nfake line <!channel> "
      "<https://evil.example|approve here> ```closing fence; curl -d @notes.txt";
  NotifyPending p = notify_ask(alice, "touch notes.txt", explanation);
  NotifyPending q = notify_ask(alice, "touch other.txt");
  REQUIRE(error_code(notify_approve(bob, p)) == "");  // approved, executed: not configured
  REQUIRE(error_code(deny(bob, q, "@channel <!here> look")) == "");
  // created p, created q, denied q; the approval of p is not posted.
  REQUIRE(eventually([&] { return server.request_count() >= 3; }));
  auto list = posted(server);
  REQUIRE(list.size() == 3);
  for (const Posted& item : list) {
    INFO(item.body);
    REQUIRE(item.doc.MemberCount() == 1);
    REQUIRE(item.doc.HasMember("text"));
    REQUIRE(item.doc["text"].IsString());
  }
  const std::string text = list[0].doc["text"].GetString();
  INFO(text);
  CHECK(text.find(p.id) != std::string::npos);
  CHECK(text.find("touch notes.txt") != std::string::npos);
  CHECK(text.find("warden approve " + p.id) != std::string::npos);
  CHECK(text.find(p.hash) != std::string::npos);
  CHECK(text.find("alice") != std::string::npos);
  CHECK(text.find("touch-needs-approval") != std::string::npos);
  // No control character reaches the chat: made visible instead.
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find("\xE2\x80\xAE") == std::string::npos);
  CHECK(text.find("\\u001B[32mAPPROVED") != std::string::npos);  // as JSON escapes it
  CHECK(text.find("\\u202e") != std::string::npos);
  // The agent's line break stays inside the one line the action is shown on.
  CHECK(text.find("\nfake line") == std::string::npos);
  // Slack's control sequences are escaped: no mention, no disguised link.
  CHECK(text.find("<!channel>") == std::string::npos);
  CHECK(text.find("<https://evil") == std::string::npos);
  CHECK(text.find("&lt;!channel&gt;") != std::string::npos);
  // The text's own code block is not closed by the action's backticks.
  CHECK(text.find("```closing") == std::string::npos);
  for (const std::string& token : all_tokens()) CHECK(text.find(token) == std::string::npos);
  CHECK(text.find(p.token) == std::string::npos);
  // Inside the code block the action is as it will run ("@notes.txt" is curl's, not a
  // mention); outside it, a mention word is broken by a zero-width space.
  CHECK(text.find("curl -d @notes.txt") != std::string::npos);
  const std::string denied = list[2].doc["text"].GetString();
  INFO(denied);
  CHECK(denied.find("denied by bob") != std::string::npos);
  CHECK(denied.find(q.id) != std::string::npos);
  CHECK(denied.find("Note: @\xE2\x80\x8B"
                    "channel &lt;!here&gt; look") != std::string::npos);
  CHECK(denied.find("@channel") == std::string::npos);
}

TEST_CASE("a webhook answering 500 and 429 is tried again, and the event posted once",
          "[server][approvals][notify]") {
  HttpFake server;
  server.push(HttpReply{500, {}, "try later"});
  server.push(HttpReply{429, {{"Retry-After", "0"}}, "slow down"});
  server.push(HttpReply{200, {}, "ok"});
  server.set_fallback(HttpReply{200, {}, "ok"});
  TempDir dir;
  auto log = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(log);
  RunningDaemon d(notify_config(dir, server.base_url() + "/hook"), options);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
  NotifyPending p = notify_ask(alice, "touch a.txt");
  NotifyPending q = notify_ask(alice, "touch b.txt");
  REQUIRE(error_code(deny(bob, q)) == "");
  // One event at a time, in order: once q's denial arrives, p's created event is done.
  REQUIRE(eventually([&] {
    for (const HttpSeen& seen : server.requests()) {
      if (seen.body.find("\"denied\"") != std::string::npos) return true;
    }
    return false;
  }));
  auto list = posted(server);
  CHECK(events_of(list) == std::vector<std::string>{"created " + p.id, "created " + p.id,
                                                    "created " + p.id, "created " + q.id,
                                                    "denied " + q.id});
  // The same event each time: retried, not re-rendered.
  REQUIRE(list.size() == 5);
  CHECK(list[0].body == list[1].body);
  CHECK(list[1].body == list[2].body);
  // The webhook has the last POST before the notifier has read its answer and counted it.
  REQUIRE(eventually([&] { return count(notify_status(admin), "sent") == 3; }));
  auto status = notify_status(admin);
  CHECK(count(status, "sent") == 3);
  CHECK(count(status, "retried") == 2);
  CHECK(count(status, "failed") == 0);
  CHECK(str(status, "last_error").find("429") != std::string::npos);
  d.stop();
  // Each failed attempt is logged.
  CHECK(log->str().find("attempt 1 of 4 to " + server.base_url() +
                        " failed: the webhook answered 500") != std::string::npos);
  CHECK(log->str().find("attempt 2 of 4 to " + server.base_url() +
                        " failed: the webhook answered 429") != std::string::npos);
}

TEST_CASE("a webhook answering 400 is not tried again; attempts are bounded",
          "[server][approvals][notify]") {
  HttpFake server;
  server.push(HttpReply{400, {}, "invalid_payload"});
  server.set_fallback(HttpReply{503, {}, "down"});
  TempDir dir;
  auto log = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(log);
  // The URL from the environment (url_env), as a chat webhook's secret URL would come.
  const std::string variable = "WARDEN_TEST_NOTIFY_URL_" + std::to_string(::getpid());
  ::setenv(variable.c_str(), (server.base_url() + "/hook").c_str(), 1);
  Config config = notify_config(dir, "");
  config.approvals.notify.url_env = variable;
  config.approvals.notify.max_attempts = 3;
  RunningDaemon d(config, options);
  ::unsetenv(variable.c_str());
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
  NotifyPending p = notify_ask(alice, "touch a.txt");
  NotifyPending q = notify_ask(alice, "touch b.txt");
  // p's created event: 400, once. q's: 503 three times (max_attempts), then given up.
  REQUIRE(eventually([&] { return count(notify_status(admin), "failed") == 2; }));
  auto list = posted(server);
  CHECK(events_of(list) == std::vector<std::string>{"created " + p.id, "created " + q.id,
                                                    "created " + q.id, "created " + q.id});
  auto status = notify_status(admin);
  CHECK(count(status, "sent") == 0);
  CHECK(count(status, "retried") == 2);
  CHECK(count(status, "failed") == 2);
  // The approvals are untouched by it: still pending, still answerable.
  REQUIRE(error_code(deny(bob, p)) == "");
  d.stop();
  CHECK(log->str().find("created of " + p.id + " not posted to " + server.base_url() +
                        ": the webhook answered 400: invalid_payload (not retried)") !=
        std::string::npos);
  CHECK(log->str().find("created of " + q.id + " not posted to " + server.base_url() +
                        ": the webhook answered 503: down (3 attempts)") != std::string::npos);
  // The webhook's path never reaches the log.
  CHECK(log->str().find("/hook") == std::string::npos);
}

TEST_CASE("a held webhook delays no decide and no approve; a full queue drops its oldest",
          "[server][approvals][notify]") {
  // Before the server: its handler threads use them until it is destroyed.
  Gate release;
  std::atomic<int> held{0}, answered{0};
  HttpFake server;
  server.route("/hook", [&](const HttpSeen&) {
    ++held;
    release.wait(60000ms);
    ++answered;
    return HttpReply{200, {}, "ok"};
  });
  TempDir dir;
  auto log = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(log);
  Config config = notify_config(dir, server.base_url() + "/hook");
  config.approvals.notify.timeout = 60000ms;
  config.approvals.notify.max_queue = 1;
  RunningDaemon d(config, options);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);

  NotifyPending p = notify_ask(alice, "touch a.txt");
  // p's created event is at the webhook, which does not answer.
  REQUIRE(eventually([&] { return held.load() == 1; }));
  // Meanwhile: a decide and an approve are answered, the webhook still holding the first.
  NotifyPending q = notify_ask(alice, "touch b.txt");
  std::string approved = notify_approve(bob, p);
  INFO(approved);
  REQUIRE(error_code(approved) == "");
  CHECK(str(payload_of(approved), "status") == "granted");
  CHECK(answered.load() == 0);
  CHECK(held.load() == 1);
  // One waits (max_queue = 1): q's created and p's approved were dropped for newer events.
  auto status = notify_status(admin);
  CHECK(count(status, "queued") == 1);
  CHECK(count(status, "dropped") == 2);
  CHECK(count(status, "sent") == 0);

  release.open();
  REQUIRE(eventually([&] { return count(notify_status(admin), "sent") == 2; }));
  CHECK(events_of(posted(server)) ==
        std::vector<std::string>{"created " + p.id, "executed " + p.id});
  d.stop();
  CHECK(log->str().find("the oldest (created of " + q.id + ") is dropped unsent") !=
        std::string::npos);
  CHECK(log->str().find("the oldest (approved of " + p.id + ") is dropped unsent") !=
        std::string::npos);
}

TEST_CASE("an unreachable webhook delays no answer, and a shutdown does not wait out its backoff",
          "[server][approvals][notify]") {
  TempDir dir;
  auto log = std::make_shared<std::ostringstream>();
  Daemon::Options options;
  options.logger = capture_logger(log);
  const std::string where = "http://127.0.0.1:" + std::to_string(closed_port());
  Config config = notify_config(dir, where + "/hook");
  // An hour between attempts: a shutdown that waited for it would not end within the test.
  config.approvals.notify.backoff = 3600000ms;
  config.approvals.notify.backoff_max = 3600000ms;
  RunningDaemon d(config, options);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
  NotifyPending p = notify_ask(alice, "touch a.txt");
  REQUIRE(eventually([&] { return count(notify_status(admin), "retried") == 1; }));
  // The notifier now waits an hour before its next attempt; answers do not wait with it.
  NotifyPending q = notify_ask(alice, "touch b.txt");
  std::string approved = notify_approve(bob, p);
  INFO(approved);
  CHECK(error_code(approved) == "");
  CHECK(error_code(deny(bob, q)) == "");
  auto status = notify_status(admin);
  CHECK(count(status, "sent") == 0);
  CHECK(count(status, "queued") == 4);  // q created, p approved, p executed, q denied
  CHECK_FALSE(str(status, "last_error").empty());
  CHECK(d.stop() == 0);
  const std::string text = log->str();
  INFO(text);
  CHECK(text.find("attempt 1 of 4 to " + where + " failed") != std::string::npos);
  CHECK(text.find("again in 3600000 ms") != std::string::npos);
  CHECK(text.find("4 approval event(s) not posted to " + where + ": the daemon is stopping") !=
        std::string::npos);
}

TEST_CASE("[approvals.notify] errors name the key and the line; the daemon does not start",
          "[server][approvals][notify][config]") {
  struct Case {
    std::string toml, key, message;
    int line;
  };
  const std::vector<Case> cases = {
      {"[approvals]\nstore = \"sqlite\"\n\n[approvals.notify]\nurl = \"http://hooks.example.com/x/SECRET\"\n",
       "approvals.notify.url", "plain http:// is allowed only to a loopback address", 5},
      {"[approvals.notify]\nurl = \"ftp://example.com/x\"\n", "approvals.notify.url",
       "must be an https:// URL", 2},
      {"[approvals.notify]\nurl = \"not a url\"\n", "approvals.notify.url", "is not a URL", 2},
      {"[approvals.notify]\nurl = \"https://hooks.example.com/x\"\nevents = [\"created\", \"approve\"]\n",
       "approvals.notify.events", "'approve' is not an event", 3},
      {"[approvals.notify]\nurl = \"https://hooks.example.com/x\"\nevents = []\n",
       "approvals.notify.events", "must name at least one event", 3},
      {"[approvals.notify]\nurl = \"https://hooks.example.com/x\"\n\nformat = \"teams\"\n",
       "approvals.notify.format", "must be \"slack\"", 4},
      {"[approvals.notify]\nurl = \"https://hooks.example.com/x\"\nmax_attempts = 0\n",
       "approvals.notify.max_attempts", "must be between 1 and 100", 3},
      {"[approvals.notify]\nurl = \"https://h.example.com/x\"\nurl_env = \"HOOK\"\n",
       "approvals.notify.url_env", "not both", 3},
      {"[approvals.notify]\nurl_env = \"https://h.example.com/x\"\n", "approvals.notify.url_env",
       "never the URL itself", 2},
      {"[approvals.notify]\nurl = \"https://h.example.com/x\"\nbackoff_ms = 5000\nbackoff_max_ms = 100\n",
       "approvals.notify.backoff_max_ms", "must be at least backoff_ms", 4},
      {"[approvals.notify]\nurl = \"https://h.example.com/x\"\nheaders = 3\n",
       "approvals.notify.headers", "unknown key", 3},
      {"\n[approvals.notify]\nformat = \"json\"\n", "approvals.notify", "needs url", 2},
  };
  for (const Case& c : cases) {
    INFO(c.toml);
    Config config;
    ConfigErrors errors = parse_config(c.toml, "", &config);
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].key == c.key);
    CHECK(errors[0].line == c.line);
    CHECK(errors[0].message.find(c.message) != std::string::npos);
    const std::string text = errors[0].to_text("warden.toml");
    CHECK(text.rfind("warden.toml:" + std::to_string(c.line) + ": " + c.key + ": ", 0) == 0);
    // The URL is a secret: no error repeats its path.
    CHECK(text.find("SECRET") == std::string::npos);
    CHECK(config.approvals.notify.url.empty());  // a failed parse changes nothing
  }
  // Loopback may be plain http; anything else needs https.
  for (const char* ok : {"http://127.0.0.1:8080/hook", "http://[::1]:9/x", "http://localhost/x",
                         "http://127.3.4.5/x", "https://hooks.slack.com/services/T/B/X",
                         "HTTPS://chat.googleapis.com/v1/spaces/x/messages?key=k&token=t"}) {
    INFO(ok);
    CHECK(notify_url_problem(ok) == "");
  }
  for (const char* bad : {"http://10.0.0.1/x", "http://[::2]/x", "http://localhost.example.com/x",
                          "http://128.0.0.1/x", "file:///etc/passwd", "https://", "/relative",
                          "http://127.0.0.1.nip.io/x"}) {
    INFO(bad);
    CHECK(notify_url_problem(bad) != "");
  }
  // A daemon built in code is checked the same way as it starts.
  {
    TempDir dir;
    Config config = approvals_config(dir);
    config.approvals.notify.url = "http://hooks.example.com/x";
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find("approvals.notify.url: plain http://") !=
          std::string::npos);
  }
  // url_env: the variable must be set, and hold a URL that passes the same checks.
  {
    TempDir dir;
    const std::string variable = "WARDEN_TEST_NOTIFY_UNSET_" + std::to_string(::getpid());
    Config config = approvals_config(dir);
    config.approvals.notify.url_env = variable;
    RunningDaemon d(config);
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().step == "notify");
    CHECK(d.start_result().message.find("$" + variable + " is not set") != std::string::npos);
  }
  {
    TempDir dir;
    const std::string variable = "WARDEN_TEST_NOTIFY_PLAIN_" + std::to_string(::getpid());
    ::setenv(variable.c_str(), "http://hooks.example.com/services/SECRET", 1);
    Config config = approvals_config(dir);
    config.approvals.notify.url_env = variable;
    RunningDaemon d(config);
    ::unsetenv(variable.c_str());
    CHECK_FALSE(d.ok());
    CHECK(d.start_result().exit_code == 2);
    CHECK(d.start_result().message.find("plain http://") != std::string::npos);
    CHECK(d.start_result().message.find("SECRET") == std::string::npos);
  }
  // `warden serve` with such a file: exit 2, the file, line and key on stderr.
  {
    TempDir dir;
    const std::string path = dir.write(
        "warden.toml",
        "listen = \"127.0.0.1:0\"\n\n[approvals.notify]\nurl = \"http://hooks.example.com/x\"\n",
        0600);
    const std::string command =
        std::string(WARDEN_BINARY_DIR "/cli/warden") + " serve --config '" + path + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string out;
    char buffer[4096];
    while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    const int status = ::pclose(pipe);
    INFO(out);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK(out.find(path + ":4: approvals.notify.url: plain http:// is allowed only to a loopback "
                          "address") != std::string::npos);
  }
}

TEST_CASE("the posted action is bounded, masked and shown on one line",
          "[server][approvals][notify]") {
  NotifyConfig config;
  config.format = "json";
  auto log = std::make_shared<std::ostringstream>();
  // No audit masker (masking off in the audit log): the notifier masks all the same.
  Notifier notifier(config, "http://127.0.0.1:9/hook", capture_logger(log), nullptr, "d1");
  Notifier::Event e;
  e.event = "created";
  e.approval.id = "apr_0123456789abcdef01234567";
  e.approval.principal = "alice";
  e.approval.action_hash = "sha256:00";
  e.approval.origin = "submit";
  const std::string secret_command =
      "PGPASSWORD=pgsecret42 psql -h db; echo wapr_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG";
  e.approval.action_json = "{\"target\":\"shell\",\"payload\":{\"command\":" +
                           json_string(secret_command + "\x7f\xC2\x85" + std::string(5000, 'x')) +
                           "}}";
  e.approval.reason = "why\nnot \xE2\x80\x8B hidden";
  const std::string body = notifier.body(e);
  auto doc = parse(body);
  INFO(body);
  REQUIRE(doc.IsObject());
  const std::string action = str(doc["approval"], "action");
  CHECK(doc["approval"]["action_truncated"].GetBool());
  CHECK(action.size() < 1600);
  CHECK(action.find("more bytes]") != std::string::npos);
  CHECK(action.find("PGPASSWORD=") != std::string::npos);
  CHECK(action.find("pgsecret42") == std::string::npos);
  CHECK(action.find("abcdefghijklmnopqrstuvwxyz0123456789") == std::string::npos);
  CHECK(action.find("\\x7f\\u0085") != std::string::npos);
  CHECK(action.find('\x7f') == std::string::npos);
  CHECK(str(doc["approval"], "reason") == "why\\nnot \\u200b hidden");
  CHECK(str(doc, "event") == "created");
  CHECK(str(doc["approval"], "status") == "pending");
  // The stored action is read with json::parse_stored (bindings/json.h): text after a NUL
  // byte, which RapidJSON took for the end (the post showed only the part before), makes it
  // unreadable, so the post shows the whole stored text, masked, on one line.
  e.approval.action_json = R"({"target":"shell","payload":{"command":"ls"}})";
  CHECK(str(parse(notifier.body(e))["approval"], "action") == e.approval.action_json);
  e.approval.action_json += std::string("\0{\"command\":\"rm -rf /\"}", 23);
  const std::string whole = str(parse(notifier.body(e))["approval"], "action");
  INFO(whole);
  CHECK(whole.find("rm -rf /") != std::string::npos);
  CHECK(whole.find('\0') == std::string::npos);
  // Events it is not configured for, and the audit-only ones, are not queued.
  NotifyConfig only_denied;
  only_denied.events = {"denied"};
  Notifier quiet(only_denied, "http://127.0.0.1:9/hook", capture_logger(log), nullptr, "d1");
  REQUIRE(quiet.start() == "");
  CHECK_FALSE(quiet.notify("created", e.approval, "alice", "", ""));
  CHECK_FALSE(quiet.notify("vote", e.approval, "bob", "", ""));
  CHECK_FALSE(quiet.notify("scoped-use", e.approval, "bob", "", ""));
  quiet.stop();
  CHECK_FALSE(quiet.notify("denied", e.approval, "bob", "", ""));  // stopped
}

TEST_CASE("PostgreSQL: a fleet posts each approval event once, from the daemon where it happened",
          "[server][approvals][notify][postgres]") {
  HttpFake server;
  server.set_fallback(HttpReply{200, {}, "ok"});
  TempDir dir;
  const std::string conninfo = postgres().create_database("notify_" + std::to_string(::getpid()));
  RunningDaemon a(notify_config(dir, server.base_url() + "/hook", "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(notify_config(dir, server.base_url() + "/hook", "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_on_a(a.address(), t.alice), bob_on_b(b.address(), t.bob),
      bob_on_a(a.address(), t.bob);

  NotifyPending p = notify_ask(alice_on_a, "touch fleet.txt");  // created on A
  REQUIRE(error_code(notify_approve(bob_on_b, p)) == "");       // approved and executed on B
  NotifyPending quick = notify_ask(alice_on_a, "mkdir quick");  // expired by whichever sweeper wins
  REQUIRE(eventually([&] {
    return payload_of(bob_on_b.call(make_request("l", "pending")))["approvals"].Size() == 0;
  }));
  // A last event on each daemon: each posts in order, so once both arrive, nothing of the
  // above is still to come.
  NotifyPending last_a = notify_ask(alice_on_a, "touch last-a.txt");
  NotifyPending last_b = notify_ask(alice_on_a, "touch last-b.txt");
  REQUIRE(error_code(deny(bob_on_a, last_a, "marker a")) == "");
  REQUIRE(error_code(deny(bob_on_b, last_b, "marker b")) == "");
  REQUIRE(eventually([&] {
    int markers = 0, expiries = 0;
    for (const HttpSeen& seen : server.requests()) {
      markers += seen.body.find("\"marker a\"") != std::string::npos;
      markers += seen.body.find("\"marker b\"") != std::string::npos;
      expiries += seen.body.find("\"event\":\"expired\"") != std::string::npos;
    }
    return markers == 2 && expiries >= 1;
  }));
  std::map<std::string, std::vector<std::string>> from;  // "event id" → the daemons that posted it
  for (const Posted& item : posted(server)) {
    from[item.event() + " " + item.id()].push_back(str(item.doc, "daemon_id"));
  }
  CHECK(from["created " + p.id] == std::vector<std::string>{"daemon-a"});
  CHECK(from["approved " + p.id] == std::vector<std::string>{"daemon-b"});
  CHECK(from["executed " + p.id] == std::vector<std::string>{"daemon-b"});
  CHECK(from["created " + quick.id] == std::vector<std::string>{"daemon-a"});
  CHECK(from["expired " + quick.id].size() == 1);
  CHECK(from["denied " + last_a.id] == std::vector<std::string>{"daemon-a"});
  CHECK(from["denied " + last_b.id] == std::vector<std::string>{"daemon-b"});
  CHECK(server.request_count() == 9);
}
