// Pipeline: perceive → reason → act for one signal and the feedback it causes (SPEC §2).
//
//   Perceive: heartbeats never actuate; depth > max_depth is dropped and logged.
//   Reason:   only user-input and chat-message reach the model (Think + Cascade). Every
//             proposal is decided by the rules; on reject the model is asked again with the
//             rejection trace, at most max_retries times; after that the requester gets a
//             reply naming what was refused and why — the rejected action is never run.
//             approval-required suspends the action with a notice (never a rejection trace).
//   Act:      target resolution (explicit, else the signal's source, else the default);
//             a last-mile decision right before dispatch (the rules may have changed);
//             non-silent actuators feed tool-output / tool-error back at depth + 1; an error
//             in a cycle becomes a loop-error signal (dropped beyond depth 2 or when the
//             failing signal was itself an error).
// run() is synchronous and thread-safe (one Pipeline serves every session); events go to
// the caller's sink as they happen, the last one is "final".
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "actuators/actuator.h"
#include "engine/engine.h"
#include "pipeline/signal.h"
#include "reasoning/cascade.h"
#include "reasoning/think.h"

namespace warden::pipeline {

// Why the rules are asked: the first decision of a proposal, or the last-mile check.
enum class DecideStage { Reason, LastMile };

// Decides one proposal through the rules (in the daemon: the decision workers and the audit
// log, exactly like a `decide` request; in tests: an Engine). Blocking; never throws; a
// failure is a reject with its cause. The proposal JSON has `context` filled by the pipeline.
using Decider = std::function<Decision(const std::string& proposal_json, const Signal& signal,
                                       DecideStage stage, int attempt)>;

// One event for the requester, as the JSON object text of its payload:
//   {"event":"decision","stage":"reason|last-mile","attempt":N,"decision_id","outcome","reason","rules":[…],"action":{…}}
//   {"event":"reply","text":…}                         (reply actuator and final explanations)
//   {"event":"approval-required","decision_id","reason","rules","action"}
//   {"event":"tool-output","target","decision_id","output","exit_code","truncated"}
//   {"event":"tool-error","target","decision_id","error_code","error"}
//   {"event":"dropped","reason":…}                     (depth limit, heartbeat with an action)
//   {"event":"error","code":…,"message":…}             (cascade failure, budget, bad model output)
//   {"event":"final","status":"done|rejected|suspended|failed|dropped|cancelled","cycles":N}
using EventSink = std::function<void(std::string_view event_json)>;

struct Options {
  int max_depth = 10;   // feedback deeper than this is dropped
  int max_retries = 3;  // model attempts per perception; the last refusal ends the run
  std::string default_target = "reply";
  std::vector<std::string> silent = {"reply", "log", "system"};
  // Called after every dispatch with the approving (last-mile) decision, the target and the
  // actuator's result: the daemon's audit `act` record. May be empty; must not throw.
  std::function<void(const Decision&, std::string_view target, const actuators::Result&)>
      on_dispatch;
  // Called instead of emitting the plain approval-required event: the daemon stores a pending
  // approval of action_json (the action resolved to its target, as it would be dispatched),
  // emits the event with the approval's id and token, and — when the requester waits —
  // blocks until a person answered or the wait ran out. Returns the run's final status:
  // "suspended" (nobody answered yet), "done" (approved and run by the approving daemon),
  // "rejected" (denied, expired, or refused by the rules on approval), "failed" (the approval
  // could not be stored). May be empty; must not throw.
  std::function<std::string(const Decision&, const std::string& action_json, const Signal&,
                            const EventSink&)>
      on_approval_required;
};

struct RunSummary {
  std::string status;  // as in the final event
  int cycles = 0;      // perceive → reason → act cycles run (feedback included)
  int model_calls = 0;
  int dispatched = 0;  // actions handed to an actuator
};

class Pipeline {
 public:
  Pipeline(reasoning::Cascade* cascade, actuators::Registry* registry, Decider decider,
           reasoning::Catalog catalog, Options options,
           std::function<void(std::string_view)> log = {});
  // Runs the signal and every feedback signal it causes. Never throws. When *cancelled
  // becomes true (the requester went away) no further model call or dispatch starts.
  RunSummary run(const Signal& signal, const EventSink& sink,
                 const std::atomic<bool>* cancelled = nullptr);

 private:
  reasoning::Cascade* cascade_;
  actuators::Registry* registry_;
  Decider decider_;
  reasoning::Catalog catalog_;
  Options options_;
  std::function<void(std::string_view)> log_;
};

}  // namespace warden::pipeline
