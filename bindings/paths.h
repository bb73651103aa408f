// Paths as rules see them: lexical normalization and containment (pure), and the resolved
// location after symlinks (Resolver, which reads the filesystem). Called by the fact codec
// (path facts) and the rule functions. Pure functions are thread-safe; a Resolver belongs to
// one engine (one thread) and caches for one decision.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>

namespace warden::paths {

// Absolute, lexically normalized path: "~" and "$HOME"/"${HOME}" prefixes become `home`,
// relative paths are joined to `cwd` (itself normalized; empty cwd means "/"), ".", ".."
// and repeated "/" resolved, no trailing "/" except for "/" itself. A path that still holds
// an unresolved "$" or "`" is returned unchanged (and is never "within" anything).
std::string normalize(std::string_view path, std::string_view cwd, std::string_view home);

// normalize() against a working directory given as rules write it: `cwd` is normalized against
// `root` first, and "" means `root`. What the rule function path-normalize computes.
std::string normalize_at(std::string_view path, std::string_view cwd, std::string_view root,
                         std::string_view home);

// True if `path` is `root` or lies below it, by whole components ("/a/bc" is not within
// "/a/b"). Both are compared as given: pass normalized absolute paths. False if either is
// not absolute or holds "$" or "`".
bool within(std::string_view path, std::string_view root);

// Like normalize, but "." and ".." are kept: the absolute path the kernel would walk.
// "" when normalize would return its input unchanged (unresolvable).
std::string join(std::string_view path, std::string_view cwd, std::string_view home);

// Walks an absolute `joined` path like the kernel: each existing component is looked up
// with lstat, symlinks are followed (also in the last component; at most 40), ".." goes to
// the parent of what was really reached. From the first component that does not exist (or
// below a non-directory) the rest is applied lexically. "" when the walk fails (permission
// denied, symlink loop, longer than PATH_MAX) or `joined` is not absolute.
std::string resolve(std::string_view joined);

// Where a path is: lexically and on the filesystem.
struct Location {
  std::string normalized;  // normalize(): lexical
  std::string resolved;    // resolve(join()): after symlinks; "" if unknown
};

// True only if both readings lie within the root's: `path.normalized` within
// `root.normalized` and `path.resolved` within `root.resolved` (neither may be unknown).
bool within(const Location& path, const Location& root);

// Locates paths, caching resolutions until clear(). Not thread-safe: one per engine, cleared
// at the start of each decision (the filesystem may change between decisions).
class Resolver {
 public:
  Location locate(std::string_view path, std::string_view cwd, std::string_view home);
  // resolve(joined), cached.
  const std::string& resolve_joined(const std::string& joined);
  void clear() { cache_.clear(); }

 private:
  std::unordered_map<std::string, std::string> cache_;
};

}  // namespace warden::paths
