// The daemon's own files — rules, token file, config file, state directory and files, its
// binary — and the startup check that the agent's workspace holds none of them: an agent
// approved to act "in the workspace" must not be able to read the tokens, rewrite the rules
// or replace the binary. Called by Daemon::start; pure functions over the filesystem.
#pragma once

#include <string>
#include <vector>

#include "server/config.h"

namespace warden::server {

struct OwnFile {
  std::string what;  // "rules directory", "token file", ...
  std::string path;  // as configured
  // Read recursively (a rules directory): a workspace inside it is a conflict as well.
  bool tree = false;
};

// Every file and directory the daemon trusts, from a config whose state paths are resolved.
std::vector<OwnFile> own_files(const Config& config);

// One message per own file the workspace equals, contains, or (for a tree) lies inside.
// Paths are compared both as written (normalized) and resolved (realpath of the existing
// part), so a symlink cannot hide a conflict.
std::vector<std::string> workspace_conflicts(const std::string& workspace,
                                             const std::vector<OwnFile>& files);

// The running executable, resolved (/proc/self/exe); empty when unknown.
std::string own_binary_path();

}  // namespace warden::server
