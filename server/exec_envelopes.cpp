// Decided shell actions kept for `warden exec`, and the `envelope` request
// (server/exec_envelopes.h).
#include "server/exec_envelopes.h"

#include <rapidjson/document.h>

#include "bindings/digest.h"
#include "bindings/json.h"
#include "bindings/paths.h"
#include "protocol/message.h"
#include "server/errors.h"

namespace warden::server {

std::string exec_action_digest(std::string_view command) {
  return "sha256:" + digest::sha256_hex(command);
}

void ExecEnvelopes::remember(const std::string& principal, const Decision& decision,
                             const std::string& workspace_root, const std::string& home,
                             Clock::time_point now) {
  if (decision.decision_id.empty()) return;
  rapidjson::Document action;
  // The engine's decided action: the daemon's own text.
  if (json::parse_stored(decision.action_json, &action) || !action.IsObject()) return;
  auto text = [&](std::initializer_list<const char*> path) -> const rapidjson::Value* {
    const rapidjson::Value* v = &action;
    for (const char* key : path) {
      v = find_member(*v, key);
      if (!v) return nullptr;
    }
    return v->IsString() ? v : nullptr;
  };
  const rapidjson::Value* type = text({"target"});
  const rapidjson::Value* verb = text({"action"});
  const rapidjson::Value* command = text({"payload", "command"});
  if (!type || !verb || !command || std::string_view(type->GetString()) != "shell" ||
      std::string_view(verb->GetString()) != "run") {
    return;
  }
  ExecRecord r;
  r.decision_id = decision.decision_id;
  r.principal = principal;
  // A failed-closed decision is a reject whatever its outcome field says.
  r.outcome = decision.error_code.empty() ? decision.outcome : Outcome::Reject;
  r.command.assign(command->GetString(), command->GetStringLength());
  // The engine's cwd: payload.cwd normalized against the workspace, else the workspace.
  const rapidjson::Value* cwd = text({"payload", "cwd"});
  r.cwd = cwd ? paths::normalize(std::string_view(cwd->GetString(), cwd->GetStringLength()),
                                 workspace_root, home)
              : paths::normalize(workspace_root, "/", home);
  try {
    r.digest = exec_action_digest(r.command);
  } catch (const std::exception&) {
    return;  // SHA-256 failed (OpenSSL): no envelope kept, so `exec` of it is refused
  }
  r.decision = decision;
  r.decision.facts_json.clear();
  r.workspace_root = workspace_root;
  r.home = home;
  r.expires = now + kTtl;

  std::lock_guard lock(mutex_);
  prune(now);
  // Decision ids are unique: a record is never replaced, except an approval-required one by
  // the approve a person's grant made of it (same id), while it is unused.
  if (auto it = records_.find(r.decision_id); it != records_.end()) {
    ExecRecord& old = it->second;
    if (old.principal == r.principal && old.outcome == Outcome::ApprovalRequired &&
        r.outcome == Outcome::Approve && !old.used) {
      old = std::move(r);
    }
    return;
  }
  order_.push_back(r.decision_id);
  records_.emplace(r.decision_id, std::move(r));
  while (records_.size() > kMaxRecords && !order_.empty()) {
    records_.erase(order_.front());
    order_.pop_front();
  }
}

void ExecEnvelopes::prune(Clock::time_point now) {
  while (!order_.empty()) {
    auto it = records_.find(order_.front());
    if (it != records_.end() && it->second.expires > now) return;
    if (it != records_.end()) records_.erase(it);
    order_.pop_front();
  }
}

ExecTake ExecEnvelopes::take(const std::string& principal, const std::string& decision_id,
                             const std::string& digest, Clock::time_point now, ExecRecord* out) {
  std::lock_guard lock(mutex_);
  auto it = records_.find(decision_id);
  // Another principal's decision is as unknown as none: its existence is not disclosed.
  if (it == records_.end() || it->second.principal != principal) return ExecTake::Unknown;
  ExecRecord& r = it->second;
  if (r.outcome != Outcome::Approve) return ExecTake::NotApproved;
  if (r.used) return ExecTake::Used;
  if (now >= r.expires) return ExecTake::Expired;
  if (!digest.empty() && r.digest != digest) return ExecTake::Mismatch;
  r.used = true;
  *out = r;
  return ExecTake::Ok;
}

}  // namespace warden::server
