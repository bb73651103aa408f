// The provider kinds behind make_provider (reasoning/provider.h). Internal to reasoning/.
#pragma once

#include <memory>
#include <string>

#include "reasoning/provider.h"

namespace warden::reasoning {

// kind "script": answers from a JSON-lines file read once here (docs/REASONING.md). Null
// with *error naming the file and line when it cannot be read or a line is not valid.
std::unique_ptr<Provider> make_script_provider(const ProviderConfig& config, std::string* error);

}  // namespace warden::reasoning
