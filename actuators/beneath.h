// Confined opening of paths beneath a root directory: openat2(RESOLVE_BENEATH |
// RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or, on kernels without openat2, a walk of
// the path one component at a time with O_NOFOLLOW that refuses `..` and symlinks. Escapes
// fail at the system call (EXDEV, ELOOP), whatever the path looks like. Used by the file
// actuator and for the shell actuator's working directory. Thread-safe (no shared state).
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "bindings/spawn.h"

namespace warden::actuators {

// How open_beneath resolves a path: openat2 when the kernel has it (falling back to the walk
// on ENOSYS), or always the walk (tests exercise both).
enum class Resolve { Auto, Walk };

// A file descriptor closed on destruction.
using Fd = spawn::Fd;

// Opens `relative` (no leading '/') beneath the directory `root_fd` with `flags` (O_CLOEXEC is
// added) and `mode`. Returns the descriptor, or -1 with errno set: EXDEV for a `..` that
// leaves the root, ELOOP for a symlink anywhere on the path.
int open_beneath(int root_fd, std::string_view relative, int flags, mode_t mode = 0,
                 Resolve how = Resolve::Auto);

// `path` (absolute, or relative to the root) as a path relative to the root whose absolute
// names are `root` (as configured, made absolute) and `root_real` (its realpath). Returns
// false with *error set when an absolute path lies outside both. `..` components are kept:
// open_beneath refuses them at the system call.
bool relative_to_root(std::string_view path, std::string_view root, std::string_view root_real,
                      std::string* relative, std::string* error);

// The error text of errno `e`: "EXDEV (Invalid cross-device link)".
std::string errno_text(int e);

}  // namespace warden::actuators
