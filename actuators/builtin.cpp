#include "actuators/builtin.h"

#include <algorithm>

#include "actuators/file.h"
#include "actuators/http.h"
#include "actuators/messages.h"
#include "actuators/shell.h"
#include "actuators/tool.h"

namespace warden::actuators {

void register_builtin(Registry& registry, const ActuatorsConfig& config, const ToolRegistry* tools,
                      std::function<void(std::string_view)> log) {
  auto silent = [&](std::string_view name) {
    return std::find(config.silent.begin(), config.silent.end(), name) != config.silent.end();
  };
  registry.add(std::make_unique<ShellActuator>(config.shell, silent("shell")));
  registry.add(std::make_unique<FileActuator>(config.file, silent("file")));
  registry.add(std::make_unique<HttpActuator>(config.http, silent("http")));
  registry.add(std::make_unique<ReplyActuator>(silent("reply")));
  registry.add(std::make_unique<LogActuator>(log, silent("log")));
  registry.add(std::make_unique<SystemActuator>(log, silent("system")));
  registry.add(std::make_unique<ToolActuator>(tools, silent("tool")));
}

}  // namespace warden::actuators
