// The `warden exec` command line of an approved Bash call (agents/hook_exec.h).
#include "agents/hook_exec.h"

namespace warden::agents {

std::string shell_word(std::string_view text) {
  auto bare = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+:,./-").find(c) != std::string_view::npos;
  };
  bool plain = !text.empty();
  for (char c : text) plain = plain && bare(c);
  if (plain) return std::string(text);
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

std::string exec_command_text(const std::vector<std::string>& argv) {
  if (argv.size() == 3 &&
      (argv[0] == "bash" || argv[0] == "/bin/bash" || argv[0] == "/usr/bin/bash") &&
      argv[1] == "-c") {
    return argv[2];
  }
  std::string line;
  for (const std::string& w : argv) {
    if (!line.empty()) line += ' ';
    line += shell_word(w);
  }
  return line;
}

bool exec_command_line(const ExecWrap& wrap, std::string_view decision_id, std::string_view command,
                       std::string* line, std::string* error) {
  if (!wrap.unusable.empty()) {
    *error = wrap.unusable;
    return false;
  }
  if (wrap.argv.empty()) {
    *error = "no warden exec command is configured";
    return false;
  }
  std::vector<std::string> words = wrap.argv;
  if (wrap.in_process) {
    // A NUL byte cannot pass through an argument: the command would run cut short.
    if (command.find('\0') != std::string_view::npos) {
      *error = "the command holds a NUL byte, which no program argument can carry";
      return false;
    }
    words.insert(words.end(), {"--", "/bin/bash", "-c", std::string(command)});
  } else {
    if (decision_id.empty()) {
      *error = "the daemon's decision has no decision_id to run under";
      return false;
    }
    words.insert(words.end(), {"--decision", std::string(decision_id)});
  }
  line->clear();
  for (const std::string& w : words) {
    if (w.find('\0') != std::string::npos) {
      *error = "a warden exec argument holds a NUL byte";
      return false;
    }
    if (!line->empty()) *line += ' ';
    *line += shell_word(w);
  }
  return true;
}

}  // namespace warden::agents
