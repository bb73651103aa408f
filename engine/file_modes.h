// Strict file modes (as sshd's StrictModes): the daemon refuses to trust a rule file, rules
// directory, token file or config file that anyone but root and the daemon's own user could
// change. Used by every loader (rule_files.h, the daemon's token and config loading) at start
// and at every reload. Stateless functions over stat(2): thread-safe.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace warden {

struct FileModePolicy {
  uid_t trusted_uid;          // besides root (uid 0); the daemon's effective uid by default
  bool private_file = false;  // also refuse group- or world-readable files (the token file)
  FileModePolicy();
};

// One problem: the path it concerns and what is wrong ("mode 0666 is world-writable ...").
struct FileModeProblem {
  std::string path;
  std::string message;
  std::string to_text() const { return path + ": " + message; }
};

// Checks a file, then every directory above it up to "/", on the resolved path (symlinks
// followed). The file and the directories must be owned by root or policy.trusted_uid and not
// be group- or world-writable; a directory above may be world-writable only with the sticky
// bit set (like /tmp: nobody else can rename or delete our entries). A missing path is not a
// problem here (the loader reports it). Returns every problem found (none: safe).
std::vector<FileModeProblem> check_file_modes(const std::string& path,
                                              const FileModePolicy& policy = {});

// For a directory that is read recursively (a rules directory): the directory itself, every
// directory below it and every file below it with one of the extensions must pass the file
// check (no sticky exemption: anyone who may create an entry may add a rule file), and the
// directories above it the check above. Returns every problem found.
std::vector<FileModeProblem> check_tree_modes(const std::string& dir,
                                              const std::vector<std::string>& extensions,
                                              const FileModePolicy& policy = {});

}  // namespace warden
