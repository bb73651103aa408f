// Verdicts and failures → the agent's PreToolUse answer (agents/hook_answer.h).
#include "agents/hook_answer.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "agents/hook_proposal.h"
#include "bindings/json.h"

namespace warden::agents {

namespace {

// "REASON (rule r; decision d)"
std::string described(const Verdict& v, std::string_view reason) {
  std::string out(reason.empty() ? "no reason given" : reason);
  std::string extra = deciding_rules_text(v);
  if (!v.decision_id.empty()) extra += (extra.empty() ? "" : "; ") + ("decision " + v.decision_id);
  return extra.empty() ? out : out + " (" + extra + ")";
}

// One line for stderr: control characters become spaces.
std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return out;
}

HookAnswer make(std::string_view decision, const std::string& reason,
                const std::string* updated_input_json = nullptr) {
  HookAnswer answer;
  answer.decision = decision;
  answer.reason = reason;
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("hookSpecificOutput");
  w.StartObject();
  w.Key("hookEventName");
  w.String("PreToolUse");
  w.Key("permissionDecision");
  w.String(decision.data() ? decision.data() : "",
           static_cast<rapidjson::SizeType>(decision.size()));
  w.Key("permissionDecisionReason");
  w.String(reason.data() ? reason.data() : "", static_cast<rapidjson::SizeType>(reason.size()));
  if (updated_input_json) {
    w.Key("updatedInput");
    w.RawValue(updated_input_json->data(), updated_input_json->size(), rapidjson::kObjectType);
  }
  w.EndObject();
  w.EndObject();
  answer.stdout_json.assign(buffer.GetString(), buffer.GetSize());
  if (decision == "deny") {
    answer.exit_code = 2;
    answer.stderr_text = one_line(reason);
  } else {
    answer.exit_code = 0;
  }
  return answer;
}

// Claude's Bash input with its command replaced by the `warden exec` line that runs the
// approved command (the rewritten one when a rule rewrote it) under the decision's envelope.
bool exec_input(const HookCall& call, const std::string& rewritten_input, const Verdict& v,
                const ExecWrap& exec, std::string* input_json, std::string* error) {
  rapidjson::Document input;
  if (rewritten_input.empty()) {
    input.CopyFrom(call.tool_input, input.GetAllocator());
  } else {
    // updated_tool_input()'s text: this process's own.
    if (json::parse_stored(rewritten_input, &input) || !input.IsObject()) {
      *error = "the rewritten input is not an object";
      return false;
    }
  }
  auto command = input.FindMember("command");
  if (command == input.MemberEnd() || !command->value.IsString()) {
    *error = "the Bash input has no command string";
    return false;
  }
  std::string line;
  if (!exec_command_line(
          exec, v.decision_id,
          std::string_view(command->value.GetString(), command->value.GetStringLength()), &line,
          error)) {
    return false;
  }
  command->value.SetString(line.data(), static_cast<rapidjson::SizeType>(line.size()),
                           input.GetAllocator());
  *input_json = json::to_text(input);
  return true;
}

}  // namespace

std::string token_text(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, 128)) {
    const bool safe = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_';
    out += safe ? c : '?';
  }
  return out;
}

HookAnswer answer_failure(std::string_view code, std::string_view message) {
  return make("deny", "Warden: denied, no decision could be made (" + std::string(code) + ": " +
                          std::string(message) + ")");
}

HookAnswer answer_verdict(HookAgent agent, const HookCall& call, std::string_view proposal_json,
                          const Verdict& v, OnApprovalRequired on_approval_required,
                          const ExecWrap& exec) {
  if (!v.ok) return answer_failure(v.error_code, v.error_message);
  if (v.outcome == Outcome::Reject) return make("deny", "Warden: " + described(v, v.reason));

  // A rewrite: Claude runs the approved form (updatedInput); Codex cannot.
  std::string updated;
  const bool rewritten = v.rewritten;
  if (rewritten && agent == HookAgent::Codex) {
    return make("deny",
                "Warden: a rule rewrote this action; Codex cannot run the rewritten form (" +
                    described(v, v.reason) + ")");
  }
  if (rewritten) {
    std::string error;
    if (!updated_tool_input(call, proposal_json, v.action_json, &updated, &error)) {
      return make("deny", "Warden: a rule rewrote this action and the rewrite cannot be applied: " +
                              error + " (" + described(v, v.reason) + ")");
    }
  }
  const std::string* updated_input = rewritten ? &updated : nullptr;
  // Plan mode is read-only by the user's choice, and Claude enforces it in its own permission
  // check, which an allow skips (measured: an allowed Write runs in plan mode). So an approve
  // there is no answer at all ({}): Claude's own check decides, as without Warden.
  if (v.outcome == Outcome::Approve && agent == HookAgent::ClaudeCode &&
      call.permission_mode == "plan") {
    if (rewritten) {
      return make("deny",
                  "Warden: a rule rewrote this action, and in plan mode Warden leaves "
                  "the call to Claude's own check, which cannot run the rewritten form (" +
                      described(v, v.reason) + ")");
    }
    HookAnswer none;
    none.decision = "none";
    none.reason = "Warden: approved; plan mode: Claude Code's own check decides (" +
                  described(v, v.reason) + ")";
    none.stdout_json = "{}";
    none.exit_code = 0;
    return none;
  }
  if (v.outcome == Outcome::Approve && exec.enabled && agent == HookAgent::ClaudeCode &&
      tool_kind(call.tool_name) == ToolKind::Bash) {
    std::string confined, error;
    if (!exec_input(call, rewritten ? updated : std::string(), v, exec, &confined, &error)) {
      return make("deny", "Warden: approved, but it cannot run confined (" +
                              std::string(kHookExec) + ": " + error + "), so Warden denies it (" +
                              described(v, v.reason) + ")");
    }
    return make("allow",
                "Warden: approved, runs confined to its decision: " + described(v, v.reason),
                &confined);
  }
  if (v.outcome == Outcome::Approve) {
    return make("allow", "Warden: approved: " + described(v, v.reason), updated_input);
  }
  // approval-required. Claude's prompt reaches a human only in the modes that prompt
  // ("default", "plan"; absent in older versions): "bypassPermissions" and "dontAsk" answer
  // without one, "auto" lets a classifier approve, "acceptEdits" approves edits itself, and a
  // sub-agent the model starts may run in any of them (Agent's `mode`). Anything else: deny.
  const bool prompts = call.permission_mode.empty() || call.permission_mode == "default" ||
                       call.permission_mode == "plan";
  const bool ask =
      agent == HookAgent::ClaudeCode && on_approval_required == OnApprovalRequired::Ask && prompts;
  // The daemon opened an approval a person can answer: how, in the agent's and user's words.
  // An approver looks the approval up by its id and answers what they see there.
  const bool approvable = !v.approval_id.empty() && !v.approval_token.empty() &&
                          (v.approval_status.empty() || v.approval_status == "pending");
  const std::string approve_with =
      approvable ? "approve with: warden approve " + token_text(v.approval_id) : "";
  if (ask) {
    return make("ask",
                "Warden: approval required: " + described(v, v.reason) +
                    (approvable ? ". Or " + approve_with + " (then retry)" : ""),
                updated_input);
  }
  if (approvable) {
    return make("deny",
                "Warden: approval required: " + described(v, v.reason) +
                    ". This action needs a human's approval; it is waiting for one (approval " +
                    token_text(v.approval_id) +
                    "). Tell the user what you wanted to run and why; they can " + approve_with +
                    " — then retry the same call, which will be approved.");
  }
  std::string why = agent == HookAgent::Codex ? "Codex cannot ask a human, so Warden denies it"
                    : call.permission_mode == "bypassPermissions"
                        ? "this session bypasses permission prompts, so Warden denies it"
                    : !prompts ? "this session's permission mode (" + call.permission_mode +
                                     ") may settle a prompt without a human, so Warden denies it"
                               : "the hook is configured to deny it (--on-approval-required deny)";
  return make("deny",
              "Warden: approval required: " + described(v, v.reason) +
                  ". This action needs a human's approval; " + why +
                  ". Do not retry it: tell the user what you wanted to run and why, so they "
                  "can run it themselves or change the policy.");
}

}  // namespace warden::agents
