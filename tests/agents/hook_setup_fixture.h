// Test support for `warden hook install|doctor`: a temporary directory with file helpers and
// the real `warden` binary run to completion with extra environment. One per test case.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/build_paths.h"
#include "tests/cli/cli_process.h"
#include "tests/support/temp_dir.h"

namespace warden::agents::testing {

namespace fs = std::filesystem;

using warden::testing::kShippedRules;

// The `warden` binary this build made, as hooks are installed to run it.
inline const std::string kWardenPath = WARDEN_BINARY_DIR "/cli/warden";

// A temporary home for `warden hook install` and `doctor`; files written here get mode 0644
// unless told.
class HookHome : public server::testing::TempDir {
 public:
  std::string write(const std::string& name, const std::string& text, int mode = 0644) const {
    return server::testing::TempDir::write(name, text, mode);
  }
};

// `warden ARGS` with HOME (and more) set for the child; stdin closed.
inline cli::testing::Run warden_cli(std::vector<std::string> args,
                                    std::vector<std::string> env = {}) {
  cli::testing::Child child(std::move(args), std::move(env));
  int code = child.finish();
  REQUIRE_FALSE(child.timed_out);
  return {code, child.out(), child.err()};
}

}  // namespace warden::agents::testing
