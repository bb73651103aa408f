// Think: the pure part of reasoning. (signal, catalog, rejection trace, hints) → model
// request, and (model answer) → proposal JSON. No I/O, no state: unit-testable.
#pragma once

#include <string>
#include <vector>

#include "reasoning/provider.h"
#include "reasoning/signal.h"

namespace warden::reasoning {

// What the model may propose: the actuator targets with their payload fields, and the
// registered tools with their argument schemas.
struct Catalog {
  std::string identity;           // first paragraph of the system prompt
  std::vector<ToolSpec> targets;  // "shell", "file", "http", "reply", … with payload schemas
  std::vector<ToolSpec> tools;    // registered tools (target "tool", payload {tool, args})
};

// One refused attempt of this signal, fed into the next attempt's prompt.
struct Rejection {
  int attempt = 0;
  std::string action_json;         // the proposal that was refused
  std::string reason;              // the decision's reason
  std::vector<std::string> rules;  // the rules that rejected it
};

// conversation: the earlier turns of this run (the user's input, the model's proposals,
// the tool results fed back), oldest first; the signal is the newest perception.
Request build_request(const Signal& signal, const Catalog& catalog,
                      const std::vector<Message>& conversation, const std::vector<Rejection>& trace,
                      const std::vector<std::string>& hints);

// The proposal (SPEC §3 shape: target, action, payload, explanation) the answer holds,
// as JSON object text without `context` (the pipeline adds it). Strips Markdown fences,
// parses JSON, normalizes key case; a native tool call becomes its target's proposal (or
// target "tool" for a registered tool); anything else becomes {"target":"reply",
// "action":"send","payload":{"text": RAW}}.
std::string parse_answer(const Answer& answer, const Catalog& catalog);

// The normal form consensus compares: target, action and payload, keys sorted, no
// explanation or context.
std::string normalized_action(const std::string& proposal_json);

}  // namespace warden::reasoning
