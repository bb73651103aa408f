#include "cli/submit_events.h"

#include "bindings/json.h"
#include "cli/approval_text.h"
#include "cli/commands.h"
#include "cli/terminal_text.h"
#include "protocol/reply.h"

namespace warden::cli {

namespace {

using protocol::string_member;  // "" when absent or not a string

const rapidjson::Value* event_object(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

// The first line of `text`, at most `max` bytes (cut on a UTF-8 boundary), made printable.
std::string short_text(std::string_view text, std::size_t max = 80) {
  std::size_t nl = text.find('\n');
  bool cut = nl != std::string_view::npos;
  text = text.substr(0, nl);
  if (text.size() > max) {
    std::size_t at = max;
    while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
    text = text.substr(0, at);
    cut = true;
  }
  return printable(text) + (cut ? "…" : "");
}

// Each line of `text` with `indent` before it, made printable.
std::string block(std::string_view text, std::string_view indent, std::size_t max_lines) {
  std::string out;
  std::size_t lines = 0;
  while (!text.empty()) {
    std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (lines == max_lines) {
      std::size_t rest = 1;
      for (char ch : text) rest += ch == '\n';
      if (text.back() == '\n') --rest;
      out += std::string(indent) + "… " + std::to_string(rest) + " more line" +
             (rest == 1 ? "" : "s") + "\n";
      break;
    }
    out += std::string(indent) + printable(line) + "\n";
    ++lines;
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// "  [rule-a, rule-b]" and, with a reason, ": reason".
std::string rules_part(const rapidjson::Value& event, bool with_reason) {
  std::string names;
  auto it = event.FindMember("rules");
  if (it != event.MemberEnd() && it->value.IsArray()) {
    for (const auto& r : it->value.GetArray()) {
      std::string name =
          r.IsString() ? std::string(r.GetString(), r.GetStringLength()) : string_member(r, "rule");
      if (name.empty()) continue;
      names += (names.empty() ? "" : ", ") + printable(name);
    }
  }
  std::string out = "  [" + (names.empty() ? std::string("default outcome") : names) + "]";
  std::string reason = string_member(event, "reason");
  if (with_reason && !reason.empty()) out += ": " + short_text(reason, 200);
  return out;
}

std::string decision_line(const rapidjson::Value& e) {
  const std::string outcome = string_member(e, "outcome");
  const std::string stage = string_member(e, "stage") == "last-mile" ? " (last mile)" : "";
  std::string what;
  if (const rapidjson::Value* action = event_object(e, "action"))
    what = " " + action_summary(*action);
  if (outcome == "approve") return "✓ approve" + stage + what + rules_part(e, false) + "\n";
  if (outcome == "approval-required") {
    return "⏸ approval required" + stage + what + rules_part(e, true) + "\n";
  }
  return "✗ " + (outcome.empty() ? std::string("reject") : printable(outcome)) + stage + what +
         rules_part(e, true) + "\n";
}

}  // namespace

std::string action_summary(const rapidjson::Value& action) {
  const std::string target = string_member(action, "target");
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* p = event_object(action, "payload");
  const rapidjson::Value& payload = p ? *p : kEmpty;
  std::string detail;
  if (target == "shell") {
    detail = string_member(payload, "command");
  } else if (target == "file") {
    detail = string_member(payload, "action") + " " + string_member(payload, "path");
  } else if (target == "http") {
    std::string method = string_member(payload, "method");
    detail = (method.empty() ? std::string("GET") : method) + " " + string_member(payload, "url");
  } else if (target == "reply") {
    detail = string_member(payload, "text");
  } else if (target == "system") {
    detail = string_member(payload, "message");
  } else if (target == "tool") {
    detail = string_member(payload, "tool");
  } else {
    detail = string_member(action, "action");
  }
  std::string out = target.empty() ? std::string("(no target)") : printable(target);
  if (!detail.empty()) out += ": " + short_text(detail);
  return out;
}

std::string render_event(std::string_view event_json, std::size_t max_output_lines) {
  // The event as the client wrote it back from the daemon's reply: this process's own text.
  rapidjson::Document e;
  if (warden::json::parse_stored(event_json, &e) || !e.IsObject())
    return "(an event that is not a JSON object)\n";
  const std::string kind = string_member(e, "event");
  if (kind == "decision") return decision_line(e);
  if (kind == "reply") return block(string_member(e, "text"), "» ", SIZE_MAX);
  if (kind == "approval-required") {
    std::string id = string_member(e, "decision_id");
    std::string out = "  ⏸ suspended until an approver answers" +
                      (id.empty() ? std::string() : " (decision " + printable(id) + ")") + "\n";
    if (const rapidjson::Value* approval = event_object(e, "approval")) {
      const std::string with = approve_with_line(*approval);
      if (!with.empty()) out += "    " + with + "\n";
    }
    return out;
  }
  if (kind == "approval-result") {
    const std::string status = string_member(e, "status"), by = string_member(e, "by"),
                      note = string_member(e, "note");
    const std::string who = by.empty() ? std::string() : " by " + printable(by);
    const std::string because = note.empty() ? std::string() : ": " + short_text(note, 400);
    const rapidjson::Value* result = event_object(e, "result");
    if (status == "executed") {
      auto ok = result ? result->FindMember("ok") : e.MemberEnd();
      if (result && ok != result->MemberEnd() && ok->value.IsFalse()) {
        const std::string code = string_member(*result, "error_code");
        return "  ✗ approved" + who + because + "; it ran and failed" +
               (code.empty() ? std::string() : ": " + printable(code)) + "\n";
      }
      return "  ✓ approved" + who + because + "; it ran\n";
    }
    if (status == "refused") {
      const std::string reason = result ? string_member(*result, "reason") : std::string();
      if (!reason.empty())
        return "  ✗ approved" + who + ", but not run: " + short_text(reason, 400) + "\n";
      return "  ✗ approved" + who + ", but the rules refused it at the last mile: not run\n";
    }
    if (status == "denied") return "  ✗ denied" + who + because + "\n";
    if (status == "expired") return "  ✗ the approval expired: not run\n";
    return "  approval " + printable(status) + who + because + "\n";
  }
  if (kind == "tool-output") {
    std::string out = "  ⎿ " + printable(string_member(e, "target"));
    auto code = e.FindMember("exit_code");
    if (code != e.MemberEnd() && code->value.IsInt()) {
      out += " exit " + std::to_string(code->value.GetInt());
    }
    auto truncated = e.FindMember("truncated");
    const bool cut =
        truncated != e.MemberEnd() && truncated->value.IsBool() && truncated->value.GetBool();
    out += cut ? " (output truncated)\n" : "\n";
    return out + block(string_member(e, "output"), "    ", max_output_lines);
  }
  if (kind == "tool-error") {
    std::string code = string_member(e, "error_code");
    return "  ⎿ " + printable(string_member(e, "target")) + " failed" +
           (code.empty() ? std::string() : ": " + printable(code)) + ": " +
           short_text(string_member(e, "error"), 400) + "\n";
  }
  if (kind == "dropped")
    return "  ⊘ dropped: " + short_text(string_member(e, "reason"), 400) + "\n";
  if (kind == "error") {
    return "✗ error " + printable(string_member(e, "code")) + ": " +
           short_text(string_member(e, "message"), 1000) + "\n";
  }
  if (kind == "final") return {};  // the response that follows says it
  return "  (" + printable(kind) + ")\n";
}

int exit_code_for_status(std::string_view status) {
  if (status == "done") return kExitOk;
  if (status == "rejected") return kExitRejected;
  if (status == "suspended") return kExitApproval;
  return kExitInternal;
}

}  // namespace warden::cli
