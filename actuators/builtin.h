// register_builtin: adds the built-in actuators — shell, file, http, reply, log, system and
// tool — to a Registry, configured from ActuatorsConfig; an actuator named in
// ActuatorsConfig::silent gives no feedback. Called once at startup (not thread-safe with
// other uses of the Registry). `tools` and `log` must outlive the registry's use.
#pragma once

#include <functional>
#include <string_view>

#include "actuators/actuator.h"
#include "actuators/config.h"
#include "actuators/tools.h"

namespace warden::actuators {

void register_builtin(Registry& registry, const ActuatorsConfig& config, const ToolRegistry* tools,
                      std::function<void(std::string_view)> log);

}  // namespace warden::actuators
