// Registration of `warden` subcommands. Each family lives in its own file and only wires
// options to the engine or the server; main.cpp calls every register function once.
#pragma once

#include <CLI/CLI.hpp>

#include <string_view>

namespace warden::cli {

// Exit codes (SPEC §1).
inline constexpr int kExitOk = 0;
inline constexpr int kExitRejected = 1;  // also: test failure
inline constexpr int kExitUsage = 2;     // usage or input error
inline constexpr int kExitApproval = 3;  // approval-required (single proposal)
inline constexpr int kExitInternal = 4;

// Prints a loud warning to stderr when default_outcome is "approve" (the policy fails open
// for every proposal no rule decides); true when it did. check, dry-run, test and serve call it.
bool warn_if_default_approve(std::string_view default_outcome);

// Each register function adds its subcommands; the callback stores the exit code in *exit_code.
void register_rule_commands(CLI::App& app,
                            int* exit_code);  // check, dry-run, test (rule_commands.cpp)
void register_server_commands(
    CLI::App& app, int* exit_code);  // serve, decide, status, token (server_commands.cpp)
void register_agent_commands(CLI::App& app,
                             int* exit_code);  // hook, mcp-gateway (agent_commands.cpp)
void register_audit_commands(
    CLI::App& app, int* exit_code);  // audit verify|show|query|keygen (audit_commands.cpp)
void register_replay_command(CLI::App& app, int* exit_code);   // replay (replay_commands.cpp)
void register_submit_commands(CLI::App& app, int* exit_code);  // submit, chat (submit_commands.cpp)
void register_approval_commands(CLI::App& app,
                                int* exit_code);  // pending, approve, deny (approval_commands.cpp)
void register_exec_commands(CLI::App& app, int* exit_code);  // exec (exec_commands.cpp)
// completion, man (completion_commands.cpp): they read every command registered in `app`.
void register_completion_commands(CLI::App& app, int* exit_code);

}  // namespace warden::cli
