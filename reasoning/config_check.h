// check_config: what is wrong with a ReasoningConfig (duplicate provider names, a selector
// naming no provider or holding a bad regex, consensus larger than the cascade, negative
// prices), as one message naming the key; "" when it is usable. Called by the daemon's
// config loader before building the cascade. Pure; thread-safe.
#pragma once

#include <string>

#include "reasoning/config.h"

namespace warden::reasoning {

std::string check_config(const ReasoningConfig& config);

}  // namespace warden::reasoning
