#include "engine/file_modes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace warden {
namespace fs = std::filesystem;

namespace {

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Checks one stat result. `shown` is the path named in the problem; `above` says the entry is
// a directory above the checked path, where a sticky world-writable directory is acceptable.
void check_stat(const std::string& shown, const struct stat& st, bool above,
                const FileModePolicy& policy, std::vector<FileModeProblem>* out) {
  if (st.st_uid != 0 && st.st_uid != policy.trusted_uid) {
    out->push_back({shown, "owned by uid " + std::to_string(st.st_uid) +
                               "; only root or the daemon's uid " +
                               std::to_string(policy.trusted_uid) + " may own it"});
  }
  const bool sticky_dir = above && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX);
  const char* writable = nullptr;
  if ((st.st_mode & S_IWGRP) && (st.st_mode & S_IWOTH)) {
    writable = "group- and world-writable";
  } else if (st.st_mode & S_IWGRP) {
    writable = "group-writable";
  } else if (st.st_mode & S_IWOTH) {
    writable = "world-writable";
  }
  if (writable && !sticky_dir) {
    out->push_back({shown, "mode " + octal_mode(st.st_mode) + " is " + writable +
                               ": others could change it (chmod go-w)"});
  }
  if (!above && policy.private_file && (st.st_mode & (S_IRGRP | S_IROTH))) {
    out->push_back({shown, "mode " + octal_mode(st.st_mode) +
                               " lets others read it; it must be readable by its owner only "
                               "(chmod 600)"});
  }
}

// Every directory above `resolved` (an absolute path without symlinks), up to "/".
void check_above(const fs::path& resolved, const FileModePolicy& policy,
                 std::vector<FileModeProblem>* out) {
  fs::path dir = resolved.parent_path();
  for (;;) {
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0) {
      out->push_back({dir.string(), std::string("cannot stat: ") + std::strerror(errno)});
      return;
    }
    check_stat(dir.string(), st, true, policy, out);
    if (dir == dir.root_path() || !dir.has_parent_path() || dir.parent_path() == dir) return;
    dir = dir.parent_path();
  }
}

// Resolves `path` (realpath). Empty when it does not exist; *error set on other failures.
std::string resolve(const std::string& path, std::string* error) {
  std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
  if (!real) {
    if (errno != ENOENT && errno != ENOTDIR)
      *error = std::string("cannot resolve: ") + std::strerror(errno);
    return {};
  }
  return real.get();
}

bool has_extension(const std::string& name, const std::vector<std::string>& extensions) {
  for (const auto& ext : extensions) {
    if (name.size() > ext.size() && name.compare(name.size() - ext.size(), ext.size(), ext) == 0)
      return true;
  }
  return false;
}

}  // namespace

FileModePolicy::FileModePolicy() : trusted_uid(::geteuid()) {}

std::vector<FileModeProblem> check_file_modes(const std::string& path,
                                              const FileModePolicy& policy) {
  std::vector<FileModeProblem> out;
  std::string error;
  std::string resolved = resolve(path, &error);
  if (!error.empty()) out.push_back({path, error});
  if (resolved.empty()) return out;
  struct stat st {};
  if (::stat(resolved.c_str(), &st) != 0) {
    out.push_back({path, std::string("cannot stat: ") + std::strerror(errno)});
    return out;
  }
  const std::string shown = resolved == path ? path : path + " (" + resolved + ")";
  check_stat(shown, st, false, policy, &out);
  check_above(resolved, policy, &out);
  return out;
}

std::vector<FileModeProblem> check_tree_modes(const std::string& dir,
                                              const std::vector<std::string>& extensions,
                                              const FileModePolicy& policy) {
  std::vector<FileModeProblem> out = check_file_modes(dir, policy);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  FileModePolicy inside = policy;
  inside.private_file = false;
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string entry = it->path().string();
    std::error_code entry_ec;
    if (it->is_symlink(entry_ec)) {
      // A link leads elsewhere: check where it leads and every directory above that.
      if (has_extension(entry, extensions)) {
        auto more = check_file_modes(entry, inside);
        out.insert(out.end(), more.begin(), more.end());
      }
      continue;
    }
    const bool is_dir = it->is_directory(entry_ec);
    if (!is_dir && !has_extension(entry, extensions)) continue;
    struct stat st {};
    if (::lstat(entry.c_str(), &st) != 0) {
      out.push_back({entry, std::string("cannot stat: ") + std::strerror(errno)});
      continue;
    }
    check_stat(entry, st, false, inside, &out);
  }
  if (ec) out.push_back({dir, "cannot list: " + ec.message()});
  return out;
}

}  // namespace warden
