// CodexShellCall: what Codex's shell tool really runs. Codex's PreToolUse hook input carries
// only {"command": CMD}, but exec_command also takes workdir, shell, login, tty,
// sandbox_permissions…; the rollout file named by the hook's transcript_path holds the model's
// function_call with the full arguments under the same call_id (= the hook's tool_use_id).
// Called by run_hook (agents/hook_run.cpp) for agent codex + tool Bash. Reads one file; pure
// otherwise; thread-safe.
//
// Measured with Codex 0.169 (22 runs of 7 calls, 3 of them parallel in one turn; the e2e test
// tests/e2e/codex_hidden_args_e2e.sh keeps the traps below):
// - the function_call item is in the rollout before the hook runs (154 of 154 calls found on
//   the first read, by a native probe as fast as this hook), so a missing item is a deny, not
//   a retry;
// - a relative workdir is joined to the turn cwd, "~" is not expanded;
// - `shell` only picks among the system's shells by name: bash → /bin/bash, sh → /bin/sh
//   (dash on Debian), anything else (python3, node, env, an absent zsh) → /bin/sh; newer
//   versions run a given path that exists (agents/hook_shell.h reads both ways);
// - `shell_command` and `shell` calls are "unsupported call" (never run, no hook);
// - `justification` without sandbox_permissions "require_escalated" is refused by Codex (after
//   the hook), and require_escalated is refused under approval_policy "never";
// - `write_stdin` (input to a running exec session) never reaches the hook; it only reaches a
//   program started with tty: true (without it, stdin is /dev/null).
#pragma once

#include <rapidjson/document.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "agents/hook_call.h"

namespace warden::agents {

// Why the real call could not be established; every one is a deny.
using ::warden::code::kCodexCallArguments;  // unknown tool, bad JSON, bad or unknown field
using ::warden::code::kCodexCallMismatch;   // the rollout and the hook disagree
using ::warden::code::kCodexCallMissing;    // no function_call with this call_id
using ::warden::code::kCodexShell;          // the shell that would run is not bash
using ::warden::code::kCodexTranscript;     // no path, not a regular file, unreadable
using ::warden::code::kCodexTty;            // tty: true (input the hook never sees)

// Only the end of the rollout is read: the call being decided was written just before the hook ran.
inline constexpr std::size_t kCodexTranscriptTailBytes = std::size_t{4} << 20;

// The arguments of one exec_command call, as the model sent them.
struct CodexShellCall {
  std::string tool;  // the function name: "exec_command"
  std::string cmd;
  std::optional<std::string> workdir;
  std::optional<std::string> shell;
  std::optional<bool> login;
  std::optional<bool> tty;
  std::optional<std::string> sandbox_permissions;  // "use_default" | "require_escalated"
  std::optional<std::string> justification;
};

// Finds the response_item function_call whose call_id is `call_id` in the last `tail_bytes` of
// the rollout at `transcript_path` (each line parsed as JSON; unparseable lines are skipped)
// and parses its arguments. Refuses: an empty path or call_id, a file that is not a regular
// file or cannot be read (kCodexTranscript); no such call, or two with different contents
// (kCodexCallMissing / kCodexCallMismatch); a function name other than exec_command, arguments
// that are not a JSON object, a field of the wrong type or an unknown field (kCodexCallArguments).
bool read_codex_shell_call(const std::string& transcript_path, std::string_view call_id,
                           std::size_t tail_bytes, CodexShellCall* out, HookError* error);

// Completes the Bash proposal built from the hook input (agents/hook_proposal.h) with the real
// call: payload.cwd = workdir (joined to the hook cwd when relative), and payload.workdir,
// shell, login, tty, sandbox_permissions as given; the explanation becomes the justification
// when it was empty. Refuses: a cmd that differs from the hook's tool_input.command
// (kCodexCallMismatch), a relative workdir without a hook cwd (kCodexCallArguments), a shell
// (given, or the user's default when absent) that is not bash itself (kCodexShell:
// codex_shell_is_bash in agents/hook_shell.h; dash, zsh and a file named bash that is another
// program read a line otherwise than the parser), tty: true (kCodexTty: the
// model could then type anything into the program with write_stdin, which Codex never shows to
// the hook; `sqlite3 db` or `vi x` are everyday commands that run shell commands typed into
// them).
// sandbox_permissions "require_escalated" is not a deny: the rules judge every command as if it
// ran unsandboxed, so Codex's sandbox adds nothing they count on; it is in the payload for
// rules that want it.
bool apply_codex_shell_call(const HookCall& call, const CodexShellCall& real,
                            std::string* proposal_json, HookError* error);

// One rollout line as Codex writes it for exec_command {"cmd": cmd} with this call_id: for
// callers that stand in for Codex (`warden hook doctor`'s probe).
std::string codex_exec_command_line(std::string_view call_id, std::string_view cmd);

// Both steps for a hook call (its transcript_path and tool_use_id).
bool complete_codex_bash_proposal(const HookCall& call, std::string* proposal_json,
                                  HookError* error);

}  // namespace warden::agents
