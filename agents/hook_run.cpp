// One hook run: parse, map, decide, answer (agents/hook_run.h).
#include "agents/hook_run.h"

#include <exception>

#include "agents/codex_call.h"
#include "agents/hook_proposal.h"

namespace warden::agents {

namespace {

// A decider owned by the caller, lent to one run.
class BorrowedDecider : public Decider {
 public:
  explicit BorrowedDecider(Decider* d) : d_(d) {}
  Verdict decide(std::string_view proposal) override { return d_->decide(proposal); }
  std::string describe() const override { return d_->describe(); }

 private:
  Decider* d_;
};

}  // namespace

HookAnswer run_hook(std::string_view input, Decider* decider, std::string_view decider_error,
                    const HookRunOptions& options) {
  const std::string why(decider_error);
  return run_hook(
      input,
      [&](std::string* error) -> std::unique_ptr<Decider> {
        *error = why;
        return decider ? std::unique_ptr<Decider>(new BorrowedDecider(decider)) : nullptr;
      },
      options);
}

HookAnswer run_hook(std::string_view input, const MakeDecider& make,
                    const HookRunOptions& options) {
  try {
    HookCall call;
    HookError error;
    if (!parse_hook_call(input, &call, &error)) return answer_failure(error.code, error.message);
    std::string proposal;
    const std::string_view label = options.agent_label.empty()
                                       ? agent_name(options.agent)
                                       : std::string_view(options.agent_label);
    if (!hook_proposal(call, label, &proposal, &error)) {
      return answer_failure(error.code, error.message);
    }
    // Codex's hook input hides exec_command's workdir, shell, tty…: the real call comes from
    // Codex's rollout (agents/codex_call.h); without it, deny.
    if (options.agent == HookAgent::Codex && tool_kind(call.tool_name) == ToolKind::Bash &&
        !complete_codex_bash_proposal(call, &proposal, &error)) {
      return answer_failure(error.code, error.message);
    }
    std::string decider_error;
    std::unique_ptr<Decider> decider = make(&decider_error);
    while (!decider_error.empty() && decider_error.back() == '\n') decider_error.pop_back();
    if (!decider) {
      return answer_failure(code::kDecider, decider_error.empty() ? "no decider" : decider_error);
    }
    Verdict verdict = decider->decide(proposal);
    return answer_verdict(options.agent, call, proposal, verdict, options.on_approval_required,
                          options.exec);
  } catch (const std::exception& e) {
    return answer_failure(code::kInternal, std::string("the hook failed: ") + e.what());
  } catch (...) {
    return answer_failure(code::kInternal, "the hook failed");
  }
}

}  // namespace warden::agents
