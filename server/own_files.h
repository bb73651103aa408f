// The daemon's own files — rules, token file, config file, state directory and files, its
// binary — and the startup check that the agent's workspace holds none of them: an agent
// approved to act "in the workspace" must not be able to read the tokens, rewrite the rules
// or replace the binary. Called by Daemon::start; pure functions over the filesystem.
#pragma once

#include <string>
#include <vector>

#include "engine/diagnostic.h"
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

// Every path of the daemon's own (own_files, the audit directory and the Unix socket), as
// the engine is given them (EngineOptions::own_paths): decisions reject effects on them.
std::vector<std::string> own_paths(const Config& config);

// One message per own file the workspace equals, contains, or (for a tree) lies inside.
// Paths are compared both as written (normalized) and resolved (realpath of the existing
// part), so a symlink cannot hide a conflict.
std::vector<std::string> workspace_conflicts(const std::string& workspace,
                                             const std::vector<OwnFile>& files);

// The daemon's state, checked like its config and token files at start and at every reload:
// the state directory, the approvals database (SQLite) with its -wal, -shm and -journal
// files, the audit directory and log, the audit keys, the TLS key and certificate. Each
// existing path must be owned by root or the daemon's user and not be group- or
// world-writable, nor may any directory above it (a sticky one excepted); the private keys
// (TLS key, audit signing and mask keys) must not be readable by others either. Missing paths
// are not problems (the daemon creates them). One E_FILE_MODE error per problem, `file` the
// path concerned. The audit keys are left out when `audit_keys` is false (at start the
// audit step checks them, naming the config key).
Diagnostics own_state_problems(const Config& config, bool audit_keys = true);

// The running executable, resolved (/proc/self/exe); empty when unknown.
std::string own_binary_path();

}  // namespace warden::server
