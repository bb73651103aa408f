// Minimal JSON string escaping shared by the engine's JSON output (diagnostics, decisions).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden {

// Appends `s` as a JSON string literal (with quotes). Invalid UTF-8 bytes become U+FFFD.
void append_json_string(std::string& out, std::string_view s);
std::string json_string(std::string_view s);

}  // namespace warden
