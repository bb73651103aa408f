// Small JSON text helpers for the daemon: escaping strings into hand-built messages and a
// nesting-depth check run before RapidJSON builds a DOM. Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace warden::server {

// Appends s as a JSON string literal (with quotes) to out. Invalid UTF-8 (which a JSON
// "\udc00" escape can produce) is replaced by U+FFFD, so every reply stays valid UTF-8.
void append_json_string(std::string& out, std::string_view s);
std::string json_string(std::string_view s);

// True when s is valid UTF-8 (no overlongs, no surrogates, at most U+10FFFF).
bool valid_utf8(std::string_view s);

// True when arrays/objects in text nest deeper than max_depth (strings are skipped).
// Cheap linear scan, so hostile input never reaches a recursive walk.
bool nesting_exceeds(std::string_view text, std::size_t max_depth);

}  // namespace warden::server
