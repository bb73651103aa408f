// The confinement of an approved Bash call that the agent runs itself: the hook answers
// Claude Code with an updatedInput whose command runs the approved command through
// `warden exec`, under the envelope of its decision (docs/AGENTS.md, "Confinement").
// Used by agents/hook_answer.cpp. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnostic.h"

namespace warden::agents {

// Why an approved call could not be rewritten; the hook then denies (fail closed).
using ::warden::code::kHookExec;

// How `warden exec` is invoked for an approved Bash call.
struct ExecWrap {
  bool enabled = false;
  // The program and its flags, before what names the decision: {"/usr/bin/warden", "exec",
  // "--addr", "unix:/run/warden.sock", …}. Daemon: `--decision ID` follows and the exec runs
  // the command the daemon holds for it. In-process (in_process): `-- /bin/bash -c COMMAND`
  // follows and the exec decides that command again with the same rules.
  std::vector<std::string> argv;
  bool in_process = false;
  // Non-empty: the hook's own settings cannot be handed to `warden exec` (why); every
  // approved Bash call is then denied with E_HOOK_EXEC instead of running unconfined.
  std::string unusable;
};

// One word for a POSIX shell (bash, sh): 'text' with each ' as '\''. Any bytes but NUL
// survive exactly; the empty word is ''. Words of only [A-Za-z0-9_@%+:,./-] stay bare.
std::string shell_word(std::string_view text);

// The shell line an argv stands for, as the rules judge it: {bash, -c, LINE} (bash as
// "bash", "/bin/bash" or "/usr/bin/bash", nothing after LINE) is LINE; any other argv is
// its words through shell_word, joined by spaces (which bash splits back into that argv).
std::string exec_command_text(const std::vector<std::string>& argv);

// The command line the agent runs instead of `command`: wrap.argv, then `--decision ID` or
// `-- /bin/bash -c COMMAND`, each word through shell_word. False with *error when it
// cannot be built (a NUL byte in the command, no decision id for the daemon).
bool exec_command_line(const ExecWrap& wrap, std::string_view decision_id, std::string_view command,
                       std::string* line, std::string* error);

}  // namespace warden::agents
