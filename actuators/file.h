// FileActuator (`file`): read, write, append or delete one file beneath the configured root.
// Every path is opened with open_beneath (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
// RESOLVE_NO_MAGICLINKS), so `..` and symlink escapes fail at the system call; only regular
// files with a single link are read or written; reads and writes are capped. Thread-safe.
#pragma once

#include "actuators/actuator.h"
#include "actuators/beneath.h"
#include "actuators/config.h"

namespace warden::actuators {

class FileActuator : public Actuator {
 public:
  FileActuator(FileConfig config, bool silent, Resolve how = Resolve::Auto)
      : config_(std::move(config)), silent_(silent), how_(how) {}
  std::string_view name() const override { return "file"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  FileConfig config_;
  bool silent_;
  Resolve how_;
};

}  // namespace warden::actuators
