// Action JSON for the pipeline: the requester's context on a model proposal, target
// resolution before dispatch, and a one-line description of an action for explanations.
// Pure functions over JSON object text (RapidJSON); thread-safe. A text that is not a JSON
// object is an error, never a guess.
#pragma once

#include <string>
#include <string_view>

#include "pipeline/signal.h"

namespace warden::pipeline {

// The proposal with `context` set to the signal's agent, session, source and principal
// (members with an empty value are left out). Whatever `context` the text held is replaced.
// Empty with *error set when the text is not a JSON object.
std::string with_context(std::string_view proposal_json, const Signal& signal, std::string* error);

struct ResolvedTarget {
  std::string target;       // where the action goes; "" when the text is not a JSON object
  std::string action_json;  // the action with `target` set to it
  std::string error;
};

// Target resolution (SPEC §9): the action's own non-empty `target`, else the signal's
// source, else `default_target`. The resolved target is written into the action so the
// last-mile decision sees where it goes.
ResolvedTarget resolve_target(std::string_view action_json, std::string_view source,
                              std::string_view default_target);

// "shell run: rm -rf ~", "http GET https://example.com/", "file write: notes.txt",
// "reply: Hello…"; at most about 160 characters. Never fails (a text that is not an object
// is described as itself, shortened).
std::string describe_action(std::string_view action_json);

}  // namespace warden::pipeline
