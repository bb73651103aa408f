// The one JSON string writer (bindings/text.h) under the name the engine's JSON output
// (diagnostics, decisions, facts) and the folders above call it by. Pure; thread-safe.
#pragma once

#include "bindings/text.h"

namespace warden {

// Appends `s` as a JSON string literal (with quotes). Invalid UTF-8 bytes become U+FFFD.
using text::append_json_string;
using text::json_string;

}  // namespace warden
