#include "actuators/file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actuators/action.h"

namespace warden::actuators {
namespace {

std::string absolute(const std::string& path) {
  if (!path.empty() && path.front() == '/') return path;
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) return path;
  return path.empty() || path == "." ? std::string(buf) : std::string(buf) + "/" + path;
}

std::string real(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : absolute(path);
}

// EXDEV (a `..` out of the root), ELOOP (a symlink), EACCES/EPERM: confinement refused it.
Result open_error(int e, const std::string& path) {
  const bool denied = e == EXDEV || e == ELOOP || e == EACCES || e == EPERM;
  return failure(denied ? code::kDenied : code::kFailed, "\"" + path + "\": " + errno_text(e));
}

// A regular file with one link: a hard link inside the root to a file outside it would
// otherwise carry reads and writes out.
std::string not_plain_file(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return "cannot stat: " + errno_text(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (st.st_nlink > 1) return "has " + std::to_string(st.st_nlink) + " hard links";
  return {};
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

}  // namespace

std::string FileActuator::description() const {
  return "Reads, writes, appends to or deletes one file beneath the file root. Paths are "
         "relative to the root (or absolute inside it); symlinks and '..' out of the root are "
         "refused.";
}

std::string FileActuator::payload_schema_json() const {
  return R"({"type":"object","properties":{)"
         R"("action":{"type":"string","enum":["read","write","append","delete"]},)"
         R"("path":{"type":"string","description":"relative to cwd or the file root, or absolute inside it"},)"
         R"("cwd":{"type":"string","description":"optional directory a relative path is read against"},)"
         R"("content":{"type":"string","description":"for write and append"}},)"
         R"("required":["action","path"]})";
}

Result FileActuator::act(std::string_view action_json, const Context&) {
  ActionDoc doc(action_json);
  if (!doc.ok()) return failure(code::kBadAction, doc.error());
  std::string error;
  std::optional<std::string> verb = doc.text("action", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  std::string top = doc.action();
  // payload.action names the operation; a top-level action that names another one disagrees.
  auto is_verb = [](const std::string& v) {
    return v == "read" || v == "write" || v == "append" || v == "delete";
  };
  if (!verb) {
    if (!is_verb(top))
      return failure(code::kBadAction, "payload.action is missing (read, write, append or delete)");
    verb = top;
  }
  if (!is_verb(*verb))
    return failure(code::kBadAction,
                   "payload.action \"" + *verb + "\" is not read, write, append or delete");
  if (is_verb(top) && top != *verb)
    return failure(code::kBadAction,
                   "action \"" + top + "\" and payload.action \"" + *verb + "\" disagree");
  std::optional<std::string> path = doc.text("path", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  if (!path || path->empty()) return failure(code::kBadAction, "payload.path is missing");
  std::optional<std::string> content = doc.text("content", &error);
  if (!error.empty()) return failure(code::kBadAction, error);

  // A relative path is read against payload.cwd, as the rules read it (a relative cwd is
  // relative to the root). A leading '~' is the home directory to the rules: refused here.
  std::optional<std::string> cwd = doc.text("cwd", &error);
  if (!error.empty()) return failure(code::kBadAction, error);
  if (path->front() == '~' || (cwd && !cwd->empty() && cwd->front() == '~'))
    return failure(code::kBadAction, "a path starting with '~' (the home directory, not the root)");
  std::string effective = *path;
  if (effective.front() != '/' && cwd && !cwd->empty()) effective = *cwd + "/" + effective;
  std::string relative;
  if (!relative_to_root(effective, absolute(config_.root), real(config_.root), &relative, &error))
    return failure(code::kDenied, error);
  Fd root(::open(config_.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!root)
    return failure(code::kFailed,
                   "the file root " + config_.root + " cannot be opened: " + errno_text(errno));

  Result r;
  r.details["action"] = *verb;
  r.details["path"] = *path;
  if (*verb == "read") {
    Fd fd(open_beneath(root.get(), relative, O_RDONLY | O_NOCTTY | O_NONBLOCK, 0, how_));
    if (!fd) return open_error(errno, *path);
    if (auto why = not_plain_file(fd.get()); !why.empty())
      return failure(code::kDenied, "\"" + *path + "\": " + why);
    std::string data;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(fd.get(), buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0)
        return failure(code::kFailed, "\"" + *path + "\": read failed: " + errno_text(errno));
      if (n == 0) break;
      std::size_t room = config_.max_read_bytes - data.size();
      if (static_cast<std::size_t>(n) > room) {
        data.append(buf, room);
        r.truncated = true;
        break;
      }
      data.append(buf, static_cast<std::size_t>(n));
    }
    r.ok = true;
    r.output = std::move(data);
    return r;
  }
  if (*verb == "write" || *verb == "append") {
    if (!content) return failure(code::kBadAction, "payload.content is missing");
    if (content->size() > config_.max_write_bytes)
      return failure(code::kTooLarge, "payload.content is " + std::to_string(content->size()) +
                                          " bytes, over the limit of " +
                                          std::to_string(config_.max_write_bytes));
    // Opened without truncation first: the checks run before anything changes.
    const int flags =
        O_WRONLY | O_CREAT | O_NOCTTY | O_NONBLOCK | (*verb == "append" ? O_APPEND : 0);
    Fd fd(open_beneath(root.get(), relative, flags, 0644, how_));
    if (!fd) return open_error(errno, *path);
    if (auto why = not_plain_file(fd.get()); !why.empty())
      return failure(code::kDenied, "\"" + *path + "\": " + why);
    if (*verb == "write" && ::ftruncate(fd.get(), 0) != 0)
      return failure(code::kFailed, "\"" + *path + "\": truncate failed: " + errno_text(errno));
    if (!write_all(fd.get(), *content))
      return failure(code::kFailed, "\"" + *path + "\": write failed: " + errno_text(errno));
    r.ok = true;
    r.output = "wrote " + std::to_string(content->size()) + " bytes to " + *path;
    return r;
  }
  // delete: unlinkat on the parent opened the same way.
  std::string parent, leaf = relative;
  while (!leaf.empty() && leaf.back() == '/') leaf.pop_back();
  if (auto slash = leaf.rfind('/'); slash != std::string::npos) {
    parent = leaf.substr(0, slash);
    leaf = leaf.substr(slash + 1);
  }
  if (leaf.empty() || leaf == "." || leaf == "..")
    return failure(code::kBadAction, "\"" + *path + "\" does not name a file");
  Fd dir(open_beneath(root.get(), parent, O_PATH | O_DIRECTORY, 0, how_));
  if (!dir) return open_error(errno, *path);
  if (::unlinkat(dir.get(), leaf.c_str(), 0) != 0) return open_error(errno, *path);
  r.ok = true;
  r.output = "deleted " + *path;
  return r;
}

}  // namespace warden::actuators
