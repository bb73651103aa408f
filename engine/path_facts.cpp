#include "engine/path_facts.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "bindings/glob.h"
#include "engine/clips_env.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

PathFacts::PathFacts(ClipsEnv& env, FactWriter& writer, const PathClasses* classes)
    : env_(env),
      w_(writer),
      path_(writer.bind_template("path")),
      path_slots_{path_["proposal"], path_["key"],          path_["raw"],  path_["normalized"],
                  path_["resolved"], path_["in-workspace"], path_["class"]},
      classes_(classes) {}

// `normalized` is lexical; `resolved` follows symlinks on the host (see paths::resolve);
// in-workspace needs both inside the workspace root (itself resolved). Indexed path-within
// patterns run on both, so a forbidden directory is hit through a symlink too.
bool PathFacts::assert_path(const std::string& key, const std::string& raw, const std::string& cwd,
                            const PatternIndex& patterns) {
  BindingContext& c = env_.state();
  const paths::Location loc = c.resolver.locate(raw, cwd, c.home);
  const paths::Location& root = workspace_root();
  void* f = w_.fact(path_);
  if (!f) return false;
  w_.put(f, path_slots_.proposal, STRING, w_.id());
  w_.put_string(f, path_slots_.key, key);
  w_.put_string(f, path_slots_.raw, raw);
  w_.put_string(f, path_slots_.normalized, loc.normalized);
  w_.put_string(f, path_slots_.resolved, loc.resolved);
  w_.put_symbol(f, path_slots_.in_workspace, paths::within(loc, root) ? "TRUE" : "FALSE");
  w_.put_symbol(f, path_slots_.path_class, path_class(loc));
  if (!w_.finish(f)) return false;
  bool ok = true;
  auto on_hit = [&](const PatternIndex::Hit& hit) { ok &= w_.assert_hit(key, hit); };
  if (!patterns.empty()) {
    if (!patterns.match_path(key, loc.normalized, on_hit)) return false;
    if (!loc.resolved.empty() && loc.resolved != loc.normalized &&
        !patterns.match_path(key, loc.resolved, on_hit))
      return false;
  }
  return ok && w_.assert_derived_hits(derived_key::kPathNormalized, loc.normalized, patterns);
}

// The workspace root located once per proposal (the resolver's cache would give the same
// answer for every path of the proposal; it is emptied between proposals, so is this).
const paths::Location& PathFacts::workspace_root() {
  if (!root_) {
    BindingContext& c = env_.state();
    root_ = c.resolver.locate(c.workspace_root, "", c.home);
  }
  return *root_;
}

namespace {

// The readings of a location that are known (resolved is "" when the walk failed).
bool any_within(const paths::Location& inner, const paths::Location& outer) {
  for (const std::string* i : {&inner.normalized, &inner.resolved}) {
    for (const std::string* o : {&outer.normalized, &outer.resolved}) {
      if (!i->empty() && !o->empty() && paths::within(*i, *o)) return true;
    }
  }
  return false;
}

// `path` as a match() pattern naming only itself: glob characters escaped.
std::string literal_pattern(const std::string& path) {
  std::string out;
  for (char ch : path) {
    if (ch == '*' || ch == '?' || ch == '[' || ch == ']' || ch == '\\' || ch == '{' || ch == '}')
      out += '\\';
    out += ch;
  }
  return out;
}

}  // namespace

void PathFacts::set_own_paths(std::vector<paths::Location> own) {
  own_paths_ = std::move(own);
  own_patterns_.clear();
  own_dir_patterns_.clear();
  std::set<std::string> seen, dirs;
  for (const paths::Location& loc : own_paths_) {
    for (const std::string* form : {&loc.normalized, &loc.resolved}) {
      if (form->empty() || (*form)[0] != '/') continue;
      const std::string literal = literal_pattern(*form);
      // The path itself and everything below it.
      if (seen.insert(literal).second) own_patterns_.push_back(literal);
      const std::string below = literal + (literal == "/" ? "**" : "/**");
      if (seen.insert(below).second) own_patterns_.push_back(below);
      for (std::filesystem::path dir = std::filesystem::path(*form).parent_path();;
           dir = dir.parent_path()) {
        dirs.insert(literal_pattern(dir.string()));
        if (dir == dir.root_path() || !dir.has_parent_path()) break;
      }
    }
  }
  own_dir_patterns_.assign(dirs.begin(), dirs.end());
}

// The class of a path that is, lies in or holds one of the daemon's own files; null when
// it is none of them. Both readings of each side count, so neither a symlink to the state
// directory nor a `..` spelling escapes.
const char* PathFacts::own_class(const paths::Location& loc) const {
  const char* out = nullptr;
  for (const paths::Location& own : own_paths_) {
    if (any_within(loc, own)) return kOwnPathClass;
    if (any_within(own, loc)) out = kOwnDirClass;
  }
  return out;
}

// The class of a glob that may name an own path or something inside one (kOwnPathClass),
// or a directory holding one (kOwnDirClass); null otherwise. Decided on the patterns
// (glob::may_overlap, strict: any common path, dotglob), never on the files present.
const char* PathFacts::own_glob_class(const paths::Location& loc) const {
  const char* out = nullptr;
  for (const std::string* g : {&loc.normalized, &loc.resolved}) {
    if (g->empty() || !glob::has_shell_glob(*g)) continue;
    try {
      for (const std::string& pattern : own_patterns_) {
        if (glob::may_overlap(*g, pattern, false, true, true)) return kOwnPathClass;
      }
      if (!out) {
        for (const std::string& pattern : own_dir_patterns_) {
          if (glob::may_overlap(*g, pattern, false, true, true)) {
            out = kOwnDirClass;
            break;
          }
        }
      }
    } catch (const std::exception&) {
      return kOwnPathClass;  // a glob that cannot be read may name anything
    }
  }
  return out;
}

const char* PathFacts::path_class(const paths::Location& loc) {
  if (!own_paths_.empty()) {
    if (const char* own = own_class(loc)) return own;
  }
  if (!classes_) return "none";
  // Class names are NUL-free symbols owned by the table, which outlives the codec.
  return classes_->classify(loc.normalized, loc.resolved, env_.state().home).data();
}

// A glob is as sensitive as the most sensitive name it may expand to: its class is the
// earlier (in file order) of its own and the first class one of whose patterns it may
// match (any path both match outside the workspace; inside it the glob must spell the
// name, see PathClasses::classify_glob). A name pattern starting with "." that may match
// ".." (`.*`, `.?`) climbs out of
// where it stands: the rest of the path may then lie anywhere, outside the workspace.
void PathFacts::glob_class(const std::string& glob, bool dotglob, EffectRecord* rec) {
  std::string pattern = glob;
  for (std::size_t end = glob.size(); end != std::string::npos && end > 0;) {
    const std::size_t slash = glob.rfind('/', end - 1);
    if (slash == std::string::npos) break;
    const std::string name = glob.substr(slash + 1, end - slash - 1);
    bool climbs = true;  // a glob that cannot be compiled is read as climbing
    try {
      climbs = glob::match(name, "..");
    } catch (const std::exception&) {
    }
    if (name.size() > 1 && name[0] == '.' && glob::has_shell_glob(name) && climbs) {
      pattern = "/**" + glob.substr(end);
      rec->in_workspace = false;
      break;
    }
    end = slash;
  }
  const std::string_view by_glob =
      classes_->classify_glob(pattern, env_.state().home, dotglob, !rec->in_workspace);
  if (by_glob == "none") return;
  const std::vector<std::string> order = classes_->names();
  auto rank = [&](std::string_view name) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), name) - order.begin());
  };
  if (rank(by_glob) < rank(rec->path_class)) rec->path_class = std::string(by_glob);
}

// A path target: class from both readings, in the workspace only if both lie within the
// (resolved) workspace root.
void PathFacts::locate_target(const std::string& target, const std::string& cwd, bool dotglob,
                              EffectRecord* rec) {
  BindingContext& c = env_.state();
  const paths::Location loc = c.resolver.locate(target, cwd, c.home);
  const paths::Location& root = workspace_root();
  rec->in_workspace = paths::within(loc, root);
  rec->path_class = path_class(loc);
  if (classes_ && glob::has_shell_glob(loc.normalized) && rec->path_class != kOwnPathClass)
    glob_class(loc.normalized, dotglob, rec);
  if (!own_paths_.empty() && rec->path_class != kOwnPathClass &&
      (glob::has_shell_glob(loc.normalized) || glob::has_shell_glob(loc.resolved))) {
    if (const char* own = own_glob_class(loc)) rec->path_class = own;
  }
}

}  // namespace warden
