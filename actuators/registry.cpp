#include "actuators/actuator.h"

namespace warden::actuators {

void Registry::add(std::unique_ptr<Actuator> actuator) {
  std::string name(actuator->name());
  actuators_[name] = std::move(actuator);
}

Actuator* Registry::find(std::string_view name) const {
  auto it = actuators_.find(name);
  return it == actuators_.end() ? nullptr : it->second.get();
}

std::vector<std::string> Registry::names() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : actuators_) out.push_back(name);
  return out;
}

}  // namespace warden::actuators
