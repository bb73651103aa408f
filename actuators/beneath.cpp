#include "actuators/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

namespace warden::actuators {

namespace {

int open_with_openat2(int root_fd, const std::string& relative, int flags, mode_t mode) {
#ifdef SYS_openat2
  struct open_how how {};
  how.flags = static_cast<unsigned long long>(flags);
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd;
  do {
    fd = ::syscall(SYS_openat2, root_fd, relative.empty() ? "." : relative.c_str(), &how,
                   sizeof how);
  } while (fd < 0 && (errno == EINTR || errno == EAGAIN));
  return static_cast<int>(fd);
#else
  (void)root_fd, (void)relative, (void)flags, (void)mode;
  errno = ENOSYS;
  return -1;
#endif
}

// One component at a time: `..` is refused (EXDEV), every component is opened with
// O_NOFOLLOW, so a symlink fails (ELOOP, or ENOTDIR for a directory component).
int open_by_walk(int root_fd, std::string_view relative, int flags, mode_t mode) {
  std::vector<std::string> parts;
  std::size_t i = 0;
  while (i <= relative.size()) {
    std::size_t j = relative.find('/', i);
    if (j == std::string_view::npos) j = relative.size();
    std::string_view part = relative.substr(i, j - i);
    if (part == "..") {
      errno = EXDEV;
      return -1;
    }
    if (!part.empty() && part != ".") parts.emplace_back(part);
    i = j + 1;
  }
  if (parts.empty()) return ::openat(root_fd, ".", flags | O_CLOEXEC, mode);
  int dir = root_fd;
  Fd held;
  for (std::size_t k = 0; k + 1 < parts.size(); ++k) {
    int next = ::openat(dir, parts[k].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) {
      if (errno == ENOTDIR) {
        // A symlink opened with O_PATH|O_NOFOLLOW|O_DIRECTORY reads as "not a directory".
        struct stat st;
        if (::fstatat(dir, parts[k].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
          errno = ELOOP;
        else
          errno = ENOTDIR;
      }
      return -1;
    }
    held = Fd(next);
    dir = next;
  }
  int fd = ::openat(dir, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0 && errno == ENOTDIR) {
    struct stat st;
    if (::fstatat(dir, parts.back().c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
      errno = ELOOP;
    else
      errno = ENOTDIR;
  }
  if (fd >= 0 && (flags & O_PATH)) {
    // O_PATH|O_NOFOLLOW opens a symlink itself: refuse it like the other components.
    struct stat st;
    if (::fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
      ::close(fd);
      errno = ELOOP;
      return -1;
    }
  }
  return fd;
}

}  // namespace

int open_beneath(int root_fd, std::string_view relative, int flags, mode_t mode, Resolve how) {
  flags |= O_CLOEXEC;
  if (relative.find('\0') != std::string_view::npos) {
    errno = EINVAL;
    return -1;
  }
  if (!relative.empty() && relative.front() == '/') {
    errno = EXDEV;  // an absolute path is not beneath anything
    return -1;
  }
  if (how == Resolve::Auto) {
    int fd = open_with_openat2(root_fd, std::string(relative), flags, mode);
    if (fd >= 0 || errno != ENOSYS) return fd;
  }
  return open_by_walk(root_fd, relative, flags, mode);
}

bool relative_to_root(std::string_view path, std::string_view root, std::string_view root_real,
                      std::string* relative, std::string* error) {
  if (path.empty()) {
    *error = "empty path";
    return false;
  }
  if (path.front() != '/') {
    *relative = std::string(path);
    return true;
  }
  for (std::string_view base : {root, root_real}) {
    while (base.size() > 1 && base.back() == '/') base.remove_suffix(1);
    if (base.empty()) continue;
    if (base == "/") {
      std::size_t k = path.find_first_not_of('/');
      *relative = k == std::string_view::npos ? std::string() : std::string(path.substr(k));
      return true;
    }
    if (path.size() >= base.size() && path.substr(0, base.size()) == base &&
        (path.size() == base.size() || path[base.size()] == '/')) {
      std::string_view rest = path.substr(base.size());
      std::size_t k = rest.find_first_not_of('/');
      *relative = k == std::string_view::npos ? std::string() : std::string(rest.substr(k));
      return true;
    }
  }
  *error = "\"" + std::string(path) + "\" is outside the root " + std::string(root);
  return false;
}

std::string errno_text(int e) {
  const char* name = ::strerrorname_np(e);
  std::string out = name ? name : ("errno " + std::to_string(e));
  out += " (";
  out += ::strerror(e);
  out += ")";
  return out;
}

}  // namespace warden::actuators
