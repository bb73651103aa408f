// `warden hook claude-code|codex`: the PreToolUse hook (agents/hook_*.h).
#include "cli/agent_commands.h"
#include "cli/commands.h"

namespace warden::cli {

void register_hook_run(CLI::App& hook, int* exit_code) {
  (void)hook;
  (void)exit_code;  // skeleton: filled in by the issue-8 work
}

}  // namespace warden::cli
