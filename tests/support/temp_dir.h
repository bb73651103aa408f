// Test support: a private temporary directory (mkdtemp: mode 0700, a fresh name under the
// system's temporary directory), removed with everything in it when the object goes. The
// one temporary directory of the tests: a fixture that needs files in place holds one. Light
// on purpose (the standard library only): most tests want just this.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace warden::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  // prefix: the directory's name before its random suffix, so a directory left behind by a
  // killed test says which test made it.
  explicit TempDir(const std::string& prefix = "warden-test") {
    std::string pattern = (fs::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  std::string str() const { return path_.string(); }
  // The path of NAME inside (NAME is not looked at: "a/b" and ".." are joined as written).
  std::string operator/(const std::string& name) const { return path_.string() + "/" + name; }
  // Writes NAME (parents made); with mode >= 0 the file then gets that mode.
  std::string write(const std::string& name, const std::string& text, int mode = -1) const {
    fs::path p = path_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    if (mode >= 0) ::chmod(p.c_str(), static_cast<mode_t>(mode));
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

}  // namespace warden::testing

namespace warden::server::testing {
using warden::testing::TempDir;
}  // namespace warden::server::testing
