#include "pipeline/catalog.h"

#include <utility>

namespace warden::pipeline {

reasoning::Catalog catalog_from(const actuators::Registry& registry,
                                std::vector<reasoning::ToolSpec> tools, std::string identity) {
  reasoning::Catalog catalog;
  catalog.identity = std::move(identity);
  for (const std::string& name : registry.names()) {
    if (name == "tool") continue;
    const actuators::Actuator* actuator = registry.find(name);
    if (!actuator) continue;
    reasoning::ToolSpec spec;
    spec.name = name;
    spec.description = actuator->description();
    spec.parameters_schema_json = actuator->payload_schema_json();
    catalog.targets.push_back(std::move(spec));
  }
  catalog.tools = std::move(tools);
  return catalog;
}

reasoning::Catalog catalog_from(const actuators::Registry& registry,
                                const actuators::ToolRegistry* tools, std::string identity) {
  std::vector<reasoning::ToolSpec> specs;
  if (tools) {
    for (const actuators::Tool* tool : tools->list())
      specs.push_back(reasoning::ToolSpec{tool->name, tool->description, tool->args_schema_json});
  }
  return catalog_from(registry, std::move(specs), std::move(identity));
}

}  // namespace warden::pipeline
