// The clients' defaults: the daemon's state directory and Unix socket from the environment.
#include "protocol/address.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>
#include <string>

using namespace warden::protocol;

namespace {

// Sets an environment variable for one scope, then puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("the default state directory: $XDG_STATE_HOME, else $HOME, absolute only",
          "[protocol][address]") {
  {
    ScopedEnv xdg("XDG_STATE_HOME", "/x/state");
    ScopedEnv home("HOME", "/home/a");
    CHECK(default_state_dir() == "/x/state/warden");
    CHECK(default_socket_path() == "/x/state/warden/warden.sock");
  }
  {
    ScopedEnv xdg("XDG_STATE_HOME", "relative");
    ScopedEnv home("HOME", "/home/a");
    CHECK(default_state_dir() == "/home/a/.local/state/warden");
  }
  {
    ScopedEnv xdg("XDG_STATE_HOME", nullptr);
    ScopedEnv home("HOME", "");
    CHECK(default_state_dir().empty());
    CHECK(default_socket_path().empty());
  }
  CHECK(std::string(kDefaultAddress) == "127.0.0.1:9105");
}
