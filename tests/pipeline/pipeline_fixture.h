// Test parts for the pipeline: a scripted model provider, actuators that record what they
// were given, a Decider over a real Engine (whose rules a test may swap for the last-mile
// stage), and a harness that runs one signal and keeps every event. Fakes, not mocks: the
// rules are real CLIPS rules, the cascade is the real Cascade.
#pragma once

#include <rapidjson/document.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "actuators/actuator.h"
#include "engine/engine.h"
#include "pipeline/catalog.h"
#include "pipeline/pipeline.h"
#include "reasoning/cascade.h"
#include "reasoning/think.h"

namespace warden::pipeline::test {

inline rapidjson::Document parse_json(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  INFO(text);
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

inline std::string string_at(const rapidjson::Value& v, const char* name) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? std::string(it->value.GetString())
                                                     : std::string();
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A model that answers from a list: each answer is the assistant text (a proposal as JSON,
// or anything else), or "!error" for a failed call. Every request is recorded.
class ScriptedProvider : public reasoning::Provider {
 public:
  explicit ScriptedProvider(std::vector<std::string> answers, bool repeat_last = false)
      : answers_(answers.begin(), answers.end()), repeat_last_(repeat_last) {
    config_.name = "scripted";
    config_.kind = "script";
    config_.model = "scripted-model";
  }
  const reasoning::ProviderConfig& config() const override { return config_; }
  reasoning::ProviderConfig& mutable_config() { return config_; }
  reasoning::Answer complete(const reasoning::Request& request) override {
    std::lock_guard lock(mutex_);
    requests_.push_back(request);
    reasoning::Answer answer;
    answer.provider = config_.name;
    answer.model = config_.model;
    if (answers_.empty()) {
      answer.error = "script exhausted";
      return answer;
    }
    std::string text = answers_.front();
    if (!(repeat_last_ && answers_.size() == 1)) answers_.pop_front();
    if (text == "!error") {
      answer.error = "HTTP 500: scripted failure";
      answer.http_status = 500;
      return answer;
    }
    answer.ok = true;
    answer.http_status = 200;
    answer.text = text;
    answer.usage = usage_;
    return answer;
  }
  void set_usage(reasoning::Usage usage) { usage_ = usage; }
  std::vector<reasoning::Request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  reasoning::ProviderConfig config_;
  mutable std::mutex mutex_;
  std::deque<std::string> answers_;
  bool repeat_last_;
  std::vector<reasoning::Request> requests_;
  reasoning::Usage usage_;
};

// An actuator that records each dispatch and answers with `respond` (default: ok, output
// "done").
class RecordingActuator : public actuators::Actuator {
 public:
  struct Call {
    std::string action_json;
    actuators::Context context;
  };
  using Respond =
      std::function<actuators::Result(std::string_view action_json, const actuators::Context&)>;

  RecordingActuator(std::string name, bool silent, Respond respond = {})
      : name_(std::move(name)), silent_(silent), respond_(std::move(respond)) {}
  std::string_view name() const override { return name_; }
  bool silent() const override { return silent_; }
  std::string description() const override { return "test actuator " + name_; }
  std::string payload_schema_json() const override {
    return R"({"type":"object","properties":{"command":{"type":"string"}}})";
  }
  actuators::Result act(std::string_view action_json, const actuators::Context& context) override {
    {
      std::lock_guard lock(mutex_);
      calls_.push_back(Call{std::string(action_json), context});
    }
    if (respond_) return respond_(action_json, context);
    actuators::Result r;
    r.ok = true;
    r.output = "done";
    return r;
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::string name_;
  bool silent_;
  Respond respond_;
  mutable std::mutex mutex_;
  std::vector<Call> calls_;
};

// The reply actuator's behaviour: payload.text to the requester through notify.
inline actuators::Result reply_through_notify(std::string_view action_json,
                                              const actuators::Context& context) {
  rapidjson::Document doc;
  doc.Parse(action_json.data(), action_json.size());
  std::string text;
  if (!doc.HasParseError() && doc.IsObject()) {
    auto p = doc.FindMember("payload");
    if (p != doc.MemberEnd()) text = string_at(p->value, "text");
  }
  if (context.notify) context.notify("reply", text);
  actuators::Result r;
  r.ok = true;
  return r;
}

inline std::shared_ptr<const Policy> compile_rules(const std::string& text) {
  auto loaded = Policy::compile({RuleSource{"pipeline_test.clp", text}});
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

inline EngineOptions engine_options() {
  EngineOptions o;
  o.workspace_root = "/home/user/project";
  o.home = "/home/user";
  o.deadline = std::chrono::seconds(10);  // sanitizer builds on a loaded machine are slow
  return o;
}

// Rules used by most tests: rm is refused, shell and reply are approved, a target named
// "wait" needs a person, "shell-syntax" is granted to `sh -c`-free lines with a pipe.
inline const char* kRules = R"CLP(
(defrule refuse-rm
  (proposal (id ?id) (target shell))
  (shell-command (proposal ?id) (program "rm"))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule refuse-rm) (reason "rm deletes files")))
  (assert (hint (proposal ?id) (rule refuse-rm) (text "list files with ls instead of deleting them"))))
(defrule approve-shell
  (proposal (id ?id) (target shell))
  (not (shell-command (proposal ?id) (program "rm")))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-shell) (reason "harmless command"))))
(defrule grant-pipes
  (proposal (id ?id) (target shell))
  (param (proposal ?id) (key "payload.command") (value ?c&:(str-index "|" ?c)))
  =>
  (assert (allow (proposal ?id) (capability shell-syntax) (rule grant-pipes) (reason "pipes are fine"))))
(defrule approve-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-reply) (reason "replies are fine"))))
(defrule approve-other
  (proposal (id ?id) (target ?t&~shell&~reply&~wait))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-other) (reason "test target"))))
(defrule hold-wait
  (proposal (id ?id) (target wait))
  =>
  (assert (decision (proposal ?id) (outcome approval-required) (rule hold-wait) (reason "a person decides"))))
)CLP";

// A Decider over real engines: one for the reason stage and, when set, another for the
// last-mile stage (rules reloaded between reason and act). Records every call.
class EngineDecider {
 public:
  struct Call {
    std::string proposal_json;
    DecideStage stage;
    int attempt;
    std::int64_t depth;
  };
  explicit EngineDecider(const std::string& rules)
      : reason_(compile_rules(rules), engine_options()) {}
  void set_last_mile_rules(const std::string& rules) {
    last_mile_ = std::make_unique<Engine>(compile_rules(rules), engine_options());
  }
  Decider decider() {
    return [this](const std::string& proposal_json, const Signal& signal, DecideStage stage,
                  int attempt) {
      std::lock_guard lock(mutex_);
      calls_.push_back(Call{proposal_json, stage, attempt, signal.depth});
      if (before_) before_(calls_.back());
      Engine& engine = stage == DecideStage::LastMile && last_mile_ ? *last_mile_ : reason_;
      DecideRequest request;
      request.proposal_json = proposal_json;
      request.depth = signal.depth;
      request.attempt = attempt;
      if (!signal.principal.empty()) request.principal = signal.principal;
      DecideResult r = engine.decide(request);
      if (r.ok) return r.decision;
      Decision d;  // not a proposal: refused, naming the cause
      d.outcome = Outcome::Reject;
      d.error_code = r.error.code;
      d.reason = r.error.message;
      return d;
    };
  }
  std::vector<Call> calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  // Runs before each decision (a test may throw from it).
  void set_before(std::function<void(const Call&)> before) { before_ = std::move(before); }

 private:
  mutable std::mutex mutex_;
  std::function<void(const Call&)> before_;
  Engine reason_;
  std::unique_ptr<Engine> last_mile_;
  std::vector<Call> calls_;
};

// One pipeline over a scripted model, real rules and recording actuators ("shell", "reply"
// silent through notify, "notes" non-silent).
struct Harness {
  explicit Harness(std::vector<std::string> answers, bool repeat_last = false,
                   const std::string& rules = kRules)
      : decider(rules) {
    auto p = std::make_unique<ScriptedProvider>(std::move(answers), repeat_last);
    provider = p.get();
    providers.push_back(std::move(p));
    auto shell_actuator = std::make_unique<RecordingActuator>(
        "shell", false, [this](std::string_view a, const actuators::Context& c) {
          return shell_respond ? shell_respond(a, c) : ok_result("a.txt\nb.txt\n", 0);
        });
    shell = shell_actuator.get();
    registry.add(std::move(shell_actuator));
    auto reply_actuator = std::make_unique<RecordingActuator>("reply", true, reply_through_notify);
    reply = reply_actuator.get();
    registry.add(std::move(reply_actuator));
    auto notes_actuator = std::make_unique<RecordingActuator>("notes", false);
    notes = notes_actuator.get();
    registry.add(std::move(notes_actuator));
  }

  static actuators::Result ok_result(std::string output, int exit_code) {
    actuators::Result r;
    r.ok = true;
    r.output = std::move(output);
    r.exit_code = exit_code;
    return r;
  }

  // Builds the cascade and pipeline (after the test adjusted config and options) and runs.
  RunSummary run(const Signal& signal, const std::atomic<bool>* cancelled = nullptr) {
    catalog = catalog_from(registry, {}, config.identity);
    cascade = std::make_unique<reasoning::Cascade>(
        std::move(providers), config, [cat = catalog](const reasoning::Answer& a) {
          return reasoning::normalized_action(reasoning::parse_answer(a, cat));
        });
    pipeline =
        std::make_unique<Pipeline>(cascade.get(), &registry, decider.decider(), catalog, options,
                                   [this](std::string_view line) { logs.emplace_back(line); });
    return pipeline->run(
        signal, [this](std::string_view e) { events.emplace_back(e); }, cancelled);
  }

  static Signal user(std::string text) {
    Signal s;
    s.sensor = "user-input";
    s.text = std::move(text);
    s.source = "cli";
    s.session = "s1";
    s.agent = "coder-1";
    s.principal = "alice";
    return s;
  }

  // The events' kinds, in order ("decision:reason:reject", "tool-output", "final:done" …).
  std::vector<std::string> kinds() const {
    std::vector<std::string> out;
    for (const std::string& e : events) {
      rapidjson::Document doc = parse_json(e);
      std::string kind = string_at(doc, "event");
      if (kind == "decision")
        kind += ":" + string_at(doc, "stage") + ":" + string_at(doc, "outcome");
      if (kind == "final") kind += ":" + string_at(doc, "status");
      out.push_back(kind);
    }
    return out;
  }
  std::vector<std::string> events_of(const std::string& kind) const {
    std::vector<std::string> out;
    for (const std::string& e : events)
      if (string_at(parse_json(e), "event") == kind) out.push_back(e);
    return out;
  }

  reasoning::ReasoningConfig config;
  Options options;
  std::vector<std::unique_ptr<reasoning::Provider>> providers;
  ScriptedProvider* provider = nullptr;
  actuators::Registry registry;
  RecordingActuator* shell = nullptr;
  RecordingActuator* reply = nullptr;
  RecordingActuator* notes = nullptr;
  RecordingActuator::Respond shell_respond;
  EngineDecider decider;
  reasoning::Catalog catalog;
  std::unique_ptr<reasoning::Cascade> cascade;
  std::unique_ptr<Pipeline> pipeline;
  std::vector<std::string> events;
  std::vector<std::string> logs;
};

inline std::string shell_proposal(const std::string& command) {
  std::string out = R"({"target":"shell","action":"run","payload":{"command":")";
  for (char c : command) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + R"("},"explanation":"test"})";
}

inline std::string reply_proposal(const std::string& text) {
  return R"({"target":"reply","action":"send","payload":{"text":")" + text + R"("}})";
}

}  // namespace warden::pipeline::test
