// The operations listener ([metrics] listen): a real daemon makes decisions of every outcome,
// then /metrics is fetched by a real HTTP client and read by Prometheus' own parser (Debian's
// python3-prometheus-client, run as a child process); /health says 200 or 503 naming the
// failing part; anything but GET on its two paths, and oversized or slow requests, are
// refused without touching the protocol listener. Also the [metrics] keys and the log
// formats' structured fields.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <map>
#include <set>
#include <vector>

#include "server/errors.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server_fixture.h"
#include "sqlite_exec.h"
#include "tests/build_paths.h"
#include "warden_child.h"

using namespace warden::server;
using namespace warden::server::testing;

namespace {

// Rejects shell proposals (and a monitor rule watches them), approves replies; anything else
// falls to the default outcome, approval-required.
const char* kMetricsRules = R"CLP(
(defrule no-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell) (reason "no shell"))))
(defrule watch-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (mode monitor) (rule watch-shell)
                    (reason "seen"))))
(defrule replies-ok
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule replies-ok) (reason "fine"))))
)CLP";

const char* kDeployProposal = R"({"target":"deploy","action":"run","payload":{"env":"prod"}})";
const char* kDeployProposal2 = R"({"target":"deploy","action":"run","payload":{"env":"dev"}})";

const std::string kPython = "/usr/bin/python3";

// Fetches a URL with Python's urllib and parses the body with prometheus_client's parser;
// prints one JSON object: status, content type and the families.
const char* kScrapeScript = R"PY(
import json, sys, urllib.request
from prometheus_client.parser import text_string_to_metric_families
with urllib.request.urlopen(sys.argv[1], timeout=20) as r:
    status = r.status
    ctype = r.headers.get("Content-Type", "")
    text = r.read().decode("utf-8")
families = []
for f in text_string_to_metric_families(text):
    families.append({"name": f.name, "type": f.type, "help": f.documentation,
                     "samples": [{"name": s.name, "labels": s.labels, "value": s.value}
                                 for s in f.samples]})
print(json.dumps({"status": status, "content_type": ctype, "families": families}))
)PY";

// Runs argv, returns its exit status and what it wrote (stdout and stderr together).
int metrics_run_child(const std::vector<std::string>& argv, std::string* output) {
  int out[2];
  REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(out[1], 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output->append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct MetricSample {
  std::map<std::string, std::string> labels;
  double value = 0;
};
struct MetricFamily {
  std::string type, help;
  std::map<std::string, std::vector<MetricSample>> samples;  // by sample name
};
struct MetricsScrape {
  std::string content_type;
  std::map<std::string, MetricFamily> families;  // by family name, as the parser names them

  // The value of the one sample `name` with exactly these labels; fails the test when there
  // is none.
  double value(const std::string& name,
               const std::map<std::string, std::string>& labels = {}) const {
    for (const auto& [family_name, family] : families) {
      auto it = family.samples.find(name);
      if (it == family.samples.end()) continue;
      for (const MetricSample& s : it->second) {
        if (s.labels == labels) return s.value;
      }
    }
    std::string shown;
    for (const auto& [k, v] : labels) shown += k + "=" + v + " ";
    FAIL("no sample " << name << " {" << shown << "}");
    return NAN;
  }
  const std::vector<MetricSample>& samples(const std::string& name) const {
    static const std::vector<MetricSample> none;
    for (const auto& [family_name, family] : families) {
      auto it = family.samples.find(name);
      if (it != family.samples.end()) return it->second;
    }
    return none;
  }
  std::string type_of_sample(const std::string& name) const {
    for (const auto& [family_name, family] : families) {
      if (family.samples.count(name)) return family.type;
    }
    return "";
  }
};

// GET http://ADDRESS/metrics with a real client, parsed by a real Prometheus parser.
MetricsScrape scrape_metrics(const std::string& address) {
  INFO(kPython << " with python3-prometheus-client is needed (scripts/setup.sh installs it)");
  REQUIRE(::access(kPython.c_str(), X_OK) == 0);
  std::string output;
  int code = metrics_run_child(
      {kPython, "-I", "-c", kScrapeScript, "http://" + address + "/metrics"}, &output);
  INFO(output);
  REQUIRE(code == 0);
  rapidjson::Document doc;
  std::string last = output.substr(output.rfind('\n', output.size() - 2) + 1);
  doc.Parse(last.c_str());
  REQUIRE_FALSE(doc.HasParseError());
  MetricsScrape s;
  REQUIRE(doc["status"].GetInt() == 200);
  s.content_type = doc["content_type"].GetString();
  for (const auto& f : doc["families"].GetArray()) {
    MetricFamily family;
    family.type = f["type"].GetString();
    family.help = f["help"].GetString();
    for (const auto& js : f["samples"].GetArray()) {
      MetricSample sample;
      for (auto m = js["labels"].MemberBegin(); m != js["labels"].MemberEnd(); ++m) {
        sample.labels[m->name.GetString()] = m->value.GetString();
      }
      sample.value = js["value"].GetDouble();
      family.samples[js["name"].GetString()].push_back(std::move(sample));
    }
    std::string name = f["name"].GetString();
    REQUIRE(s.families.count(name) == 0);
    s.families[name] = std::move(family);
  }
  return s;
}

// A TCP connection to HOST:PORT (IPv4), as a plain descriptor.
int connect_to(const std::string& address) {
  std::string host;
  std::uint16_t port = 0;
  REQUIRE(split_host_port(address, &host, &port));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  REQUIRE(::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  return fd;
}

// One HTTP exchange over a plain socket: `request` is sent as is (then our side is shut), and
// everything the server sends until it closes is returned. Bounded: 20 s at most.
std::string http_exchange(const std::string& address, const std::string& request,
                          bool shut_write = true) {
  int fd = connect_to(address);
  std::size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;  // the server may close early (oversized): read what it said
    sent += static_cast<std::size_t>(n);
  }
  if (shut_write) ::shutdown(fd, SHUT_WR);
  std::string answer;
  auto until = std::chrono::steady_clock::now() + 20s;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        until - std::chrono::steady_clock::now());
    INFO("the metrics listener did not finish its answer within 20 s");
    REQUIRE(left.count() > 0);
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

int http_status(const std::string& answer) {
  // "HTTP/1.1 200 OK"
  if (answer.rfind("HTTP/1.", 0) != 0 || answer.size() < 12) return -1;
  return std::stoi(answer.substr(9, 3));
}
std::string http_body(const std::string& answer) {
  std::size_t at = answer.find("\r\n\r\n");
  return at == std::string::npos ? "" : answer.substr(at + 4);
}
std::string http_get(const std::string& address, const std::string& path) {
  return http_exchange(address,
                       "GET " + path + " HTTP/1.1\r\nHost: warden\r\nConnection: close\r\n\r\n");
}

// The exposition's own shape, beyond what the parser insists on: every family's HELP is
// followed by its TYPE, each once; every sample belongs to the family declared above it
// (histograms: _bucket, _sum, _count); counters' samples end in _total.
void check_exposition_text(const std::string& text) {
  std::set<std::string> declared;
  std::string family, type;
  std::istringstream in(text);
  std::string line, previous;
  int samples = 0;
  while (std::getline(in, line)) {
    INFO(line);
    REQUIRE_FALSE(line.empty());
    if (line.rfind("# HELP ", 0) == 0) {
      family = line.substr(7, line.find(' ', 7) - 7);
      CHECK(declared.insert(family).second);
    } else if (line.rfind("# TYPE ", 0) == 0) {
      CHECK(previous.rfind("# HELP " + family + " ", 0) == 0);
      CHECK(line.substr(7, family.size() + 1) == family + " ");
      type = line.substr(7 + family.size() + 1);
      CHECK((type == "counter" || type == "gauge" || type == "histogram"));
      if (type == "counter") CHECK(family.size() > 6);
      if (type == "counter") CHECK(family.substr(family.size() - 6) == "_total");
    } else {
      REQUIRE(line[0] != '#');
      std::string name = line.substr(0, line.find_first_of("{ "));
      if (type == "histogram") {
        CHECK((name == family + "_bucket" || name == family + "_sum" || name == family + "_count"));
      } else {
        CHECK(name == family);
      }
      ++samples;
    }
    previous = line;
  }
  CHECK(samples > 20);
}

std::string metrics_decide(Client& client, const std::string& id, const std::string& proposal,
                           std::string* error_code_out = nullptr) {
  std::string error;
  REQUIRE(client.send_message(decide_request(id, proposal), &error));
  std::string reply = read_or_fail(client, 20000ms);
  INFO(reply);
  auto doc = parse(reply);
  REQUIRE(doc.IsObject());
  REQUIRE(doc["payload"].HasMember("decision"));
  const auto& d = doc["payload"]["decision"];
  if (error_code_out) *error_code_out = d.HasMember("error") ? d["error"].GetString() : "";
  return d["outcome"].GetString();
}

Config metrics_config(const TempDir& dir) {
  Config config = test_config(dir);
  dir.write("rules/policy.clp", kMetricsRules);
  config.metrics.listen = "127.0.0.1:0";
  return config;
}

}  // namespace

TEST_CASE("/metrics counts decisions by outcome, rule and error code, read by Prometheus' parser",
          "[server][metrics]") {
  TempDir dir;
  Config config = metrics_config(dir);
  config.approvals.max_pending_per_principal = 1;  // the second deploy fails closed
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  REQUIRE(metrics.rfind("127.0.0.1:", 0) == 0);

  Client agent;
  connect_agent(agent, d);
  std::string code;
  for (int i = 0; i < 3; ++i) {
    CHECK(metrics_decide(agent, "s" + std::to_string(i), kShellProposal, &code) == "reject");
    CHECK(code == "");
  }
  for (int i = 0; i < 2; ++i) {
    CHECK(metrics_decide(agent, "r" + std::to_string(i), kReplyProposal, &code) == "approve");
  }
  CHECK(metrics_decide(agent, "d1", kDeployProposal, &code) == "approval-required");
  CHECK(metrics_decide(agent, "d2", kDeployProposal2, &code) == "reject");
  CHECK(code == err::kTooManyApprovals);
  // A failed authentication, a reload and a failed one.
  Client stranger;
  std::string error;
  REQUIRE(stranger.connect(d.address(), 5000ms, &error));
  CHECK_FALSE(stranger.authenticate("wdn_not_a_token", 5000ms, &error));
  Client admin;
  REQUIRE(admin.connect(d.address(), 5000ms, &error));
  REQUIRE(admin.authenticate(Tokens{}.admin, 5000ms, &error));
  REQUIRE(admin.send_message(make_request("re1", "reload"), &error));
  CHECK(error_code(read_or_fail(admin, 20000ms)) == "");
  dir.write("rules/policy.clp", kBrokenRules);
  REQUIRE(admin.send_message(make_request("re2", "reload"), &error));
  CHECK(error_code(read_or_fail(admin, 20000ms)) == err::kReloadFailed);

  const std::string raw = http_get(metrics, "/metrics");
  REQUIRE(http_status(raw) == 200);
  check_exposition_text(http_body(raw));
  MetricsScrape s = scrape_metrics(metrics);
  CHECK(s.content_type == "text/plain; version=0.0.4; charset=utf-8");
  for (const auto& [name, family] : s.families) {
    INFO(name);
    CHECK((family.type == "counter" || family.type == "gauge" || family.type == "histogram"));
    CHECK_FALSE(family.help.empty());
  }

  CHECK(s.type_of_sample("warden_decisions_total") == "counter");
  CHECK(s.value("warden_decisions_total", {{"outcome", "approve"}}) == 2);
  CHECK(s.value("warden_decisions_total", {{"outcome", "reject"}}) == 4);
  CHECK(s.value("warden_decisions_total", {{"outcome", "approval-required"}}) == 1);
  CHECK(s.value("warden_decisions_failed_closed_total", {{"code", "E_TOO_MANY_APPROVALS"}}) == 1);
  CHECK(s.samples("warden_decisions_failed_closed_total").size() == 1);
  CHECK(s.value("warden_decisions_defaulted_total") == 2);

  // Every loaded rule, both modes, and nothing else.
  CHECK(s.samples("warden_rule_decisions_total").size() == 6);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "no-shell"}, {"mode", "enforce"}}) == 3);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "no-shell"}, {"mode", "monitor"}}) == 0);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "watch-shell"}, {"mode", "monitor"}}) ==
        3);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "watch-shell"}, {"mode", "enforce"}}) ==
        0);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "replies-ok"}, {"mode", "enforce"}}) == 2);
  CHECK(s.value("warden_rule_decisions_total", {{"rule", "replies-ok"}, {"mode", "monitor"}}) == 0);
  CHECK(s.value("warden_rule_decisions_unlisted_total") == 0);

  // The histogram holds every decision, in buckets that only grow.
  CHECK(s.type_of_sample("warden_decision_duration_seconds_bucket") == "histogram");
  CHECK(s.value("warden_decision_duration_seconds_count") == 7);
  CHECK(s.value("warden_decision_duration_seconds_bucket", {{"le", "+Inf"}}) == 7);
  const auto& buckets = s.samples("warden_decision_duration_seconds_bucket");
  CHECK(buckets.size() == 15);
  double last = 0;
  for (const MetricSample& b : buckets) {
    CHECK(b.value >= last);
    last = b.value;
  }
  std::vector<std::string> bounds;
  for (const MetricSample& b : buckets) bounds.push_back(b.labels.at("le"));
  CHECK(bounds == std::vector<std::string>{"0.00005", "0.0001", "0.00025", "0.0005", "0.001",
                                           "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
                                           "0.25", "0.5", "1", "+Inf"});
  CHECK(s.value("warden_decision_duration_seconds_sum") >= 0);

  CHECK(s.value("warden_auth_failures_total") == 1);
  CHECK(s.value("warden_connections_accepted_total") == 3);
  CHECK(s.value("warden_connections_current") >= 2);
  CHECK(s.value("warden_connections_refused_total") == 0);
  CHECK(s.value("warden_reloads_total") == 1);
  CHECK(s.value("warden_reload_failures_total") == 1);
  CHECK(s.value("warden_rules_loaded") == 3);
  CHECK(s.value("warden_decision_workers") == 2);
  CHECK(s.value("warden_decision_queue_depth") == 0);
  CHECK(s.type_of_sample("warden_decision_workers_busy") == "gauge");
  CHECK(s.value("warden_decision_workers_behind") == 0);
  CHECK(s.value("warden_audit_enabled") == 1);
  CHECK(s.value("warden_audit_last_write_ok") == 1);
  CHECK(s.value("warden_audit_write_errors_total") == 0);
  CHECK(s.value("warden_audit_records_total") >= 8);  // start, 7 decisions, a reload
  CHECK(s.value("warden_approvals_store_ok") == 1);
  CHECK(s.value("warden_health_ok") == 1);
  // The two fetches before this one.
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "200"}}) >= 1);

  // Nothing of who asked or what: no principal, session, token or payload in the text.
  const std::string text = http_body(raw);
  for (const char* secret : {"alice", "wdn_", "rm -rf", "prod", "no shell"}) {
    INFO(secret);
    CHECK(text.find(secret) == std::string::npos);
  }
}

TEST_CASE("/health is 200 while the daemon can decide and 503 naming a failing approvals store",
          "[server][metrics]") {
  TempDir dir;
  RunningDaemon d(metrics_config(dir));
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  std::string answer = http_get(metrics, "/health");
  INFO(answer);
  REQUIRE(http_status(answer) == 200);
  CHECK(answer.find("Content-Type: application/json") != std::string::npos);
  auto health = parse(http_body(answer));
  REQUIRE(health.IsObject());
  CHECK(std::string(health["status"].GetString()) == "ok");
  CHECK_FALSE(health.HasMember("failing"));
  CHECK(std::string(health["checks"]["rules"].GetString()) == "ok");
  CHECK(std::string(health["checks"]["workers"].GetString()) == "ok");
  CHECK(std::string(health["checks"]["audit"].GetString()) == "ok");
  CHECK(std::string(health["checks"]["approvals"].GetString()) == "ok");

  // The approvals table goes away under the daemon: its next call fails.
  const std::string db = (dir.path() / "state/state.db").string();
  sqlite_exec(db, "ALTER TABLE approvals RENAME TO approvals_moved");
  Client agent;
  connect_agent(agent, d);
  std::string error;
  REQUIRE(agent.send_message(decide_request("1", kDeployProposal), &error));
  CHECK(error_code(read_or_fail(agent, 20000ms)) == err::kApprovalStore);
  REQUIRE(eventually([&] { return http_status(http_get(metrics, "/health")) == 503; }));
  answer = http_get(metrics, "/health");
  health = parse(http_body(answer));
  REQUIRE(health.IsObject());
  CHECK(std::string(health["status"].GetString()) == "failing");
  REQUIRE(health["failing"].IsArray());
  REQUIRE(health["failing"].Size() == 1);
  CHECK(std::string(health["failing"][0].GetString()) == "approvals");
  CHECK(std::string(health["checks"]["approvals"].GetString()) == "failing");
  CHECK(std::string(health["checks"]["audit"].GetString()) == "ok");
  // The cause stays in the log and `status`: nothing about the database here.
  CHECK(http_body(answer).find("approvals_moved") == std::string::npos);
  CHECK(http_body(answer).find("no such table") == std::string::npos);
  MetricsScrape failing = scrape_metrics(metrics);
  CHECK(failing.value("warden_approvals_store_ok") == 0);
  CHECK(failing.value("warden_approvals_store_failures_total") >= 1);
  CHECK(failing.value("warden_health_ok") == 0);
  // Decisions that need no approval are still made.
  CHECK(metrics_decide(agent, "2", kReplyProposal) == "approve");

  // Back: the next call succeeds, /health is 200 again. Each decision is answered (a read
  // that gets no reply fails the wait).
  sqlite_exec(db, "ALTER TABLE approvals_moved RENAME TO approvals");
  REQUIRE(eventually([&] {
    std::string e;
    agent.send_message(decide_request("3", kDeployProposal), &e);
    if (reply_code(read_or_fail(agent, 20000ms)) == "<not json>") return false;
    return http_status(http_get(metrics, "/health")) == 200;
  }));
  MetricsScrape back = scrape_metrics(metrics);
  CHECK(back.value("warden_approvals_store_ok") == 1);
  CHECK(back.value("warden_health_ok") == 1);
}

TEST_CASE(
    "the metrics listener answers GET on /metrics and /health only, and refuses "
    "oversized requests without touching the protocol",
    "[server][metrics]") {
  TempDir dir;
  RunningDaemon d(metrics_config(dir));
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  Client agent;
  connect_agent(agent, d);  // connected before, answered after

  std::string a = http_get(metrics, "/nowhere");
  CHECK(http_status(a) == 404);
  a = http_get(metrics, "/metrics/more");
  CHECK(http_status(a) == 404);
  a = http_exchange(metrics, "POST /metrics HTTP/1.1\r\nHost: w\r\nContent-Length: 0\r\n\r\n");
  INFO(a);
  CHECK(http_status(a) == 405);
  CHECK(a.find("Allow: GET\r\n") != std::string::npos);
  a = http_exchange(metrics, "HEAD /health HTTP/1.1\r\nHost: w\r\n\r\n");
  CHECK(http_status(a) == 405);
  a = http_exchange(metrics, "NOT HTTP AT ALL\r\n\r\n");
  CHECK(http_status(a) == 400);
  a = http_exchange(metrics, "GET /metrics HTTP/1.1\r\nHost: w\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(http_status(a) == 400);
  // Headers over 8 KiB, a request line over 8 KiB, more than 64 header fields.
  a = http_exchange(metrics, "GET /metrics HTTP/1.1\r\nHost: w\r\nX-Big: " +
                                 std::string(20 * 1024, 'a') + "\r\n\r\n");
  CHECK(http_status(a) == 431);
  a = http_exchange(metrics,
                    "GET /" + std::string(16 * 1024, 'm') + " HTTP/1.1\r\nHost: w\r\n\r\n");
  CHECK(http_status(a) == 431);
  std::string many = "GET /metrics HTTP/1.1\r\nHost: w\r\n";
  for (int i = 0; i < 100; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  a = http_exchange(metrics, many + "\r\n");
  CHECK(http_status(a) == 431);
  // A keep-alive connection gets several answers.
  a = http_exchange(
      metrics,
      "GET /health HTTP/1.1\r\nHost: w\r\n\r\nGET /nowhere HTTP/1.1\r\nHost: w\r\n\r\n"
      "GET /health HTTP/1.1\r\nHost: w\r\nConnection: close\r\n\r\n");
  CHECK(a.rfind("HTTP/1.1 200", 0) == 0);
  CHECK(a.find("HTTP/1.1 404") != std::string::npos);
  CHECK(a.find("HTTP/1.1 200", 10) != std::string::npos);

  // The protocol listener answers as before, on the old connection and on a new one.
  CHECK(metrics_decide(agent, "1", kShellProposal) == "reject");
  Client later;
  connect_agent(later, d);
  CHECK(metrics_decide(later, "2", kReplyProposal) == "approve");

  MetricsScrape s = scrape_metrics(metrics);
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "404"}}) == 3);
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "405"}}) == 2);
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "400"}}) == 2);
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "431"}}) == 3);
  CHECK(s.value("warden_metrics_http_responses_total", {{"code", "200"}}) == 2);
  CHECK(s.value("warden_decisions_total", {{"outcome", "reject"}}) == 1);
  CHECK(s.value("warden_protocol_errors_total") == 0);
}

TEST_CASE("slow clients of the metrics listener are cut off and cannot hold it or the protocol",
          "[server][metrics]") {
  TempDir dir;
  Config config = metrics_config(dir);
  config.metrics.max_connections = 2;
  config.metrics.timeout = 500ms;
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  // Two clients that start a request and never finish it.
  auto slow = [&] {
    int fd = connect_to(metrics);
    REQUIRE(::send(fd, "GET /metr", 9, MSG_NOSIGNAL) == 9);
    return fd;
  };
  int first = slow();
  int second = slow();
  // While they hold both slots, the protocol listener answers.
  Client agent;
  connect_agent(agent, d);
  CHECK(metrics_decide(agent, "1", kShellProposal) == "reject");
  // Both are closed by the listener once their time is up (it never answers them).
  for (int fd : {first, second}) {
    pollfd p{fd, POLLIN, 0};
    INFO("a slow client was not closed within 20 s");
    REQUIRE(::poll(&p, 1, 20000) == 1);
    char buf[64];
    CHECK(::recv(fd, buf, sizeof buf, 0) <= 0);
    ::close(fd);
  }
  // Their slots are free again: a whole request is answered.
  REQUIRE(eventually([&] { return http_status(http_get(metrics, "/health")) == 200; }));
  CHECK(metrics_decide(agent, "2", kReplyProposal) == "approve");
}

TEST_CASE("connections over metrics.max_connections are closed unanswered", "[server][metrics]") {
  TempDir dir;
  Config config = metrics_config(dir);
  config.metrics.max_connections = 1;
  config.metrics.timeout = 60000ms;  // the holder keeps its slot for the whole test
  RunningDaemon d(config);
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  int holder = connect_to(metrics);
  // Accepted in order: the holder has the one slot once the listener took it. A second
  // connection is closed without an answer.
  std::string refused = http_get(metrics, "/health");
  CHECK(refused.empty());
  ::close(holder);
  // The slot is free once the listener saw the holder go.
  REQUIRE(eventually([&] { return http_status(http_get(metrics, "/health")) == 200; }));
  MetricsScrape s = scrape_metrics(metrics);
  CHECK(s.value("warden_metrics_http_refused_total") >= 1);
}

TEST_CASE("[metrics] keys: off by default, values, errors naming the key", "[server][metrics]") {
  Config defaults;
  CHECK(defaults.metrics.listen.empty());
  CHECK_FALSE(defaults.metrics.enabled());
  Config c;
  REQUIRE(parse_config("[metrics]\nlisten = \"127.0.0.1:9106\"\nmax_connections = 4\n"
                       "timeout_ms = 1500\n",
                       "", &c)
              .empty());
  CHECK(c.metrics.listen == "127.0.0.1:9106");
  CHECK(c.metrics.max_connections == 4);
  CHECK(c.metrics.timeout == 1500ms);
  CHECK(validate_config(c).empty());
  Config bad;
  ConfigErrors errors = parse_config("[metrics]\nmax_connections = 0\nport = 3\n", "", &bad);
  std::set<std::string> keys;
  for (const auto& e : errors) keys.insert(e.key);
  CHECK(keys == std::set<std::string>{"metrics.max_connections", "metrics.port"});
  Config wrong;
  wrong.metrics.listen = "localhost";
  errors = validate_config(wrong);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "metrics.listen");
  // A daemon whose metrics address is taken does not start.
  TempDir dir;
  RunningDaemon first(metrics_config(dir));
  REQUIRE(first.ok());
  TempDir other;
  Config clash = metrics_config(other);
  clash.metrics.listen = first.daemon().metrics_address();
  RunningDaemon second(clash);
  CHECK_FALSE(second.ok());
  CHECK(second.start_result().step == "metrics");
  CHECK(second.start_result().exit_code == 4);
}

TEST_CASE("log lines carry structured fields: JSON members, text key=value, escaped",
          "[server][metrics][log]") {
  const std::string hostile = "s\n\"x\x01\\y =z";
  for (bool json : {true, false}) {
    auto out = std::make_shared<std::ostringstream>();
    Logger log = make_logger("debug", json, std::make_shared<spdlog::sinks::ostream_sink_mt>(*out));
    LogFields fields;
    fields.add("principal", "alice").add("session", hostile).add("outcome", "reject");
    log_with(log, spdlog::level::debug, fields, "decision");
    log->info("plain line");
    log->flush();
    std::string text = out->str();
    INFO(text);
    // Two lines, each whole: the hostile value cannot add one.
    REQUIRE(std::count(text.begin(), text.end(), '\n') == 2);
    std::string first = text.substr(0, text.find('\n'));
    std::string second = text.substr(text.find('\n') + 1);
    if (json) {
      auto doc = parse(first);
      REQUIRE(doc.IsObject());
      CHECK(std::string(doc["msg"].GetString()) == "decision");
      CHECK(std::string(doc["level"].GetString()) == "debug");
      CHECK(std::string(doc["principal"].GetString()) == "alice");
      CHECK(std::string(doc["session"].GetString(), doc["session"].GetStringLength()) == hostile);
      CHECK(std::string(doc["outcome"].GetString()) == "reject");
      auto plain = parse(second.substr(0, second.size() - 1));
      REQUIRE(plain.IsObject());
      CHECK_FALSE(plain.HasMember("principal"));  // fields belong to their line only
    } else {
      CHECK(first.find(" debug decision principal=alice session=\"s\\\\n\\\"x\\\\x01\\\\y =z\" "
                       "outcome=reject") != std::string::npos);
      CHECK(second.find("plain line") != std::string::npos);
      CHECK(second.find("principal=") == std::string::npos);
    }
  }
}

namespace {

// The text after `prefix` up to the next space, quote or slash, in the first line holding it.
std::string text_after(const std::string& text, const std::string& prefix) {
  std::size_t at = text.find(prefix);
  if (at == std::string::npos) return "";
  at += prefix.size();
  return text.substr(at, text.find_first_of(" \"/", at) - at);
}

struct JsonLogDecided {
  std::string decision_id, outcome, error;
};
JsonLogDecided decide_json_log(Client& client, const std::string& id, const std::string& proposal) {
  std::string e;
  REQUIRE(client.send_message(decide_request(id, proposal), &e));
  std::string reply = read_or_fail(client, 20000ms);
  INFO(reply);
  auto doc = parse(reply);
  REQUIRE(doc.IsObject());
  REQUIRE(doc["payload"].HasMember("decision"));
  const auto& d = doc["payload"]["decision"];
  return {d["decision_id"].GetString(), d["outcome"].GetString(),
          d.HasMember("error") ? d["error"].GetString() : ""};
}

}  // namespace

TEST_CASE("a JSON-log daemon writes only JSON lines, and decision lines carry their fields",
          "[server][metrics][log]") {
  TempDir dir;
  dir.write("rules/policy.clp", kMetricsRules);
  std::string tokens = dir.write("tokens", Tokens{}.file_text(), 0600);
  std::string config = dir.write("warden.toml",
                                 "[log]\njson = true\nlevel = \"debug\"\n"
                                 "[approvals]\nmax_pending_per_principal = 1\n",
                                 0600);
  WardenChild serve({"serve", "--config", config, "--listen", "127.0.0.1:0", "--tokens", tokens,
                     "--rules", dir.str() + "/rules", "--state-dir", dir.str() + "/state",
                     "--workers", "2", "--metrics-listen", "127.0.0.1:0"});
  REQUIRE(eventually([&] {
    return serve.err().find("warden serving on ") != std::string::npos || serve.exited();
  }));
  const std::string address = text_after(serve.err(), "warden serving on ");
  const std::string metrics = text_after(serve.err(), "metrics on http://");
  INFO(serve.err());
  REQUIRE_FALSE(address.empty());
  REQUIRE_FALSE(metrics.empty());
  // The child's metrics listener, from the command-line flag.
  CHECK(http_status(http_get(metrics, "/health")) == 200);

  // A session id with a newline, quotes and an escape sequence: escaped, never a second line.
  const std::string hostile_session = "s\n\"2\" \x1b[31m";
  const std::string hostile_json = R"(s\n\"2\" \u001b[31m)";
  Client agent;
  std::string error;
  REQUIRE(agent.connect(address, 5000ms, &error));
  REQUIRE(agent.authenticate(Tokens{}.agent, 5000ms, &error));
  JsonLogDecided rejected = decide_json_log(
      agent, "1",
      R"({"target":"shell","action":"run","payload":{"command":"rm -rf /"},"context":{"session":"s-1"}})");
  JsonLogDecided approved = decide_json_log(
      agent, "2",
      std::string(R"({"target":"reply","payload":{"text":"hi"},"context":{"session":")") +
          hostile_json + "\"}}");
  JsonLogDecided pending = decide_json_log(agent, "3", kDeployProposal);
  JsonLogDecided limited = decide_json_log(agent, "4", kDeployProposal2);
  CHECK(rejected.outcome == "reject");
  CHECK(approved.outcome == "approve");
  CHECK(pending.outcome == "approval-required");
  CHECK(limited.outcome == "reject");
  CHECK(limited.error == err::kTooManyApprovals);
  agent.close();
  REQUIRE(serve.terminate() == 0);

  // Every line of stderr is one JSON object with time, level and msg.
  const std::string log = serve.err_to_end();
  INFO(log);
  REQUIRE_FALSE(log.empty());
  REQUIRE(log.back() == '\n');
  std::map<std::string, rapidjson::Document> decisions;  // by decision_id
  std::istringstream in(log);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    INFO(line);
    ++lines;
    rapidjson::Document doc;
    doc.Parse(line.c_str(), line.size());
    REQUIRE_FALSE(doc.HasParseError());
    REQUIRE(doc.IsObject());
    REQUIRE(doc["time"].IsString());
    REQUIRE(doc["level"].IsString());
    REQUIRE(doc["msg"].IsString());
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) CHECK(m->value.IsString());
    if (std::string(doc["msg"].GetString()) == "decision") {
      REQUIRE(doc.HasMember("decision_id"));
      std::string id = doc["decision_id"].GetString();
      decisions[id] = std::move(doc);
    }
  }
  CHECK(lines > 10);
  REQUIRE(decisions.size() == 4);
  auto field = [&](const JsonLogDecided& d, const char* key) -> std::string {
    const auto& doc = decisions.at(d.decision_id);
    if (!doc.HasMember(key)) return "<absent>";
    return std::string(doc[key].GetString(), doc[key].GetStringLength());
  };
  for (const JsonLogDecided* d : {&rejected, &approved, &pending, &limited}) {
    REQUIRE(decisions.count(d->decision_id) == 1);
    CHECK(field(*d, "level") == "debug");
    CHECK(field(*d, "principal") == "alice");
    CHECK(field(*d, "outcome") == d->outcome);
  }
  CHECK(field(rejected, "session") == "s-1");
  CHECK(field(rejected, "rule") == "no-shell");
  CHECK(field(rejected, "error_code") == "<absent>");
  CHECK(field(approved, "session") == hostile_session);
  CHECK(field(approved, "rule") == "replies-ok");
  CHECK(field(pending, "session") == "<absent>");
  CHECK(field(pending, "rule") == "<absent>");  // the default outcome
  CHECK(field(limited, "error_code") == err::kTooManyApprovals);
  CHECK(field(limited, "rule") == "<absent>");
  // The raw escape byte never reaches the log.
  CHECK(log.find('\x1b') == std::string::npos);
}

TEST_CASE("/health says draining while the daemon shuts down, and the listener closes with it",
          "[server][metrics]") {
  TempDir dir;
  Config config = metrics_config(dir);
  config.workers = 1;
  config.limits.shutdown_timeout = 60000ms;  // the drain, not the deadline, must end it
  // The only worker is held inside a rebuild: a decision stays in flight during the stop.
  HeldRebuild held;
  RunningDaemon d(config, held.options());
  REQUIRE(d.ok());
  const std::string metrics = d.daemon().metrics_address();
  Client agent;
  connect_agent(agent, d);
  held.arm(d);
  std::string error;
  REQUIRE(agent.send_message(decide_request("1", kShellProposal), &error));
  REQUIRE(held.entered.wait());
  int exit_code = -1;
  std::thread stopper([&] { exit_code = d.stop(); });
  REQUIRE(eventually([&] { return d.daemon().context().draining.load(); }));
  std::string answer = http_get(metrics, "/health");
  INFO(answer);
  CHECK(http_status(answer) == 503);
  auto health = parse(http_body(answer));
  REQUIRE(health.IsObject());
  CHECK(std::string(health["status"].GetString()) == "draining");
  CHECK_FALSE(health.HasMember("failing"));  // every part works: it is only stopping
  held.release.open();
  CHECK(error_code(read_or_fail(agent, 20000ms)) == "");
  stopper.join();
  CHECK(exit_code == 0);
  // The listener went with the daemon.
  std::string host;
  std::uint16_t port = 0;
  REQUIRE(split_host_port(metrics, &host, &port));
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  REQUIRE(::inet_pton(AF_INET, host.c_str(), &sa.sin_addr) == 1);
  CHECK(::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0);
  ::close(fd);
}
