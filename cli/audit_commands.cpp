// `warden audit verify|show|query|keygen`: the auditor's commands over the audit log.
#include "cli/commands.h"

namespace warden::cli {

void register_audit_commands(CLI::App& /*app*/, int* /*exit_code*/) {}

}  // namespace warden::cli
