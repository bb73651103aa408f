// audit query: filters by time, kind, outcome, rule, principal, session and target; the
// proposal summary; --since/--until times.
#include "audit/query.h"

#include <catch2/catch.hpp>

#include "audit/chain.h"
#include "tests/audit/log_builder.h"
#include "tests/support/temp_dir.h"

using namespace warden;
using namespace warden::audit;
using warden::audit::testing::DecisionSpec;
using warden::audit::testing::LogBuilder;
using warden::audit::testing::TestKey;
using warden::server::testing::TempDir;

namespace {

struct QueryLog {
  TempDir dir;
  TestKey key;
  LogBuilder b{key};
  LogSet set;

  QueryLog() {
    b.step_us = 3600LL * 1000000;  // one record an hour
    b.start();                     // 1
    b.decision({"agent-x", "s1", "shell", "ls -la", "approve", "shell-safe", ""});  // 2
    b.decision(
        {"agent-x", "s1", "shell", "rm -rf build", "approval-required", "shell-rm", ""});  // 3
    b.decision({"agent-y", "s2", "file", "/etc/passwd", "reject", "file-system", ""});     // 4
    b.checkpoint();                                                                        // 5
    b.decision({"agent-x", "s3", "http", "https://example.com/x", "approval-required",
                "net-new-host", ""});  // 6
    b.decision({"agent-x", "s3", "shell", "git push", "approve", "shell-rm",
                "/input/payload/command"});  // 7
    std::string error;
    REQUIRE(LogSet::open({dir.write("audit.jsonl", b.text())}, &set, &error));
  }
  std::vector<std::uint64_t> seqs(const QueryFilter& f) const {
    std::vector<std::uint64_t> out;
    run_query(set, f, [&](const QueryRow& r) { out.push_back(r.seq); });
    return out;
  }
  std::int64_t time_of(std::uint64_t seq) const {
    return b.time_us - static_cast<std::int64_t>(7 - seq) * b.step_us;
  }
};

using Seqs = std::vector<std::uint64_t>;

}  // namespace

TEST_CASE("query filters decisions") {
  QueryLog q;
  QueryFilter f;
  CHECK(q.seqs(f) == Seqs{2, 3, 4, 6, 7});  // decisions only by default

  f.principal = "agent-x";
  CHECK(q.seqs(f) == Seqs{2, 3, 6, 7});
  f.outcome = Outcome::ApprovalRequired;
  CHECK(q.seqs(f) == Seqs{3, 6});
  f.since_us = q.time_of(4);
  CHECK(q.seqs(f) == Seqs{6});

  QueryFilter rule;
  rule.rule = "shell-rm";  // fired, whatever the outcome
  CHECK(q.seqs(rule) == Seqs{3, 7});

  QueryFilter session;
  session.session = "s3";
  CHECK(q.seqs(session) == Seqs{6, 7});

  QueryFilter target;
  target.target = "shell";
  CHECK(q.seqs(target) == Seqs{2, 3, 7});

  QueryFilter range;
  range.since_us = q.time_of(3);
  range.until_us = q.time_of(6);  // exclusive
  CHECK(q.seqs(range) == Seqs{3, 4});

  QueryFilter limit;
  limit.limit = 2;
  CHECK(q.seqs(limit) == Seqs{2, 3});

  QueryFilter kinds;
  kinds.kind = "all";
  CHECK(q.seqs(kinds) == Seqs{1, 2, 3, 4, 5, 6, 7});
  kinds.kind = "checkpoint";
  CHECK(q.seqs(kinds) == Seqs{5});
  kinds.kind = "all";
  kinds.principal = "agent-y";  // a decision filter: only decisions can match
  CHECK(q.seqs(kinds) == Seqs{4});

  QueryFilter one;
  one.kind = "all";
  one.seq = 5;
  CHECK(q.seqs(one) == Seqs{5});
}

TEST_CASE("query rows carry the decision's summary, outcome and rules") {
  QueryLog q;
  QueryFilter f;
  std::vector<QueryRow> rows;
  run_query(q.set, f, [&](const QueryRow& r) { rows.push_back(r); });
  REQUIRE(rows.size() == 5);
  CHECK(rows[1].summary == "shell run: rm -rf build");
  CHECK(rows[1].outcome == "approval-required");
  CHECK(rows[1].rules == std::vector<std::string>{"shell-rm"});
  CHECK(rows[1].principal == "agent-x");
  CHECK(rows[1].session == "s1");
  CHECK(rows[1].time_us == q.time_of(3));
  CHECK(rows[2].summary == "file write: /etc/passwd");
  CHECK(rows[3].summary == "http get: https://example.com/x");
  CHECK(rows[4].masked);
  CHECK_FALSE(rows[3].masked);
  CHECK(rows[1].line == std::string_view(q.b.lines[2]).substr(0, q.b.lines[2].size() - 1));
}

TEST_CASE("proposal_summary") {
  CHECK(proposal_summary(R"({"target":"shell","action":"run","payload":{"command":"make"}})") ==
        "shell run: make");
  CHECK(proposal_summary(
            R"({"target":"tool","action":"call","payload":{"tool":"search","args":{}}})") ==
        "tool call: search");
  CHECK(proposal_summary(R"({"target":"x","payload":{"n":1}})") == R"(x: {"n":1})");
  CHECK(proposal_summary(R"({"target":"x"})") == "x");
}

// A record's input is read with json::parse_stored (bindings/json.h): one edited on disk with
// a NUL byte after its object is shown as its text, not as the part before the NUL.
TEST_CASE("proposal_summary shows an input the shared parser refuses as its text") {
  using namespace std::string_literals;
  const std::string nul = "{\"target\":\"x\"}\0{\"target\":\"y\"}"s;
  CHECK(proposal_summary(nul) == nul);
  CHECK(proposal_summary("{\"target\":\"x\xff\"}") == "x\xff");  // bytes as recorded
}

TEST_CASE("--since and --until times") {
  std::int64_t now = 0, t = 0;
  std::string error;
  REQUIRE(parse_time("2026-11-23T04:00:00.000000Z", &now));
  REQUIRE(parse_time_arg("24h", now, &t, &error));
  CHECK(t == now - 24LL * 3600 * 1000000);
  REQUIRE(parse_time_arg("7d", now, &t, &error));
  CHECK(t == now - 7LL * 86400 * 1000000);
  REQUIRE(parse_time_arg("90s", now, &t, &error));
  CHECK(t == now - 90LL * 1000000);
  REQUIRE(parse_time_arg("2026-11-22T10:00:00Z", now, &t, &error));
  CHECK(format_time(t) == "2026-11-22T10:00:00.000000Z");
  REQUIRE(parse_time_arg("2026-11-22T10:00:00.5+02:00", now, &t, &error));
  CHECK(format_time(t) == "2026-11-22T08:00:00.500000Z");
  REQUIRE(parse_time_arg("2026-11-22", now, &t, &error));
  CHECK(format_time(t) == "2026-11-22T00:00:00.000000Z");
  CHECK_FALSE(parse_time_arg("yesterday", now, &t, &error));
  CHECK(error.find("yesterday") != std::string::npos);
  CHECK_FALSE(parse_time_arg("2026-11-22T10:00:00", now, &t, &error));  // no zone
  CHECK_FALSE(parse_time_arg("2026-02-30", now, &t, &error));
  CHECK_FALSE(parse_time_arg("h", now, &t, &error));
}
