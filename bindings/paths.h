// Lexical path normalization and containment, as rules and derived facts use them.
// Pure functions: no filesystem access (symlinks are not followed), thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace warden::paths {

// Absolute, lexically normalized path: "~" and "$HOME"/"${HOME}" prefixes become `home`,
// relative paths are joined to `cwd` (itself normalized; empty cwd means "/"), ".", ".."
// and repeated "/" resolved, no trailing "/" except for "/" itself. A path that still holds
// an unresolved "$" or "`" is returned unchanged (and is never "within" anything).
std::string normalize(std::string_view path, std::string_view cwd, std::string_view home);

// True if `path` is `root` or lies below it, by whole components ("/a/bc" is not within
// "/a/b"). Both are compared as given: pass normalized absolute paths. False if either is
// not absolute or holds "$" or "`".
bool within(std::string_view path, std::string_view root);

}  // namespace warden::paths
