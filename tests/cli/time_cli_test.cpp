// Time in the rule author's commands: `dry-run --now`, a case's "now" in `warden test`, an
// unknown constant time zone in `warden check`, and the team-policy example's office-hours
// cases across daylight saving changes (with its package-install cases, which read a data
// file). Every time is given; none is read from the clock.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace fs = std::filesystem;
using warden::cli::testing::run_warden;
using warden::testing::TempDir;

namespace {

// Approves before 08:00 in Berlin, asks after; reports the local time it saw.
const char* kTimeRules = R"CLP(
(defrule early
  (proposal (id ?id) (target reply))
  (test (< (local-hour "Europe/Berlin") 8))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule early)
                    (reason (str-cat "early: " (local-date "Europe/Berlin") " " (local-hour "Europe/Berlin") ":"
                                     (local-minute "Europe/Berlin"))))))
(defrule late
  (proposal (id ?id) (target reply))
  (test (>= (local-hour "Europe/Berlin") 8))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule late)
                    (reason (str-cat "late: " (local-weekday "Europe/Berlin"))))))
)CLP";

const std::string kReply = R"({"target":"reply","payload":{"text":"hi"}})";

}  // namespace

TEST_CASE("dry-run --now decides at that time, in the zone's local time", "[cli][time]") {
  TempDir dir{"warden-time-cli"};
  const std::string rules = dir.write("t.clp", kTimeRules);
  // 06:30 UTC is 07:30 in Berlin before the spring change and 08:30 after it.
  auto before =
      run_warden({"dry-run", "--rules", rules, "--now", "2026-03-27T06:30:00Z", "-"}, kReply);
  CHECK(before.code == 0);
  CHECK(before.out.find("\"reason\":\"early: 2026-03-27 7:30\"") != std::string::npos);
  auto after =
      run_warden({"dry-run", "--rules", rules, "--now", "2026-03-30T06:30:00Z", "-"}, kReply);
  CHECK(after.code == 3);
  CHECK(after.out.find("\"reason\":\"late: mon\"") != std::string::npos);
  auto offset =
      run_warden({"dry-run", "--rules", rules, "--now", "2026-03-29T01:30:00+01:00", "-"}, kReply);
  CHECK(offset.code == 0);
  CHECK(offset.out.find("\"reason\":\"early: 2026-03-29 1:30\"") != std::string::npos);
}

TEST_CASE("dry-run --now refuses a time that is not RFC 3339 with an offset: exit 2",
          "[cli][time]") {
  TempDir dir{"warden-time-cli"};
  const std::string rules = dir.write("t.clp", kTimeRules);
  auto bad = run_warden({"dry-run", "--rules", rules, "--now", "2026-03-29T01:30:00", "-"}, kReply);
  CHECK(bad.code == 2);
  CHECK(bad.out.empty());
  CHECK(bad.err.find("warden: --now 2026-03-29T01:30:00: no offset: add Z or +HH:MM") !=
        std::string::npos);
  auto no_day =
      run_warden({"dry-run", "--rules", rules, "--now", "2026-02-29T10:00:00Z", "-"}, kReply);
  CHECK(no_day.code == 2);
  CHECK(no_day.err.find("no such date") != std::string::npos);
}

TEST_CASE("test: a case's now decides it; a malformed now is an error at its file and line",
          "[cli][time]") {
  TempDir dir{"warden-time-cli"};
  dir.write("t.clp", kTimeRules);
  const std::string cases = dir.write(
      "t.jsonl",
      R"({"name":"early","now":"2026-03-27T06:30:00Z","proposal":{"target":"reply"},"expect":"approve","rule":"early"})"
      "\n"
      R"({"name":"late","now":"2026-03-30T06:30:00Z","proposal":{"target":"reply"},"expect":"approval-required","rule":"late"})"
      "\n"
      R"({"name":"default time","proposal":{"target":"reply"},"expect":"approve","rule":"early"})"
      "\n");
  auto ok = run_warden({"test", dir.path().string()});
  INFO(ok.out << ok.err);
  CHECK(ok.code == 0);
  CHECK(ok.out.find("3 passed, 0 failed") != std::string::npos);

  dir.write(
      "t.jsonl",
      R"({"name":"early","now":"2026-03-27T06:30:00Z","proposal":{"target":"reply"},"expect":"approve"})"
      "\n"
      R"({"name":"typo","now":"2026-03-27T06:30:00","proposal":{"target":"reply"},"expect":"approve"})"
      "\n");
  auto bad = run_warden({"test", dir.path().string()});
  CHECK(bad.code == 1);
  CHECK(bad.err.find(cases +
                     ":2: error E_CASE: test case 'typo': \"now\" is not a time: no offset") !=
        std::string::npos);
}

TEST_CASE("check: a constant unknown time zone is E_TIME_ZONE at its file and line, exit 2",
          "[cli][time]") {
  TempDir dir{"warden-time-cli"};
  const std::string rules = dir.write(
      "t.clp",
      "(defrule a\n  (proposal (id ?id))\n  (test (< (local-hour \"Europe/Berln\") 8))\n  =>)\n");
  auto r = run_warden({"check", rules});
  CHECK(r.code == 2);  // rules that do not load
  CHECK(r.out.find(rules +
                   ":3: error E_TIME_ZONE: in rule 'a': unknown time zone \"Europe/Berln\"") !=
        std::string::npos);
}

TEST_CASE(
    "the team-policy example: infrastructure changes in Berlin office hours, across DST, "
    "package installs only from the team's list (a data file), no reads of keys and .env "
    "files, HTTP only to the team's hosts",
    "[cli][time][data][examples]") {
  const std::string dir = WARDEN_SOURCE_DIR "/examples/team-policy";
  auto r = run_warden({"test", "--format", "json", dir});
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("\"failed\":0") != std::string::npos);
  CHECK(r.out.find("\"uncovered_rules\":[]") != std::string::npos);
  // 15 office-hours cases, 13 install cases, 43 secret-file cases, 29 HTTP cases.
  CHECK(r.out.find("\"passed\":100") != std::string::npos);
  CHECK(r.out.find("office_hours.jsonl") != std::string::npos);
  CHECK(r.out.find("team_installs.jsonl") != std::string::npos);
  CHECK(r.out.find("secret_files.jsonl") != std::string::npos);
  CHECK(r.out.find("http_allowlist.jsonl") != std::string::npos);
  CHECK(r.out.find("packages.data.toml") == std::string::npos);  // data, not cases
  auto check = run_warden({"check", dir});
  CHECK(check.code == 0);
  CHECK(check.out.find("  npm-packages: list of 6 (") != std::string::npos);
  CHECK(check.out.find("  pip-packages: list of 4 (") != std::string::npos);
  CHECK(check.out.find("  http-hosts: list of 4 (") != std::string::npos);
}
