// ShellActuator (`shell`): runs an approved command line. A line that is one plain simple
// command runs with execve of the argv the shell parser produced — the words the rules saw —
// with no shell; anything else (lists, pipes, redirects, expansions, globs, wrappers, …) is
// refused with E_ACT_SHELL_SYNTAX unless the approving decision granted `shell-syntax`, and
// then runs as `ShellConfig::shell -c LINE`. Confined to the workspace, scrubbed
// environment, capped output, time limit, resource limits (process.h). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actuators/actuator.h"
#include "actuators/config.h"
#include "bindings/shell_parser.h"

namespace warden::actuators {

// How a line would run without a shell: the argv and the static assignments of its one
// simple command, or why it needs a shell. Pure; exposed for tests.
struct ExecPlan {
  bool direct = false;
  std::string needs_shell;  // why not direct ("" when direct)
  std::vector<std::string> argv;
  std::vector<shell::Assignment> assignments;
};
ExecPlan plan_exec(std::string_view line, const shell::ParseResult& parsed);

class ShellActuator : public Actuator {
 public:
  ShellActuator(ShellConfig config, bool silent) : config_(std::move(config)), silent_(silent) {}
  std::string_view name() const override { return "shell"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  ShellConfig config_;
  bool silent_;
};

}  // namespace warden::actuators
