// Small text helpers shared by the engine and bindings. Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::text {

bool valid_utf8(std::string_view s);
// True when every byte is below 0x80 (the empty string included).
bool is_ascii(std::string_view s);
// Length of the valid UTF-8 sequence starting at s[i] (i < s.size()), or 0 if invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);
std::string ascii_lower(std::string_view s);
bool starts_with(std::string_view s, std::string_view prefix);
bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace warden::text
