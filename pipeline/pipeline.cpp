#include "pipeline/pipeline.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <utility>

#include "bindings/text.h"
#include "pipeline/action_json.h"
#include "pipeline/events.h"

namespace warden::pipeline {
namespace {

// Only these start a conversation with the model (SPEC §2).
bool starts_conversation(const std::string& sensor) {
  return sensor == "user-input" || sensor == "chat-message";
}

// Feedback the pipeline itself creates; it continues the conversation of its run.
bool is_feedback(const std::string& sensor) {
  return sensor == "tool-output" || sensor == "tool-error" || sensor == "loop-error";
}

const char* cascade_error_code(reasoning::CascadeResult::Status status) {
  using S = reasoning::CascadeResult::Status;
  switch (status) {
    case S::BudgetSpent:
      return code::kBudget;
    case S::Disagreement:
      return code::kDisagreement;
    case S::NoProviders:
      return code::kNoProvider;
    case S::AllFailed:
      return code::kCascade;
    case S::Ok:
      break;
  }
  return code::kCascade;
}

std::vector<std::string> rejecting_rules(const Decision& d) {
  std::vector<std::string> out;
  for (const FiredRule& r : d.rules)
    if (r.outcome == Outcome::Reject && !r.monitor &&
        std::find(out.begin(), out.end(), r.rule) == out.end())
      out.push_back(r.rule);
  return out;
}

std::vector<std::string> hint_texts(const Decision& d) {
  std::vector<std::string> out;
  for (const Hint& h : d.hints)
    if (!h.text.empty()) out.push_back(h.text);
  return out;
}

// The requester's explanation after the last refused attempt: each attempt, what it
// proposed as the rules left it (shown[i]: after their rewrites, e.g. a secret redacted),
// which rules refused it and why.
std::string explain_rejections(const std::vector<reasoning::Rejection>& trace,
                               const std::vector<std::string>& shown) {
  std::string out = "Nothing was done: the rules refused ";
  out += trace.size() == 1 ? "the proposed action"
                           : "all " + std::to_string(trace.size()) + " proposed actions";
  out += '.';
  for (std::size_t k = 0; k < trace.size(); ++k) {
    const reasoning::Rejection& r = trace[k];
    const std::string what = k < shown.size() && !shown[k].empty()
                                 ? describe_action(shown[k])
                                 : "an action the rules could not read";
    out += "\nAttempt " + std::to_string(r.attempt) + ": " + what + " — refused";
    if (!r.rules.empty()) {
      out += " by ";
      for (std::size_t i = 0; i < r.rules.size(); ++i) out += (i ? ", " : "") + r.rules[i];
    }
    if (!r.reason.empty()) out += ": " + r.reason;
  }
  return out;
}

// What the model reads about an action's result.
std::string feedback_text(const std::string& target, const actuators::Result& result) {
  std::string out;
  if (result.ok) {
    out = result.output;
  } else {
    out = result.error_code.empty() ? result.error : result.error_code + ": " + result.error;
    if (!result.output.empty()) out += "\n" + result.output;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  if (result.truncated) out += "[output truncated]\n";
  if (result.exit_code >= 0) {
    if (target == "shell")
      out += "[exit status " + std::to_string(result.exit_code) + "]";
    else if (target == "http")
      out += "[HTTP status " + std::to_string(result.exit_code) + "]";
    else
      out += "[exit code " + std::to_string(result.exit_code) + "]";
  }
  if (out.empty()) out = "(no output)";
  return out;
}

Signal feedback_signal(const Signal& from, std::string sensor, std::string text,
                       const std::string& target, const std::string& action_json) {
  Signal next;
  next.sensor = std::move(sensor);
  next.text = std::move(text);
  next.source = from.source;
  next.session = from.session;
  next.agent = from.agent;
  next.principal = from.principal;
  next.depth = from.depth + 1;
  next.approval_wait_s = from.approval_wait_s;
  next.tool = target;
  next.action_json = action_json;
  return next;
}

// One run: the conversation with the model and the signals it causes. Local to run(),
// so one Pipeline serves any number of runs at once.
class Run {
 public:
  struct Step {
    std::optional<Signal> next;  // the feedback signal, if the run goes on
    std::string status;          // the run's status when it ends here
  };

  Run(reasoning::Cascade* cascade, actuators::Registry* registry, const Decider& decider,
      const reasoning::Catalog& catalog, const Options& options,
      const std::function<void(std::string_view)>& log, const EventSink& sink,
      const std::atomic<bool>* cancelled)
      : cascade_(cascade),
        registry_(registry),
        decider_(decider),
        catalog_(catalog),
        options_(options),
        log_(log),
        sink_(sink),
        cancelled_(cancelled) {}

  RunSummary run(const Signal& first) {
    std::optional<Signal> current = first;
    bool first_signal = true;
    std::string status;
    while (current) {
      Signal signal = std::move(*current);
      current.reset();
      if (is_cancelled()) {
        status = "cancelled";
        break;
      }
      if (signal.depth < 0 || signal.depth > options_.max_depth) {
        // A depth below 0 is no signal the pipeline made: it would buy cycles past the limit.
        std::string reason = signal.sensor + " signal at depth " + std::to_string(signal.depth) +
                             (signal.depth < 0 ? " is not a valid depth (0 or more)"
                                               : " is beyond the depth limit of " +
                                                     std::to_string(options_.max_depth));
        log("pipeline: dropped: " + reason);
        emit(events::dropped(reason));
        status = "dropped";
        break;
      }
      if (first_signal && !starts_conversation(signal.sensor) && signal.sensor != "heartbeat") {
        std::string reason = is_feedback(signal.sensor)
                                 ? signal.sensor +
                                       " signals only continue a run; a conversation starts with "
                                       "user-input or chat-message"
                                 : "sensor '" + signal.sensor + "' does not reach the model";
        log("pipeline: dropped: " + reason);
        emit(events::dropped(reason));
        status = "dropped";
        break;
      }
      first_signal = false;
      ++summary_.cycles;
      signal_message_.reset();
      try {
        Step step = cycle(signal);
        if (step.next)
          current = std::move(step.next);
        else
          status = std::move(step.status);
      } catch (const std::exception& e) {
        current = loop_error(signal, e.what(), &status);
      } catch (...) {
        current = loop_error(signal, "unknown exception", &status);
      }
    }
    if (status.empty()) status = "done";
    summary_.status = status;
    emit(events::final_event(status, summary_.cycles));
    return summary_;
  }

 private:
  bool is_cancelled() const { return cancelled_ && cancelled_->load(); }

  // One line each: control characters in what the line quotes (a client's sensor name, an
  // exception text) are escaped, so no text forges a line of its own.
  void log(std::string_view line) const {
    if (!log_) return;
    try {
      std::string safe;
      safe.reserve(line.size());
      for (char c : line) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) {
          safe += "\\x";
          text::append_hex(safe, u);
        } else {
          safe += c;
        }
      }
      log_(safe);
    } catch (...) {
    }
  }

  // The requester may have gone away; a sink that throws ends nothing here.
  void emit(const std::string& event) const {
    try {
      sink_(event);
    } catch (...) {
    }
  }

  Step done(std::string status) { return Step{std::nullopt, std::move(status)}; }

  // Perceive → reason → act for one signal.
  Step cycle(const Signal& signal) {
    if (signal.sensor == "heartbeat") {
      // Heartbeats are for the daemon's own upkeep: never the model, never an actuator.
      if (!signal.action_json.empty()) {
        log("pipeline: dropped: a heartbeat signal carried an action");
        emit(events::dropped("heartbeat signals never actuate"));
        return done("dropped");
      }
      return done("done");
    }
    if (!decider_) {
      // Nothing can be decided, so nothing may run.
      emit(events::error(code::kNoDecider, "no rules are available to decide proposals"));
      return done("failed");
    }
    if (!cascade_) {
      std::string message = "no model provider is configured";
      emit(events::error(code::kNoProvider, message));
      emit(events::reply(message));
      return done("failed");
    }
    // A loop-error signal that replaces a perception still being reasoned about (the error
    // came between its attempts) continues its attempts and its rejection trace; any other
    // signal is a new perception with attempts of its own.
    if (!continue_attempts_) {
      trace_.clear();
      refused_.clear();
      attempts_used_ = 0;
    }
    continue_attempts_ = false;
    std::vector<reasoning::Rejection>& trace = trace_;
    const int attempts = std::max(1, options_.max_retries);
    while (attempts_used_ < attempts) {
      const int attempt = ++attempts_used_;
      if (is_cancelled()) return done("cancelled");
      reasoning::Request request =
          reasoning::build_request(signal, catalog_, conversation_, trace, hints_);
      if (!signal_message_) {
        signal_message_ = request.messages.empty() ? reasoning::Message{"user", signal.text}
                                                   : request.messages.back();
      }
      ++summary_.model_calls;
      reasoning::CascadeResult answer = cascade_->ask(request, signal);
      // The requester may have gone while the model was thinking: nothing is decided for it.
      if (is_cancelled()) return done("cancelled");
      if (answer.status != reasoning::CascadeResult::Status::Ok) {
        std::string message =
            answer.message.empty() ? "the model could not be asked" : answer.message;
        emit(events::error(cascade_error_code(answer.status), message));
        emit(events::reply(message));
        return done("failed");
      }
      const std::string proposal = reasoning::parse_answer(answer.answer, catalog_);
      std::string error;
      const std::string proposal_json = with_context(proposal, signal, &error);
      if (proposal_json.empty()) {
        std::string message = "the model's answer is not a proposal: " + error;
        emit(events::error(code::kModelOutput, message));
        emit(events::reply(message));
        return done("failed");
      }
      const Decision decision = decider_(proposal_json, signal, DecideStage::Reason, attempt);
      emit(events::decision(decision, "reason", attempt));
      hints_ = hint_texts(decision);
      switch (decision.outcome) {
        case Outcome::Approve:
          trace_.clear();
          refused_.clear();
          attempts_used_ = 0;
          commit_turn(proposal);
          return act(signal, decision, attempt);
        case Outcome::ApprovalRequired:
          // Not a rejection: the action waits for a person; the model is not told to retry.
          return suspend(signal, decision, decision.action_json);
        case Outcome::Reject:
          trace.push_back(
              reasoning::Rejection{attempt, proposal, decision.reason, rejecting_rules(decision)});
          // The requester is shown the action as the rules left it, never the raw proposal
          // (a rule may have rewritten a secret out of it).
          refused_.push_back(decision.action_json);
          break;
      }
    }
    if (trace.empty()) {
      // Every attempt ended in an error (reported as it happened); nothing was refused.
      emit(events::reply("Nothing was done: the request failed " + std::to_string(attempts) +
                         " times."));
      return done("failed");
    }
    log("pipeline: every proposal refused (" + std::to_string(trace.size()) + " attempts)");
    emit(events::reply(explain_rejections(trace, refused_)));
    return done("rejected");
  }

  // approval-required: the action waits for a person. The daemon stores it as it would be
  // dispatched (its target resolved) and may wait for the answer.
  Step suspend(const Signal& signal, const Decision& decision, const std::string& action_json) {
    if (!options_.on_approval_required) {
      emit(events::approval_required(decision));
      return done("suspended");
    }
    ResolvedTarget resolved = resolve_target(action_json, signal.source, options_.default_target);
    if (resolved.target.empty()) {
      emit(events::approval_required(decision));
      emit(events::error(
          code::kAction,
          "the action cannot be dispatched, so it cannot be approved: " + resolved.error));
      return done("failed");
    }
    const EventSink safe = [this](std::string_view event) { emit(std::string(event)); };
    std::string status;
    try {
      status = options_.on_approval_required(decision, resolved.action_json, signal, safe);
    } catch (...) {
      emit(events::error(code::kApprovalStore, "the pending approval could not be stored"));
      status = "failed";
    }
    return done(status.empty() ? "failed" : status);
  }

  // The signal as the model read it and the proposal it made, for the next model call of
  // this run.
  void commit_turn(const std::string& proposal) {
    if (signal_message_) conversation_.push_back(std::move(*signal_message_));
    signal_message_.reset();
    conversation_.push_back(reasoning::Message{"assistant", proposal});
  }

  Step act(const Signal& signal, const Decision& decision, int attempt) {
    ResolvedTarget resolved =
        resolve_target(decision.action_json, signal.source, options_.default_target);
    if (resolved.target.empty()) {
      emit(events::error(code::kAction,
                         "the approved action cannot be dispatched: " + resolved.error));
      return done("failed");
    }
    if (is_cancelled()) return done("cancelled");
    // The rules may have changed since the proposal was decided: ask again, with the
    // action exactly as it would be dispatched.
    std::string decided = resolved.action_json;
    Decision last = decider_(decided, signal, DecideStage::LastMile, attempt);
    emit(events::decision(last, "last-mile", attempt));
    if (last.outcome == Outcome::Approve && last.action_json != decided) {
      // The rules changed the action (a rewrite) after they read it. What runs must be what
      // an approving decision read, byte for byte: the changed action is decided once more
      // and runs only if that decision approves it as it is.
      if (is_cancelled()) return done("cancelled");
      decided = last.action_json;
      last = decider_(decided, signal, DecideStage::LastMile, attempt);
      emit(events::decision(last, "last-mile", attempt));
      if (last.outcome == Outcome::Approve && last.action_json != decided) {
        const std::string message =
            "the approved action is not dispatched: the rules rewrite it again each time they "
            "read it (decision " +
            last.decision_id + ")";
        log("pipeline: " + message);
        emit(events::error(code::kAction, message));
        return done("rejected");
      }
    }
    if (!last.hints.empty()) hints_ = hint_texts(last);
    if (last.outcome == Outcome::ApprovalRequired) return suspend(signal, last, decided);
    if (last.outcome != Outcome::Approve) {
      log("pipeline: not dispatched: the last-mile decision " + last.decision_id + " is " +
          std::string(outcome_name(last.outcome)) + ": " + last.reason);
      return done("rejected");
    }
    // Dispatch exactly what the last-mile decision read and approved, where it says: nothing
    // is filled in after the rules saw it.
    const std::string& action_json = last.action_json;
    ResolvedTarget approved = resolve_target(action_json, "", "");
    if (approved.target.empty()) {
      emit(events::error(code::kAction,
                         "the approved action cannot be dispatched: " +
                             (approved.error.empty() ? "it names no target" : approved.error)));
      return done("failed");
    }
    if (is_cancelled()) return done("cancelled");
    const std::string& target = approved.target;
    actuators::Actuator* actuator = registry_ ? registry_->find(target) : nullptr;
    actuators::Result result;
    bool silent = false;
    if (!actuator) {
      result.ok = false;
      result.error_code = code::kActNoActuator;
      result.error = "no actuator for target " + target;
    } else {
      actuators::Context context;
      context.decision_id = last.decision_id;
      context.principal = signal.principal;
      context.session = signal.session;
      context.agent = signal.agent;
      context.source = signal.source;
      context.depth = signal.depth;
      context.allowed = granted_capabilities(last);
      context.effects = last.effects;
      context.notify = [this](std::string_view kind, std::string_view text) {
        emit(events::notice(kind, text));
      };
      silent = actuator->silent() || std::find(options_.silent.begin(), options_.silent.end(),
                                               target) != options_.silent.end();
      ++summary_.dispatched;
      try {
        result = actuator->act(action_json, context);
      } catch (...) {
        // Recorded as a failed dispatch, then handled as a loop error.
        actuators::Result crashed;
        crashed.error_code = code::kActCrashed;
        crashed.error = "the actuator threw";
        if (options_.on_dispatch) options_.on_dispatch(last, target, crashed);
        throw;
      }
      if (options_.on_dispatch) options_.on_dispatch(last, target, result);
    }
    if (silent) {
      // Silent actuators give no feedback; a failure is still shown to the requester.
      if (!result.ok) {
        emit(events::tool_result(target, last.decision_id, result));
        return done("failed");
      }
      return done("done");
    }
    if (result.ok) {
      emit(events::tool_result(target, last.decision_id, result));
      return Step{feedback_signal(signal, "tool-output", feedback_text(target, result), target,
                                  action_json),
                  {}};
    }
    emit(events::tool_result(target, last.decision_id, result));
    return Step{
        feedback_signal(signal, "tool-error", feedback_text(target, result), target, action_json),
        {}};
  }

  // An exception in a cycle: the model hears of it as a loop-error signal at depth + 1,
  // unless the failing signal was deep or itself an error (no error loops).
  std::optional<Signal> loop_error(const Signal& signal, const std::string& what,
                                   std::string* status) {
    log("pipeline: error in a " + signal.sensor + " cycle at depth " +
        std::to_string(signal.depth) + ": " + what);
    emit(events::error(code::kLoop, what));
    if (signal.depth > 2 || signal.sensor == "tool-error" || signal.sensor == "loop-error") {
      emit(events::dropped("the error is not fed back (" + signal.sensor + " signal at depth " +
                           std::to_string(signal.depth) + ")"));
      *status = "failed";
      return std::nullopt;
    }
    // An error between the attempts of a perception: the loop-error signal gets what is
    // left of them, with the refusals so far (attempts_used_ is 0 once one was approved).
    continue_attempts_ = attempts_used_ > 0;
    // The model has not seen this signal yet when the error came before its proposal.
    if (signal_message_) conversation_.push_back(std::move(*signal_message_));
    signal_message_.reset();
    return feedback_signal(signal, "loop-error", "the previous step failed: " + what, {}, {});
  }

  reasoning::Cascade* cascade_;
  actuators::Registry* registry_;
  const Decider& decider_;
  const reasoning::Catalog& catalog_;
  const Options& options_;
  const std::function<void(std::string_view)>& log_;
  const EventSink& sink_;
  const std::atomic<bool>* cancelled_;

  RunSummary summary_;
  std::vector<reasoning::Message> conversation_;
  std::optional<reasoning::Message> signal_message_;  // the current signal as the model read it
  std::vector<std::string> hints_;                    // from the latest decision
  // The current perception's refused attempts and how many attempts it has used
  // (Options::max_retries in all, an error between them included).
  std::vector<reasoning::Rejection> trace_;
  std::vector<std::string> refused_;  // trace_[i]'s action as its decision left it
  int attempts_used_ = 0;
  bool continue_attempts_ = false;  // the next signal is a loop-error continuing them
};

}  // namespace

Pipeline::Pipeline(reasoning::Cascade* cascade, actuators::Registry* registry, Decider decider,
                   reasoning::Catalog catalog, Options options,
                   std::function<void(std::string_view)> log)
    : cascade_(cascade),
      registry_(registry),
      decider_(std::move(decider)),
      catalog_(std::move(catalog)),
      options_(std::move(options)),
      log_(std::move(log)) {}

RunSummary Pipeline::run(const Signal& signal, const EventSink& sink,
                         const std::atomic<bool>* cancelled) {
  try {
    Run run(cascade_, registry_, decider_, catalog_, options_, log_, sink, cancelled);
    return run.run(signal);
  } catch (...) {
    // Only allocation failure gets here; the run ends failed, the daemon goes on.
    RunSummary summary;
    summary.status = "failed";
    try {
      sink(events::final_event("failed", 0));
    } catch (...) {
    }
    return summary;
  }
}

}  // namespace warden::pipeline
