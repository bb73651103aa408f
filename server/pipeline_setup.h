// The pipeline behind `submit`, built once at startup from [reasoning] and [actuators]: the
// provider cascade, the built-in actuators, the model's catalog and the pipeline options
// (each dispatch writes its `act` audit record). Each run gets its own Pipeline over these
// shared parts, with a Decider bound to the requester's identity (daemon_decider.h).
// Built on the main thread; the parts are thread-safe and outlive every run.
#pragma once

#include <memory>
#include <string>

#include "actuators/actuator.h"
#include "actuators/tools.h"
#include "pipeline/pipeline.h"
#include "reasoning/cascade.h"
#include "reasoning/think.h"
#include "server/config.h"
#include "server/server_context.h"
#include "server/submit.h"

namespace warden::server {

struct PipelineParts {
  std::unique_ptr<reasoning::Cascade> cascade;
  actuators::ToolRegistry tools;  // before actuators: the tool actuator uses it
  actuators::Registry actuators;
  reasoning::Catalog catalog;  // what the model may propose
  pipeline::Options options;
};

// The actuators approved actions are dispatched to when no pipeline (no model provider)
// brought its own.
struct ApprovalActuators {
  actuators::ToolRegistry tools;  // before actuators: the tool actuator uses it
  actuators::Registry actuators;
};

// Builds the parts into *parts and the runner into *runner. With no provider configured
// both stay empty (submit answers E_NO_PROVIDER). Returns an error naming the key or the
// provider when the configuration cannot be used (a script file that does not parse …).
std::string build_pipeline(const Config& config, ServerContext& context,
                           std::unique_ptr<PipelineParts>* parts, PipelineRunner* runner);

}  // namespace warden::server
