// Placeholder until the daemon lands: serve, decide, status and token.
#include "cli/commands.h"

namespace warden::cli {
void register_server_commands(CLI::App&, int*) {}
}  // namespace warden::cli
