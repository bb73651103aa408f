// ToolActuator (`tool`): runs a registered C++ tool (tools.h) with the approved payload.args;
// an unknown tool is E_ACT_UNKNOWN_TOOL, an exception from a tool is E_ACT_FAILED.
// Thread-safe when the tools are.
#pragma once

#include "actuators/actuator.h"
#include "actuators/tools.h"

namespace warden::actuators {

class ToolActuator : public Actuator {
 public:
  // `tools` may be null (no tools); it must outlive the actuator.
  ToolActuator(const ToolRegistry* tools, bool silent) : tools_(tools), silent_(silent) {}
  std::string_view name() const override { return "tool"; }
  bool silent() const override { return silent_; }
  std::string description() const override;
  std::string payload_schema_json() const override;
  Result act(std::string_view action_json, const Context& context) override;

 private:
  const ToolRegistry* tools_;
  bool silent_;
};

}  // namespace warden::actuators
