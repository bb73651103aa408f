// PathFacts: `path` facts, and the class of a path wherever the codec needs one: a location
// (normalized and resolved on the host) is in the workspace when both readings lie within
// the workspace root, and its class is the path classes table's, overridden by the daemon's
// own paths. Part of FactCodec (engine/fact_codec.h); one environment, one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bindings/paths.h"
#include "engine/decision.h"
#include "engine/fact_writer.h"
#include "engine/path_classes.h"
#include "engine/pattern_index.h"

namespace warden {

class ClipsEnv;

class PathFacts {
 public:
  // `classes` may be null (every class is none); it must outlive this.
  PathFacts(ClipsEnv& env, FactWriter& writer, const PathClasses* classes);

  // The daemon's own paths, located once: their class overrides the table's (kOwnPathClass,
  // kOwnDirClass in engine/path_classes.h).
  void set_own_paths(std::vector<paths::Location> own);

  // A new proposal: the workspace root is located again.
  void begin() { root_.reset(); }

  // The `path` fact of `raw` (read from `cwd`) under `key`, with its pattern hits.
  bool assert_path(const std::string& key, const std::string& raw, const std::string& cwd,
                   const PatternIndex& patterns);

  // An effect's path target located like a `path` fact: rec->in_workspace and
  // rec->path_class, a glob as sensitive as what it may name (`dotglob`: the shell line
  // lets `*` match names starting with ".").
  void locate_target(const std::string& target, const std::string& cwd, bool dotglob,
                     EffectRecord* rec);

 private:
  const paths::Location& workspace_root();
  const char* path_class(const paths::Location& loc);
  void glob_class(const std::string& glob, bool dotglob, EffectRecord* rec);
  const char* own_class(const paths::Location& loc) const;
  const char* own_glob_class(const paths::Location& loc) const;

  ClipsEnv& env_;
  FactWriter& w_;
  FactWriter::Template path_;
  struct {
    int proposal, key, raw, normalized, resolved, in_workspace, path_class;
  } path_slots_;
  const PathClasses* classes_;
  std::vector<paths::Location> own_paths_;  // the daemon's own files, normalized and resolved
  std::vector<std::string> own_patterns_;   // match() patterns: each own path and what lies below
  std::vector<std::string> own_dir_patterns_;  // match() patterns: each directory above one
  std::optional<paths::Location> root_;  // the workspace root, located for the current proposal
};

}  // namespace warden
