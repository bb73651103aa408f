// Which shell Codex runs an exec_command with, and whether it is bash: Warden's parser reads a
// command line as bash does, and another shell reads the same line otherwise (for bash,
// `echo $'\' ; touch x ; # \''` is one echo; dash, which /bin/sh is on Debian, has no $'…'
// and runs the touch; zsh runs code in glob qualifiers). Called by apply_codex_shell_call
// (agents/codex_call.h). Reads the file system and the passwd database; thread-safe.
#pragma once

#include <optional>
#include <string>

namespace warden::agents {

// What Codex's choice of shell depends on, read once per hook run (tests pass their own).
struct ShellEnvironment {
  std::string login_shell;               // the user's passwd shell; "" when there is none
  std::optional<std::string> env_shell;  // $SHELL
  std::string path;                      // $PATH
  std::string process_cwd;               // the hook's working directory
  static ShellEnvironment current();
};

// True when `path` is the system's bash: its real path (symlinks resolved) is named "bash", is
// the real path of a bash listed in /etc/shells or of /bin/bash or /usr/bin/bash (a file the
// agent could have written elsewhere is not trusted, whatever it holds), and is a regular
// executable file holding bash's version banner ("GNU bash, version"). Else false with *why
// saying what it is instead.
bool is_bash_binary(const std::string& path, std::string* why);

// True when every program Codex may run for this call's shell is bash. `shell` is the model's
// exec_command `shell` argument (absent: the user's default shell); `cwd` the session's working
// directory. Codex (codex-rs shell_detect) picks a shell by name: the file stem of `shell`
// ("bash", "/usr/bin/bash", "bash.exe" → bash; "sh", "/bin/sh" → sh, i.e. dash here; zsh; any
// other name → /bin/sh), then runs the given path if that file exists, else the login shell when
// it is of that kind, else the first of that name on PATH, else /bin/<name>. Refused (false,
// *why set): a shell whose name is not bash; a relative path with a directory (its base is not
// known); any of those candidates that exists and is not bash (is_bash_binary); none of them
// existing. Without `shell`: the login shell (and $SHELL, which other Codex versions read) must
// not name another known shell (sh, zsh, pwsh …), and whichever bash it or the fallback names
// must be bash.
bool codex_shell_is_bash(const std::optional<std::string>& shell, const std::string& cwd,
                         const ShellEnvironment& env, std::string* why);

}  // namespace warden::agents
