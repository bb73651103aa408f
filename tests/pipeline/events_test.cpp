// The event JSON shapes the requester reads (docs/PIPELINE.md).
#include "pipeline/events.h"

#include "tests/pipeline/pipeline_fixture.h"

using namespace warden;
using namespace warden::pipeline;
using namespace warden::pipeline::test;

TEST_CASE("a decision event carries the stage, attempt, outcome, rules and action") {
  Decision d;
  d.decision_id = "d1";
  d.outcome = Outcome::Reject;
  d.reason = "no \"rm\"";
  d.rules.push_back(FiredRule{.rule = "refuse-rm",
                              .outcome = Outcome::Reject,
                              .reason = "rm deletes",
                              .monitor = false,
                              .overlay = {},
                              .asserted_reason = {}});
  d.rules.push_back(FiredRule{.rule = "watch",
                              .outcome = Outcome::Reject,
                              .reason = "seen",
                              .monitor = true,
                              .overlay = {},
                              .asserted_reason = {}});
  d.action_json = R"({"target":"shell","payload":{"command":"rm x"}})";
  rapidjson::Document e = parse_json(events::decision(d, "reason", 2));
  CHECK(string_at(e, "event") == "decision");
  CHECK(string_at(e, "stage") == "reason");
  CHECK(e["attempt"].GetInt() == 2);
  CHECK(string_at(e, "decision_id") == "d1");
  CHECK(string_at(e, "outcome") == "reject");
  CHECK(string_at(e, "reason") == "no \"rm\"");
  REQUIRE(e["rules"].Size() == 2);
  CHECK(string_at(e["rules"][0], "rule") == "refuse-rm");
  CHECK(string_at(e["rules"][0], "mode") == "enforce");
  CHECK(string_at(e["rules"][1], "mode") == "monitor");
  CHECK(string_at(e["action"]["payload"], "command") == "rm x");
  CHECK_FALSE(e.HasMember("error_code"));
}

TEST_CASE(
    "a decision without an action (the input was refused) has action null and its error code") {
  Decision d;
  d.outcome = Outcome::Reject;
  d.error_code = "E_INPUT_JSON";
  d.reason = "invalid JSON";
  rapidjson::Document e = parse_json(events::decision(d, "last-mile", 1));
  CHECK(e["action"].IsNull());
  CHECK(string_at(e, "error_code") == "E_INPUT_JSON");
  d.action_json = "{broken";
  CHECK(parse_json(events::decision(d, "reason", 1))["action"].IsNull());
}

TEST_CASE("tool-output, tool-error, reply, dropped, error and final events") {
  actuators::Result ok;
  ok.ok = true;
  ok.output = "line\n\x01";
  ok.exit_code = 3;
  ok.truncated = true;
  rapidjson::Document out = parse_json(events::tool_result("shell", "d2", ok));
  CHECK(string_at(out, "event") == "tool-output");
  CHECK(string_at(out, "target") == "shell");
  CHECK(string_at(out, "decision_id") == "d2");
  CHECK(string_at(out, "output") == "line\n\x01");
  CHECK(out["exit_code"].GetInt() == 3);
  CHECK(out["truncated"].IsTrue());

  actuators::Result bad;
  bad.error_code = "E_ACT_TIMEOUT";
  bad.error = "killed after 200 ms";
  rapidjson::Document err = parse_json(events::tool_result("shell", "d3", bad));
  CHECK(string_at(err, "event") == "tool-error");
  CHECK(string_at(err, "error_code") == "E_ACT_TIMEOUT");
  CHECK(string_at(err, "error") == "killed after 200 ms");

  CHECK(string_at(parse_json(events::reply("hi")), "text") == "hi");
  CHECK(string_at(parse_json(events::notice("system", "note")), "event") == "system");
  CHECK(string_at(parse_json(events::dropped("why")), "reason") == "why");
  rapidjson::Document e = parse_json(events::error("E_CASCADE", "cascade failure: a: HTTP 500"));
  CHECK(string_at(e, "code") == "E_CASCADE");
  rapidjson::Document f = parse_json(events::final_event("done", 4));
  CHECK(string_at(f, "status") == "done");
  CHECK(f["cycles"].GetInt() == 4);
}

TEST_CASE("invalid UTF-8 in an output still makes a valid JSON event") {
  actuators::Result ok;
  ok.ok = true;
  ok.output = std::string(
      "a\xff\xfe"
      "b");
  rapidjson::Document doc;
  std::string text = events::tool_result("shell", "d", ok);
  doc.Parse<rapidjson::kParseValidateEncodingFlag>(text.c_str(), text.size());
  CHECK_FALSE(doc.HasParseError());
}
