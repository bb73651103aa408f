#include "cli/approval_text.h"

#include <cstdio>

#include "bindings/json.h"
#include "cli/terminal_text.h"
#include "protocol/json_text.h"
#include "protocol/reply.h"

namespace warden::cli {

namespace {

using protocol::string_member;  // "" when absent or not a string

std::int64_t int_member(const rapidjson::Value& v, const char* key, std::int64_t fallback = 0) {
  if (!v.IsObject()) return fallback;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : fallback;
}

const rapidjson::Value* object_member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsObject() ? &it->value : nullptr;
}

const rapidjson::Value* array_member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return nullptr;
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsArray() ? &it->value : nullptr;
}

std::string rules_text(const rapidjson::Value& approval) {
  std::string out;
  if (const rapidjson::Value* rules = array_member(approval, "rules")) {
    for (const auto& r : rules->GetArray()) {
      std::string name =
          r.IsString() ? std::string(r.GetString(), r.GetStringLength()) : string_member(r, "rule");
      if (!name.empty()) out += (out.empty() ? "" : ", ") + printable(name);
    }
  }
  return out.empty() ? "the default outcome" : out;
}

std::string votes_text(const rapidjson::Value& approval) {
  const rapidjson::Value* votes = array_member(approval, "votes");
  const std::int64_t given = votes ? static_cast<std::int64_t>(votes->Size()) : 0;
  return "approvals " + std::to_string(given) + " of " +
         std::to_string(int_member(approval, "approvers_needed", 1));
}

std::string expiry_text(const rapidjson::Value& approval, std::int64_t now_ms) {
  const std::int64_t expires = int_member(approval, "expires_ms");
  if (expires <= 0) return "";
  return expires > now_ms ? "expires in " + duration_text(expires - now_ms)
                          : "expired " + duration_text(now_ms - expires) + " ago";
}

std::string who_text(const rapidjson::Value& approval) {
  std::string out = printable(string_member(approval, "principal"));
  const std::string session = string_member(approval, "session"),
                    agent = string_member(approval, "agent");
  out += "/" + (session.empty() ? std::string("-") : printable(session));
  out += "/" + (agent.empty() ? std::string("-") : printable(agent));
  return out;
}

// Who closed it: the denier, else the last approver.
std::string closed_by(const rapidjson::Value& approval) {
  std::string by = string_member(approval, "closed_by");
  if (!by.empty()) return by;
  if (const rapidjson::Value* votes = array_member(approval, "votes")) {
    if (!votes->Empty()) return string_member((*votes)[votes->Size() - 1], "approver");
  }
  return "";
}

// "  if approved it may also:" and one line per grant, in words, then its name, rule and
// reason; "" when the approval grants nothing.
std::string grants_text(const rapidjson::Value& approval) {
  const rapidjson::Value* grants = array_member(approval, "grants");
  if (!grants || grants->Empty()) return "";
  std::string out = "  if approved it may also:\n";
  for (const auto& g : grants->GetArray()) {
    const std::string capability = string_member(g, "capability");
    out += "    " + capability_text(capability) + " (" + printable(capability);
    const std::string rule = string_member(g, "rule"), reason = string_member(g, "reason");
    if (!rule.empty()) out += ", rule " + printable(rule);
    if (!reason.empty()) out += ": " + printable(reason);
    out += ")\n";
  }
  return out;
}

// The capability names of an approval's grants, for one line: " +shell-syntax".
std::string grants_short(const rapidjson::Value& approval) {
  std::string out;
  if (const rapidjson::Value* grants = array_member(approval, "grants")) {
    for (const auto& g : grants->GetArray())
      out += " +" + printable(string_member(g, "capability"));
  }
  return out;
}

void drop_tokens(rapidjson::Value& v) {
  if (v.IsObject()) {
    v.RemoveMember("token");
    v.RemoveMember("how");  // "warden approve TOKEN"
  } else if (v.IsArray()) {
    for (auto& item : v.GetArray()) drop_tokens(item);
  }
}

// Removes the token from "approval" and every element of "approvals" of `doc`.
void strip(rapidjson::Value& doc) {
  if (!doc.IsObject()) return;
  for (const char* key : {"approval", "approvals"}) {
    auto it = doc.FindMember(key);
    if (it != doc.MemberEnd()) drop_tokens(it->value);
  }
}

}  // namespace

std::string capability_text(std::string_view capability) {
  if (capability == "shell-syntax") {
    return "run its command line through /bin/sh (pipes, redirects, globs, variables and "
           "command substitution work)";
  }
  if (capability == "private-network") {
    return "connect to private, loopback, link-local and cloud metadata addresses";
  }
  return "use the capability " + printable(capability);
}

std::string answer_digest_of(const rapidjson::Value& approval) {
  const std::string digest = string_member(approval, "digest");
  return digest.empty() ? string_member(approval, "action_hash") : digest;
}

std::string pending_fields(const PendingQuery& q) {
  std::string out;
  auto add = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    out += std::string(out.empty() ? "" : ",") + "\"" + key + "\":" + protocol::json_string(value);
  };
  add("agent", q.agent);
  add("session", q.session);
  add("rule", q.rule);
  if (q.min_age_s >= 0)
    out += std::string(out.empty() ? "" : ",") + "\"min_age_s\":" + std::to_string(q.min_age_s);
  if (q.watch) out += std::string(out.empty() ? "" : ",") + "\"watch\":true";
  if (q.limit > 0)
    out += std::string(out.empty() ? "" : ",") + "\"limit\":" + std::to_string(q.limit);
  add("after", q.after);
  return out;
}

std::string show_fields(std::string_view approval_id) {
  return "\"id\":" + protocol::json_string(approval_id);
}

std::string approve_fields(std::string_view approval_id, std::string_view digest,
                           std::string_view note, std::optional<int> scope_minutes) {
  std::string out = "\"id\":" + protocol::json_string(approval_id) +
                    ",\"digest\":" + protocol::json_string(digest);
  if (!note.empty()) out += ",\"note\":" + protocol::json_string(note);
  if (scope_minutes) out += ",\"scope_minutes\":" + std::to_string(*scope_minutes);
  return out;
}

bool is_approval_id(std::string_view text) {
  if (text.size() != 4 + 24 || text.substr(0, 4) != "apr_") return false;
  for (char c : text.substr(4))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

bool is_action_digest(std::string_view text) {
  if (text.size() != 7 + 64 || text.substr(0, 7) != "sha256:") return false;
  for (char c : text.substr(7))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string deny_fields(std::string_view token_or_id, std::string_view note) {
  std::string out = std::string(is_approval_id(token_or_id) ? "\"id\":" : "\"token\":") +
                    protocol::json_string(token_or_id);
  if (!note.empty()) out += ",\"note\":" + protocol::json_string(note);
  return out;
}

std::string duration_text(std::int64_t ms) {
  if (ms < 0) ms = 0;
  const std::int64_t s = ms / 1000;
  char buf[48];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else {
    std::snprintf(buf, sizeof buf, "%lldd%02lldh", static_cast<long long>(s / 86400),
                  static_cast<long long>(s / 3600 % 24));
  }
  return buf;
}

std::string approval_action_text(const rapidjson::Value& action) {
  if (!action.IsObject())
    return action.IsNull() ? "(none)" : printable(warden::json::to_text(action));
  const std::string target = string_member(action, "target");
  std::string verb = string_member(action, "action");
  const rapidjson::Value* payload = object_member(action, "payload");
  std::string detail;
  if (payload) {
    if (target == "http") {
      const std::string method = string_member(*payload, "method");
      if (!method.empty()) verb = method;
      detail = string_member(*payload, "url");
    } else if (target == "tool") {
      detail = string_member(*payload, "tool");
      auto args = payload->FindMember("args");
      if (args != payload->MemberEnd())
        detail += (detail.empty() ? "" : " ") + warden::json::to_text(args->value);
    } else {
      for (const char* key : {"command", "path", "url", "text", "message"}) {
        detail = string_member(*payload, key);
        if (!detail.empty()) break;
      }
    }
    if (detail.empty()) detail = warden::json::to_text(*payload);
  }
  std::string head = printable(target.empty() ? std::string("(no target)") : target);
  if (!verb.empty()) head += " " + printable(verb);
  return detail.empty() ? head : head + ": " + printable(detail);
}

static bool is_truncated(const rapidjson::Value& approval) {
  if (!approval.IsObject()) return false;
  auto it = approval.FindMember("truncated");
  return it != approval.MemberEnd() && it->value.IsTrue();
}

std::string listed_action_text(const rapidjson::Value& approval) {
  static const rapidjson::Value kNull;
  auto action = approval.IsObject() ? approval.FindMember("action") : approval.MemberEnd();
  const bool has = approval.IsObject() && action != approval.MemberEnd() && !action->value.IsNull();
  if (has || !is_truncated(approval)) return approval_action_text(has ? action->value : kNull);
  std::string out = "(too large to list: " + std::to_string(int_member(approval, "action_bytes")) +
                    " bytes; warden approve " + printable(string_member(approval, "id")) +
                    " shows it in full)";
  const std::string preview = string_member(approval, "action_preview");
  if (!preview.empty()) out += " begins: " + printable(preview) + "…";
  return out;
}

std::string approval_block(const rapidjson::Value& approval, std::int64_t now_ms) {
  std::string out = printable(string_member(approval, "id")) + "  " +
                    printable(string_member(approval, "status"));
  const std::int64_t created = int_member(approval, "created_ms");
  if (created > 0) out += "  age " + duration_text(now_ms - created);
  const std::string expiry = expiry_text(approval, now_ms);
  if (!expiry.empty()) out += "  " + expiry;
  out += "  " + votes_text(approval) + "\n";
  out += "  requested by " + printable(string_member(approval, "principal"));
  const std::string session = string_member(approval, "session"),
                    agent = string_member(approval, "agent"),
                    origin = string_member(approval, "origin");
  if (!session.empty()) out += "  session " + printable(session);
  if (!agent.empty()) out += "  agent " + printable(agent);
  if (!origin.empty()) out += "  via " + printable(origin);
  out += "\n  rules " + rules_text(approval);
  const std::string reason = string_member(approval, "reason");
  if (!reason.empty()) out += ": " + printable(reason);
  out += "\n";
  out += "  action " + listed_action_text(approval) + "\n";
  out += grants_text(approval);
  if (const rapidjson::Value* votes = array_member(approval, "votes")) {
    for (const auto& v : votes->GetArray()) {
      out += "  approved by " + printable(string_member(v, "approver"));
      const std::int64_t at = int_member(v, "at_ms");
      if (at > 0) out += " " + duration_text(now_ms - at) + " ago";
      const std::string note = string_member(v, "note");
      if (!note.empty()) out += ": " + printable(note);
      out += "\n";
    }
  }
  return out;
}

std::string approval_detail(const rapidjson::Value& approval, std::int64_t now_ms) {
  std::string out = approval_block(approval, now_ms);
  out += "  digest " + printable(answer_digest_of(approval));
  if (answer_digest_of(approval) != string_member(approval, "action_hash")) {
    out += " (the action and what approving it grants; the action alone " +
           printable(string_member(approval, "action_hash")) + ")";
  }
  out += "\n";
  auto action = approval.IsObject() ? approval.FindMember("action") : approval.MemberEnd();
  const bool has_action = approval.IsObject() && action != approval.MemberEnd();
  if (is_truncated(approval) && (!has_action || action->value.IsNull())) {
    // A listing left it out: never shown as if it were the action.
    out += "  the action as it will run: left out of this list (" +
           std::to_string(int_member(approval, "action_bytes")) + " bytes); warden approve " +
           printable(string_member(approval, "id")) + " shows it in full\n";
  } else if (has_action) {
    out += "  the action as it will run:\n";
    const std::string pretty = json_for_terminal(warden::json::to_pretty_text(action->value, 2));
    std::size_t start = 0;
    while (start <= pretty.size()) {
      std::size_t end = pretty.find('\n', start);
      if (end == std::string::npos) end = pretty.size();
      out += "    " + printable(pretty.substr(start, end - start)) + "\n";
      start = end + 1;
    }
  } else {
    out += "  the action as it will run:\n    (none)\n";
  }
  const rapidjson::Value* history = array_member(approval, "history");
  if (!history || history->Empty()) {
    out += "  session history: none known to this daemon\n";
  } else {
    out += "  session history (oldest first):\n";
    for (const auto& h : history->GetArray()) {
      std::string line = printable(string_member(h, "kind")) + " " +
                         printable(string_member(h, "object")) + " " +
                         printable(string_member(h, "target"));
      const std::string program = string_member(h, "program");
      if (!program.empty()) line += "  by " + printable(program);
      const std::int64_t at = int_member(h, "time");
      if (at > 0) line += "  " + duration_text(now_ms - at * 1000) + " ago";
      out += "    " + line + "\n";
    }
  }
  return out;
}

std::string approval_line(const rapidjson::Value& approval, std::int64_t now_ms) {
  const std::string status = string_member(approval, "status");
  std::string out = printable(string_member(approval, "id")) + "  " + printable(status);
  if (status.empty() || status == "pending") {
    out += "  " + who_text(approval) + "  [" + rules_text(approval) + "]";
    out += "  " + listed_action_text(approval);
    out += grants_short(approval);
    const std::string expiry = expiry_text(approval, now_ms);
    out += "  (" + votes_text(approval) + (expiry.empty() ? "" : ", " + expiry) + ")";
    return out;
  }
  const std::string by = closed_by(approval);
  if (!by.empty() && status != "expired") out += " by " + printable(by);
  const std::string note = string_member(approval, "close_note");
  if (!note.empty()) out += ": " + printable(note);
  out += "  (" + who_text(approval) + ")";
  return out;
}

std::string watch_event_text(std::string_view event_json, std::int64_t now_ms) {
  // The event as the client wrote it back from the daemon's reply: this process's own text.
  rapidjson::Document e;
  if (warden::json::parse_stored(event_json, &e) || !e.IsObject())
    return "(an event that is not a JSON object)\n";
  const std::string kind = string_member(e, "event");
  if (kind == "approvals") {
    std::string out;
    if (const rapidjson::Value* list = array_member(e, "approvals")) {
      for (const auto& a : list->GetArray()) out += "= " + approval_line(a, now_ms) + "\n";
    }
    auto more = e.FindMember("more");
    if (more != e.MemberEnd() && more->value.IsTrue()) {
      out += "= … more are pending than this first page: warden pending lists them all\n";
    }
    return out;
  }
  const rapidjson::Value* approval = object_member(e, "approval");
  if (!approval || (kind != "approval-created" && kind != "approval-closed")) return "";
  // What the approval's own state says, whatever the event is called: one still pending is
  // never shown as closed.
  const std::string status = string_member(*approval, "status");
  const bool open = status.empty() || status == "pending";
  if (kind == "approval-closed" && open) return "";
  return (open ? "+ " : "- ") + approval_line(*approval, now_ms) + "\n";
}

std::string watch_event_json(std::string_view event_json) {
  rapidjson::Document e;  // read as watch_event_text reads it
  if (warden::json::parse_stored(event_json, &e)) return "{}";
  strip(e);
  return json_for_terminal(warden::json::to_text(e));
}

std::string without_tokens(const rapidjson::Value& payload) {
  rapidjson::Document copy;
  copy.CopyFrom(payload, copy.GetAllocator());
  strip(copy);
  return json_for_terminal(warden::json::to_text(copy));
}

std::string approve_reply_text(const rapidjson::Value& payload) {
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* a = object_member(payload, "approval");
  const rapidjson::Value& approval = a ? *a : kEmpty;
  const std::string id = printable(string_member(approval, "id"));
  const std::string status = string_member(payload, "status");
  static const rapidjson::Value kNull;
  auto action_it = approval.FindMember("action");
  const std::string action =
      approval_action_text(action_it != approval.MemberEnd() ? action_it->value : kNull);
  if (status == "pending") {
    const rapidjson::Value* votes = array_member(approval, "votes");
    const std::int64_t given = votes ? static_cast<std::int64_t>(votes->Size()) : 0;
    const std::int64_t needed = int_member(approval, "approvers_needed", 1);
    return "your approval of " + id + " is counted: " + std::to_string(given) + " of " +
           std::to_string(needed) + "; " + std::to_string(needed > given ? needed - given : 1) +
           " more approver" + (needed - given == 1 ? "" : "s") + " must approve\n  action " +
           action + "\n";
  }
  if (status == "granted") {
    return "approved " + id + ": the requester may run it now\n  action " + action + "\n";
  }
  if (status == "executed") {
    const rapidjson::Value* r = object_member(payload, "result");
    auto ok = r ? r->FindMember("ok") : payload.MemberEnd();
    const bool failed = r && ok != r->MemberEnd() && ok->value.IsFalse();
    std::string out = "approved " + id + (failed ? "; it ran and failed" : "; it ran") +
                      "\n  action " + action + "\n";
    if (const rapidjson::Value* result = object_member(payload, "result")) {
      auto code = result->FindMember("exit_code");
      if (code != result->MemberEnd() && code->value.IsInt())
        out += "  exit " + std::to_string(code->value.GetInt()) + "\n";
      const std::string error = string_member(*result, "error_code");
      if (!error.empty()) out += "  failed: " + printable(error) + "\n";
      if (const rapidjson::Value* caps = array_member(*result, "capabilities");
          caps && !caps->Empty()) {
        std::string names;
        for (const auto& c : caps->GetArray()) {
          if (c.IsString()) names += (names.empty() ? "" : ", ") + printable(c.GetString());
        }
        out += "  ran with: " + names + "\n";
      }
    }
    return out;
  }
  if (status == "refused") {
    std::string why;
    if (const rapidjson::Value* d = object_member(payload, "decision"))
      why = string_member(*d, "reason");
    return "approved " + id + ", but the rules refused it at the last mile: not run" +
           (why.empty() ? std::string() : " (" + printable(why) + ")") + "\n  action " + action +
           "\n";
  }
  return "approve " + id + ": " + printable(status) + "\n";
}

std::string deny_reply_text(const rapidjson::Value& payload) {
  static const rapidjson::Value kEmpty(rapidjson::kObjectType);
  const rapidjson::Value* a = object_member(payload, "approval");
  const rapidjson::Value& approval = a ? *a : kEmpty;
  static const rapidjson::Value kNull;
  auto action_it = approval.FindMember("action");
  return "denied " + printable(string_member(approval, "id")) + "\n  action " +
         approval_action_text(action_it != approval.MemberEnd() ? action_it->value : kNull) + "\n";
}

std::string approve_with_line(const rapidjson::Value& approval) {
  const std::string id = string_member(approval, "id");
  const std::string status = string_member(approval, "status");
  if (id.empty() || (!status.empty() && status != "pending")) return "";
  return "approve with: warden approve " + printable(id);
}

std::string decide_approval_text(const rapidjson::Value& payload) {
  const rapidjson::Value* approval = object_member(payload, "approval");
  if (!approval) return "";
  const std::string id = printable(string_member(*approval, "id"));
  const std::string status = string_member(*approval, "status");
  const std::string with = approve_with_line(*approval);
  if (status.empty() || status == "pending") {
    std::string out = "approval " + id + ": pending";
    if (const std::int64_t needed = int_member(*approval, "approvers_needed", 1); needed > 1)
      out += " (" + std::to_string(needed) + " approvers)";
    return with.empty() ? out : out + "; " + with;
  }
  return "approval " + id + ": " + printable(status);
}

}  // namespace warden::cli
