// Glob matching for rules: "*" (no "/"), "**" (anything), "?", "[abc]", "[!a-z]", "\x".
// Whole-string match, linear time (translated to RE2). Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::glob {

// The RE2 pattern equivalent to `glob` (anchored; carries its own flags, so it means the
// same under any RE2 options). Never fails: unmatched "[" is literal.
std::string to_regex(std::string_view glob);
// Throws std::runtime_error if the glob cannot be compiled (never reports that as "no match").
bool match(std::string_view glob, std::string_view text);

}  // namespace warden::glob
