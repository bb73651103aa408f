// The model's catalog from what is registered: every actuator as a target (its
// description and payload schema) and the registered tools. Called once at startup by the
// daemon (and by tests); the Registry must outlive the call only.
#pragma once

#include <string>
#include <vector>

#include "actuators/actuator.h"
#include "actuators/tools.h"
#include "reasoning/think.h"

namespace warden::pipeline {

// Targets: every actuator of the registry in name order, except "tool" (the registered
// tools are listed one by one instead; a proposal for one has target "tool").
reasoning::Catalog catalog_from(const actuators::Registry& registry,
                                std::vector<reasoning::ToolSpec> tools, std::string identity);

// The same, with the tools of a ToolRegistry (their names, descriptions and argument
// schemas); null: no tools.
reasoning::Catalog catalog_from(const actuators::Registry& registry,
                                const actuators::ToolRegistry* tools, std::string identity);

}  // namespace warden::pipeline
