// Reading rule files from disk into RuleSources: the one place the engine library touches
// the filesystem, used by front ends (CLI, daemon) before Policy::compile. Thread-safe.
#pragma once

#include <string>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

// Each path is a .clp file or a directory (its *.clp files, recursively, sorted by their
// names within the directory); sources come in that order, which is the load order.
// Unreadable paths become E_READ diagnostics. Files over 16 MiB are refused.
RuleSources read_rule_files(const std::vector<std::string>& paths, Diagnostics* diagnostics);

// Files with the given extensions under the paths (directories recursively, each sorted by
// the names within it), in the order of `paths`.
std::vector<std::string> list_files(const std::vector<std::string>& paths,
                                    const std::vector<std::string>& extensions);

// The rule pack shipped with Warden (the source tree's rules/ at build time, or
// $WARDEN_RULES when set).
std::string shipped_rules_dir();

}  // namespace warden
