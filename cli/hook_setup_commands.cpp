// `warden hook install|doctor` (agents/hook_install.h, agents/hook_doctor.h).
#include "cli/agent_commands.h"
#include "cli/commands.h"

namespace warden::cli {

void register_hook_setup(CLI::App& hook, int* exit_code) {
  (void)hook;
  (void)exit_code;  // skeleton: filled in by the issue-8 work
}

}  // namespace warden::cli
