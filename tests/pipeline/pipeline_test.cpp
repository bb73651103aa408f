// Pipeline::run end to end inside the process: a scripted model, the real Cascade and
// Think, real CLIPS rules as the Decider, recording actuators.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <thread>

#include "tests/pipeline/pipeline_fixture.h"

using namespace warden;
using namespace warden::pipeline;
using namespace warden::pipeline::test;
using Kinds = std::vector<std::string>;

TEST_CASE("rm -rf ~ is refused, ls runs, its output goes back to the model, which replies") {
  Harness h({
      shell_proposal("rm -rf ~"),
      // The model also writes a context: it must not reach the rules.
      R"({"target":"shell","action":"run","payload":{"command":"ls"},"context":{"principal":"root"}})",
      reply_proposal("There are two files: a.txt and b.txt."),
  });
  RunSummary summary = h.run(Harness::user("what is in my home directory?"));

  CHECK(summary.status == "done");
  CHECK(summary.cycles == 2);
  CHECK(summary.model_calls == 3);
  CHECK(summary.dispatched == 2);
  CHECK(h.kinds() == Kinds{"decision:reason:reject", "decision:reason:approve",
                           "decision:last-mile:approve", "tool-output", "decision:reason:approve",
                           "decision:last-mile:approve", "reply", "final:done"});

  // Only ls reached the shell; rm never did.
  auto shell_calls = h.shell->calls();
  REQUIRE(shell_calls.size() == 1);
  CHECK(string_at(parse_json(shell_calls[0].action_json)["payload"], "command") == "ls");
  CHECK(shell_calls[0].context.principal == "alice");
  CHECK(shell_calls[0].context.session == "s1");
  CHECK(shell_calls[0].context.depth == 0);
  CHECK(shell_calls[0].context.allowed.empty());
  CHECK_FALSE(shell_calls[0].context.decision_id.empty());

  // Every proposal carried the signal's context, never the model's.
  for (const auto& call : h.decider.calls()) {
    rapidjson::Document doc = parse_json(call.proposal_json);
    REQUIRE(doc.HasMember("context"));
    CHECK(string_at(doc["context"], "principal") == "alice");
    CHECK(string_at(doc["context"], "session") == "s1");
    CHECK(string_at(doc["context"], "agent") == "coder-1");
    CHECK(string_at(doc["context"], "source") == "cli");
  }

  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 3);
  // The retry's request carries the rejection trace and the rule's hint.
  CHECK_FALSE(contains(requests[0].system, "refuse-rm"));
  CHECK(contains(requests[1].system, "refuse-rm"));
  CHECK(contains(requests[1].system, "rm deletes files"));
  CHECK(contains(requests[1].system, "rm -rf ~"));
  CHECK(contains(requests[1].system, "list files with ls instead of deleting them"));
  // The feedback continues the same conversation: the user's words, the ls proposal, the output.
  const auto& third = requests[2];
  REQUIRE(third.messages.size() >= 3);
  CHECK(contains(third.messages[0].content, "what is in my home directory?"));
  CHECK(third.messages[1].role == "assistant");
  CHECK(contains(third.messages[1].content, "\"ls\""));
  CHECK(contains(third.messages.back().content, "a.txt"));
  CHECK(contains(third.messages.back().content, "exit status 0"));
  // No trace after the action was approved.
  CHECK_FALSE(contains(third.system, "refuse-rm"));

  auto outputs = h.events_of("tool-output");
  REQUIRE(outputs.size() == 1);
  rapidjson::Document out = parse_json(outputs[0]);
  CHECK(string_at(out, "target") == "shell");
  CHECK(string_at(out, "output") == "a.txt\nb.txt\n");
  CHECK(out["exit_code"].GetInt() == 0);
  CHECK(out["truncated"].IsFalse());
  auto replies = h.events_of("reply");
  REQUIRE(replies.size() == 1);
  CHECK(string_at(parse_json(replies[0]), "text") == "There are two files: a.txt and b.txt.");
}

TEST_CASE("three refusals end with an explanation and nothing is dispatched") {
  Harness h({shell_proposal("rm -rf ~"), shell_proposal("rm -r /home/user"),
             shell_proposal("rm -f ~/.bashrc"), shell_proposal("ls")});
  RunSummary summary = h.run(Harness::user("free some disk space"));

  CHECK(summary.status == "rejected");
  CHECK(summary.model_calls == 3);
  CHECK(summary.dispatched == 0);
  CHECK(h.shell->calls().empty());
  CHECK(h.reply->calls().empty());
  CHECK(h.kinds() == Kinds{"decision:reason:reject", "decision:reason:reject",
                           "decision:reason:reject", "reply", "final:rejected"});
  for (const auto& call : h.decider.calls()) CHECK(call.stage == DecideStage::Reason);
  CHECK(h.decider.calls().size() == 3);

  std::string text = string_at(parse_json(h.events_of("reply").at(0)), "text");
  CHECK(contains(text, "Attempt 1: shell run: rm -rf ~"));
  CHECK(contains(text, "Attempt 2: shell run: rm -r /home/user"));
  CHECK(contains(text, "Attempt 3: shell run: rm -f ~/.bashrc"));
  CHECK(contains(text, "refuse-rm"));
  CHECK(contains(text, "rm deletes files"));

  // The third request holds both earlier refusals.
  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 3);
  CHECK(contains(requests[2].system, "Attempt 1"));
  CHECK(contains(requests[2].system, "Attempt 2"));
  CHECK(contains(requests[2].system, "rm -r /home/user"));
}

TEST_CASE("max_retries bounds the model attempts") {
  Harness h({shell_proposal("rm a"), shell_proposal("rm b"), shell_proposal("ls")});
  h.options.max_retries = 2;
  RunSummary summary = h.run(Harness::user("tidy up"));
  CHECK(summary.status == "rejected");
  CHECK(summary.model_calls == 2);
  CHECK(h.shell->calls().empty());
}

TEST_CASE("approval-required suspends the action: no dispatch, no retry, no rejection trace") {
  Harness h(
      {R"({"target":"wait","action":"run","payload":{"command":"deploy"}})", shell_proposal("ls")});
  auto wait = std::make_unique<RecordingActuator>("wait", false);
  RecordingActuator* wait_actuator = wait.get();
  h.registry.add(std::move(wait));
  RunSummary summary = h.run(Harness::user("deploy it"));

  CHECK(summary.status == "suspended");
  CHECK(summary.model_calls == 1);
  CHECK(summary.dispatched == 0);
  CHECK(wait_actuator->calls().empty());
  CHECK(h.shell->calls().empty());
  CHECK(h.provider->requests().size() == 1);
  CHECK(h.kinds() ==
        Kinds{"decision:reason:approval-required", "approval-required", "final:suspended"});
  rapidjson::Document ev = parse_json(h.events_of("approval-required").at(0));
  CHECK(string_at(ev, "reason") == "a person decides");
  CHECK(string_at(ev["rules"][0], "rule") == "hold-wait");
  CHECK(string_at(ev["action"], "target") == "wait");
  CHECK_FALSE(string_at(ev, "decision_id").empty());
}

TEST_CASE("a last-mile refusal (rules reloaded between reason and act) stops the dispatch") {
  Harness h({shell_proposal("ls")});
  h.decider.set_last_mile_rules(R"CLP(
(defrule no-shell-now
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule no-shell-now) (reason "shell is off"))))
)CLP");
  RunSummary summary = h.run(Harness::user("list files"));

  CHECK(summary.status == "rejected");
  CHECK(summary.dispatched == 0);
  CHECK(h.shell->calls().empty());
  CHECK(h.kinds() ==
        Kinds{"decision:reason:approve", "decision:last-mile:reject", "final:rejected"});
  auto calls = h.decider.calls();
  REQUIRE(calls.size() == 2);
  CHECK(calls[1].stage == DecideStage::LastMile);
  // The last-mile decision saw the action as it would be dispatched: target and context.
  rapidjson::Document seen = parse_json(calls[1].proposal_json);
  CHECK(string_at(seen, "target") == "shell");
  CHECK(string_at(seen["context"], "principal") == "alice");
  rapidjson::Document ev = parse_json(h.events_of("decision").at(1));
  CHECK(string_at(ev["rules"][0], "rule") == "no-shell-now");
}

TEST_CASE("a last-mile approval-required suspends the dispatch") {
  Harness h({shell_proposal("ls")});
  h.decider.set_last_mile_rules(R"CLP(
(defrule hold-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hold-shell) (reason "ask first"))))
)CLP");
  RunSummary summary = h.run(Harness::user("list files"));
  CHECK(summary.status == "suspended");
  CHECK(h.shell->calls().empty());
  CHECK(h.kinds() == Kinds{"decision:reason:approve", "decision:last-mile:approval-required",
                           "approval-required", "final:suspended"});
}

TEST_CASE("capabilities come from the last-mile decision's allow facts") {
  Harness h({shell_proposal("ls | wc -l"), reply_proposal("ok")});
  RunSummary summary = h.run(Harness::user("count files"));
  CHECK(summary.status == "done");
  auto calls = h.shell->calls();
  REQUIRE(calls.size() == 1);
  CHECK(calls[0].context.allowed == std::vector<std::string>{"shell-syntax"});

  // The same line with the grant gone at the last mile: dispatched without the capability.
  Harness g({shell_proposal("ls | wc -l"), reply_proposal("ok")});
  g.decider.set_last_mile_rules(R"CLP(
(defrule approve-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-shell) (reason "ok"))))
(defrule approve-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-reply) (reason "ok"))))
)CLP");
  g.run(Harness::user("count files"));
  auto g_calls = g.shell->calls();
  REQUIRE(g_calls.size() == 1);
  CHECK(g_calls[0].context.allowed.empty());
}

TEST_CASE("a heartbeat never reaches the model or an actuator") {
  SECTION("with an action: dropped") {
    Harness h({shell_proposal("ls")});
    Signal beat;
    beat.sensor = "heartbeat";
    beat.source = "shell";
    beat.action_json = shell_proposal("ls");
    RunSummary summary = h.run(beat);
    CHECK(summary.status == "dropped");
    CHECK(h.kinds() == Kinds{"dropped", "final:dropped"});
    CHECK(h.provider->requests().empty());
    CHECK(h.decider.calls().empty());
    CHECK(h.shell->calls().empty());
  }
  SECTION("plain: nothing happens") {
    Harness h({shell_proposal("ls")});
    Signal beat;
    beat.sensor = "heartbeat";
    RunSummary summary = h.run(beat);
    CHECK(summary.status == "done");
    CHECK(summary.model_calls == 0);
    CHECK(h.kinds() == Kinds{"final:done"});
    CHECK(h.provider->requests().empty());
    CHECK(h.shell->calls().empty());
  }
}

TEST_CASE("only user-input and chat-message start a conversation") {
  for (std::string sensor : {"tool-output", "tool-error", "loop-error", "webhook"}) {
    Harness h({shell_proposal("ls")});
    Signal s = Harness::user("ls");
    s.sensor = sensor;
    RunSummary summary = h.run(s);
    INFO(sensor);
    CHECK(summary.status == "dropped");
    CHECK(h.provider->requests().empty());
    CHECK(h.shell->calls().empty());
  }
  Harness h({reply_proposal("hi")});
  Signal chat = Harness::user("hello");
  chat.sensor = "chat-message";
  CHECK(h.run(chat).status == "done");
  CHECK(h.provider->requests().size() == 1);
}

TEST_CASE("feedback deeper than max_depth is dropped and logged") {
  Harness h({shell_proposal("echo again")}, /*repeat_last=*/true);
  h.options.max_depth = 3;
  RunSummary summary = h.run(Harness::user("loop forever"));
  CHECK(summary.status == "dropped");
  CHECK(summary.dispatched == 4);  // depths 0, 1, 2, 3
  CHECK(summary.cycles == 4);
  auto calls = h.shell->calls();
  REQUIRE(calls.size() == 4);
  for (std::size_t i = 0; i < calls.size(); ++i)
    CHECK(calls[i].context.depth == static_cast<std::int64_t>(i));
  auto kinds = h.kinds();
  REQUIRE(kinds.size() >= 2);
  CHECK(kinds[kinds.size() - 2] == "dropped");
  CHECK(kinds.back() == "final:dropped");
  CHECK(contains(string_at(parse_json(h.events_of("dropped").at(0)), "reason"), "depth 4"));
  bool logged = false;
  for (const auto& line : h.logs) logged = logged || contains(line, "depth limit");
  CHECK(logged);
}

TEST_CASE("the default depth limit is 10; a signal beyond it is dropped at once") {
  Harness h({shell_proposal("ls")});
  Signal s = Harness::user("hello");
  s.depth = 11;
  RunSummary summary = h.run(s);
  CHECK(summary.status == "dropped");
  CHECK(summary.cycles == 0);
  CHECK(h.provider->requests().empty());
}

TEST_CASE("silent actuators give no feedback") {
  SECTION("reply ends the run") {
    Harness h({reply_proposal("hello there"), shell_proposal("ls")});
    RunSummary summary = h.run(Harness::user("hi"));
    CHECK(summary.status == "done");
    CHECK(summary.model_calls == 1);
    CHECK(summary.dispatched == 1);
    CHECK(h.kinds() ==
          Kinds{"decision:reason:approve", "decision:last-mile:approve", "reply", "final:done"});
  }
  SECTION("an actuator named in Options::silent") {
    Harness h(
        {R"({"target":"notes","action":"write","payload":{"text":"x"}})", shell_proposal("ls")});
    h.options.silent.push_back("notes");
    RunSummary summary = h.run(Harness::user("note it"));
    CHECK(summary.status == "done");
    CHECK(summary.model_calls == 1);
    CHECK(h.notes->calls().size() == 1);
    CHECK(h.events_of("tool-output").empty());
  }
  SECTION("a non-silent one feeds back") {
    Harness h(
        {R"({"target":"notes","action":"write","payload":{"text":"x"}})", reply_proposal("noted")});
    RunSummary summary = h.run(Harness::user("note it"));
    CHECK(summary.status == "done");
    CHECK(summary.model_calls == 2);
    CHECK(h.events_of("tool-output").size() == 1);
  }
}

TEST_CASE("a failed action feeds a tool-error back to the model") {
  Harness h({shell_proposal("cat missing"), reply_proposal("that file does not exist")});
  h.shell_respond = [](std::string_view, const actuators::Context&) {
    actuators::Result r;
    r.ok = false;
    r.error_code = "E_ACT_FAILED";
    r.error = "cat: missing: No such file";
    return r;
  };
  RunSummary summary = h.run(Harness::user("show missing"));
  CHECK(summary.status == "done");
  CHECK(h.kinds() == Kinds{"decision:reason:approve", "decision:last-mile:approve", "tool-error",
                           "decision:reason:approve", "decision:last-mile:approve", "reply",
                           "final:done"});
  rapidjson::Document ev = parse_json(h.events_of("tool-error").at(0));
  CHECK(string_at(ev, "error_code") == "E_ACT_FAILED");
  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 2);
  CHECK(contains(requests[1].messages.back().content, "E_ACT_FAILED"));
  CHECK(contains(requests[1].messages.back().content, "No such file"));
}

TEST_CASE("a target with no actuator is a tool-error naming it") {
  Harness h({R"({"target":"telegram","action":"send","payload":{"text":"hi"}})",
             reply_proposal("cannot")});
  RunSummary summary = h.run(Harness::user("message bob"));
  CHECK(summary.status == "done");
  CHECK(summary.dispatched == 1);  // only the reply
  rapidjson::Document ev = parse_json(h.events_of("tool-error").at(0));
  CHECK(string_at(ev, "error") == "no actuator for target telegram");
  CHECK(string_at(ev, "error_code") == "E_ACT_NO_ACTUATOR");
  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 2);
  CHECK(contains(requests[1].messages.back().content, "no actuator for target telegram"));
}

TEST_CASE("an exception in a cycle becomes a loop-error signal, within bounds") {
  SECTION("fed back once, then the model answers") {
    Harness h({shell_proposal("ls"), reply_proposal("sorry, that failed")});
    h.shell_respond = [](std::string_view, const actuators::Context&) -> actuators::Result {
      throw std::runtime_error("actuator crashed");
    };
    RunSummary summary = h.run(Harness::user("list"));
    CHECK(summary.status == "done");
    CHECK(h.kinds() == Kinds{"decision:reason:approve", "decision:last-mile:approve", "error",
                             "decision:reason:approve", "decision:last-mile:approve", "reply",
                             "final:done"});
    rapidjson::Document ev = parse_json(h.events_of("error").at(0));
    CHECK(string_at(ev, "code") == "E_LOOP");
    CHECK(string_at(ev, "message") == "actuator crashed");
    auto requests = h.provider->requests();
    REQUIRE(requests.size() == 2);
    CHECK(contains(requests[1].messages.back().content, "actuator crashed"));
    // The loop-error cycle ran at depth 1 and still knows what the user asked.
    CHECK(contains(requests[1].messages.front().content, "list"));
    auto calls = h.decider.calls();
    REQUIRE(calls.size() == 4);
    CHECK(calls[2].depth == 1);
  }
  SECTION("an error while handling a loop-error is dropped") {
    Harness h({shell_proposal("ls")}, /*repeat_last=*/true);
    h.shell_respond = [](std::string_view, const actuators::Context&) -> actuators::Result {
      throw std::runtime_error("actuator crashed");
    };
    RunSummary summary = h.run(Harness::user("list"));
    CHECK(summary.status == "failed");
    CHECK(h.shell->calls().size() == 2);
    CHECK(summary.model_calls == 2);
    CHECK(h.kinds().back() == "final:failed");
    CHECK(h.events_of("dropped").size() == 1);
  }
  SECTION("an error while handling a tool-error is dropped") {
    Harness h({shell_proposal("ls"), shell_proposal("ls again"), shell_proposal("ls more")});
    int n = 0;
    h.shell_respond = [&n](std::string_view, const actuators::Context&) -> actuators::Result {
      if (n++ == 0) {
        actuators::Result r;
        r.error_code = "E_ACT_FAILED";
        r.error = "failed";
        return r;
      }
      throw std::runtime_error("actuator crashed");
    };
    RunSummary summary = h.run(Harness::user("list"));
    CHECK(summary.status == "failed");
    CHECK(h.shell->calls().size() == 2);
    CHECK(h.events_of("dropped").size() == 1);
  }
  SECTION("an error beyond depth 2 is dropped") {
    Harness h({shell_proposal("ls")}, /*repeat_last=*/true);
    int n = 0;
    h.shell_respond = [&n](std::string_view, const actuators::Context&) -> actuators::Result {
      if (n++ < 3) return Harness::ok_result("x", 0);
      throw std::runtime_error("actuator crashed at depth 3");
    };
    RunSummary summary = h.run(Harness::user("list"));
    CHECK(summary.status == "failed");
    auto calls = h.shell->calls();
    REQUIRE(calls.size() == 4);
    CHECK(calls.back().context.depth == 3);
    CHECK(h.events_of("dropped").size() == 1);
    CHECK(summary.model_calls == 4);
  }
}

TEST_CASE("a cascade failure ends the run with an error and a reply naming it") {
  Harness h({"!error"});
  RunSummary summary = h.run(Harness::user("hello"));
  CHECK(summary.status == "failed");
  CHECK(h.kinds() == Kinds{"error", "reply", "final:failed"});
  rapidjson::Document ev = parse_json(h.events_of("error").at(0));
  CHECK(string_at(ev, "code") == "E_CASCADE");
  CHECK(contains(string_at(ev, "message"), "scripted"));
  CHECK(contains(string_at(parse_json(h.events_of("reply").at(0)), "text"), "cascade failure"));
  CHECK(h.decider.calls().empty());
}

TEST_CASE("a spent budget stops model calls with a clear error") {
  Harness h({shell_proposal("ls")}, /*repeat_last=*/true);
  h.config.budget_per_session_usd = 0.5;
  reasoning::ProviderConfig& pc = h.provider->mutable_config();
  pc.price_input_per_mtok = 1e6;  // one dollar per input token
  h.provider->set_usage(reasoning::Usage{1, 0});
  RunSummary summary = h.run(Harness::user("list"));
  CHECK(summary.status == "failed");
  CHECK(h.provider->requests().size() == 1);
  CHECK(h.shell->calls().size() == 1);
  rapidjson::Document ev = parse_json(h.events_of("error").at(0));
  CHECK(string_at(ev, "code") == "E_BUDGET");
  CHECK(h.events_of("reply").size() == 1);
}

TEST_CASE("no cascade: a clear failure, nothing dispatched") {
  EngineDecider decider(kRules);
  actuators::Registry registry;
  Pipeline pipeline(nullptr, &registry, decider.decider(), {}, {});
  std::vector<std::string> events;
  RunSummary summary =
      pipeline.run(Harness::user("hi"), [&](std::string_view e) { events.emplace_back(e); });
  CHECK(summary.status == "failed");
  REQUIRE(events.size() == 3);
  CHECK(string_at(parse_json(events[0]), "code") == "E_NO_PROVIDER");
}

TEST_CASE("cancellation stops before the next model call or dispatch") {
  SECTION("cancelled during a dispatch") {
    std::atomic<bool> cancelled{false};
    Harness h({shell_proposal("ls"), reply_proposal("done")});
    h.shell_respond = [&cancelled](std::string_view, const actuators::Context&) {
      cancelled = true;
      return Harness::ok_result("x", 0);
    };
    RunSummary summary = h.run(Harness::user("list"), &cancelled);
    CHECK(summary.status == "cancelled");
    CHECK(h.provider->requests().size() == 1);
    CHECK(h.reply->calls().empty());
    CHECK(h.kinds().back() == "final:cancelled");
  }
  SECTION("cancelled before the run") {
    std::atomic<bool> cancelled{true};
    Harness h({shell_proposal("ls")});
    RunSummary summary = h.run(Harness::user("list"), &cancelled);
    CHECK(summary.status == "cancelled");
    CHECK(h.provider->requests().empty());
    CHECK(h.shell->calls().empty());
  }
}

TEST_CASE("a rule rewrite reaches the actuator; the dispatched action is the approved one") {
  Harness h({reply_proposal("my password is hunter2")}, false, R"CLP(
(defrule approve-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-reply) (reason "ok"))))
(defrule mask-password
  (proposal (id ?id) (target reply))
  (param (proposal ?id) (key "payload.text") (value ?t&:(str-index "hunter2" ?t)))
  =>
  (assert (rewrite (proposal ?id) (key "payload.text") (value "[redacted]") (rule mask-password) (reason "secret"))))
)CLP");
  RunSummary summary = h.run(Harness::user("say it"));
  CHECK(summary.status == "done");
  auto replies = h.events_of("reply");
  REQUIRE(replies.size() == 1);
  CHECK(string_at(parse_json(replies[0]), "text") == "[redacted]");
}

TEST_CASE("every event is a JSON object and the last one is final") {
  Harness h({shell_proposal("rm -rf ~"), shell_proposal("ls"), reply_proposal("ok")});
  h.run(Harness::user("hi"));
  REQUIRE_FALSE(h.events.empty());
  for (const auto& e : h.events) CHECK(parse_json(e).IsObject());
  rapidjson::Document last = parse_json(h.events.back());
  CHECK(string_at(last, "event") == "final");
  CHECK(last["cycles"].GetInt() == 2);
  rapidjson::Document first = parse_json(h.events.front());
  CHECK(first["attempt"].GetInt() == 1);
  CHECK(string_at(first["action"], "target") == "shell");
}

TEST_CASE("catalog_from lists every actuator but tool, and the registered tools") {
  actuators::Registry registry;
  registry.add(std::make_unique<RecordingActuator>("shell", false));
  registry.add(std::make_unique<RecordingActuator>("tool", false));
  registry.add(std::make_unique<RecordingActuator>("reply", true));
  reasoning::Catalog catalog =
      catalog_from(registry, {reasoning::ToolSpec{"now", "the time", "{}"}}, "I am");
  CHECK(catalog.identity == "I am");
  REQUIRE(catalog.targets.size() == 2);
  CHECK(catalog.targets[0].name == "reply");
  CHECK(catalog.targets[1].name == "shell");
  CHECK(catalog.targets[1].description == "test actuator shell");
  CHECK(contains(catalog.targets[1].parameters_schema_json, "command"));
  REQUIRE(catalog.tools.size() == 1);
  CHECK(catalog.tools[0].name == "now");
}

TEST_CASE("a Decider that throws is a loop error: nothing is dispatched for that proposal") {
  Harness h({shell_proposal("ls"), reply_proposal("the rules failed")});
  h.decider.set_before([](const EngineDecider::Call& call) {
    if (call.depth == 0) throw std::runtime_error("rules unavailable");
  });
  RunSummary summary = h.run(Harness::user("list"));
  CHECK(summary.status == "done");
  CHECK(h.shell->calls().empty());
  CHECK(h.kinds() == Kinds{"error", "decision:reason:approve", "decision:last-mile:approve",
                           "reply", "final:done"});
  auto requests = h.provider->requests();
  REQUIRE(requests.size() == 2);
  CHECK(contains(requests[1].messages.back().content, "rules unavailable"));
  // The model never proposed anything the rules accepted, so the user's words open the
  // conversation and no proposal follows them.
  REQUIRE(requests[1].messages.size() == 2);
  CHECK(contains(requests[1].messages[0].content, "list"));
}

TEST_CASE("on_dispatch sees every dispatch with its last-mile decision, a crash included") {
  struct Seen {
    std::string decision_id, target, error_code;
    bool ok;
    int exit_code;
  };
  std::vector<Seen> seen;
  Harness h({shell_proposal("ls"), reply_proposal("done"), shell_proposal("boom"),
             reply_proposal("it crashed")});
  int n = 0;
  h.shell_respond = [&n](std::string_view, const actuators::Context&) -> actuators::Result {
    if (n++ == 0) return Harness::ok_result("x", 0);
    throw std::runtime_error("crash");
  };
  h.options.on_dispatch = [&seen](const Decision& d, std::string_view target,
                                  const actuators::Result& r) {
    seen.push_back(Seen{d.decision_id, std::string(target), r.error_code, r.ok, r.exit_code});
  };
  RunSummary first = h.run(Harness::user("list"));
  CHECK(first.status == "done");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].target == "shell");
  CHECK(seen[0].ok);
  CHECK(seen[0].exit_code == 0);
  CHECK(seen[1].target == "reply");
  // The decision id is the last-mile decision's, as in the tool-output event.
  CHECK(seen[0].decision_id ==
        string_at(parse_json(h.events_of("tool-output").at(0)), "decision_id"));
  CHECK(seen[0].decision_id == string_at(parse_json(h.events_of("decision").at(1)), "decision_id"));

  // The same pipeline, a second run: the actuator throws.
  std::vector<std::string> events;
  RunSummary second =
      h.pipeline->run(Harness::user("boom"), [&](std::string_view e) { events.emplace_back(e); });
  CHECK(second.status == "done");
  REQUIRE(seen.size() == 4);
  CHECK(seen[2].target == "shell");
  CHECK_FALSE(seen[2].ok);
  CHECK(seen[2].error_code == "E_ACT_CRASHED");
}

TEST_CASE("one Pipeline serves runs on several threads at once") {
  Harness h({reply_proposal("hello")}, /*repeat_last=*/true);
  h.run(Harness::user("warm up"));
  constexpr int kThreads = 4, kRuns = 10;
  std::vector<std::vector<std::string>> statuses(kThreads);
  std::vector<std::vector<std::string>> finals(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        Signal s = Harness::user("hi " + std::to_string(i));
        s.session = "t" + std::to_string(t);
        std::vector<std::string> events;
        RunSummary r = h.pipeline->run(s, [&](std::string_view e) { events.emplace_back(e); });
        statuses[t].push_back(r.status);
        finals[t].push_back(events.empty() ? "" : events.back());
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(statuses[t].size() == kRuns);
    for (int i = 0; i < kRuns; ++i) {
      CHECK(statuses[t][i] == "done");
      CHECK(string_at(parse_json(finals[t][i]), "status") == "done");
    }
  }
  CHECK(h.provider->requests().size() == 1 + kThreads * kRuns);
}

TEST_CASE("the dispatched action is byte for byte the last-mile decision's action") {
  Harness h({shell_proposal("ls -la"), reply_proposal("ok")});
  h.decider.set_last_mile_rules(R"CLP(
(defrule approve-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-shell) (reason "ok"))))
(defrule approve-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-reply) (reason "ok"))))
(defrule short-listing
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value "ls -la"))
  =>
  (assert (rewrite (proposal ?id) (key "payload.command") (value "ls") (rule short-listing) (reason "short"))))
)CLP");
  RunSummary summary = h.run(Harness::user("list"));
  CHECK(summary.status == "done");
  auto calls = h.shell->calls();
  REQUIRE(calls.size() == 1);
  rapidjson::Document last_mile = parse_json(h.events_of("decision").at(1));
  CHECK(string_at(last_mile, "stage") == "last-mile");
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  last_mile["action"].Accept(writer);
  CHECK(calls[0].action_json == buffer.GetString());
  CHECK(string_at(parse_json(calls[0].action_json)["payload"], "command") == "ls");
}

TEST_CASE("consensus disagreement and an empty cascade end the run failed, nothing decided") {
  SECTION("disagreement") {
    Harness h({shell_proposal("ls")});
    auto second =
        std::make_unique<ScriptedProvider>(std::vector<std::string>{shell_proposal("pwd")});
    second->mutable_config().name = "second";
    h.providers.push_back(std::move(second));
    h.config.consensus = 2;
    RunSummary summary = h.run(Harness::user("where am I?"));
    CHECK(summary.status == "failed");
    CHECK(h.kinds() == Kinds{"error", "reply", "final:failed"});
    CHECK(string_at(parse_json(h.events_of("error").at(0)), "code") == "E_DISAGREEMENT");
    CHECK(h.decider.calls().empty());
    CHECK(h.shell->calls().empty());
  }
  SECTION("no providers") {
    Harness h({});
    h.providers.clear();
    RunSummary summary = h.run(Harness::user("hello"));
    CHECK(summary.status == "failed");
    CHECK(string_at(parse_json(h.events_of("error").at(0)), "code") == "E_NO_PROVIDER");
    CHECK(h.decider.calls().empty());
  }
}
