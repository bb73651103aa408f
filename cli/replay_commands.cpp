// `warden replay LOG… --rules DIR`: what a rule change would have done to recorded traffic.
#include "cli/commands.h"

namespace warden::cli {

void register_replay_command(CLI::App& /*app*/, int* /*exit_code*/) {}

}  // namespace warden::cli
