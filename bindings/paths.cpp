// Lexical path normalization and containment for rules (path facts, `path-within`).
// Called by the CLIPS function table and the derived-fact builders in the engine.
// Pure functions, no filesystem access (symlinks not followed), no shared state: thread-safe.
#include "bindings/paths.h"

#include <vector>

namespace warden::paths {
namespace {

bool has_unresolved(std::string_view s) {
  return s.find('$') != std::string_view::npos || s.find('`') != std::string_view::npos ||
         s.find('\0') != std::string_view::npos;
}

// Resolves ".", ".." and repeated "/" of an absolute path. ".." at the root stays at the root.
std::string resolve_absolute(std::string_view abs) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  const std::size_t n = abs.size();
  while (i < n) {
    while (i < n && abs[i] == '/') ++i;
    std::size_t j = i;
    while (j < n && abs[j] != '/') ++j;
    std::string_view comp = abs.substr(i, j - i);
    i = j;
    if (comp.empty() || comp == ".") continue;
    if (comp == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(comp);
  }
  if (parts.empty()) return "/";
  std::string out;
  out.reserve(abs.size());
  for (std::string_view p : parts) {
    out.push_back('/');
    out.append(p);
  }
  return out;
}

// If `path` starts with a home prefix ("~", "$HOME", "${HOME}") followed by end or "/",
// returns the length of that prefix, else 0.
std::size_t home_prefix_len(std::string_view path) {
  auto ends_component = [&](std::size_t k) { return k == path.size() || path[k] == '/'; };
  if (path.starts_with("~") && ends_component(1)) return 1;
  if (path.starts_with("$HOME") && ends_component(5)) return 5;
  if (path.starts_with("${HOME}") && ends_component(7)) return 7;
  return 0;
}

}  // namespace

// Unresolvable inputs are returned unchanged so that they are never absolute-and-normalized
// by accident: "~user/x" (other users' homes are unknown), any other "$"/"`" expansion,
// embedded NUL, a home prefix when `home` is empty/relative/unresolved, or a relative path
// whose cwd cannot be resolved.
std::string normalize(std::string_view path, std::string_view cwd, std::string_view home) {
  try {
    if (path.find('\0') != std::string_view::npos || path.find('`') != std::string_view::npos) {
      return std::string(path);
    }
    std::string expanded;
    if (std::size_t k = home_prefix_len(path); k != 0) {
      if (home.empty() || home[0] != '/' || has_unresolved(home)) return std::string(path);
      expanded.reserve(home.size() + path.size());
      expanded.append(home);
      expanded.push_back('/');
      expanded.append(path.substr(k));
    } else {
      expanded.assign(path);
    }
    if (has_unresolved(expanded)) return std::string(path);
    if (!expanded.empty() && expanded[0] == '/') return resolve_absolute(expanded);
    if (!expanded.empty() && expanded[0] == '~') return std::string(path);  // "~user", "~+"...
    // Relative: join to the normalized cwd (empty cwd means "/"; a relative cwd is taken
    // relative to "/").
    std::string base = "/";
    if (!cwd.empty()) {
      std::string c = normalize(cwd, "", home);
      if (c.empty() || c[0] != '/' || has_unresolved(c)) return std::string(path);
      base = std::move(c);
    }
    base.push_back('/');
    base.append(expanded);
    return resolve_absolute(base);
  } catch (...) {  // bad_alloc: never let an exception escape into CLIPS
    return std::string(path);
  }
}

// Both sides are re-resolved lexically (a no-op for normalized input), so "/a/b/../c" is not
// mistaken for a path below "/a/b" even if a caller forgets to normalize.
bool within(std::string_view path, std::string_view root) {
  try {
    if (path.empty() || root.empty() || path[0] != '/' || root[0] != '/') return false;
    if (has_unresolved(path) || has_unresolved(root)) return false;
    const std::string p = resolve_absolute(path);
    const std::string r = resolve_absolute(root);
    if (r == "/") return true;
    if (p.size() < r.size()) return false;
    if (p.compare(0, r.size(), r) != 0) return false;
    return p.size() == r.size() || p[r.size()] == '/';
  } catch (...) {
    return false;
  }
}

}  // namespace warden::paths
