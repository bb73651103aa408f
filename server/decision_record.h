// The one path from a decision worker's result to a decision anyone may use — the reply to
// a `decide` request or the pipeline's Decider behind `submit`: the audit record is appended
// first (when the log is on); only a recorded approved decision joins its session's history;
// a decision whose record cannot be built or written becomes an E_AUDIT reject.
// Called on a decision worker; `use` runs there (no audit log) or on the audit writer's
// thread once the record is durable, exactly once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "server/decider_pool.h"
#include "server/server_context.h"

namespace warden::server {

// Who asked for the decision and on what input, as the audit record names them.
struct DecisionOrigin {
  std::string proposal_json;
  std::string principal;
  std::vector<std::string> groups;
  std::string session;
};

// prepare (may be empty) runs on the worker before the record is appended, for costly work
// the answer needs (a reply's JSON), so the audit writer's thread only hands over; its text
// reaches use as `prepared` ("" when the decision became an E_AUDIT reject). The session's
// turn (DeciderPool) is held until the effects are remembered and then handed to use, which
// keeps it while it may still add to the session (a scoped grant's approval).
void record_decision(
    ServerContext& ctx, DecisionOrigin origin, DecideResult&& result, std::int64_t time_us,
    SessionTurn turn, std::function<std::string(const DecideResult&)> prepare,
    std::function<void(const DecideResult&, std::string prepared, SessionTurn turn)> use);

// Adds a decision a scoped grant approved (approved_by_grant) to its session's history: a
// person's yes makes the step part of what the session did.
void remember_granted(ServerContext& ctx, const std::string& principal, const std::string& session,
                      const Decision& decision);

// The decision a failed result stands for: a reject with the result's error code and
// message (what `decide` records for input that was not a proposal).
Decision reject_for(ServerContext& ctx, const DecideResult& result);

// Counts a decision in the daemon's counters (status, /metrics): its outcome, the loaded rules
// that asserted its decision facts, its error code when it failed closed, the rules' time.
void count_outcome(Stats& stats, const Decision& decision);

// A decision given to its requester: counted (count_outcome) and logged at debug level with
// its fields (decision_id, principal, session, outcome, rule, error_code).
void note_decision(ServerContext& ctx, const Decision& decision, std::string_view principal,
                   std::string_view session);

}  // namespace warden::server
