// The pipeline's events for the requester, as JSON object text (shapes in pipeline.h and
// docs/PIPELINE.md). Pure builders; thread-safe. Action texts are embedded as JSON when
// they are JSON (they come from the engine), else as null.
#pragma once

#include <string>
#include <string_view>

#include "actuators/actuator.h"
#include "engine/decision.h"

namespace warden::pipeline::events {

// stage: "reason" or "last-mile".
std::string decision(const Decision& d, std::string_view stage, int attempt);
std::string approval_required(const Decision& d);
std::string reply(std::string_view text);
// A notice an actuator sends through Context::notify: {"event":KIND,"text":TEXT}.
std::string notice(std::string_view kind, std::string_view text);
// What an actuator did: "tool-output" (output, exit_code, truncated) when it ran, else
// "tool-error" (error_code, error and any output).
std::string tool_result(std::string_view target, std::string_view decision_id,
                        const actuators::Result& result);
std::string dropped(std::string_view reason);
std::string error(std::string_view code, std::string_view message);
std::string final_event(std::string_view status, int cycles);

}  // namespace warden::pipeline::events
