// Helpers for engine tests: compile inline rule text, decide inline JSON.
#pragma once

#include <catch2/catch.hpp>

#include <string>

#include "engine/engine.h"

namespace warden::test {

inline Policy::Loaded compile_text(const std::string& text, const std::string& path = "t.clp") {
  return Policy::compile({RuleSource{path, text}});
}

inline std::shared_ptr<const Policy> must_compile(const std::string& text) {
  auto loaded = compile_text(text);
  for (const auto& d : loaded.diagnostics) UNSCOPED_INFO(d.to_text());
  REQUIRE(loaded.policy);
  return loaded.policy;
}

inline EngineOptions test_options() {
  EngineOptions o;
  o.workspace_root = "/home/user/project";
  o.home = "/home/user";
  o.deadline = std::chrono::seconds(10);  // sanitizer builds on a loaded machine are slow
  return o;
}

// A rule that rejects shell proposals, approves everything else.
inline const char* kSimpleRules = R"(
(defrule reject-shell
  (proposal (id ?id) (target shell))
  =>
  (assert (decision (proposal ?id) (outcome reject) (rule reject-shell) (reason "no shell"))))
(defrule approve-reply
  (proposal (id ?id) (target reply))
  =>
  (assert (decision (proposal ?id) (outcome approve) (rule approve-reply) (reason "replies are fine"))))
)";

// Decides, requiring a decision (not an input error); the error is shown when it fails.
inline Decision decide_ok(Engine& engine, const DecideRequest& request) {
  DecideResult r = engine.decide(request);
  INFO(r.error.to_text());
  REQUIRE(r.ok);
  return r.decision;
}

inline Decision decide_ok(Engine& engine, const std::string& json) {
  DecideRequest request;
  request.proposal_json = json;
  return decide_ok(engine, request);
}

// The first diagnostic with CODE, or nullptr.
inline const Diagnostic* find_code(const Diagnostics& diagnostics, const std::string& code) {
  for (const auto& d : diagnostics)
    if (d.code == code) return &d;
  return nullptr;
}

// Whether the decision reports `rule` among the rules that fired.
inline bool fired(const Decision& d, const std::string& rule) {
  for (const auto& f : d.rules)
    if (f.rule == rule) return true;
  return false;
}

}  // namespace warden::test
