// Signal: one perception entering the pipeline (SPEC §2): a user's input, a chat message, a
// tool's output fed back, a heartbeat, a loop error. Plain values, no behaviour. Defined
// here, below the pipeline, because reasoning builds the model's request from it; the
// pipeline names it pipeline::Signal (pipeline/signal.h).
#pragma once

#include <cstdint>
#include <string>

namespace warden::reasoning {

struct Signal {
  // "user-input", "chat-message", "tool-output", "tool-error", "heartbeat", "loop-error".
  // Only user-input and chat-message reach the model.
  std::string sensor = "user-input";
  std::string text;        // what was said, or the output / error text fed back
  std::string source;      // where it came from ("cli", "chat", …): the reply target
  std::string session;     // the requester's session id
  std::string agent;       // the requesting agent, if any
  std::string principal;   // the authenticated principal (never taken from the signal)
  std::int64_t depth = 0;  // 0 for a new signal; feedback is depth + 1
  // For feedback signals: the target and action JSON whose result this is ("" otherwise).
  std::string tool;
  std::string action_json;
  // approval-required: how long the requester waits for a person's answer before the run
  // ends suspended (seconds; 0: it does not wait).
  std::int64_t approval_wait_s = 0;
};

}  // namespace warden::reasoning
