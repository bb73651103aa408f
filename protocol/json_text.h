// JSON text helpers for the daemon and its clients: escaping strings into hand-built messages
// and a nesting-depth check run before RapidJSON builds a DOM. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "bindings/json.h"
#include "bindings/text.h"
#include "engine/json_writer.h"

namespace warden::protocol {

// JSON string literals (invalid UTF-8, which a JSON "\udc00" escape can produce, becomes
// U+FFFD, so every reply stays valid UTF-8) and strict UTF-8 checks: the engine's own.
using warden::append_json_string;
using warden::json_string;
using warden::text::valid_utf8;

// True when arrays/objects in text nest deeper than max_depth (strings are skipped): the
// shared parser's own pre-check (bindings/json.h).
inline bool nesting_exceeds(std::string_view text, std::size_t max_depth) {
  json::Limits limits;
  limits.max_depth = max_depth;
  return json::scan(text, limits).refusal == json::Refusal::kTooDeep;
}

}  // namespace warden::protocol
