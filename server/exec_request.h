// The `envelope` request of `warden exec` (docs/PROTOCOL.md): hands one approved shell
// decision of the caller's principal, once, to the exec that runs it under its envelope.
// Answered at once on the I/O thread; the store (server/exec_envelopes.h) is thread-safe.
#pragma once

#include <string>

#include "server/exec_envelopes.h"
#include "server/request_handler.h"

namespace warden::server {

// {"action":"envelope","decision_id":ID,"action_digest":"sha256:…"} → {"envelope":{…}}
// (server/exec_wire.h) or E_BAD_REQUEST, E_EXEC_UNKNOWN, E_EXEC_NOT_APPROVED, E_EXEC_EXPIRED,
// E_EXEC_USED, E_EXEC_MISMATCH.
Reply envelope_request(ServerContext& ctx, const Request& request, const std::string& principal);

}  // namespace warden::server
