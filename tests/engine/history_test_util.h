// Helpers for the history filter's tests: the shipped tables, remembered effects.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/decision.h"
#include "tests/build_paths.h"
#include "tests/engine/engine_test_util.h"

namespace warden::test {

// A file of the shipped pack (rules/NAME), e.g. its effects table and path classes.
inline std::string shipped(const std::string& name) {
  std::ifstream in(std::string(WARDEN_SOURCE_DIR "/rules/") + name, std::ios::binary);
  REQUIRE(in);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A remembered effect.
inline EffectRecord effect(std::string kind, std::string object, std::string target,
                           std::string program = "", std::string path_class = "none",
                           bool in_workspace = false) {
  return EffectRecord{std::move(kind),
                      std::move(object),
                      std::move(target),
                      std::move(program),
                      std::move(path_class),
                      in_workspace,
                      "",
                      "",
                      false};
}

// One request decided twice: with the history filter, and with every entry asserted (explain).
// Their JSON, facts_json and elapsed_us cleared: the filter claims they are the same.
struct FilteredAndAll {
  std::string filtered, all;
};
inline FilteredAndAll decide_filtered_and_all(Engine& engine, const std::string& json,
                                              const std::vector<HistoryEntry>& history) {
  DecideRequest filtered;
  filtered.proposal_json = json;
  filtered.decision_id = "same";
  filtered.history = &history;
  DecideRequest all = filtered;
  all.explain = true;
  Decision a = decide_ok(engine, filtered);
  Decision b = decide_ok(engine, all);
  b.facts_json.clear();
  a.elapsed_us = b.elapsed_us = 0;
  return {decision_to_json(a), decision_to_json(b)};
}

}  // namespace warden::test
