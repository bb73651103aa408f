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

#include "tests/cli/cli_process.h"

namespace warden::agents::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "warden-hook-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  std::string write(const std::string& name, const std::string& text, int mode = 0644) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    ::chmod(p.c_str(), static_cast<mode_t>(mode));
    return p.string();
  }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ / name, std::ios::binary);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

 private:
  fs::path path_;
};

// `warden ARGS` with HOME (and more) set for the child; stdin closed.
inline cli::testing::Run warden_cli(std::vector<std::string> args, std::vector<std::string> env = {}) {
  cli::testing::Child child(std::move(args), std::move(env));
  int code = child.finish();
  REQUIRE_FALSE(child.timed_out);
  return {code, child.out(), child.err()};
}

inline const std::string kShippedRules = WARDEN_SOURCE_DIR "/rules";

}  // namespace warden::agents::testing
