// PathClasses: which paths matter, as data. The shipped table (rules/paths.toml) names
// classes (credential, persistence, system, secrets-config …) with glob patterns and
// exceptions; the engine puts a path's class in the `class` slot of `path` and `effect`
// facts, so rules say "any write to a persistence path" once. Immutable once parsed;
// thread-safe to query. The format is documented in docs/RULES.md ("Path classes").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

struct TomlDocument;  // engine/toml_document.h (internal): a *.toml file parsed once

// Classes the engine gives the daemon's own paths (EngineOptions::own_paths) before the
// table is consulted: `warden-own` for an own file or directory, a path inside one and a
// glob that may name one; `warden-own-dir` for a directory that holds one (`/var/lib` of
// /var/lib/warden). No table may define them.
inline constexpr const char* kOwnPathClass = "warden-own";
inline constexpr const char* kOwnDirClass = "warden-own-dir";

class PathClasses {
 public:
  // Parses one classes file (TOML with [[class]] entries). Every problem is an
  // E_PATH_CLASSES diagnostic with the file and line; returns null if there was any.
  static std::shared_ptr<PathClasses> parse(const RuleSource& source, Diagnostics* diagnostics);
  // The same for a file already parsed as TOML (Policy::compile parses each file once).
  static std::shared_ptr<PathClasses> parse(const TomlDocument& document, Diagnostics* diagnostics);
  // Appends the classes of `other` (a later file), after this file's: first match wins.
  void merge(const PathClasses& other);

  // The name of the first class (in file order) one of whose patterns matches `normalized`
  // or `resolved` (when not empty) and none of whose exceptions does; "none" when no class
  // matches. `home` is what "~/" in a pattern means.
  std::string_view classify(std::string_view normalized, std::string_view resolved,
                            std::string_view home) const;
  // The same answer, always from the one set of every pattern: no prefilter, nothing
  // remembered. The reference classify's prefilter is checked against (tests, fuzzing).
  std::string_view classify_by_set(std::string_view normalized, std::string_view resolved,
                                   std::string_view home) const;

  // The class of a shell glob (`~/.ss*/id_*`, `.en?`, `*key.p?m`): the first class (in file
  // order) one of whose patterns matches a path the glob may name (glob::may_overlap;
  // exceptions are not subtracted). Strict (any common path) when a hidden name holds a
  // wildcard (`.en?`, `.*`, `.ss*`), with `dotglob`, or for a pattern of one place
  // (not `**/…`) when the glob is `outside` the workspace; else the glob must spell the
  // pattern's name (`*.c` is not `api_key*`). "none" when no class can match.
  std::string_view classify_glob(std::string_view glob, std::string_view home, bool dotglob,
                                 bool outside) const;

  std::vector<std::string> names() const;  // every class name, in file order

  struct Class;  // defined in path_classes.cpp
  PathClasses();
  ~PathClasses();

 private:
  std::string_view classify(std::string_view normalized, std::string_view resolved,
                            std::string_view home, bool reference) const;
  // classify_glob's answer as a class index (classes_.size() for "none"), not remembered.
  std::size_t glob_class_index(std::string_view glob, std::string_view home, bool dotglob,
                               bool outside) const;

  std::vector<std::shared_ptr<const Class>> classes_;
  struct Cache;  // the patterns compiled per home ("~/"), built on first use
  std::unique_ptr<Cache> cache_;
  std::uint64_t generation_ = 0;  // unique per table content (changes on merge)
};

}  // namespace warden
