// `submit` (agent role): a signal enters the pipeline on a pipeline thread; each pipeline
// event goes back at once on the requester's connection as
//   {"type":"event","id":ID,"payload":EVENT}
// and the run ends with the response
//   {"type":"response","id":ID,"payload":{"action":"submit","ok":true,"status":S,"cycles":N}}.
// The connection closing cancels the run (no further model call or dispatch starts).
// Called by RequestHandler on the I/O thread; the run happens on PipelineWorkers.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "pipeline/pipeline.h"
#include "protocol/message.h"
#include "server/errors.h"
#include "server/request_handler.h"
#include "server/roles.h"
#include "server/server_context.h"

namespace warden::server {

// Runs one signal for one requester through the daemon's pipeline (blocking, never
// throws). The daemon builds it from [reasoning] and [actuators]; tests may inject one.
using PipelineRunner = std::function<pipeline::RunSummary(
    const pipeline::Signal& signal, const Identity& identity,
    std::shared_ptr<const std::atomic<bool>> closed, const pipeline::EventSink& sink)>;

// Handles a parsed submit request: checks the payload, then queues the run. Returns the
// reply when it is known now (a bad payload, E_NO_PROVIDER, E_BUSY); otherwise the events
// and the final reply go through later().
std::optional<Reply> submit_request(ServerContext& context, const Request& request,
                                    const Identity& identity,
                                    std::shared_ptr<const std::atomic<bool>> closed, ReplyFn later);

// {"type":"event","id":ID,"payload":EVENT} (EVENT is a JSON object text).
std::string event_message(std::string_view id_json, std::string_view event_json);

}  // namespace warden::server
