// Session memory of a fleet: daemons sharing one PostgreSQL database (a real server from
// Debian's packages, started by the test) keep their sessions' history there
// ([session] store follows [approvals] store = "postgres"). A flow rule — no network after
// this session read a credential — holds whichever daemon each step reaches, after a restart,
// and only within one (principal, session); the history expires and is bounded per session
// and per principal; a database that cannot be read fails the session's decisions closed
// (E_SESSION_STORE), never decided with an empty history.
#include <libpq-fe.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "approvals_fixture.h"
#include "server/errors.h"
#include "server/session_history_pg.h"
#include "tests/support/postgres_server.h"

using namespace warden;
using namespace warden::server;
using namespace warden::server::testing;
using warden::test::fresh_database;

namespace {

// File reads and fetches are approved, except a fetch after this session read a credential
// (the reason names the decision that read it).
const char* kFlowRules = R"CLP(
(defrule reads-ok
  (proposal (id ?id) (target file) (action read))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule reads-ok) (reason "reading is fine"))))
(defrule fetches-ok
  (proposal (id ?id) (target http))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule fetches-ok) (reason "fetching is fine"))))
(defrule no-network-after-credential-read
  (effect (proposal ?id) (kind network))
  (history (proposal ?id) (kind read) (target ?p&:(str-index "credentials" ?p)) (decision ?d))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-network-after-credential-read)
                    (reason ?d))))
)CLP";

// Any effects table turns on effect facts; file and http proposals need no program entry.
const char* kEffectsTable = "[program.true]\noperands = []\n";

std::string session_json(const std::string& session) {
  return session.empty() ? "" : ",\"context\":{\"session\":" + json_string(session) + "}";
}

std::string fleet_read_file(const std::string& path, const std::string& session = "s1") {
  return "{\"target\":\"file\",\"action\":\"read\",\"payload\":{\"path\":" + json_string(path) +
         "}" + session_json(session) + "}";
}

std::string fetch(const std::string& session = "s1") {
  return "{\"target\":\"http\",\"action\":\"request\",\"payload\":{\"method\":\"POST\",\"url\":"
         "\"https://paste.example.com/upload\"}" +
         session_json(session) + "}";
}

const std::string kCredential = "/srv/app/credentials.json";

Config session_fleet_config(const TempDir& dir, const std::string& state,
                            const std::string& conninfo) {
  Config c = approvals_config(dir, state, conninfo);
  dir.write("rules/flow.clp", kFlowRules);
  dir.write("rules/effects.toml", kEffectsTable);
  return c;
}

struct Decided {
  std::string outcome, error_code, reason, decision_id, rules;
};

Decided decide(Party& party, const std::string& proposal) {
  std::string reply = party.call(decide_request("d", proposal));
  INFO(proposal << " -> " << reply);
  REQUIRE(error_code(reply) == "");
  auto payload = payload_of(reply);
  REQUIRE(payload.HasMember("decision"));
  const auto& d = payload["decision"];
  Decided out{str(d, "outcome"), str(d, "error"), str(d, "reason"), str(d, "decision_id"), ""};
  if (d.HasMember("rules") && d["rules"].IsArray()) {
    for (const auto& r : d["rules"].GetArray()) {
      out.rules += out.rules.empty() ? "" : ",";
      out.rules += str(r, "rule");
    }
  }
  return out;
}

// A count from the shared database (the test's own look at what is stored).
long long count_of(const std::string& conninfo, const char* sql) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, sql);
  bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1;
  long long n = ok ? std::atoll(PQgetvalue(r, 0, 0)) : -1;
  std::string error = ok ? "" : PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  INFO(sql << ": " << error);
  REQUIRE(ok);
  return n;
}

// A clock the test moves (µs since the epoch), shared by daemons.
struct TestClock {
  std::atomic<std::int64_t> seconds{1'800'000'000};
  void set(std::int64_t s) { seconds.store(s); }
  Daemon::Options options() {
    Daemon::Options o;
    o.clock_us = [this] { return seconds.load() * 1000000; };
    return o;
  }
};

}  // namespace

TEST_CASE("fleet: a credential read on one daemon is in the session's history on another",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  RunningDaemon a(session_fleet_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(session_fleet_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);
  Party dave_b(b.address(), t.dave);

  // Before any credential read, the fetch is fine anywhere.
  CHECK(decide(alice_b, fetch("s0")).outcome == "approve");

  Decided read = decide(alice_a, fleet_read_file(kCredential));
  REQUIRE(read.outcome == "approve");
  // The reply on A came after the effects were stored: B, asked next, sees the read.
  Decided sent = decide(alice_b, fetch());
  CHECK(sent.outcome == "reject");
  CHECK(sent.rules.find("no-network-after-credential-read") != std::string::npos);
  CHECK(sent.reason == read.decision_id);
  // So does A itself; another session of alice, and dave with alice's session id, do not.
  CHECK(decide(alice_a, fetch()).outcome == "reject");
  CHECK(decide(alice_b, fetch("s2")).outcome == "approve");
  CHECK(decide(dave_b, fetch()).outcome == "approve");
  // A proposal without a session has no history.
  CHECK(decide(alice_b, fetch("")).outcome == "approve");
}

TEST_CASE("fleet: a restarted daemon still has its sessions' history",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  ApprovalTokens t;
  std::string read_id;
  {
    RunningDaemon a(session_fleet_config(dir, "daemon-a", conninfo));
    REQUIRE(a.ok());
    Party alice(a.address(), t.alice);
    Decided read = decide(alice, fleet_read_file(kCredential, "long-session"));
    REQUIRE(read.outcome == "approve");
    read_id = read.decision_id;
    REQUIRE(a.stop() == 0);
  }
  RunningDaemon again(session_fleet_config(dir, "daemon-a", conninfo));
  REQUIRE(again.ok());
  Party alice(again.address(), t.alice);
  Decided sent = decide(alice, fetch("long-session"));
  CHECK(sent.outcome == "reject");
  CHECK(sent.reason == read_id);
}

TEST_CASE("fleet: another principal's same session id neither sees nor adds to the history",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  RunningDaemon a(session_fleet_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(session_fleet_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party dave_a(a.address(), t.dave);
  Party dave_b(b.address(), t.dave);
  Party alice_b(b.address(), t.alice);

  // dave reads a credential in "s1", even claiming to be alice: only dave's "s1" has it.
  std::string spoof =
      "{\"target\":\"file\",\"action\":\"read\",\"payload\":{\"path\":" + json_string(kCredential) +
      "},\"context\":{\"session\":\"s1\",\"principal\":\"alice\"}}";
  REQUIRE(decide(dave_a, spoof).outcome == "approve");
  CHECK(decide(alice_b, fetch()).outcome == "approve");
  CHECK(decide(alice_a, fetch()).outcome == "approve");
  CHECK(decide(dave_b, fetch()).outcome == "reject");
}

TEST_CASE("fleet: history expires after ttl_seconds and expired rows are pruned",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  TestClock clock;
  const std::int64_t t0 = clock.seconds.load();
  Config ca = session_fleet_config(dir, "daemon-a", conninfo);
  ca.session.ttl_seconds = 60;
  Config cb = session_fleet_config(dir, "daemon-b", conninfo);
  cb.session.ttl_seconds = 60;
  RunningDaemon a(ca, clock.options());
  REQUIRE(a.ok());
  RunningDaemon b(cb, clock.options());
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);

  REQUIRE(decide(alice_a, fleet_read_file(kCredential, "exp")).outcome == "approve");
  REQUIRE(decide(alice_a, fleet_read_file(kCredential, "other")).outcome == "approve");
  clock.set(t0 + 59);
  CHECK(decide(alice_b, fetch("exp")).outcome == "reject");
  clock.set(t0 + 60);
  // Sixty seconds old: forgotten on every daemon (as SessionMemory forgets it).
  CHECK(decide(alice_b, fetch("exp")).outcome == "approve");
  CHECK(decide(alice_a, fetch("exp")).outcome == "approve");
  // The approved fetch joined "exp", which dropped its expired read there; "other" holds its
  // read until pruned (the daemons' own pruning runs every 60 s, with the same clock).
  auto* store = dynamic_cast<PgSessionHistory*>(b.daemon().context().sessions);
  REQUIRE(store != nullptr);
  store->prune(t0 + 60);  // "other": not remembered for 60 s
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_session_effects") == 1);
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_sessions") == 1);
  CHECK(store->session_count() == 1);
  CHECK(store->prune(t0 + 120) == 1);  // "exp", remembered last at t0 + 60
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_session_effects") == 0);
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_sessions") == 0);
  CHECK(count_of(conninfo, "SELECT coalesce(sum(sessions), 0) FROM warden_session_owners") == 0);
  CHECK(count_of(conninfo, "SELECT coalesce(sum(bytes), 0) FROM warden_session_owners") == 0);
}

TEST_CASE("fleet: a session keeps max_entries across daemons, an identical effect once (newest)",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  TestClock clock;
  const std::int64_t t0 = clock.seconds.load();
  Config ca = session_fleet_config(dir, "daemon-a", conninfo);
  ca.session.max_entries = 3;
  Config cb = session_fleet_config(dir, "daemon-b", conninfo);
  cb.session.max_entries = 3;
  RunningDaemon a(ca, clock.options());
  REQUIRE(a.ok());
  RunningDaemon b(cb, clock.options());
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);

  REQUIRE(decide(alice_a, fleet_read_file(kCredential)).outcome == "approve");  // [cred]
  clock.set(t0 + 1);
  REQUIRE(decide(alice_b, fleet_read_file("/srv/app/a.txt")).outcome == "approve");  // [cred a]
  clock.set(t0 + 2);
  Decided again = decide(alice_a, fleet_read_file(kCredential));  // [a cred]: once, the newest
  REQUIRE(again.outcome == "approve");
  clock.set(t0 + 3);
  REQUIRE(decide(alice_b, fleet_read_file("/srv/app/b.txt")).outcome == "approve");  // [a cred b]
  REQUIRE(decide(alice_b, fleet_read_file("/srv/app/c.txt")).outcome == "approve");  // [cred b c]
  Decided sent = decide(alice_a, fetch());
  CHECK(sent.outcome == "reject");
  CHECK(sent.reason == again.decision_id);  // the newer of the two reads
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_session_effects") == 3);
  REQUIRE(decide(alice_b, fleet_read_file("/srv/app/d.txt")).outcome == "approve");  // [b c d]
  CHECK(decide(alice_a, fetch()).outcome == "approve");
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_session_effects") == 3);
}

TEST_CASE("fleet: past max_sessions a principal loses its own oldest session, never another's",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  TestClock clock;
  const std::int64_t t0 = clock.seconds.load();
  Config ca = session_fleet_config(dir, "daemon-a", conninfo);
  ca.session.max_sessions = 2;
  Config cb = session_fleet_config(dir, "daemon-b", conninfo);
  cb.session.max_sessions = 2;
  RunningDaemon a(ca, clock.options());
  REQUIRE(a.ok());
  RunningDaemon b(cb, clock.options());
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);
  Party dave_a(a.address(), t.dave);

  REQUIRE(decide(dave_a, fleet_read_file(kCredential, "d1")).outcome == "approve");
  clock.set(t0 + 1);
  REQUIRE(decide(alice_a, fleet_read_file(kCredential, "s1")).outcome == "approve");
  clock.set(t0 + 2);
  REQUIRE(decide(alice_b, fleet_read_file(kCredential, "s2")).outcome == "approve");
  clock.set(t0 + 3);
  // A third session of alice: her least recently remembered one (s1) goes, not dave's.
  REQUIRE(decide(alice_b, fleet_read_file("/srv/app/notes.txt", "s3")).outcome == "approve");
  CHECK(decide(alice_a, fetch("s2")).outcome == "reject");
  CHECK(decide(dave_a, fetch("d1")).outcome == "reject");
  // (This approved fetch starts s1 afresh, which in turn evicts s2.)
  CHECK(decide(alice_a, fetch("s1")).outcome == "approve");
  CHECK(count_of(conninfo,
                 "SELECT sessions FROM warden_session_owners WHERE principal = 'alice'") == 2);
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_sessions WHERE principal = 'alice'") == 2);
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_sessions WHERE principal = 'dave'") == 1);
}

TEST_CASE("fleet: with PostgreSQL down, decisions in a session fail closed (E_SESSION_STORE)",
          "[server][session][postgres]") {
  // A server of its own: this test stops it.
  warden::test::PostgresServer server;
  TempDir dir;
  const std::string conninfo = fresh_database("sessions", server);
  RunningDaemon a(session_fleet_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  ApprovalTokens t;
  Party alice(a.address(), t.alice);
  Party admin(a.address(), t.admin);
  Decided read = decide(alice, fleet_read_file(kCredential));
  REQUIRE(read.outcome == "approve");

  server.stop();
  // The history cannot be read: rejected with the code, never decided without it — in the
  // session that read the credential and in a fresh one alike.
  for (std::string session : {"s1", "fresh"}) {
    Decided d = decide(alice, fetch(session));
    INFO(session << ": " << d.reason);
    CHECK(d.outcome == "reject");
    CHECK(d.error_code == err::kSessionStore);
    CHECK(d.rules.empty());
  }
  // A proposal outside any session needs no history.
  CHECK(decide(alice, fetch("")).outcome == "approve");
  auto health = payload_of(alice.call(make_request("h", "health-check")));
  CHECK(str(health, "status") == "degraded");
  CHECK(str(health, "sessions").rfind("failing: ", 0) == 0);
  auto status = payload_of(admin.call(make_request("st", "status")));
  REQUIRE(status.HasMember("session_store"));
  CHECK(str(status["session_store"], "store") == "postgres");
  CHECK(status["session_store"]["ok"].GetBool() == false);
  CHECK(status["session_store"]["read_failures"].GetUint64() >= 2);

  server.start();
  // A failed connection attempt makes reads fail at once for 0.5 s: let it pass.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  Decided back = decide(alice, fetch());
  CHECK(back.outcome == "reject");
  CHECK(back.error_code == "");
  CHECK(back.reason == read.decision_id);
  // The session store reports itself working again (the approvals store's own health comes
  // back with its next call).
  CHECK_FALSE(payload_of(alice.call(make_request("h", "health-check"))).HasMember("sessions"));
}

// Runs one statement on the shared database (the test's own hand on it).
void exec_sql(const std::string& conninfo, const char* sql) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  PGresult* r = PQexec(c, sql);
  bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
  std::string error = ok ? "" : PQresultErrorMessage(r);
  PQclear(r);
  PQfinish(c);
  INFO(sql << ": " << error);
  REQUIRE(ok);
}

TEST_CASE("fleet: effects that cannot be stored are owed: the session fails closed until paid",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  RunningDaemon a(session_fleet_config(dir, "daemon-a", conninfo));
  REQUIRE(a.ok());
  RunningDaemon b(session_fleet_config(dir, "daemon-b", conninfo));
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);
  Party admin_a(a.address(), t.admin);
  // The database still answers reads but refuses every new entry.
  exec_sql(
      conninfo,
      "ALTER TABLE warden_session_effects ADD CONSTRAINT refuse_all CHECK (time < 0) NOT VALID");

  // Approved and answered as approved (its audit record says so), but not stored: owed.
  Decided read = decide(alice_a, fleet_read_file(kCredential));
  REQUIRE(read.outcome == "approve");
  auto status = payload_of(admin_a.call(make_request("st", "status")));
  CHECK(status["session_store"]["remember_failures"].GetUint64() >= 1);
  CHECK(status["session_store"]["owed"].GetUint64() == 1);
  // While owed, the session's decisions on this daemon fail closed, not decided without it.
  Decided owed = decide(alice_a, fetch());
  CHECK(owed.outcome == "reject");
  CHECK(owed.error_code == err::kSessionStore);
  // Another session of the same principal is decided as usual (and owes its fetch now).
  CHECK(decide(alice_a, fetch("other")).outcome == "approve");

  exec_sql(conninfo, "ALTER TABLE warden_session_effects DROP CONSTRAINT refuse_all");
  // Paid (by the session's next decision, or by the retry before it): the history is whole
  // again, on this daemon and on the other.
  Decided paid = decide(alice_a, fetch());
  CHECK(paid.outcome == "reject");
  CHECK(paid.error_code == "");
  CHECK(paid.reason == read.decision_id);
  CHECK(decide(alice_b, fetch()).reason == read.decision_id);
  CHECK(decide(alice_a, fetch("other")).outcome == "approve");  // pays what "other" owed
  status = payload_of(admin_a.call(make_request("st", "status")));
  CHECK(status["session_store"]["owed"].GetUint64() == 0);
  CHECK(status["session_store"]["lost"].GetUint64() == 0);
}

TEST_CASE("fleet: [session] store = memory keeps each daemon's history to itself",
          "[server][session][postgres]") {
  TempDir dir;
  const std::string conninfo = fresh_database("sessions");
  Config ca = session_fleet_config(dir, "daemon-a", conninfo);
  ca.session.store = "memory";
  Config cb = session_fleet_config(dir, "daemon-b", conninfo);
  cb.session.store = "memory";
  RunningDaemon a(ca);
  REQUIRE(a.ok());
  RunningDaemon b(cb);
  REQUIRE(b.ok());
  ApprovalTokens t;
  Party alice_a(a.address(), t.alice);
  Party alice_b(b.address(), t.alice);
  Party admin(a.address(), t.admin);
  REQUIRE(decide(alice_a, fleet_read_file(kCredential)).outcome == "approve");
  CHECK(decide(alice_a, fetch()).outcome == "reject");
  CHECK(decide(alice_b, fetch()).outcome == "approve");  // what the operator chose
  auto status = payload_of(admin.call(make_request("st", "status")));
  CHECK(str(status["session_store"], "store") == "memory");
  bool warned = false;
  for (const auto& w : status["warnings"].GetArray()) {
    warned =
        warned || std::string(w.GetString()).find("session.store is memory") != std::string::npos;
  }
  CHECK(warned);
}

TEST_CASE("session store: effects of any bytes are stored as they are, once, in order",
          "[server][session][postgres]") {
  const std::string conninfo = fresh_database("sessions");
  PgSessionOptions o;
  o.conninfo = conninfo;
  o.prune_interval = std::chrono::milliseconds(0);
  PgSessionHistory store(o);
  PgSessionHistory other(o);  // a second daemon's

  EffectRecord odd;
  odd.kind = "read";
  odd.object = "path";
  static const char kOdd[] = "/tmp/a\0b\xff\xfe'); DROP TABLE warden_sessions; --";
  odd.target = std::string(kOdd, sizeof kOdd - 1) + std::string(100000, 'x');
  odd.program = "cat";
  odd.path_class = "credential";
  odd.in_workspace = true;
  odd.subcommand = "sub";
  odd.via = "payload.path";
  odd.dynamic = true;
  EffectRecord net;
  net.kind = "network";
  net.object = "host";
  net.target = "example.com";

  const std::string weird("s\0weird", 7);  // a session id with a NUL in it
  store.record("alice", weird, "d1", 100, {odd, net});
  other.record("alice", weird, "d2", 101, {odd});  // identical: kept once, the newest
  auto history = store.snapshot("alice", weird, 101);
  REQUIRE(history.size() == 2);
  CHECK(history[0].decision_id == "d1");
  CHECK(history[0].effect.target == "example.com");
  CHECK(history[1].decision_id == "d2");
  CHECK(history[1].time == 101);
  const EffectRecord& got = history[1].effect;
  CHECK(got.target == odd.target);
  CHECK(got.kind == "read");
  CHECK(got.program == "cat");
  CHECK(got.path_class == "credential");
  CHECK(got.in_workspace);
  CHECK(got.subcommand == "sub");
  CHECK(got.via == "payload.path");
  CHECK(got.dynamic);
  // Another session id, another principal, no session: nothing.
  CHECK(store.snapshot("alice", "s", 101).empty());
  CHECK(store.snapshot("bob", weird, 101).empty());
  CHECK(store.snapshot("alice", "", 101).empty());
  // Entries dated after `now` are kept; forget drops the session everywhere.
  CHECK(other.snapshot("alice", weird, 50).size() == 2);
  other.forget("alice", weird);
  CHECK(store.snapshot("alice", weird, 101).empty());
  CHECK(count_of(conninfo, "SELECT coalesce(sum(sessions), 0) FROM warden_session_owners") == 0);
  CHECK(count_of(conninfo, "SELECT coalesce(sum(bytes), 0) FROM warden_session_owners") == 0);
}

TEST_CASE("session store: a principal over max_bytes loses its own oldest sessions, then entries",
          "[server][session][postgres]") {
  const std::string conninfo = fresh_database("sessions");
  PgSessionOptions o;
  o.conninfo = conninfo;
  o.prune_interval = std::chrono::milliseconds(0);
  o.limits.max_bytes = 300000;
  PgSessionHistory store(o);
  auto big = [](const std::string& name) {
    EffectRecord e;
    e.kind = "read";
    e.object = "path";
    e.target = "/data/" + name + std::string(100000, 'x');
    return e;
  };
  store.record("carol", "c1", "dc", 10, {big("carol")});
  store.record("alice", "s1", "d1", 11, {big("one")});
  store.record("alice", "s2", "d2", 12, {big("two")});
  // 3 × 100 KB for alice: over 300,000 bytes, her least recently remembered session goes.
  store.record("alice", "s3", "d3", 13, {big("three")});
  CHECK(store.snapshot("alice", "s1", 13).empty());
  CHECK(store.snapshot("alice", "s2", 13).size() == 1);
  CHECK(store.snapshot("alice", "s3", 13).size() == 1);
  CHECK(store.snapshot("carol", "c1", 13).size() == 1);
  // One session alone over the share: its own oldest entries go.
  store.record("alice", "s3", "d4", 14, {big("four"), big("five"), big("six")});
  auto s3 = store.snapshot("alice", "s3", 14);
  REQUIRE(s3.size() == 2);
  CHECK(s3[0].effect.target == big("five").target);
  CHECK(store.snapshot("alice", "s2", 14).empty());
  CHECK(store.snapshot("carol", "c1", 14).size() == 1);
  CHECK(count_of(conninfo, "SELECT bytes FROM warden_session_owners WHERE principal = 'alice'") <=
        300000);
  CHECK(count_of(conninfo,
                 "SELECT o.bytes - (SELECT coalesce(sum(bytes), 0) FROM warden_sessions s "
                 "WHERE s.principal = o.principal) FROM warden_session_owners o "
                 "WHERE principal = 'alice'") == 0);
}

TEST_CASE("session store: concurrent remembers on two daemons keep the caps and the counters",
          "[server][session][postgres]") {
  const std::string conninfo = fresh_database("sessions");
  PgSessionOptions o;
  o.conninfo = conninfo;
  o.prune_interval = std::chrono::milliseconds(0);
  o.limits.max_sessions = 5;
  o.limits.max_entries = 4;
  PgSessionHistory one(o), two(o);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      PgSessionHistory& store = t % 2 ? one : two;
      for (int i = 0; i < 40; ++i) {
        EffectRecord e;
        e.kind = "read";
        e.object = "path";
        e.target = "/f" + std::to_string(i % 7);
        try {
          store.record("alice", "s" + std::to_string(i % 9), "d", 1000 + i, {e});
        } catch (...) {
          ++failures;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK(count_of(conninfo, "SELECT count(*) FROM warden_sessions") <= 5);
  CHECK(count_of(conninfo,
                 "SELECT max(n) FROM (SELECT count(*) AS n FROM warden_session_effects "
                 "GROUP BY skey) x") <= 4);
  CHECK(count_of(conninfo,
                 "SELECT (SELECT sessions FROM warden_session_owners) - count(*) "
                 "FROM warden_sessions") == 0);
  CHECK(count_of(conninfo,
                 "SELECT (SELECT bytes FROM warden_session_owners) - sum(bytes) "
                 "FROM warden_sessions") == 0);
  CHECK(count_of(conninfo,
                 "SELECT count(*) FROM warden_sessions s WHERE s.entries <> (SELECT count(*) "
                 "FROM warden_session_effects e WHERE e.skey = s.skey)") == 0);
}

TEST_CASE("[session] store is read, follows [approvals] store and is checked",
          "[server][session][config]") {
  Config c;
  REQUIRE(parse_config("[session]\nstore = \"memory\"\n", "", &c).empty());
  CHECK(c.session.store == "memory");
  CHECK(effective_session_store(c) == "memory");

  Config fleet;
  REQUIRE(parse_config("[approvals]\nstore = \"postgres\"\nconninfo = \"dbname=x\"\n", "", &fleet)
              .empty());
  CHECK(fleet.session.store == "auto");
  CHECK(effective_session_store(fleet) == "postgres");
  fleet.session.ttl_seconds = 0;
  CHECK(effective_session_store(fleet) == "");
  CHECK(effective_session_store(Config{}) == "memory");

  Config bad;
  ConfigErrors errors = parse_config("[session]\nstore = \"redis\"\n", "", &bad);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "session.store");
  // postgres keeps the memory in the approvals store's database: it needs one.
  Config lonely;
  errors = parse_config("[session]\nstore = \"postgres\"\n", "", &lonely);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].key == "session.store");
}
