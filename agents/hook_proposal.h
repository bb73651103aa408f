// The contract between a hook call and the rules: which Warden proposal (SPEC §3) a Claude Code
// or Codex tool call becomes, and, for a rewrite, how the approved action maps back into the
// tool's input (Claude's updatedInput). Called by `warden hook claude-code|codex`. Pure;
// thread-safe.
//
//   Bash                         shell run   {command, cwd, …the other input fields but description}
//   Write / Edit / MultiEdit /   file write  {cwd, action, path, content, …}
//     NotebookEdit
//   Read / Grep / Glob / LS      file read   {cwd, action, path (Grep, Glob, LS: input path or cwd), …}
//   WebFetch / WebSearch         http get    {method: GET, url | query, …}
//   mcp__SERVER__TOOL            tool call   {server, tool, args: tool_input}  (no cwd: the
//                                            server resolves its paths)
//   anything else                tool call   {cwd, tool: tool_name, args: tool_input}
// cwd is the hook's cwd (where the agent resolves relative paths). Input fields other than
// those the mapping reads are kept under their own names, except the names the engine and
// the rules derive facts from (cwd, path, url, command, content, …): only the mapping sets
// those. context: {agent, session, source: "hook", tool_use_id, tool}; explanation: Bash's
// description, else "".
#pragma once

#include <string>
#include <string_view>

#include "agents/hook_call.h"

namespace warden::agents {

enum class ToolKind {
  Bash,
  Write,
  Edit,
  MultiEdit,
  NotebookEdit,
  Read,
  Grep,
  Glob,
  LS,
  WebFetch,
  WebSearch,
  Mcp,    // mcp__SERVER__TOOL
  Other,  // any other tool name: a tool proposal without a server
};

ToolKind tool_kind(std::string_view tool_name);

// Splits "mcp__SERVER__TOOL" (SERVER up to the next "__", TOOL the rest, both non-empty).
bool split_mcp_tool(std::string_view tool_name, std::string* server, std::string* tool);

// The proposal JSON for a hook call; agent is context.agent ("claude-code", "codex" or the
// name given with --agent). False with *error (E_HOOK_INPUT_SHAPE) when the tool's
// input lacks a field its mapping needs or has it with the wrong type (e.g. a Bash command
// that is not a string).
bool hook_proposal(const HookCall& call, std::string_view agent, std::string* proposal_json,
                   HookError* error);

// Claude's updatedInput: a copy of the call's tool_input with every payload field the rules
// changed (the approved action_json against the proposal_json sent) put back under the
// tool's own name. False with *error when a changed field has no place in the tool's input
// (e.g. a Bash cwd, a MultiEdit joined content): such a rewrite cannot be applied.
bool updated_tool_input(const HookCall& call, std::string_view proposal_json,
                        std::string_view action_json, std::string* input_json, std::string* error);

}  // namespace warden::agents
