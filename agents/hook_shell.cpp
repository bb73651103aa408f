// Which shell Codex runs a command with, and whether it is bash (agents/hook_shell.h).
#include "agents/hook_shell.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

namespace warden::agents {

namespace {

namespace fs = std::filesystem;

// Codex's detect_shell_type: the name itself, else its file stem, repeatedly ("" when none).
std::string shell_kind(const std::string& shell) {
  std::string name = shell;
  for (int i = 0; i < 8 && !name.empty(); ++i) {
    for (const char* k : {"zsh", "sh", "cmd", "bash", "pwsh", "powershell"})
      if (name == k) return name == "pwsh" ? "powershell" : name;
    std::string stem = fs::path(name).stem().string();
    if (stem.empty() || stem == name) break;
    name = std::move(stem);
  }
  return "";
}

bool exists_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The first executable regular file `name` in the directories of `path_var`.
std::string on_path(const std::string& name, const std::string& path_var) {
  std::size_t start = 0;
  while (start <= path_var.size()) {
    std::size_t end = path_var.find(':', start);
    if (end == std::string::npos) end = path_var.size();
    const std::string dir = path_var.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/" + name;
      if (exists_file(candidate) && ::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

bool contains_banner(int fd, std::size_t size) {
  if (size == 0) return false;
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return false;
  static constexpr std::string_view kBanner = "GNU bash, version";
  const bool found = ::memmem(map, size, kBanner.data(), kBanner.size()) != nullptr;
  ::munmap(map, size);
  return found;
}

// The real paths of the system's bash: each line of /etc/shells naming a file "bash", and
// /bin/bash and /usr/bin/bash.
std::vector<std::string> system_bash() {
  std::vector<std::string> listed = {"/bin/bash", "/usr/bin/bash"};
  if (FILE* f = std::fopen("/etc/shells", "re")) {
    char line[PATH_MAX];
    while (std::fgets(line, sizeof line, f)) {
      std::string l = line;
      while (!l.empty() && (l.back() == '\n' || l.back() == '\r' || l.back() == ' ')) l.pop_back();
      if (!l.empty() && l[0] == '/' && fs::path(l).filename() == "bash") listed.push_back(l);
    }
    std::fclose(f);
  }
  std::vector<std::string> real;
  for (const std::string& p : listed) {
    char r[PATH_MAX];
    if (::realpath(p.c_str(), r)) real.emplace_back(r);
  }
  return real;
}

}  // namespace

ShellEnvironment ShellEnvironment::current() {
  ShellEnvironment env;
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  if (::getpwuid_r(::getuid(), &pw, buf.data(), buf.size(), &found) == 0 && found &&
      found->pw_shell) {
    env.login_shell = found->pw_shell;
  }
  if (const char* s = std::getenv("SHELL")) env.env_shell = s;
  if (const char* p = std::getenv("PATH")) env.path = p;
  char cwd[PATH_MAX];
  if (::getcwd(cwd, sizeof cwd)) env.process_cwd = cwd;
  return env;
}

bool is_bash_binary(const std::string& path, std::string* why) {
  char real[PATH_MAX];
  if (!::realpath(path.c_str(), real)) {
    *why = "'" + path + "' cannot be resolved: " + std::strerror(errno);
    return false;
  }
  const std::string resolved = real;
  const std::string shown =
      resolved == path ? "'" + path + "'" : "'" + path + "' (" + resolved + ")";
  if (fs::path(resolved).filename() != "bash") {
    *why = shown + " is not bash";
    return false;
  }
  const std::vector<std::string> system = system_bash();
  if (std::find(system.begin(), system.end(), resolved) == system.end()) {
    *why = shown + " is not the system's bash (/etc/shells, /bin/bash, /usr/bin/bash)";
    return false;
  }
  const int fd = ::open(real, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 0111) == 0) {
    if (fd >= 0) ::close(fd);
    *why = shown + " is not an executable file";
    return false;
  }
  const bool banner = contains_banner(fd, static_cast<std::size_t>(st.st_size));
  ::close(fd);
  if (!banner) {
    *why = shown + " is named bash but is another program (no bash version banner)";
    return false;
  }
  return true;
}

bool codex_shell_is_bash(const std::optional<std::string>& shell, const std::string& cwd,
                         const ShellEnvironment& env, std::string* why) {
  std::vector<std::string> candidates;
  auto add = [&](const std::string& p) {
    if (!p.empty() && exists_file(p)) candidates.push_back(p);
  };
  // Where Codex looks for bash when the given path is no file: the login shell if it is bash,
  // the first bash on PATH, /bin/bash.
  auto fallback = [&] {
    if (shell_kind(env.login_shell) == "bash") add(env.login_shell);
    add(on_path("bash", env.path));
    add("/bin/bash");
  };
  if (shell) {
    // Some Codex versions trim the name, others do not ("/bin/bash\n" is then no bash, and
    // /bin/sh runs): a name with a blank or control character has no single reading.
    const std::string& s = *shell;
    for (unsigned char c : s) {
      if (c <= 0x20 || c == 0x7f) {
        *why = "shell '" + s + "' holds a blank or control character";
        return false;
      }
    }
    if (shell_kind(s) != "bash") {
      *why = "shell '" + *shell + "' is not bash";
      return false;
    }
    if (s.front() == '/') {
      add(s);
    } else if (s.find('/') != std::string::npos) {
      *why = "shell '" + *shell + "' is a relative path; which file Codex runs is not known";
      return false;
    } else {
      // A bare name is a path relative to Codex's working directory.
      if (!cwd.empty()) add(cwd + "/" + s);
      if (!env.process_cwd.empty()) add(env.process_cwd + "/" + s);
    }
    fallback();
  } else {
    for (const std::string* named : {&env.login_shell, env.env_shell ? &*env.env_shell : nullptr}) {
      if (named == nullptr || named->empty()) continue;
      const std::string kind = shell_kind(*named);
      if (!kind.empty() && kind != "bash") {
        *why = "the user's shell '" + *named + "' is not bash (Codex runs commands with it)";
        return false;
      }
    }
    fallback();
  }
  if (candidates.empty()) {
    *why = "no bash found (Codex would fall back to /bin/sh)";
    return false;
  }
  for (const std::string& c : candidates) {
    std::string problem;
    if (!is_bash_binary(c, &problem)) {
      *why = "Codex may run this command with " + problem;
      return false;
    }
  }
  return true;
}

}  // namespace warden::agents
