#include "actuators/confine.h"

namespace warden::actuators::confine {

const Support& probe() {
  static const Support support = [] {
    Support s;
    s.error = "confinement is not implemented yet";
    return s;
  }();
  return support;
}

Inputs inputs_for(const ShellConfig& config) {
  Inputs in;
  in.workspace = config.workspace;
  in.own_files = config.own_files;
  in.hide = config.hide;
  in.writable_roots = config.writable;
  in.read = config.read;
  in.cache_dir = config.cache_dir;
  in.path = config.path;
  in.max_processes = config.max_processes;
  return in;
}

Envelope derive(const std::vector<EffectRecord>&, const Inputs& inputs) {
  Envelope e;
  e.workspace = inputs.workspace;
  e.max_processes = inputs.max_processes;
  return e;
}

ProcessOutcome run(const Envelope&, const ProcessSpec&) {
  ProcessOutcome o;
  o.error = std::string(kUnsupported) + ": " + probe().error;
  return o;
}

int run_attached(const Envelope&, const std::vector<std::string>&, const std::string&,
                 std::chrono::milliseconds, std::string* error) {
  if (error) *error = std::string(kUnsupported) + ": " + probe().error;
  return -1;
}

}  // namespace warden::actuators::confine
