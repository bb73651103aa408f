// Test support: the descriptors this process holds, and a cap that leaves it only a few more
// (so that the next pipe or open fails with EMFILE), for tests that a failed start of a child
// process closes every descriptor it made.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <sys/resource.h>

#include <set>

namespace warden::testing {

// The descriptor numbers open now (the listing's own descriptor left out).
inline std::set<int> open_descriptors() {
  std::set<int> out;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return out;
  const int own = ::dirfd(dir);
  while (dirent* e = ::readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const int fd = ::atoi(e->d_name);
    if (fd != own) out.insert(fd);
  }
  ::closedir(dir);
  return out;
}

// While it lives, RLIMIT_NOFILE's soft limit leaves exactly `free` descriptor numbers unused:
// the descriptor after them fails with EMFILE.
class DescriptorCap {
 public:
  explicit DescriptorCap(int free) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    const std::set<int> open = open_descriptors();
    rlim_t limit = 0;
    for (int left = free; left > 0; ++limit)
      if (!open.count(static_cast<int>(limit))) --left;
    struct rlimit capped = saved_;
    capped.rlim_cur = limit;
    ::setrlimit(RLIMIT_NOFILE, &capped);
  }
  ~DescriptorCap() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  DescriptorCap(const DescriptorCap&) = delete;
  DescriptorCap& operator=(const DescriptorCap&) = delete;

 private:
  struct rlimit saved_ {};
};

}  // namespace warden::testing
