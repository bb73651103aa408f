// The `warden hook` process's last word: a hook answers exactly once. Before its answer, a
// crash, SIGTERM/SIGINT/SIGHUP or running past its budget (SIGALRM) prints a prepared deny
// and exits 2; the answer itself disarms the budget, and whatever happens after it (a slow
// exit, a signal, a crash in a destructor) exits with the answer's code and prints nothing
// more. The handlers only call write(2) and _exit(2), and read text that is never freed.
#pragma once

#include <chrono>

#include "agents/hook_answer.h"

namespace warden::cli {

// Installs the handlers and arms the budget: SIGALRM after `budget + grace`. on_crash and
// on_overrun are copied before any handler is installed. Call once per process.
void guard_hook_process(std::chrono::milliseconds budget, std::chrono::milliseconds grace,
                        const agents::HookAnswer& on_crash, const agents::HookAnswer& on_overrun);

// Prints the answer (stdout, and stderr when it has text) as the hook's one answer: the
// budget is disarmed first. Returns the answer's exit code. Later calls print nothing.
int give_hook_answer(const agents::HookAnswer& answer);

}  // namespace warden::cli
