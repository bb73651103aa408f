// The `envelope` request (server/exec_request.h).
#include "server/exec_request.h"

#include "protocol/json_text.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "server/exec_wire.h"
#include "server/log.h"

namespace warden::server {

namespace {

// The shell actuator's inputs ([actuators.shell], with every file the daemon trusts and its
// socket among the hidden ones: effective_actuators fills them in).
actuators::confine::Inputs exec_inputs(const Config& config) {
  return actuators::confine::inputs_for(effective_actuators(config).shell);
}

}  // namespace

Reply envelope_request(ServerContext& ctx, const Request& request, const std::string& principal) {
  ExecEnvelopes& store = ctx.exec_envelopes;
  auto fail = [&](const char* code, std::string message) {
    Stats::add(ctx.stats.errors);
    return Reply{error_response(request.id_json, request.action, {code, message})};
  };
  const rapidjson::Value& payload = request.payload();
  std::string decision_id, digest, error;
  if (!string_field(payload, "decision_id", 128, &decision_id, &error) ||
      !string_field(payload, "action_digest", 80, &digest, &error)) {
    return fail(err::kBadRequest, error);
  }
  // No digest: the caller runs the command the daemon holds for the decision.
  if (decision_id.empty() || (!digest.empty() && digest.rfind("sha256:", 0) != 0)) {
    return fail(err::kBadRequest,
                "\"payload.decision_id\" is required; \"payload.action_digest\", when given, is "
                "sha256:HEX");
  }
  ExecRecord r;
  switch (store.take(principal, decision_id, digest, ExecEnvelopes::Clock::now(), &r)) {
    case ExecTake::Ok:
      break;
    case ExecTake::Unknown:
      return fail(err::kExecUnknown,
                  "no shell decision " + decision_id + " of this principal is known to the daemon");
    case ExecTake::NotApproved:
      return fail(err::kExecNotApproved,
                  "decision " + decision_id + " did not approve its command: nothing runs");
    case ExecTake::Expired:
      return fail(err::kExecExpired, "decision " + decision_id + " is older than " +
                                         std::to_string(ExecEnvelopes::kTtl.count()) +
                                         " s: decide the command again");
    case ExecTake::Used:
      return fail(err::kExecUsed,
                  "decision " + decision_id + " has already been run once: decide it again");
    case ExecTake::Mismatch:
      return fail(err::kExecMismatch,
                  "the command to run is not the command decision " + decision_id + " approved");
  }
  ExecEnvelopeWire wire;
  wire.decision = r.decision;
  wire.command = r.command;
  wire.cwd = r.cwd;
  wire.workspace_root = r.workspace_root;
  wire.home = r.home;
  wire.inputs = exec_inputs(*ctx.config);
  if (ctx.log) {
    log_with(ctx.log, spdlog::level::info,
             LogFields().add("decision_id", r.decision_id).add("principal", principal),
             "exec: decision {} released to {} for one run", log_text(r.decision_id),
             log_text(principal));
  }
  return Reply{ok_response(request.id_json, request.action, exec_envelope_fields(wire))};
}

}  // namespace warden::server
