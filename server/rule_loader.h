// Turning configured rule paths into a compiled Policy, the same way at startup and on every
// reload: read_rule_files → Policy::compile, with every diagnostic kept. Also the cheap
// fingerprint (paths, sizes, mtimes) the reloader polls to notice edited rule files.
// Stateless functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "engine/engine.h"

namespace warden::server {

// Empty paths mean the shipped rule pack. Diagnostics from reading come first.
Policy::Loaded load_rules(const std::vector<std::string>& paths);

// The rule paths actually used (paths, or the shipped pack when empty).
std::vector<std::string> effective_rule_paths(const std::vector<std::string>& paths);

// Changes whenever a .clp file under the paths (or one of extra_files) is added, removed,
// resized or touched.
std::string files_fingerprint(const std::vector<std::string>& paths,
                              const std::vector<std::string>& extra_files);

}  // namespace warden::server
