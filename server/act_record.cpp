#include "server/act_record.h"

#include "audit/writer.h"
#include "engine/json_writer.h"
#include "server/audit_setup.h"

namespace warden::server {

std::string act_fields(std::string_view decision_id, std::string_view target,
                       std::string_view principal, const actuators::Result& result) {
  std::string out = "\"decision_id\":";
  append_json_string(out, decision_id);
  out += ",\"target\":";
  append_json_string(out, target);
  out += ",\"principal\":";
  append_json_string(out, principal);
  out += ",\"ok\":";
  out += result.ok ? "true" : "false";
  out += ",\"error_code\":";
  append_json_string(out, result.error_code);
  out += ",\"exit_code\":" + std::to_string(result.exit_code);
  out += ",\"truncated\":";
  out += result.truncated ? "true" : "false";
  return out;
}

void record_act(ServerContext& context, std::string_view decision_id, std::string_view target,
                std::string_view principal, const actuators::Result& result) {
  audit::Writer* log = context.audit;
  if (!log) return;
  audit::AppendResult appended =
      log->append_wait("act", audit_now_us(), act_fields(decision_id, target, principal, result));
  if (!appended.ok) {
    // The action already ran; its decision is in the log. Say loudly what is missing.
    log_with(context.log, spdlog::level::err,
             LogFields().add("decision_id", decision_id).add("principal", principal),
             "audit: the act record of decision {} ({}) cannot be written: {}",
             log_text(decision_id), log_text(target), appended.error);
  }
}

}  // namespace warden::server
