// Path normalization, containment and symlink resolution for rules (path facts,
// `path-within`, `in-workspace`, `path-resolve`). Called by the CLIPS function table and the
// fact codec. normalize/within/join are pure; resolve reads the filesystem (lstat, readlink)
// and keeps no state. Resolver caches per decision and is confined to one thread.
#include "bindings/paths.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <vector>

namespace warden::paths {
namespace {

bool has_unresolved(std::string_view s) {
  return s.find('$') != std::string_view::npos || s.find('`') != std::string_view::npos ||
         s.find('\0') != std::string_view::npos;
}

// Resolves ".", ".." and repeated "/" of an absolute path. ".." at the root stays at the root.
std::string resolve_absolute(std::string_view abs) {
  std::string out;
  out.reserve(abs.size() + 1);
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
      if (!out.empty()) out.resize(out.rfind('/'));  // drops the last component
      continue;
    }
    out.push_back('/');
    out.append(comp);
  }
  if (out.empty()) out.push_back('/');
  return out;
}

// True if resolve_absolute(p) == p: "/" or "/a/b" with no empty, "." or ".." component.
bool is_resolved_absolute(std::string_view p) {
  if (p.empty() || p[0] != '/') return false;
  if (p.size() == 1) return true;
  std::size_t i = 1;
  while (true) {
    std::size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    std::string_view comp = p.substr(i, j - i);
    if (comp.empty() || comp == "." || comp == "..") return false;
    if (j == p.size()) return true;
    i = j + 1;
  }
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

// Expands the home prefix and joins a relative path to the (normalized or joined) cwd. With
// `collapse`, ".", ".." and repeated "/" are resolved lexically. False for unresolvable
// inputs: "~user/x" (other users' homes are unknown), any other "$"/"`"
// expansion, embedded NUL, a home prefix when `home` is empty/relative/unresolved, or a
// relative path whose cwd cannot be resolved.
bool expand(std::string_view path, std::string_view cwd, std::string_view home, bool collapse,
            std::string* out) {
  if (path.find('\0') != std::string_view::npos || path.find('`') != std::string_view::npos)
    return false;
  std::string expanded;
  if (std::size_t k = home_prefix_len(path); k != 0) {
    if (home.empty() || home[0] != '/' || has_unresolved(home)) return false;
    expanded.reserve(home.size() + path.size());
    expanded.append(home);
    expanded.push_back('/');
    expanded.append(path.substr(k));
  } else {
    expanded.assign(path);
  }
  if (has_unresolved(expanded)) return false;
  if (!expanded.empty() && expanded[0] == '/') {
    *out = collapse ? resolve_absolute(expanded) : std::move(expanded);
    return true;
  }
  if (!expanded.empty() && expanded[0] == '~') return false;  // "~user", "~+"...
  // Relative: join to the cwd (empty cwd means "/"; a relative cwd is taken relative to "/").
  std::string base = "/";
  if (!cwd.empty()) {
    std::string c;
    if (!expand(cwd, "", home, collapse, &c) || c.empty() || c[0] != '/') return false;
    base = std::move(c);
  }
  if (base.back() != '/') base.push_back('/');
  base.append(expanded);
  *out = collapse ? resolve_absolute(base) : std::move(base);
  return true;
}

}  // namespace

// Unresolvable inputs are returned unchanged so that they are never absolute-and-normalized
// by accident.
std::string normalize(std::string_view path, std::string_view cwd, std::string_view home) {
  try {
    std::string out;
    if (!expand(path, cwd, home, true, &out)) return std::string(path);
    return out;
  } catch (...) {  // bad_alloc: never let an exception escape into CLIPS
    return std::string(path);
  }
}

std::string normalize_at(std::string_view path, std::string_view cwd, std::string_view root,
                         std::string_view home) {
  if (cwd.empty()) return normalize(path, root, home);
  return normalize(path, normalize(cwd, root, home), home);
}

std::string join(std::string_view path, std::string_view cwd, std::string_view home) {
  try {
    std::string out;
    if (!expand(path, cwd, home, false, &out)) return {};
    return out;
  } catch (...) {
    return {};
  }
}

// Both sides are re-resolved lexically (a no-op for normalized input), so "/a/b/../c" is not
// mistaken for a path below "/a/b" even if a caller forgets to normalize.
bool within(std::string_view path, std::string_view root) {
  try {
    if (path.empty() || root.empty() || path[0] != '/' || root[0] != '/') return false;
    if (has_unresolved(path) || has_unresolved(root)) return false;
    // Normalized input (the usual case) is compared as it is, without a copy.
    std::string path_buffer, root_buffer;
    const std::string_view p =
        is_resolved_absolute(path) ? path : std::string_view(path_buffer = resolve_absolute(path));
    const std::string_view r =
        is_resolved_absolute(root) ? root : std::string_view(root_buffer = resolve_absolute(root));
    if (r == "/") return true;
    if (p.size() < r.size()) return false;
    if (p.substr(0, r.size()) != r) return false;
    return p.size() == r.size() || p[r.size()] == '/';
  } catch (...) {
    return false;
  }
}

namespace {

constexpr int kMaxLinks = 40;            // Linux's limit for one lookup
constexpr std::size_t kMaxSteps = 4096;  // components walked, links included
constexpr std::size_t kMaxCacheEntries = 4096;

// Pushes the components of `p` onto `stack` so that the first component is on top.
void push_components(std::string_view p, std::vector<std::string>* stack) {
  std::vector<std::string_view> parts;
  std::size_t i = 0;
  while (i < p.size()) {
    while (i < p.size() && p[i] == '/') ++i;
    std::size_t j = i;
    while (j < p.size() && p[j] != '/') ++j;
    if (j > i) parts.emplace_back(p.substr(i, j - i));
    i = j;
  }
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) stack->emplace_back(*it);
}

bool read_link(const std::string& path, std::size_t size_hint, std::string* out) {
  std::size_t size = size_hint + 1 < 64 ? 64 : size_hint + 1;
  while (size <= PATH_MAX * 2) {
    std::string buf(size, '\0');
    const ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) return false;
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      *out = std::move(buf);
      return true;
    }
    size *= 2;
  }
  return false;
}

}  // namespace

std::string resolve(std::string_view joined) {
  try {
    if (joined.empty() || joined[0] != '/' || joined.size() >= PATH_MAX) return {};
    if (joined.find('\0') != std::string_view::npos) return {};
    std::vector<std::string> todo;
    push_components(joined, &todo);
    std::string cur;             // what was reached, without symlinks; "" is "/"
    std::size_t depth = 0;       // components in cur
    std::size_t missing_at = 0;  // depth at which the walk left the filesystem; 0: not left
    int links = 0;
    std::size_t steps = 0;
    while (!todo.empty()) {
      std::string c = std::move(todo.back());
      todo.pop_back();
      if (++steps > kMaxSteps) return {};
      if (c.empty() || c == ".") continue;
      if (c == "..") {
        if (depth > 0) {
          cur.resize(cur.rfind('/'));
          --depth;
          if (missing_at > depth) missing_at = 0;  // back on the filesystem
        }
        continue;
      }
      std::string next = cur + "/" + c;
      if (next.size() >= PATH_MAX) return {};
      if (missing_at == 0) {
        struct stat st;
        if (::lstat(next.c_str(), &st) != 0) {
          if (errno != ENOENT && errno != ENOTDIR) return {};
          missing_at = depth + 1;
        } else if (S_ISLNK(st.st_mode)) {
          if (++links > kMaxLinks) return {};
          std::string target;
          if (!read_link(next, static_cast<std::size_t>(st.st_size), &target) || target.empty())
            return {};
          if (target[0] == '/') {
            cur.clear();
            depth = 0;
          }
          push_components(target, &todo);
          continue;
        }
      }
      cur = std::move(next);
      ++depth;
    }
    return cur.empty() ? "/" : cur;
  } catch (...) {
    return {};
  }
}

bool within(const Location& path, const Location& root) {
  if (path.resolved.empty() || root.resolved.empty()) return false;
  return within(path.normalized, root.normalized) && within(path.resolved, root.resolved);
}

const std::string& Resolver::resolve_joined(const std::string& joined) {
  if (auto it = cache_.find(joined); it != cache_.end()) return it->second;
  if (cache_.size() >= kMaxCacheEntries) cache_.clear();
  return cache_.emplace(joined, resolve(joined)).first->second;
}

// normalize() is the lexical resolution of join() (both expand the same way and fail on the
// same inputs), so the path is expanded once.
Location Resolver::locate(std::string_view path, std::string_view cwd, std::string_view home) {
  Location loc;
  const std::string joined = join(path, cwd, home);
  if (joined.empty()) {
    loc.normalized = normalize(path, cwd, home);
    return loc;
  }
  try {
    loc.normalized = resolve_absolute(joined);
  } catch (...) {
    loc.normalized = std::string(path);
  }
  loc.resolved = resolve_joined(joined);
  return loc;
}

}  // namespace warden::paths
