// Helpers for the history filter's tests: the shipped tables, remembered effects.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "engine/decision.h"
#include "tests/build_paths.h"

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

}  // namespace warden::test
