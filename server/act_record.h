// What the daemon's actuators did, in the audit log: each built-in actuator is registered
// wrapped in a RecordedActuator, which appends an `act` record once the actuator returns —
// decision_id (the approving decision, already in the log), target, principal, ok,
// error_code, exit_code, truncated. Neither output nor error text is recorded (they may carry
// anything the command printed); the decision record holds the action itself.
// Thread-safe as the wrapped actuator is; the context outlives the registry.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "actuators/actuator.h"
#include "server/server_context.h"

namespace warden::server {

// The `act` record's FIELDS: "decision_id","target","principal","ok","error_code",
// "exit_code","truncated".
std::string act_fields(std::string_view decision_id, std::string_view target,
                       std::string_view principal, const actuators::Result& result);

class RecordedActuator : public actuators::Actuator {
 public:
  // inner is not owned (the daemon's registry of built-ins owns it and outlives this).
  RecordedActuator(actuators::Actuator* inner, ServerContext& context)
      : inner_(inner), context_(context) {}

  std::string_view name() const override { return inner_->name(); }
  bool silent() const override { return inner_->silent(); }
  std::string description() const override { return inner_->description(); }
  std::string payload_schema_json() const override { return inner_->payload_schema_json(); }
  actuators::Result act(std::string_view action_json,
                        const actuators::Context& context) override;

 private:
  actuators::Actuator* inner_;
  ServerContext& context_;
};

// Registers every actuator of `from` in `into`, each wrapped in a RecordedActuator.
void register_recorded(const actuators::Registry& from, actuators::Registry* into,
                       ServerContext& context);

}  // namespace warden::server
