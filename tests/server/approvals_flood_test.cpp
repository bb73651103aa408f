// An approval flood through the daemon, with SQLite and with a real PostgreSQL server: one
// principal's pending approvals are capped (the 101st approval-required is a reject,
// E_TOO_MANY_APPROVALS, audited, nothing stored; other principals and approvers carry on;
// two daemons racing never pass the cap), `pending` pages through hundreds of approvals with
// bounded replies, `warden pending` follows the pages, the daemon prunes closed approvals past
// their retention and the grants that ended, and PostgreSQL notifications anyone may send
// (forged "closed", a flood of 10,000) neither close what is pending nor stop an answer.
#include <fcntl.h>
#include <libpq-fe.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <vector>

#include "approvals/store.h"
#include "approvals_fixture.h"
#include "protocol/message.h"
#include "server/approval_service.h"
#include "server/errors.h"
#include "tests/build_paths.h"
#include "tests/support/postgres_server.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::test::fresh_database;

namespace {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

constexpr std::int64_t kDayMs = 86400LL * 1000;

// SELECT count(*) … with no parameters, on a PostgreSQL database.
std::int64_t pg_count(const std::string& conninfo, const std::string& sql) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, sql.c_str());
  REQUIRE(PQresultStatus(r) == PGRES_TUPLES_OK);
  const std::int64_t n = std::stoll(PQgetvalue(r, 0, 0));
  PQclear(r);
  PQfinish(c);
  return n;
}

// One daemon's store: SQLite in its state directory, or a fresh PostgreSQL database; the test
// reaches it directly too (to fill it, or to look at it).
struct StoreUnderTest {
  std::string kind;
  std::string conninfo;  // postgres
  std::string path;      // sqlite
  explicit StoreUnderTest(std::string k, const Config& config) : kind(std::move(k)) {
    if (kind == "postgres") {
      conninfo = fresh_database("flood");
    } else {
      fs::create_directories(config.state_dir);
      fs::permissions(config.state_dir, fs::perms::owner_all, fs::perm_options::replace);
      path = config.state_dir + "/state.db";
    }
  }
  Config configure(Config c) const {
    if (kind == "postgres") {
      c.approvals.store = "postgres";
      c.approvals.conninfo = conninfo;
    }
    return c;
  }
  std::unique_ptr<approvals::Store> open() const {
    return kind == "postgres" ? approvals::open_postgres(conninfo) : approvals::open_sqlite(path);
  }
  // SELECT count(*) … with no parameters.
  std::int64_t count(const std::string& sql) const {
    if (kind == "sqlite") {
      sqlite3* db = nullptr;
      REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
      sqlite3_busy_timeout(db, 5000);
      sqlite3_stmt* s = nullptr;
      REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr) == SQLITE_OK);
      REQUIRE(sqlite3_step(s) == SQLITE_ROW);
      const std::int64_t n = sqlite3_column_int64(s, 0);
      sqlite3_finalize(s);
      sqlite3_close(db);
      return n;
    }
    return pg_count(conninfo, sql);
  }
};

// A plain PostgreSQL connection, as any user allowed to connect has: it runs `sql` with the
// given text parameters.
void pg_exec(const std::string& conninfo, const std::string& sql,
             const std::vector<std::string>& params = {}) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  PGresult* r = PQexecParams(c, sql.c_str(), static_cast<int>(values.size()), nullptr,
                             values.data(), nullptr, nullptr, 0);
  INFO(PQresultErrorMessage(r));
  CHECK((PQresultStatus(r) == PGRES_TUPLES_OK || PQresultStatus(r) == PGRES_COMMAND_OK));
  PQclear(r);
  PQfinish(c);
}

// The conninfo of a role that may only connect (no table of the store is its, or readable by
// it): what "anyone who may connect" has.
std::string intruder(const std::string& conninfo) {
  pg_exec(conninfo,
          "DO $$ BEGIN CREATE ROLE intruder LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; "
          "END $$");
  const std::string user = "user=postgres";
  const std::size_t at = conninfo.find(user);
  REQUIRE(at != std::string::npos);
  std::string out = conninfo;
  out.replace(at, user.size(), "user=intruder");
  // Not the store's owner: it cannot read the approvals.
  PGconn* c = PQconnectdb(out.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, "SELECT count(*) FROM approvals");
  CHECK(PQresultStatus(r) == PGRES_FATAL_ERROR);
  PQclear(r);
  PQfinish(c);
  return out;
}

std::string decision_member(const std::string& reply, const char* key) {
  auto p = payload_of(reply);
  return p.IsObject() && p.HasMember("decision") ? str(p["decision"], key) : "<none>";
}

// The audit log's lines that hold every one of `needles`.
int audit_lines(const Config& config, const std::vector<std::string>& needles) {
  std::ifstream in(config.state_dir + "/audit.jsonl");
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    bool all = true;
    for (const auto& s : needles) all = all && line.find(s) != std::string::npos;
    n += all;
  }
  return n;
}

// Every page of `pending` (with `fields`) at `limit` a page: the approvals in order, and each
// reply's size.
struct Listing {
  std::vector<std::string> ids;
  std::vector<std::size_t> reply_bytes;
  std::map<std::string, std::string> approval;  // id → its listed JSON
};
Listing list_all(Party& approver, const std::string& fields, int limit) {
  Listing out;
  std::string after;
  for (int page = 0; page < 10000; ++page) {
    std::string f = "\"limit\":" + std::to_string(limit) + fields;
    if (!after.empty()) f += ",\"after\":" + json_string(after);
    std::string reply = approver.call(make_request("p", "pending", f));
    REQUIRE(error_code(reply) == "");
    out.reply_bytes.push_back(reply.size());
    auto p = payload_of(reply);
    REQUIRE(p["approvals"].IsArray());
    CHECK(p["approvals"].Size() <= static_cast<unsigned>(limit));
    for (const auto& a : p["approvals"].GetArray()) {
      out.ids.push_back(str(a, "id"));
      out.approval[str(a, "id")] = to_json_text(a);
    }
    REQUIRE(p["more"].IsBool());
    if (!p["more"].GetBool()) {
      CHECK_FALSE(p.HasMember("next"));
      return out;
    }
    REQUIRE(p["approvals"].Size() > 0);
    const std::string next = str(p, "next");
    REQUIRE(next != after);
    after = next;
  }
  FAIL("pending never said there was no more");
  return out;
}

// The `approvals` member of an admin's `status`.
rapidjson::Document approvals_status(Party& admin) {
  auto p = payload_of(admin.call(make_request("s", "status")));
  rapidjson::Document out;
  REQUIRE(p.HasMember("approvals"));
  out.CopyFrom(p["approvals"], out.GetAllocator());
  return out;
}

std::uint64_t counter(const rapidjson::Value& v, const char* a, const char* b = nullptr) {
  const rapidjson::Value& x = b ? v[a][b] : v[a];
  REQUIRE(x.IsUint64());
  return x.GetUint64();
}

const std::string kWarden = WARDEN_BINARY_DIR "/cli/warden";

// `warden ARGS…` to completion: its stdout and exit status (stderr to the test's).
int flood_run_warden(const std::vector<std::string>& args, std::string* out) {
  int pipe_fd[2];
  REQUIRE(::pipe2(pipe_fd, O_CLOEXEC) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::dup2(pipe_fd[1], 1);
    std::vector<char*> argv{const_cast<char*>(kWarden.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kWarden.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(pipe_fd[1]);
  char buf[65536];
  ssize_t n;
  while ((n = ::read(pipe_fd[0], buf, sizeof buf)) > 0)
    out->append(buf, static_cast<std::size_t>(n));
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

approvals::NewApproval stored(const std::string& command, const std::string& agent,
                              std::int64_t created_ms) {
  approvals::NewApproval n;
  n.action_json = shell_action(command);
  n.proposal_json = n.action_json;
  n.principal = "alice";
  n.session = "s1";
  n.agent = agent;
  n.rules = {"touch-needs-approval"};
  n.reason = "touch creates files";
  n.decision_id = "dec_" + std::to_string(created_ms);
  n.origin = "decide";
  n.daemon_id = "elsewhere";
  n.created_ms = created_ms;
  n.expires_ms = created_ms + 3600 * 1000;
  return n;
}

}  // namespace

TEST_CASE("the 101st pending approval of one principal is refused; the rest carry on",
          "[server][approvals][flood]") {
  const std::string backend = GENERATE(as<std::string>{}, "sqlite", "postgres");
  INFO(backend);
  TempDir dir;
  Config base = approvals_config(dir);
  CHECK(base.approvals.max_pending_per_principal == 100);  // the default
  StoreUnderTest st(backend, base);
  const Config config = st.configure(base);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), dave(d.address(), t.dave), bob(d.address(), t.bob),
      admin(d.address(), t.admin);
  ApprovalRef first;
  for (int i = 0; i < 100; ++i) {
    std::string reply =
        alice.call(decide_request("d", shell_action("touch f" + std::to_string(i) + ".txt")));
    REQUIRE(decision_member(reply, "outcome") == "approval-required");
    if (i == 0) first = approval_ref(payload_of(reply)["approval"]);
  }
  // The 101st: a reject that says why, with its code; no approval, no token.
  std::string over = alice.call(decide_request("d", shell_action("touch f100.txt")));
  INFO(over);
  REQUIRE(error_code(over) == "");
  CHECK(decision_member(over, "outcome") == "reject");
  CHECK(decision_member(over, "error") == err::kTooManyApprovals);
  CHECK(decision_member(over, "reason").find("already has 100 pending approvals") !=
        std::string::npos);
  CHECK_FALSE(payload_of(over).HasMember("approval"));
  const std::string decision_id = decision_member(over, "decision_id");
  // Audited: its one decision record, and why no approval was stored.
  REQUIRE(eventually([&] {
    return audit_lines(config, {"\"kind\":\"approval\"", "\"event\":\"limited\"", decision_id}) ==
           1;
  }));
  CHECK(audit_lines(config, {"\"kind\":\"decision\"", "\"decision_id\":\"" + decision_id + "\""}) ==
        1);
  CHECK(st.count("SELECT count(*) FROM approvals") == 100);
  CHECK(st.count("SELECT count(*) FROM approvals WHERE decision_id = '" + decision_id + "'") == 0);
  CHECK(counter(approvals_status(admin), "limited") == 1);
  // Another principal is not affected.
  CHECK(outcome_of_decide(dave, shell_action("touch dave.txt")) == "approval-required");
  // An approver still answers alice's; that frees a place.
  std::string approved = bob.call(approve_request(first));
  INFO(approved);
  CHECK(error_code(approved) == "");
  CHECK(str(payload_of(approved), "status") == "granted");
  CHECK(outcome_of_decide(alice, shell_action("touch f101.txt")) == "approval-required");
  CHECK(decision_member(alice.call(decide_request("d", shell_action("touch f102.txt"))), "error") ==
        err::kTooManyApprovals);
}

TEST_CASE("PostgreSQL: two daemons racing for one principal never pass the cap",
          "[server][approvals][flood][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("flood");
  Config ca = approvals_config(dir, "daemon-a", conninfo),
         cb = approvals_config(dir, "daemon-b", conninfo);
  ca.approvals.max_pending_per_principal = cb.approvals.max_pending_per_principal = 10;
  RunningDaemon a(ca);
  REQUIRE(a.ok());
  RunningDaemon b(cb);
  REQUIRE(b.ok());
  ApprovalTokens t;
  constexpr int kRequests = 30;
  std::vector<std::string> replies(kRequests);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRequests; ++i) {
    threads.emplace_back([&, i] {
      replies[static_cast<std::size_t>(i)] =
          call_on_thread(i % 2 ? a.address() : b.address(), t.alice,
                         decide_request("d", shell_action("touch race" + std::to_string(i))));
    });
  }
  for (auto& th : threads) th.join();
  int pending = 0, limited = 0;
  for (const auto& r : replies) {
    INFO(r);
    const std::string outcome = decision_member(r, "outcome");
    if (outcome == "approval-required") ++pending;
    if (decision_member(r, "error") == err::kTooManyApprovals) ++limited;
  }
  CHECK(pending == 10);
  CHECK(limited == kRequests - 10);
  CHECK(pg_count(conninfo, "SELECT count(*) FROM approvals WHERE status = 'pending'") == 10);
}

TEST_CASE("pending pages: hundreds of approvals, each listed once, replies within bounds",
          "[server][approvals][flood]") {
  const std::string backend = GENERATE(as<std::string>{}, "sqlite", "postgres");
  INFO(backend);
  TempDir dir;
  Config base = approvals_config(dir);
  StoreUnderTest st(backend, base);
  const Config config = st.configure(base);
  const std::int64_t now = now_ms();
  std::vector<std::string> all, coders, wide;
  std::string huge_id;
  {
    auto store = st.open();
    for (int i = 0; i < 250; ++i) {
      // Three share each millisecond: the id orders them.
      approvals::Created c = store->create(
          stored("touch page" + std::to_string(i), i % 5 == 0 ? "coder" : "other", now + i / 3));
      all.push_back(c.approval.id);
      if (i % 5 == 0) coders.push_back(c.approval.id);
    }
    // An action too large to list in full.
    approvals::Created huge =
        store->create(stored("touch " + std::string(100 * 1024, 'h'), "other", now + 100));
    huge_id = huge.approval.id;
    all.push_back(huge_id);
    // Actions just under the listing's cut: a page of them would not fit a frame.
    for (int i = 0; i < 200; ++i) {
      approvals::Created c = store->create(
          stored("touch " + std::string(ApprovalService::kListedActionBytes - 200, 'w') +
                     std::to_string(i),
                 "wide", now + 200 + i));
      wide.push_back(c.approval.id);
      all.push_back(c.approval.id);
    }
  }
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party bob(d.address(), t.bob);

  Listing listed = list_all(bob, "", 40);
  CHECK(listed.ids.size() == all.size());
  CHECK(std::set<std::string>(listed.ids.begin(), listed.ids.end()) ==
        std::set<std::string>(all.begin(), all.end()));
  // The huge action: left out of the list, with its size and a preview; shown whole by id.
  const std::string& shown = listed.approval[huge_id];
  CHECK(shown.find("\"truncated\":true") != std::string::npos);
  CHECK(shown.find("\"action\":null") != std::string::npos);
  CHECK(shown.find("\"action_bytes\":") != std::string::npos);
  CHECK(shown.find("\"action_preview\":\"{") != std::string::npos);
  CHECK(shown.size() < ApprovalService::kMaxListedBytes);
  auto one = payload_of(bob.call(make_request("s", "pending", "\"id\":" + json_string(huge_id))));
  REQUIRE(one["approvals"].Size() == 1);
  CHECK_FALSE(one["approvals"][0].HasMember("truncated"));
  CHECK(to_json_text(one["approvals"][0]["action"]).find(std::string(100 * 1024, 'h')) !=
        std::string::npos);

  // Filtered, paged: exactly the coder's.
  Listing by_agent = list_all(bob, ",\"agent\":\"coder\"", 7);
  CHECK(by_agent.ids == coders);
  // The wide ones at the largest page: every reply within the listing's budget.
  Listing big =
      list_all(bob, ",\"agent\":\"wide\"", static_cast<int>(ApprovalService::kMaxPageLimit));
  CHECK(big.ids == wide);
  CHECK(big.reply_bytes.size() >= 2);
  for (std::size_t bytes : big.reply_bytes) CHECK(bytes <= ApprovalService::kListBudget);

  // Bad pages are refused with their code.
  CHECK(error_code(bob.call(make_request("p", "pending", "\"limit\":0"))) == err::kBadRequest);
  CHECK(error_code(bob.call(make_request("p", "pending", "\"limit\":501"))) == err::kBadRequest);
  CHECK(error_code(bob.call(make_request("p", "pending", "\"after\":\"yesterday\""))) ==
        err::kBadRequest);
  CHECK(error_code(bob.call(make_request("p", "pending", "\"after\":\"12:apr_nothex\""))) ==
        err::kBadRequest);

  // warden pending follows the pages; --limit stops and says where to go on.
  REQUIRE(access(kWarden.c_str(), X_OK) == 0);
  std::string out;
  REQUIRE(flood_run_warden({"pending", "--addr", d.address(), "--token", t.bob, "--format", "json"},
                           &out) == 0);
  rapidjson::Document doc = parse(out);
  REQUIRE(doc["approvals"].IsArray());
  std::vector<std::string> cli_ids;
  for (const auto& a : doc["approvals"].GetArray()) cli_ids.push_back(str(a, "id"));
  CHECK(cli_ids == listed.ids);
  CHECK_FALSE(doc["more"].GetBool());
  out.clear();
  REQUIRE(flood_run_warden({"pending", "--addr", d.address(), "--token", t.bob, "--limit", "5"},
                           &out) == 0);
  CHECK(out.find("\n5 pending;") != std::string::npos);
  CHECK(out.find("more are pending: warden pending --after ") != std::string::npos);
  CHECK(out.find(all[6]) == std::string::npos);  // created after the first five
}

TEST_CASE("the daemon prunes closed approvals past their retention and grants that ended",
          "[server][approvals][flood]") {
  const std::string backend = GENERATE(as<std::string>{}, "sqlite", "postgres");
  INFO(backend);
  TempDir dir;
  Config base = approvals_config(dir);
  CHECK(base.approvals.retain_days == 30);  // the default
  StoreUnderTest st(backend, base);
  const Config config = st.configure(base);
  const std::int64_t now = now_ms(), old = now - 40 * kDayMs;
  std::vector<std::string> gone, kept;
  {
    auto store = st.open();
    // Closed 40 days ago: denied, expired, executed (its one-use grant used up).
    approvals::Created denied = store->create(stored("touch a", "x", old));
    REQUIRE(store->deny(denied.approval.id, "bob", "", old + 1).result ==
            approvals::DenyResult::Denied);
    approvals::Created expired = store->create(stored("touch b", "x", old));
    REQUIRE(store->expire_due(old + 2 * 3600 * 1000).size() == 1);
    approvals::Created executed = store->create(stored("touch c", "x", old));
    REQUIRE(store->approve(executed.approval.id, executed.approval.action_hash, "bob", "", old + 5)
                .result == approvals::ApproveResult::Claimed);
    REQUIRE(store->finish(executed.approval.id, approvals::Status::Executed, "{}", old + 6));
    store->add_grant(approvals::Grant{executed.approval.id, "alice", "s1", "sha256:used",
                                      old + 3600 * 1000, 1, "bob"});
    REQUIRE(store->use_grant("alice", "s1", "sha256:used", old + 7));
    gone = {denied.approval.id, expired.approval.id, executed.approval.id};
    // Pending, and closed a day ago: kept; a grant that expired: deleted; a live one: kept.
    approvals::Created pending = store->create(stored("touch d", "x", now));
    approvals::Created recent = store->create(stored("touch e", "x", now - kDayMs));
    REQUIRE(store->deny(recent.approval.id, "bob", "", now - kDayMs + 1).result ==
            approvals::DenyResult::Denied);
    store->add_grant(approvals::Grant{recent.approval.id, "alice", "s1", "sha256:expired",
                                      now - 1000, 0, "bob"});
    store->add_grant(approvals::Grant{pending.approval.id, "alice", "s1", "sha256:live",
                                      now + 3600 * 1000, 0, "bob"});
    kept = {pending.approval.id, recent.approval.id};
  }
  REQUIRE(st.count("SELECT count(*) FROM approvals") == 5);
  REQUIRE(st.count("SELECT count(*) FROM approval_grants") == 3);
  RunningDaemon d(config);
  REQUIRE(d.ok());
  // The daemon prunes as it starts (and then every few minutes).
  REQUIRE(eventually([&] { return st.count("SELECT count(*) FROM approvals") == 2; }));
  auto store = st.open();
  for (const auto& id : gone) CHECK_FALSE(store->get(id).has_value());
  for (const auto& id : kept) CHECK(store->get(id).has_value());
  CHECK(st.count("SELECT count(*) FROM approval_votes") == 0);
  CHECK(st.count("SELECT count(*) FROM approval_grants") == 1);
  CHECK(store->use_grant("alice", "s1", "sha256:live", now).has_value());
  ApprovalTokens t;
  Party admin(d.address(), t.admin);
  auto status = approvals_status(admin);
  CHECK(counter(status, "pruned", "approvals") == 3);
  CHECK(counter(status, "pruned", "grants") == 2);
}

TEST_CASE(
    "PostgreSQL: a forged 'closed' notification neither closes a pending approval in a "
    "watch nor ends a wait",
    "[server][approvals][flood][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("flood");
  RunningDaemon d(approvals_config(dir, "state", conninfo));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), dave(d.address(), t.dave), bob(d.address(), t.bob),
      watcher(d.address(), t.carol);
  watcher.send(make_request("watch", "pending", "\"watch\":true"));
  REQUIRE(str(parse(watcher.read())["payload"], "event") == "approvals");

  alice.send(make_request("w", "decide",
                          "\"proposal\":" + shell_action("touch forged.txt") + ",\"wait_s\":120"));
  auto asked = parse(alice.read());
  REQUIRE(str(asked["payload"], "event") == "approval-required");
  const ApprovalRef p = approval_ref(asked["payload"]["approval"]);
  auto created = parse(watcher.read());
  REQUIRE(str(created["payload"], "event") == "approval-created");
  REQUIRE(str(created["payload"]["approval"], "id") == p.id);

  // Anyone who may connect says it closed, finished, was created again.
  const std::string anyone = intruder(conninfo);
  for (const char* kind : {"closed:", "finished:", "created:"}) {
    pg_exec(anyone, "SELECT pg_notify('warden_approvals', $1)", {kind + p.id});
  }
  // A real approval after them: the watcher hears of it, and of nothing closing before it.
  std::string q_reply = dave.call(decide_request("d", shell_action("touch real.txt")));
  const ApprovalRef q = approval_ref(payload_of(q_reply)["approval"]);
  REQUIRE(!q.id.empty());
  for (;;) {
    auto e = parse(watcher.read());
    INFO(to_json_text(e));
    const std::string event = str(e["payload"], "event");
    const std::string id = str(e["payload"]["approval"], "id");
    CHECK_FALSE((event == "approval-closed" && id == p.id));
    CHECK(str(e["payload"]["approval"], "status") == "pending");
    if (id == q.id) {
      CHECK(event == "approval-created");
      break;
    }
    REQUIRE(id == p.id);  // nothing else happened
  }
  // The store still says pending, and alice still waits: the real answer reaches her.
  auto shown = payload_of(bob.call(make_request("s", "pending", "\"id\":" + json_string(p.id))));
  CHECK(str(shown["approvals"][0], "status") == "pending");
  REQUIRE(error_code(bob.call(approve_request(p))) == "");
  std::string answer = alice.read(30000ms);
  INFO(answer);
  CHECK(decision_member(answer, "outcome") == "approve");
  CHECK(str(payload_of(answer)["approval"], "status") == "granted");
}

TEST_CASE("PostgreSQL: a flood of 10,000 forged notifications does not stop an answer",
          "[server][approvals][flood][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("flood");
  RunningDaemon d(approvals_config(dir, "state", conninfo));
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice), bob(d.address(), t.bob), admin(d.address(), t.admin);
  // 10,000 well-formed notifications about approvals that do not exist, and 1,000 that are
  // not what a daemon sends, each batch in one transaction: delivered at once.
  const std::string anyone = intruder(conninfo);
  pg_exec(anyone,
          "SELECT pg_notify('warden_approvals', 'closed:apr_' || lpad(to_hex(g), 24, '0')) "
          "FROM generate_series(1, 10000) g");
  pg_exec(anyone,
          "SELECT pg_notify('warden_approvals', CASE g % 4 WHEN 0 THEN 'closed:' || g "
          "WHEN 1 THEN 'nothing' || g WHEN 2 THEN 'closed:APR_' || lpad(g::text, 24, '0') "
          "ELSE 'approved:apr_' || lpad(to_hex(g), 24, '0') END) FROM generate_series(1, 1000) g");
  alice.send(make_request("w", "decide",
                          "\"proposal\":" + shell_action("touch flood.txt") + ",\"wait_s\":120"));
  auto asked = parse(alice.read());
  REQUIRE(str(asked["payload"], "event") == "approval-required");
  const ApprovalRef p = approval_ref(asked["payload"]["approval"]);
  std::string approved = bob.call(approve_request(p), 60000ms);
  INFO(approved);
  REQUIRE(error_code(approved) == "");
  std::string answer = alice.read(60000ms);
  INFO(answer);
  CHECK(decision_member(answer, "outcome") == "approve");
  // Every notification was heard; the malformed ones were dropped unread, the rest cost at
  // most one read each.
  REQUIRE(eventually(
      [&] { return counter(approvals_status(admin), "notifications", "received") >= 11000; },
      60000ms));
  auto status = approvals_status(admin);
  CHECK(counter(status, "notifications", "ignored") == 1000);
  CHECK(counter(status, "notifications", "rereads") <=
        counter(status, "notifications", "received") - 1000);
  CHECK(status["ok"].GetBool());
}

TEST_CASE("submit past the cap: approval-required, E_TOO_MANY_APPROVALS, the run ends rejected",
          "[server][approvals][flood][submit]") {
  TempDir dir;
  Config config = approvals_config(dir);
  config.approvals.max_pending_per_principal = 1;
  const std::string script =
      dir.write("model.jsonl",
                "{\"text\":" +
                    json_string("{\"target\":\"shell\",\"action\":\"run\",\"payload\":{\"command\":"
                                "\"touch made.txt\"},\"explanation\":\"the user asked\"}") +
                    ",\"repeat\":true}\n");
  REQUIRE(parse_config("[[reasoning.providers]]\nname = \"scripted\"\nkind = \"script\"\n"
                       "script = " +
                           json_string(script) + "\n",
                       dir.str(), &config)
              .empty());
  RunningDaemon d(config);
  REQUIRE(d.ok());
  ApprovalTokens t;
  Party alice(d.address(), t.alice);
  // The run's events and its final status.
  auto run = [&](const std::string& session) {
    alice.send(make_request("run", "submit",
                            "\"text\":\"make a file\",\"session\":" + json_string(session)));
    std::vector<std::string> events;
    for (;;) {
      std::string message = alice.read(60000ms);
      auto doc = parse(message);
      if (str(doc, "type") == "response") {
        events.push_back("final:" + str(doc["payload"], "status"));
        return events;
      }
      const std::string event = str(doc["payload"], "event");
      if (event == "approval-required") {
        events.push_back(doc["payload"].HasMember("approval") ? "approval-required+approval"
                                                              : "approval-required");
      } else if (event == "error") {
        events.push_back("error:" + str(doc["payload"], "code"));
      }
    }
  };
  const std::vector<std::string> first = run("s1");
  CHECK(first == std::vector<std::string>{"approval-required+approval", "final:suspended"});
  const std::vector<std::string> second = run("s2");
  CHECK(second == std::vector<std::string>{"approval-required",
                                           std::string("error:") + err::kTooManyApprovals,
                                           "final:rejected"});
  auto store = approvals::open_sqlite(config.state_dir + "/state.db");
  approvals::Filter all;
  all.status.reset();
  CHECK(store->list(all).size() == 1);
}
