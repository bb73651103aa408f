// make_cascade: the daemon's one call to build the reasoning layer from its configuration:
// check_config, make_provider for each provider (in order), and a Cascade whose consensus
// compares normalized_action(parse_answer(answer, catalog)). Null with *error naming the
// key or provider at fault. Called once at startup (and on reload); not thread-sensitive.
#pragma once

#include <memory>
#include <string>

#include "reasoning/cascade.h"
#include "reasoning/think.h"

namespace warden::reasoning {

std::unique_ptr<Cascade> make_cascade(const ReasoningConfig& config, const Catalog& catalog,
                                      std::string* error);

}  // namespace warden::reasoning
