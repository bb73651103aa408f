// Reading rule files from disk and compiling them: the one load path of every front end
// (`warden check`, `dry-run`, `test`, and the daemon at start and on every reload), and the
// one place the engine library touches the filesystem. Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/engine.h"
#include "engine/file_modes.h"
#include "engine/rule_source.h"

namespace warden {

struct RuleLoadOptions {
  // Refuse rule files and directories others could change (file_modes.h), each problem an
  // E_FILE_MODE error naming the file. The daemon sets it; the author's commands do not.
  bool check_modes = false;
  FileModePolicy modes;
};

struct LoadedPolicy {
  std::shared_ptr<const Policy> policy;  // null when any error was found
  Diagnostics diagnostics;               // reading and mode problems first, then compiling
  std::size_t files = 0;                 // rule files read
};

// paths (empty: the shipped rule pack) → read_rule_files → Policy::compile. Nothing is
// compiled when reading (or a mode check) failed.
LoadedPolicy load_policy(const std::vector<std::string>& paths,
                         const RuleLoadOptions& options = {});

// The rule paths actually used: paths, or the shipped pack when empty.
std::vector<std::string> effective_rule_paths(const std::vector<std::string>& paths);

// Each path is a .clp, .toml or .data.json file or a directory (its *.clp, *.toml and
// *.data.json files, recursively, sorted by their names within the directory); sources come in
// that order, which is the load order. *.toml files are the command-effects and path classes
// tables and overlays, *.data.toml and *.data.json files data (Policy::compile).
// A file reached twice (the same path again, or a symlink to a file already read) is read
// once, at its first place. Unreadable paths become E_READ diagnostics. Files over 16 MiB are
// refused.
RuleSources read_rule_files(const std::vector<std::string>& paths, Diagnostics* diagnostics);

// The files a rule set is made of in a directory: ".clp" rules, ".toml" tables and data,
// ".data.json" data (engine/data_files.h).
const std::vector<std::string>& rule_set_extensions();

// Files with the given extensions under the paths (directories recursively, each sorted by
// the names within it), in the order of `paths`.
std::vector<std::string> list_files(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& extensions);

// The rule pack shipped with Warden: $WARDEN_RULES when set; else, for an installed binary,
// the rules installed with it (BINDIR/../share/warden/rules, GNUInstallDirs' layout, when that
// directory exists); else the source tree's rules/ the binary was built from.
std::string shipped_rules_dir();

}  // namespace warden
