// Reading the hook's stdin with a size cap and a deadline, so a hook never waits past its
// budget for an agent that does not close the pipe. Called by `warden hook claude-code|codex`.
// Blocking; one caller at a time per descriptor.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "agents/hook_call.h"

namespace warden::agents {

using ::warden::code::kHookInputRead;     // read(2) failed
using ::warden::code::kHookInputTimeout;  // no complete input in time

// Reads fd until end of file, or until what was read is one complete JSON object (the agent
// may keep the pipe open). False with *error: more than max_bytes
// (E_HOOK_INPUT_TOO_LARGE), a read error, or the deadline passing first.
bool read_hook_input(int fd, std::size_t max_bytes, std::chrono::steady_clock::time_point deadline,
                     std::string* text, HookError* error);

}  // namespace warden::agents
