// The daemon's rule loading: the engine's one load path (engine/rule_files.h: load_policy)
// with strict file modes on, used at startup and on every reload; and the cheap fingerprint
// (paths, sizes, times, modes, owners) the reloader polls to notice edited rule files.
// Stateless functions: thread-safe.
#pragma once

#include <string>
#include <vector>

#include "engine/rule_files.h"

namespace warden::server {

// load_policy(paths) with check_modes on: a rules file or directory others could change is
// an E_FILE_MODE error, and nothing is loaded.
LoadedPolicy load_rules(const std::vector<std::string>& paths);

// Changes whenever a .clp file under the paths (or one of extra_files) is added, removed,
// resized, touched, chmod-ed or chown-ed.
std::string files_fingerprint(const std::vector<std::string>& paths,
                              const std::vector<std::string>& extra_files);

}  // namespace warden::server
