// bench_approvals: an approval flood — N pending approvals of one principal — and what it
// costs to list them and to get rid of them, with SQLite and with PostgreSQL.
//
//   bench_approvals [--count N] [--page P] [--only sqlite|postgres] [--conninfo CONNINFO]
//
// For each store: (1) create N pending approvals (one principal, no cap: the flood as it was
// before the cap; each create is one transaction); (2) list them all through the store a page
// of P at a time (the daemon's default page, 100), following the cursor, then filtered by agent
// (one in ten) and by rule (one in ten); (3) list them all through a running daemon over
// loopback as `warden pending` does — `pending` requests of 100 and of 500 (the largest page),
// each reply within the listing's budget — as an approver; (4) expire them all (the sweeper's
// expire_due) and (5) prune them all (the sweeper's prune; closed before the cutoff), timed.
// PostgreSQL: a throwaway server (initdb on a free loopback port, as the tests start it) unless
// --conninfo names a database (which then gets the approvals tables, filled and emptied).
// Prints a table and, as its last line, the figures as one JSON object.
#include <rapidjson/document.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "approvals/store.h"
#include "protocol/client.h"
#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/approval_service.h"
#include "server/daemon.h"
#include "server/tokens.h"
#ifdef WARDEN_BENCH_PG_SERVER
#include "tests/support/postgres_server.h"
#endif

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct Figures {
  std::string store;
  int count = 0;
  double create_ms = 0;
  double list_ms = 0;
  int list_pages = 0;
  double list_page_max_ms = 0;
  double agent_ms = 0, rule_ms = 0;
  std::size_t agent_rows = 0, rule_rows = 0;
  double daemon100_ms = 0, daemon500_ms = 0;
  int daemon100_pages = 0, daemon500_pages = 0;
  std::size_t daemon_bytes = 0, daemon_max_reply = 0;
  double expire_ms = 0, prune_ms = 0;
  std::int64_t pruned = 0;
};

// A realistic flood: one agent asking for shell commands, a tenth of them another agent and
// another rule (the filters' targets).
warden::approvals::NewApproval flood_item(int i, std::int64_t now) {
  warden::approvals::NewApproval n;
  n.action_json =
      "{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":\"touch "
      "/tmp/flood/file-" +
      std::to_string(i) +
      ".txt\"},\"explanation\":\"needed\",\"context\":{\"session\":\"s1\","
      "\"agent\":\"coder\"}}";
  n.proposal_json = n.action_json;
  n.principal = "flooder";
  n.groups = {"dev"};
  n.session = "s1";
  n.agent = i % 10 == 0 ? "other-agent" : "coder";
  n.rules = {i % 10 == 3 ? "rare-rule" : "touch-needs-approval"};
  n.reason = "touch creates files";
  n.decision_id = "dec_" + std::to_string(i);
  n.origin = "decide";
  n.daemon_id = "bench";
  n.created_ms = now + i / 4;  // several per millisecond, as a flood is
  n.expires_ms = now + 3600 * 1000;
  return n;
}

// Every page of `f` through the store; the rows seen.
std::size_t list_pages(warden::approvals::Store& store, warden::approvals::Filter f,
                       std::size_t page, int* pages, double* max_page_ms) {
  std::size_t rows = 0;
  f.limit = page;
  *pages = 0;
  *max_page_ms = 0;
  for (;;) {
    auto t = Clock::now();
    std::vector<warden::approvals::Approval> got = store.list(f);
    *max_page_ms = std::max(*max_page_ms, ms_since(t));
    ++*pages;
    rows += got.size();
    if (got.size() < page) return rows;
    f.after = warden::approvals::Cursor{got.back().created_ms, got.back().id};
  }
}

// Every page of `pending` at `limit` from a daemon, as an approver: rows, pages, bytes.
bool daemon_pages(warden::protocol::Client& client, int limit, std::size_t* rows, int* pages,
                  std::size_t* bytes, std::size_t* max_reply) {
  std::string after;
  *rows = 0;
  *pages = 0;
  for (;;) {
    std::string fields = "\"limit\":" + std::to_string(limit);
    if (!after.empty()) fields += ",\"after\":" + warden::protocol::json_string(after);
    std::string error, reply;
    if (!client.send_message(warden::protocol::make_request("p", "pending", fields), &error)) {
      std::fprintf(stderr, "bench_approvals: %s\n", error.c_str());
      return false;
    }
    if (client.read_message(&reply, 60s) != warden::protocol::Client::ReadStatus::Ok) {
      std::fprintf(stderr, "bench_approvals: no reply to pending\n");
      return false;
    }
    ++*pages;
    *bytes += reply.size();
    *max_reply = std::max(*max_reply, reply.size());
    rapidjson::Document doc;
    doc.Parse(reply.c_str(), reply.size());
    if (doc.HasParseError() || !doc["payload"].IsObject() ||
        !doc["payload"]["approvals"].IsArray()) {
      std::fprintf(stderr, "bench_approvals: a bad reply: %.200s\n", reply.c_str());
      return false;
    }
    const auto& p = doc["payload"];
    *rows += p["approvals"].Size();
    if (!p["more"].IsTrue()) return true;
    after = p["next"].GetString();
  }
}

bool run(const std::string& kind, const std::string& conninfo, int count, std::size_t page,
         Figures* out) {
  out->store = kind;
  out->count = count;
  char pattern[] = "/tmp/bench-approvals-XXXXXX";
  if (!::mkdtemp(pattern)) return false;
  const fs::path dir = pattern;
  const std::string sqlite_path = (dir / "state" / "state.db").string();
  fs::create_directories(dir / "state");
  fs::permissions(dir / "state", fs::perms::owner_all, fs::perm_options::replace);
  auto open = [&] {
    return kind == "postgres" ? warden::approvals::open_postgres(conninfo)
                              : warden::approvals::open_sqlite(sqlite_path);
  };
  const std::int64_t now = now_ms();
  {
    auto store = open();
    auto t = Clock::now();
    for (int i = 0; i < count; ++i) store->create(flood_item(i, now));
    out->create_ms = ms_since(t);

    warden::approvals::Filter f;
    f.now_ms = now;
    double max_page = 0;
    t = Clock::now();
    std::size_t rows = list_pages(*store, f, page, &out->list_pages, &max_page);
    out->list_ms = ms_since(t);
    out->list_page_max_ms = max_page;
    if (rows != static_cast<std::size_t>(count)) {
      std::fprintf(stderr, "bench_approvals: listed %zu of %d\n", rows, count);
      return false;
    }
    int pages = 0;
    warden::approvals::Filter agent = f;
    agent.agent = "other-agent";
    t = Clock::now();
    out->agent_rows = list_pages(*store, agent, page, &pages, &max_page);
    out->agent_ms = ms_since(t);
    warden::approvals::Filter rule = f;
    rule.rule = "rare-rule";
    t = Clock::now();
    out->rule_rows = list_pages(*store, rule, page, &pages, &max_page);
    out->rule_ms = ms_since(t);
  }

  // The daemon: `pending` over loopback, as an approver.
  {
    const std::string token = warden::server::generate_token();
    fs::create_directories(dir / "rules");
    std::ofstream(dir / "rules" / "policy.clp")
        << "(defrule ask (proposal (id ?id)) => (assert (decision (proposal ?id) (outcome "
           "approval-required) (rule ask) (reason \"ask\"))))\n";
    std::ofstream(dir / "tokens") << "approver bench " << warden::server::token_hash_text(token)
                                  << "\n";
    fs::permissions(dir / "tokens", fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace);
    warden::server::Config c;
    c.listen = "127.0.0.1:0";
    c.rules = {(dir / "rules").string()};
    c.tokens = (dir / "tokens").string();
    c.state_dir = (dir / "state").string();
    c.log_level = "warn";
    c.workspace_root = "/home/user/project";
    c.home = "/home/user";
    c.audit.daemon_id = "bench";
    if (kind == "postgres") {
      c.approvals.store = "postgres";
      c.approvals.conninfo = conninfo;
    }
    warden::server::Daemon daemon(c);
    auto started = daemon.start();
    if (!started.ok) {
      std::fprintf(stderr, "bench_approvals: the daemon did not start: %s\n",
                   started.message.c_str());
      return false;
    }
    std::thread io([&] { daemon.run(); });
    bool ok = true;
    {
      warden::protocol::Client client;
      std::string error;
      ok = client.connect(daemon.address(), 5s, &error) && client.authenticate(token, 5s, &error);
      if (!ok) std::fprintf(stderr, "bench_approvals: %s\n", error.c_str());
      std::size_t rows = 0, bytes = 0;
      auto t = Clock::now();
      ok = ok &&
           daemon_pages(client, 100, &rows, &out->daemon100_pages, &bytes, &out->daemon_max_reply);
      out->daemon100_ms = ms_since(t);
      ok = ok && rows == static_cast<std::size_t>(count);
      bytes = 0;
      t = Clock::now();
      ok = ok &&
           daemon_pages(client, static_cast<int>(warden::server::ApprovalService::kMaxPageLimit),
                        &rows, &out->daemon500_pages, &bytes, &out->daemon_max_reply);
      out->daemon500_ms = ms_since(t);
      out->daemon_bytes = bytes;
      ok = ok && rows == static_cast<std::size_t>(count);
    }
    daemon.request_stop();
    io.join();
    if (!ok) {
      std::fprintf(stderr, "bench_approvals: the daemon's listing failed\n");
      return false;
    }
  }

  {
    auto store = open();
    const std::int64_t later = now + 2 * 3600 * 1000;  // past every expiry
    auto t = Clock::now();
    const std::size_t expired = store->expire_due(later).size();
    out->expire_ms = ms_since(t);
    t = Clock::now();
    warden::approvals::Pruned pruned = store->prune(later + 1, later + 1);
    out->prune_ms = ms_since(t);
    out->pruned = pruned.approvals;
    if (expired != static_cast<std::size_t>(count) || pruned.approvals != count) {
      std::fprintf(stderr, "bench_approvals: expired %zu, pruned %lld of %d\n", expired,
                   static_cast<long long>(pruned.approvals), count);
      return false;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return true;
}

void print(const Figures& f, std::size_t page) {
  std::printf("\n%s: %d pending approvals of one principal\n", f.store.c_str(), f.count);
  std::printf("  create            %9.0f ms  (%.0f/s, one transaction each)\n", f.create_ms,
              f.count / (f.create_ms / 1000));
  std::printf("  list all (store)  %9.1f ms  %d pages of %zu; slowest page %.2f ms\n", f.list_ms,
              f.list_pages, page, f.list_page_max_ms);
  std::printf("  list --agent      %9.1f ms  (%zu rows)\n", f.agent_ms, f.agent_rows);
  std::printf("  list --rule       %9.1f ms  (%zu rows)\n", f.rule_ms, f.rule_rows);
  std::printf("  pending (daemon)  %9.1f ms  %d pages of 100\n", f.daemon100_ms, f.daemon100_pages);
  std::printf("  pending (daemon)  %9.1f ms  %d pages of up to 500; %zu bytes, largest reply %zu\n",
              f.daemon500_ms, f.daemon500_pages, f.daemon_bytes, f.daemon_max_reply);
  std::printf("  expire all        %9.1f ms\n", f.expire_ms);
  std::printf("  prune all         %9.1f ms  (%lld approvals)\n", f.prune_ms,
              static_cast<long long>(f.pruned));
}

std::string json(const std::vector<Figures>& all) {
  std::string out = "{";
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Figures& f = all[i];
    char buf[1024];
    std::snprintf(buf, sizeof buf,
                  "%s\"%s\":{\"count\":%d,\"create_ms\":%.1f,\"list_ms\":%.1f,\"list_pages\":%d,"
                  "\"list_page_max_ms\":%.2f,\"agent_ms\":%.1f,\"rule_ms\":%.1f,"
                  "\"daemon_pending_100_ms\":%.1f,\"daemon_pending_500_ms\":%.1f,"
                  "\"daemon_max_reply_bytes\":%zu,\"expire_ms\":%.1f,\"prune_ms\":%.1f}",
                  i ? "," : "", f.store.c_str(), f.count, f.create_ms, f.list_ms, f.list_pages,
                  f.list_page_max_ms, f.agent_ms, f.rule_ms, f.daemon100_ms, f.daemon500_ms,
                  f.daemon_max_reply, f.expire_ms, f.prune_ms);
    out += buf;
  }
  return out + "}";
}

}  // namespace

int main(int argc, char** argv) {
  int count = 10000;
  std::size_t page = 100;
  std::string only, conninfo;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_approvals: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--count") {
      count = std::atoi(next().c_str());
    } else if (a == "--page") {
      page = static_cast<std::size_t>(std::atoi(next().c_str()));
    } else if (a == "--only") {
      only = next();
    } else if (a == "--conninfo") {
      conninfo = next();
    } else {
      std::fprintf(stderr,
                   "usage: bench_approvals [--count N] [--page P] [--only sqlite|postgres] "
                   "[--conninfo CONNINFO]\n");
      return 2;
    }
  }
  if (count <= 0 || page == 0) {
    std::fprintf(stderr, "bench_approvals: --count and --page must be positive\n");
    return 2;
  }
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) {
    std::printf("bench_approvals: load average %.2f on %u CPUs\n", load[0],
                std::thread::hardware_concurrency());
  }
  std::vector<Figures> all;
  if (only.empty() || only == "sqlite") {
    Figures f;
    if (!run("sqlite", "", count, page, &f)) return 1;
    print(f, page);
    all.push_back(f);
  }
  if (only.empty() || only == "postgres") {
#ifdef WARDEN_BENCH_PG_SERVER
    std::unique_ptr<warden::test::PostgresServer> server;
    if (conninfo.empty()) {
      server = std::make_unique<warden::test::PostgresServer>();
      conninfo = server->create_database("bench_approvals");
    }
#endif
    if (conninfo.empty()) {
      std::fprintf(stderr,
                   "bench_approvals: PostgreSQL skipped: give --conninfo (this build cannot "
                   "start a server of its own: tests off)\n");
      if (only == "postgres") return 1;
    } else {
      Figures f;
      if (!run("postgres", conninfo, count, page, &f)) return 1;
      print(f, page);
      all.push_back(f);
    }
  }
  std::printf("%s\n", json(all).c_str());
  return 0;
}
