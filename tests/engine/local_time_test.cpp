// The decision's time and the local time functions rules call (local-weekday, local-hour,
// local-minute, local-date): evaluated at the decision's time, in a named IANA zone with its
// daylight saving; an unknown zone is a load error when written as a constant and fails the
// decision closed otherwise. Every time here is given; no test reads the machine's clock.
#include <thread>

#include "bindings/local_time.h"

#include "engine/rule_inputs.h"
#include "engine/session_memory.h"
#include "tests/engine/engine_test_util.h"

using namespace warden;
using warden::test::compile_text;
using warden::test::decide_ok;
using warden::test::find_code;
using warden::test::must_compile;
using warden::test::test_options;

namespace {

std::int64_t at(const char* rfc3339) {
  std::string error;
  auto t = local_time::parse_rfc3339(rfc3339, &error);
  INFO(rfc3339 << ": " << error);
  REQUIRE(t);
  return *t;
}

// Reports the local fields of the decision's time in Berlin as the decision's reason.
const char* kShowRules = R"CLP(
(defrule show
  (proposal (id ?id))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule show)
                    (reason (str-cat (local-date "Europe/Berlin") " " (local-weekday "Europe/Berlin") " "
                                     (local-hour "Europe/Berlin") ":" (local-minute "Europe/Berlin"))))))
)CLP";

Decision decide_at(Engine& engine, std::int64_t now,
                   const std::string& json = R"({"target":"reply","payload":{"text":"hi"}})") {
  DecideRequest request;
  request.proposal_json = json;
  request.now = now;
  return decide_ok(engine, request);
}

}  // namespace

TEST_CASE("RFC 3339 times with an offset are read to the second", "[time]") {
  CHECK(at("1970-01-01T00:00:00Z") == 0);
  CHECK(at("2026-03-29T01:30:00+01:00") == 1774744200);  // 00:30 UTC
  CHECK(at("2026-03-29T00:30:00Z") == 1774744200);
  CHECK(at("2026-03-28T19:30:00-05:00") == 1774744200);
  CHECK(at("2026-03-29t00:30:00.999z") == 1774744200);  // fraction dropped, lower case allowed
  CHECK(at("1969-12-31T23:59:59Z") == -1);
  CHECK(at("2024-02-29T12:00:00+00:00") == 1709208000);
}

TEST_CASE("anything but an RFC 3339 time with an offset is refused with its cause", "[time]") {
  auto refused = [](const char* text) {
    std::string error;
    auto t = local_time::parse_rfc3339(text, &error);
    INFO(text);
    CHECK_FALSE(t);
    return error;
  };
  CHECK(refused("2026-03-29T01:30:00").find("no offset") != std::string::npos);
  CHECK(refused("2026-03-29 01:30:00Z").find("not a date and time") != std::string::npos);
  CHECK(refused("2026-02-29T01:30:00Z") == "no such date");
  CHECK(refused("2026-13-01T01:30:00Z") == "no such date");
  CHECK(refused("2026-03-29T24:00:00Z") == "no such time of day");
  CHECK(refused("2026-12-31T23:59:60Z").find("leap second") != std::string::npos);
  CHECK(refused("2026-03-29T01:30:00+0100").find("offset") != std::string::npos);
  CHECK(refused("2026-03-29T01:30:00+24:00") == "the offset is out of range");
  CHECK(refused("2026-03-29T01:30:00Z ").find("text after the offset") != std::string::npos);
  CHECK(refused("2026-03-29T01:30:00.Z").find("without digits") != std::string::npos);
  CHECK(refused("").find("not a date and time") != std::string::npos);
  CHECK(refused("now").find("not a date and time") != std::string::npos);
}

TEST_CASE("local time follows the zone's daylight saving changes", "[time]") {
  std::string error;
  auto berlin = [&](const char* utc) {
    auto f = local_time::in_zone("Europe/Berlin", at(utc), &error);
    INFO(utc << ": " << error);
    REQUIRE(f);
    return local_time::date_text(*f) + " " + std::string(local_time::weekday_name(f->weekday)) +
           " " + std::to_string(f->hour) + ":" + std::to_string(f->minute);
  };
  // Spring forward, 2026-03-29: 02:00 CET becomes 03:00 CEST (01:00 UTC).
  CHECK(berlin("2026-03-29T00:59:00Z") == "2026-03-29 sun 1:59");
  CHECK(berlin("2026-03-29T01:00:00Z") == "2026-03-29 sun 3:0");
  // Fall back, 2026-10-25: 03:00 CEST becomes 02:00 CET (01:00 UTC); 02:30 comes twice.
  CHECK(berlin("2026-10-25T00:30:00Z") == "2026-10-25 sun 2:30");
  CHECK(berlin("2026-10-25T01:30:00Z") == "2026-10-25 sun 2:30");
  // The same moment on two sides of the date line.
  auto tokyo = local_time::in_zone("Asia/Tokyo", at("2026-01-04T20:00:00Z"), &error);
  REQUIRE(tokyo);
  CHECK(local_time::weekday_name(tokyo->weekday) == "mon");
  auto la = local_time::in_zone("America/Los_Angeles", at("2026-01-04T20:00:00Z"), &error);
  REQUIRE(la);
  CHECK(local_time::weekday_name(la->weekday) == "sun");
  CHECK(la->hour == 12);
}

TEST_CASE("only zones the tz database names are time zones", "[time]") {
  CHECK(local_time::zone_error("Europe/Berlin").empty());
  CHECK(local_time::zone_error("UTC").empty());
  CHECK(local_time::zone_error("America/Argentina/Buenos_Aires").empty());
  CHECK(local_time::zone_error("Europe/Berln").find("unknown time zone \"Europe/Berln\"") !=
        std::string::npos);
  CHECK(local_time::zone_error("europe/berlin").find("unknown time zone") !=
        std::string::npos);  // spelt as in the database
  CHECK(local_time::zone_error("").find("unknown time zone") != std::string::npos);
  CHECK(local_time::zone_error("../../etc/passwd").find("unknown time zone") != std::string::npos);
  CHECK(local_time::zone_error("/usr/share/zoneinfo/UTC").find("unknown time zone") !=
        std::string::npos);
  CHECK(local_time::zone_error("localtime").find("this machine's own zone") != std::string::npos);
  std::string error;
  CHECK_FALSE(local_time::in_zone("Mars/Olympus", 0, &error));
  CHECK(error.find("unknown time zone \"Mars/Olympus\"") != std::string::npos);
}

TEST_CASE("the local time functions read the decision's time", "[time][engine]") {
  Engine engine(must_compile(kShowRules), test_options());
  CHECK(decide_at(engine, at("2026-03-29T01:30:00+01:00")).reason == "2026-03-29 sun 1:30");
  CHECK(decide_at(engine, at("2026-03-29T03:30:00+02:00")).reason == "2026-03-29 sun 3:30");
  CHECK(decide_at(engine, at("2026-03-30T08:05:00+02:00")).reason == "2026-03-30 mon 8:5");
}

TEST_CASE("a request's time wins over the engine's clock, which is the default", "[time][engine]") {
  EngineOptions o = test_options();
  o.clock = [] { return std::int64_t{1774744200}; };  // 2026-03-29T01:30:00+01:00
  Engine engine(must_compile(kShowRules), o);
  CHECK(decide_ok(engine, R"({"target":"reply"})").reason == "2026-03-29 sun 1:30");
  CHECK(decide_at(engine, at("2026-12-24T18:00:00+01:00")).reason == "2026-12-24 thu 18:0");
  // (now) reads the same time.
  Engine now_engine(must_compile(R"CLP(
(defrule t (proposal (id ?id)) =>
  (assert (decision (proposal ?id) (outcome approve) (rule t) (reason (str-cat (now))))))
)CLP"),
                    o);
  CHECK(decide_at(now_engine, 1234567890).reason == "1234567890");
  CHECK(decide_ok(now_engine, R"({"target":"reply"})").reason == "1774744200");
}

TEST_CASE("the local time functions take an explicit time and a symbol zone", "[time][engine]") {
  Engine engine(must_compile(R"CLP(
(defrule t (proposal (id ?id)) =>
  (assert (decision (proposal ?id) (outcome approve) (rule t)
                    (reason (str-cat (local-date UTC 0) " " (local-weekday UTC 0) " " (local-hour "Asia/Kolkata" 0) ":"
                                     (local-minute "Asia/Kolkata" 0) " " (local-hour "Europe/Berlin" (- (now) 3600)))))))
)CLP"),
                test_options());
  CHECK(decide_at(engine, at("2026-06-01T12:00:00Z")).reason == "1970-01-01 thu 5:30 13");
}

TEST_CASE("a constant unknown time zone is E_TIME_ZONE at its line", "[time][loader]") {
  for (const char* fn : {"local-weekday", "local-hour", "local-minute", "local-date"}) {
    INFO(fn);
    auto loaded = compile_text(std::string("(defrule a\n (proposal (id ?id))\n (test (eq (") + fn +
                               " \"Europe/Berln\") 1))\n =>)\n");
    CHECK_FALSE(loaded.policy);
    const Diagnostic* d = find_code(loaded.diagnostics, code::kTimeZone);
    REQUIRE(d);
    CHECK(d->file == "t.clp");
    CHECK(d->line == 3);
    CHECK(d->rule == "a");
    CHECK(d->message.find("unknown time zone \"Europe/Berln\"") != std::string::npos);
  }
  // A symbol is a constant too; in a deffunction, on the right-hand side, as well.
  auto symbol = compile_text("(deffunction office-hour ()\n  (local-hour\n   Mars/Olympus))\n");
  REQUIRE(find_code(symbol.diagnostics, code::kTimeZone));
  CHECK(find_code(symbol.diagnostics, code::kTimeZone)->line == 3);
  auto rhs = compile_text(
      "(defrule b (proposal (id ?id)) =>\n (assert (decision (proposal ?id) (outcome approve) "
      "(rule b)\n"
      "  (reason (local-date \"localtime\")))))\n");
  REQUIRE(find_code(rhs.diagnostics, code::kTimeZone));
  CHECK(find_code(rhs.diagnostics, code::kTimeZone)->line == 3);
  // A variable is not checked at load: it fails the decision that reaches it (below).
  CHECK(
      compile_text(
          "(defrule c (param (key \"payload.tz\") (value ?tz)) (test (= (local-hour ?tz) 1)) =>)\n")
          .policy);
}

TEST_CASE("an unknown time zone at decision time fails the decision closed with its cause",
          "[time][engine][failclosed]") {
  Engine engine(must_compile(R"CLP(
(defrule office-hours
  (proposal (id ?id))
  (param (proposal ?id) (key "payload.tz") (value ?tz))
  (test (< (local-hour ?tz) 25))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule office-hours) (reason "any hour"))))
(defrule bad-time
  (proposal (id ?id) (target tool))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule bad-time) (reason (str-cat (local-hour "UTC" (str-cat "noon")))))))
)CLP"),
                test_options());
  const std::int64_t now = at("2026-03-29T01:30:00+01:00");
  CHECK(decide_at(engine, now, R"({"target":"reply","payload":{"tz":"Europe/Berlin"}})").outcome ==
        Outcome::Approve);
  Decision d = decide_at(engine, now, R"({"target":"reply","payload":{"tz":"Europe/Berln"}})");
  CHECK(d.outcome == Outcome::Reject);
  CHECK(d.error_code == code::kRuntime);
  CHECK(d.reason.find("local-hour: unknown time zone \"Europe/Berln\"") != std::string::npos);
  d = decide_at(engine, now, R"({"target":"reply","payload":{"tz":"localtime"}})");
  CHECK(d.error_code == code::kRuntime);
  CHECK(d.reason.find("this machine's own zone") != std::string::npos);
  // A time that is not an integer.
  d = decide_at(engine, now, R"({"target":"tool"})");
  CHECK(d.error_code == code::kRuntime);
  CHECK(d.reason.find("local-hour: argument 2 must be an integer") != std::string::npos);
  // The engine goes on deciding.
  CHECK(decide_at(engine, now, R"({"target":"reply","payload":{"tz":"UTC"}})").outcome ==
        Outcome::Approve);
}

TEST_CASE("rules that call the local time functions read the clock", "[time][inputs]") {
  for (const char* call : {"(local-weekday \"UTC\")", "(local-hour \"UTC\")",
                           "(local-minute \"UTC\")", "(local-date \"UTC\")"}) {
    INFO(call);
    RuleInputs in = scan_rule_inputs({RuleSource{
        "t.clp", std::string("(defrule a (proposal (id ?id)) (test (eq ") + call + " 1)) =>)"}});
    CHECK(in.uses_clock);
  }
  CHECK_FALSE(
      scan_rule_inputs({RuleSource{"t.clp", "(defrule a (proposal (id ?id)) =>)"}}).uses_clock);
}

TEST_CASE("a global computed from local time is evaluated at each decision's time",
          "[time][engine]") {
  Engine engine(must_compile(R"CLP(
(defglobal ?*berlin-day* = (local-weekday "Europe/Berlin"))
(defrule t (proposal (id ?id)) =>
  (assert (decision (proposal ?id) (outcome approve) (rule t) (reason (str-cat ?*berlin-day*)))))
)CLP"),
                test_options());
  CHECK(decide_at(engine, at("2026-03-29T12:00:00+02:00")).reason == "sun");
  CHECK(decide_at(engine, at("2026-03-30T12:00:00+02:00")).reason == "mon");
}

TEST_CASE("a session's history is remembered and aged at the requests' times", "[time][session]") {
  auto loaded =
      Policy::compile({RuleSource{"t.clp", R"CLP(
(defrule write (proposal (id ?id) (target file))
  => (assert (decision (proposal ?id) (outcome approve) (rule write))))
(defrule aged
  (proposal (id ?id) (target tool))
  (history (proposal ?id) (age ?a))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule aged) (reason (str-cat "age " ?a " at " (now))))))
)CLP"},
                       RuleSource{"effects.toml", "[program.ls]\noperands = [\"read...\"]\n"}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  Engine engine(loaded.policy, test_options());  // no clock: each request gives its time
  SessionMemory memory;
  const std::string write =
      R"({"target":"file","action":"write","payload":{"path":"a"},"context":{"session":"s"}})";
  const std::string tool = R"({"target":"tool","payload":{"tool":"x"},"context":{"session":"s"}})";
  DecideRequest first;
  first.proposal_json = write;
  first.now = 4102444700;  // 2099-12-31T23:58:20Z
  REQUIRE(decide_in_session(engine, memory, first, session_key(write, std::nullopt)).ok);
  DecideRequest second;
  second.proposal_json = tool;
  second.now = 4102444800;  // 2100-01-01T00:00:00Z
  DecideResult r = decide_in_session(engine, memory, second, session_key(tool, std::nullopt));
  REQUIRE(r.ok);
  CHECK(r.decision.reason == "age 100 at 4102444800");
}

TEST_CASE("engines on several threads read local time in several zones at once",
          "[time][threads]") {
  auto policy = must_compile(R"CLP(
(defrule show (proposal (id ?id)) (param (proposal ?id) (key "payload.tz") (value ?tz)) =>
  (assert (decision (proposal ?id) (outcome approve) (rule show)
                    (reason (str-cat (local-date ?tz) " " (local-weekday ?tz) " " (local-hour ?tz) ":" (local-minute ?tz))))))
)CLP");
  const std::pair<const char*, const char*> zones[] = {
      {"Europe/Berlin", "2026-03-29 sun 3:30"},    {"America/New_York", "2026-03-28 sat 21:30"},
      {"Asia/Kathmandu", "2026-03-29 sun 7:15"},   {"Australia/Lord_Howe", "2026-03-29 sun 12:30"},
      {"Pacific/Chatham", "2026-03-29 sun 15:15"}, {"America/St_Johns", "2026-03-28 sat 23:0"},
  };
  const std::int64_t now = 1774747800;  // 2026-03-29T01:30:00Z
  std::vector<std::string> failures[2];
  auto work = [&](int t) {
    Engine engine(policy, test_options());
    for (int round = 0; round < 50; ++round)
      for (const auto& [zone, want] : zones) {
        DecideRequest request;
        const std::string json =
            std::string(R"({"target":"reply","payload":{"tz":")") + zone + "\"}}";
        request.proposal_json = json;
        request.now = now;
        DecideResult r = engine.decide(request);
        if (!r.ok || r.decision.reason != want)
          failures[t].push_back(std::string(zone) + ": " + r.decision.reason);
      }
  };
  std::thread other(work, 1);
  work(0);
  other.join();
  for (const auto& f : failures) {
    INFO((f.empty() ? "" : f[0]));
    CHECK(f.empty());
  }
}
