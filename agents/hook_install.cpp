// `warden hook install`: settings paths, shell words, the hook command, and the atomic write.
#include "agents/hook_install.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/claude_settings.h"
#include "agents/codex_config.h"

namespace warden::agents {

namespace fs = std::filesystem;

std::optional<HookAgent> parse_agent(std::string_view name) {
  if (name == "claude-code") return HookAgent::ClaudeCode;
  if (name == "codex") return HookAgent::Codex;
  return std::nullopt;
}

std::string settings_path(HookAgent agent, const std::string& project_dir) {
  const bool claude = agent == HookAgent::ClaudeCode;
  if (!project_dir.empty()) {
    fs::path dir = fs::absolute(project_dir).lexically_normal();
    return (dir / (claude ? ".claude/settings.json" : ".codex/config.toml")).string();
  }
  if (!claude) {
    const char* codex_home = std::getenv("CODEX_HOME");
    if (codex_home && *codex_home) return (fs::path(codex_home) / "config.toml").string();
  }
  const char* home = std::getenv("HOME");
  if (!home || !*home) return "";
  return (fs::path(home) / (claude ? ".claude/settings.json" : ".codex/config.toml")).string();
}

std::string shell_quote(std::string_view word) {
  bool safe = !word.empty();
  for (char c : word) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr("@%_+=:,./-", c))) {
      safe = false;
      break;
    }
  }
  if (safe) return std::string(word);
  std::string out = "'";
  for (char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::optional<std::vector<std::string>> split_shell_words(std::string_view line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else if (c == '\'') {
      std::size_t end = line.find('\'', i + 1);
      if (end == std::string_view::npos) return std::nullopt;
      word.append(line.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      ++i;
      for (; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '$' || line[i] == '`') return std::nullopt;
        if (line[i] == '\\' && i + 1 < line.size() && std::strchr("\"\\$`", line[i + 1])) ++i;
        word += line[i];
      }
      if (i >= line.size()) return std::nullopt;
      in_word = true;
    } else if (c == '\\') {
      if (i + 1 >= line.size()) return std::nullopt;
      word += line[++i];
      in_word = true;
    } else if (std::strchr("$`|;&<>(){}*?[]#~", c) && !(c == '#' && in_word) &&
               !(c == '~' && in_word)) {
      return std::nullopt;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool is_warden_hook_command(std::string_view command, HookAgent agent) {
  auto words = split_shell_words(command);
  if (!words || words->size() < 3) return false;
  return fs::path((*words)[0]).filename() == "warden" && (*words)[1] == "hook" &&
         (*words)[2] == agent_name(agent);
}

std::string hook_command(const std::string& warden_path, HookAgent agent, const HookFlags& f) {
  std::vector<std::string> words{warden_path, "hook", std::string(agent_name(agent))};
  auto add = [&](const char* flag, const std::string& value) {
    if (value.empty()) return;
    words.push_back(flag);
    words.push_back(value);
  };
  add("--addr", f.addr);
  add("--unix", f.unix_socket);
  add("--token-file", f.token_file);
  for (const auto& r : f.rules) add("--rules", r);
  add("--workspace", f.workspace);
  add("--on-approval-required", f.on_approval_required);
  add("--timeout-ms", f.timeout_ms);
  add("--wait", f.wait_s);
  std::string out;
  for (const auto& w : words) {
    if (!out.empty()) out += ' ';
    out += shell_quote(w);
  }
  return out;
}

std::string_view change_name(InstallResult::Change change) {
  switch (change) {
    case InstallResult::Change::Added:
      return "added";
    case InstallResult::Change::Updated:
      return "updated";
    case InstallResult::Change::Unchanged:
      return "unchanged";
  }
  return "unchanged";
}

bool write_file_atomically(const std::string& link_or_path, const std::string& text,
                           std::string* error) {
  std::error_code ec;
  // A settings file kept as a symlink (dotfile managers) is written where it points.
  std::string path = link_or_path;
  if (fs::is_symlink(link_or_path, ec)) {
    fs::path resolved = fs::weakly_canonical(link_or_path, ec);
    if (!ec) path = resolved.string();
  }
  fs::path target(path);
  fs::create_directories(target.parent_path(), ec);
  if (ec) {
    *error = "cannot create " + target.parent_path().string() + ": " + ec.message();
    return false;
  }
  mode_t mode = 0644;
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode &= ~mask;
  }
  std::string tmp = path + ".warden-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) {
    *error = "cannot create a temporary file next to " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = ::fchmod(fd, mode) == 0;
  for (std::size_t at = 0; ok && at < text.size();) {
    ssize_t n = ::write(fd, text.data() + at, text.size() - at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      ok = false;
    else
      at += static_cast<std::size_t>(n);
  }
  ok = ok && ::fsync(fd) == 0;
  int saved = errno;
  ok = (::close(fd) == 0) && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    saved = errno;
    ok = false;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    *error = "cannot write " + path + ": " + std::strerror(saved);
  }
  return ok;
}

int hook_timeout_seconds(long budget_ms, long wait_s) {
  const long needed_ms = budget_ms + wait_s * 1000 + kHookMarginMs;
  const long seconds = (needed_ms + 999) / 1000;
  return static_cast<int>(std::max<long>(kHookTimeoutSeconds, seconds));
}

InstallResult install_hook(HookAgent agent, const std::string& settings_file,
                           const std::string& command, int timeout_seconds) {
  InstallResult result;
  result.file = settings_file;
  result.command = command;
  std::string text;
  std::error_code ec;
  if (fs::exists(settings_file, ec)) {
    std::ifstream in(settings_file, std::ios::binary);
    std::ostringstream buf;
    buf << in.rdbuf();
    if (!in) {
      result.error_code = code::kIo;
      result.error = "cannot read " + settings_file;
      return result;
    }
    text = buf.str();
  }
  SettingsEdit edit = agent == HookAgent::ClaudeCode
                          ? add_claude_hook(text, command, timeout_seconds)
                          : add_codex_hook(text, command, timeout_seconds);
  if (!edit.ok) {
    result.error_code = edit.error_code;
    result.error = settings_file + ": " + edit.error + " (file left unchanged)";
    return result;
  }
  if (!edit.changed) {
    result.ok = true;
    result.change = InstallResult::Change::Unchanged;
    return result;
  }
  if (!write_file_atomically(settings_file, edit.text, &result.error)) {
    result.error_code = code::kIo;
    return result;
  }
  result.ok = true;
  result.change = edit.added ? InstallResult::Change::Added : InstallResult::Change::Updated;
  return result;
}

}  // namespace warden::agents
