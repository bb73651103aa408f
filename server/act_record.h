// What the daemon's actuators did, in the audit log: after every dispatch of a run
// (pipeline::Options::on_dispatch) an `act` record — decision_id (the approving last-mile
// decision, already in the log), target, principal, ok, error_code, exit_code, truncated.
// Neither output nor error text is recorded (they may carry anything a command printed);
// the decision record holds the action itself. Thread-safe; blocks until the record is
// written (or could not be: then logged, since the action already ran).
#pragma once

#include <string>
#include <string_view>

#include "actuators/actuator.h"
#include "server/server_context.h"

namespace warden::server {

// The `act` record's FIELDS: "decision_id","target","principal","ok","error_code",
// "exit_code","truncated".
std::string act_fields(std::string_view decision_id, std::string_view target,
                       std::string_view principal, const actuators::Result& result);

// Appends the `act` record (nothing without an audit log).
void record_act(ServerContext& context, std::string_view decision_id, std::string_view target,
                std::string_view principal, const actuators::Result& result);

}  // namespace warden::server
