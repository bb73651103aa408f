// `warden hook claude-code|codex`: the PreToolUse hook (agents/hook_*.h). Reads the hook
// input on stdin, decides it (daemon or --rules in-process) and answers in the agent's
// format. Fails closed: every error, a crash and running past the budget are a deny, exit 2.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>

#include "agents/hook_answer.h"
#include "agents/hook_run.h"
#include "agents/hook_stdin.h"
#include "cli/agent_commands.h"
#include "cli/commands.h"
#include "cli/hook_guard.h"
#include "server/own_files.h"

namespace warden::cli {

namespace {

using agents::HookAgent;
using agents::HookAnswer;
using agents::OnApprovalRequired;

void print(const HookAnswer& a, int* exit_code) { *exit_code = give_hook_answer(a); }

struct Args {
  HookAgent agent = HookAgent::ClaudeCode;
  agents::DeciderConfig decider;
  std::string on_approval_required;  // empty: the agent's default
  std::string agent_label;
  std::string confine = "on";  // claude-code: approved Bash calls run through `warden exec`
};

// `warden exec` with the hook's own decider settings: the same daemon and credentials, or
// the same rules in-process. A literal --token cannot be handed on (the agent's command line
// is visible to the model and in its transcript): then every approved Bash call is denied.
agents::ExecWrap exec_wrap(const agents::DeciderConfig& c) {
  agents::ExecWrap wrap;
  wrap.enabled = true;
  const std::string self = server::own_binary_path();
  if (self.empty()) {
    wrap.unusable = "the path of the warden binary is unknown (/proc/self/exe)";
    return wrap;
  }
  auto& v = wrap.argv;
  v = {self, "exec"};
  if (!c.rules.empty()) {
    wrap.in_process = true;
    for (const auto& r : c.rules) v.insert(v.end(), {"--rules", r});
    if (!c.workspace.empty()) v.insert(v.end(), {"--workspace", c.workspace});
    if (!c.home.empty()) v.insert(v.end(), {"--home", c.home});
    if (!c.principal.empty()) v.insert(v.end(), {"--principal", c.principal});
    for (const auto& g : c.groups) v.insert(v.end(), {"--group", g});
    return wrap;
  }
  if (!c.token.empty()) {
    wrap.unusable =
        "the hook was given --token, which warden exec cannot be handed: use "
        "--token-file or $WARDEN_TOKEN";
    return wrap;
  }
  v.insert(v.end(), {"--addr", agents::daemon_address(c)});
  if (!c.token_file.empty()) v.insert(v.end(), {"--token-file", c.token_file});
  if (c.tls) v.push_back("--tls");
  if (!c.ca.empty()) v.insert(v.end(), {"--ca", c.ca});
  if (!c.pin.empty()) v.insert(v.end(), {"--pin", c.pin});
  if (!c.server_name.empty()) v.insert(v.end(), {"--tls-server-name", c.server_name});
  v.insert(v.end(), {"--timeout-ms", std::to_string(c.budget.count())});
  return wrap;
}

void run(const Args& a, int* exit_code) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  // --wait: the daemon may hold its reply that long for a person's answer; the run's budget
  // grows by it (the agent's own hook timeout must allow as much).
  const std::chrono::milliseconds wait = std::chrono::seconds(a.decider.wait_s);
  const auto deadline = start + a.decider.budget + wait;
  // The decider keeps to the budget itself; the guard catches what it cannot bound, 500 ms on.
  guard_hook_process(
      a.decider.budget + wait, std::chrono::milliseconds(500),
      agents::answer_failure(code::kInternal, "the hook crashed or was stopped"),
      agents::answer_failure(code::kTimeout, "the hook ran past its budget of " +
                                                 std::to_string((a.decider.budget + wait).count()) +
                                                 " ms"));
  try {
    agents::HookRunOptions options;
    options.agent = a.agent;
    options.agent_label = a.agent_label;
    if (a.agent == HookAgent::ClaudeCode && a.confine == "on") options.exec = exec_wrap(a.decider);
    const std::string mode = a.on_approval_required.empty()
                                 ? (a.agent == HookAgent::Codex ? "deny" : "ask")
                                 : a.on_approval_required;
    if (a.agent == HookAgent::Codex && mode == "ask") {
      print(agents::answer_failure(
                code::kUsage,
                "--on-approval-required ask is not possible for Codex: Codex runs a command its "
                "hook answers with ask. Use --on-approval-required deny (the default)"),
            exit_code);
      return;
    }
    options.on_approval_required =
        mode == "ask" ? OnApprovalRequired::Ask : OnApprovalRequired::Deny;

    std::string input;
    agents::HookError error;
    if (!agents::read_hook_input(STDIN_FILENO, agents::kMaxHookInputBytes, deadline, &input,
                                 &error)) {
      print(agents::answer_failure(error.code, error.message), exit_code);
      return;
    }
    agents::DeciderConfig config = a.decider;
    // --wait: the person at the agent's terminal must learn the approval's id while the hook waits.
    // The agent reads the hook's stdout and stderr only once it returns, so the line goes to
    // the controlling terminal, when there is one, and to stderr.
    config.on_pending = [](const std::string& id, const std::string&) {
      const std::string line = "Warden: waiting for approval " + agents::token_text(id) +
                               "; approve with: warden approve " + agents::token_text(id) + "\n";
      if (int tty = ::open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC); tty >= 0) {
        ssize_t ignored = ::write(tty, line.data(), line.size());
        (void)ignored;
        ::close(tty);
      }
      std::fputs(line.c_str(), stderr);
      std::fflush(stderr);
    };
    // Built once the input has been parsed: its budget is what is left by then.
    auto make = [&](std::string* error) {
      config.budget =
          std::max(std::chrono::milliseconds(1),
                   std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()) - wait);
      auto decider = agents::make_decider(config, error);
      if (!decider && error->empty()) *error = "the decider could not be built";
      return decider;
    };
    print(agents::run_hook(input, make, options), exit_code);
  } catch (const std::exception& e) {
    print(agents::answer_failure(code::kInternal, std::string("the hook failed: ") + e.what()),
          exit_code);
  } catch (...) {
    print(agents::answer_failure(code::kInternal, "the hook failed"), exit_code);
  }
}

void add_hook(CLI::App& hook, int* exit_code, HookAgent agent) {
  const bool codex = agent == HookAgent::Codex;
  const std::string who = codex ? "Codex" : "Claude Code";
  auto* cmd = hook.add_subcommand(
      std::string(agents::agent_name(agent)),
      who + "'s PreToolUse hook: the tool call on stdin is decided by Warden; allow, " +
          (codex ? "or " : "ask or ") + "deny on stdout, exit 2 on deny");
  cmd->footer(
      "Input: the hook JSON on stdin (at most 8 MiB; read until end of file or one whole "
      "object). The tool call becomes a proposal with context {agent, session, source: hook, "
      "tool_use_id, tool}: Bash → shell run {command, cwd}; Write, Edit, MultiEdit, "
      "NotebookEdit → file write {path, content}; Read, Grep, Glob, LS → file read {path}; "
      "WebFetch, WebSearch → http get; mcp__SERVER__TOOL → tool call {server, tool, args}; any "
      "other tool → tool call {tool, args}. It is decided by the daemon (--addr, $WARDEN_ADDR, "
      "else the daemon's Unix socket STATE_DIR/warden.sock when it exists, else "
      "127.0.0.1:9105; token from --token, --token-file, $WARDEN_TOKEN or $WARDEN_TOKEN_FILE) "
      "or in-process with --rules (the rules are compiled on every run: slower, no session "
      "memory).\n" +
      // Codex Bash: the real exec_command arguments come from Codex's rollout
      // (agents/codex_call.h).
      std::string(codex ? "Codex's Bash: its hook input carries the command only, so the call's "
                          "real arguments are read from Codex's rollout (transcript_path, by "
                          "tool_use_id): cwd = workdir; shell, login, tty, sandbox_permissions "
                          "go into the payload. Denied: the call not found or unreadable "
                          "(E_CODEX_TRANSCRIPT, E_CODEX_CALL_MISSING), a cmd differing from the "
                          "hook's command (E_CODEX_CALL_MISMATCH), unknown arguments "
                          "(E_CODEX_CALL_ARGUMENTS), a shell other than sh, bash, zsh, dash, ksh "
                          "(E_CODEX_SHELL), tty: true (E_CODEX_TTY: write_stdin input never "
                          "reaches the hook).\n"
                        : "") +
      "Output, one JSON line: {\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\","
      "\"permissionDecision\":\"allow|ask|deny\",\"permissionDecisionReason\":\"Warden: "
      "…\"}}. approve → allow, exit 0" +
      std::string(codex ? "; a rule's rewrite → deny (Codex cannot run a rewritten form)"
                        : ", with updatedInput carrying a rule's rewrite; an approved Bash call's "
                          "updatedInput runs it through `warden exec` under its decision's "
                          "envelope (--confine)") +
      ". reject → deny with the rule's reason. approval-required → " +
      (codex ? "deny with instructions (Codex runs what it is answered ask)"
             : "--on-approval-required: ask (exit 0; a deny in headless -p runs, and a deny "
               "when permission_mode is bypassPermissions) or deny with instructions") +
      ". Every deny is exit 2 with the reason on stderr too.\n"
      "Fails closed: the daemon unreachable (E_UNAVAILABLE), no answer within --timeout-ms "
      "(E_TIMEOUT), input malformed, oversized or not UTF-8 (E_HOOK_INPUT_*), not a "
      "PreToolUse call (E_HOOK_EVENT), a wrong token (E_AUTH_FAILED), rules that do not "
      "load (E_DECIDER), a crash (E_INTERNAL) and a bad flag: all deny, exit 2, naming the "
      "code.");
  auto a = std::make_shared<Args>();
  a->agent = agent;
  add_decider_flags(cmd, &a->decider);
  cmd->get_option("--timeout-ms")
      ->description(
          "Budget of the whole run, reading stdin to answering (default 5000; far "
          "under the agents' 60 s hook timeout). Past it: deny, E_TIMEOUT");
  cmd->add_option("--on-approval-required", a->on_approval_required,
                  codex ? "What approval-required becomes: deny (the only choice: Codex runs a "
                          "command answered ask, so ask is refused)"
                        : "What approval-required becomes: ask (default: Claude Code's own "
                          "prompt; a deny in headless -p runs and when permission_mode is "
                          "bypassPermissions) or deny (with instructions for the model)")
      ->check(CLI::IsMember({"ask", "deny"}));
  cmd->add_option(
         "--wait", a->decider.wait_s,
         "When the daemon finds an action needs a person's approval, it waits up to SECONDS "
         "(0..3600) for the answer: approved → allow, denied or expired → deny. Still "
         "pending: as approval-required, with the command that approves it. The run's "
         "budget grows by SECONDS: the agent's hook timeout must allow it (Claude Code "
         "and Codex: 60 s unless the hook entry sets \"timeout\")")
      ->check(CLI::Range(0, 3600));
  if (!codex) {
    cmd->add_option("--confine", a->confine,
                    "on (default): an approved Bash call is allowed with an updatedInput that runs "
                    "it through `warden exec` under its decision's envelope (same daemon and "
                    "token file, or the same --rules in-process); a call that cannot be so "
                    "wrapped is denied (E_HOOK_EXEC). off: allowed as it is, unconfined")
        ->check(CLI::IsMember({"on", "off"}));
  }
  cmd->add_option("--agent", a->agent_label,
                  std::string("Agent name in the proposal's context.agent (default ") +
                      std::string(agents::agent_name(agent)) + ")");
  cmd->callback([a, exit_code] { run(*a, exit_code); });
}

}  // namespace

void register_hook_run(CLI::App& hook, int* exit_code) {
  add_hook(hook, exit_code, HookAgent::ClaudeCode);
  add_hook(hook, exit_code, HookAgent::Codex);
}

}  // namespace warden::cli
