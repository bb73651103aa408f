// Both directions of the MCP gateway (agents/mcp_relay.h).
#include "agents/mcp_relay.h"

#include "agents/mcp_message.h"
#include "agents/mcp_methods.h"
#include "protocol/message.h"

namespace warden::agents::mcp {

namespace {

bool blank(const std::string& line) { return line.find_first_not_of(" \t\r") == std::string::npos; }

constexpr int kInvalidParams = -32602;
constexpr int kMethodNotFound = -32601;
constexpr int kRefused = -32001;  // a decided request other than tools/call that was not forwarded

// What is passed on of `line` (at least one member kept): the line as it came when no member
// changed or was dropped, else the message as rewritten or a batch of the members kept.
std::string kept_text(const std::string& line, const Line& parsed, const std::vector<bool>& keep,
                      bool changed) {
  bool dropped = false;
  for (bool k : keep) dropped = dropped || !k;
  if (!changed && !dropped) return line;
  if (!parsed.batch) return protocol::to_json_text(parsed.doc);
  rapidjson::Document out(rapidjson::kArrayType);
  for (std::size_t i = 0; i < keep.size(); ++i) {
    if (!keep[i]) continue;
    rapidjson::Value copy;
    copy.CopyFrom(parsed.doc[static_cast<rapidjson::SizeType>(i)], out.GetAllocator());
    out.PushBack(copy, out.GetAllocator());
  }
  return protocol::to_json_text(out);
}

}  // namespace

Relay::Relay(ToolGate& gate, Sink to_client, Sink to_server,
             std::function<void(const std::string&)> log)
    : gate_(gate),
      to_client_(std::move(to_client)),
      to_server_(std::move(to_server)),
      log_(std::move(log)) {}

std::size_t Relay::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pending_.size();
}

bool Relay::expect(const std::vector<std::pair<std::string, Track>>& ids) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (gone_) return false;
  for (const auto& [id, track] : ids) {
    pending_[id] = track;
    answered_.erase(id);
  }
  return true;
}

void Relay::fail_pending(const std::vector<std::string>& ids, const std::string& why) {
  std::vector<std::string> owed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& id : ids) {
      if (pending_.erase(id)) {
        answered_.insert(id);
        owed.push_back(id);
      }
    }
  }
  for (const auto& id : owed) to_client_(error_response(id, kServerGone, why));
}

void Relay::forward(const std::string& text,
                    const std::vector<std::pair<std::string, Track>>& ids) {
  std::vector<std::string> keys;
  for (const auto& entry : ids) keys.push_back(entry.first);
  if (!expect(ids)) {
    std::string why;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      why = gone_why_;
    }
    for (const auto& id : keys) to_client_(error_response(id, kServerGone, why));
    return;
  }
  if (!to_server_(text)) {
    log_("cannot write to the MCP server; answering its requests with an error");
    fail_pending(keys, "MCP server is not reading its input");
  }
}

void Relay::forget_cancelled(const rapidjson::Value& notification) {
  auto params = notification.FindMember("params");
  if (params == notification.MemberEnd() || !params->value.IsObject()) return;
  auto id = params->value.FindMember("requestId");
  if (id == params->value.MemberEnd()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  pending_.erase(protocol::to_json_text(id->value));
}

void Relay::client_line_too_long() {
  log_("refused a client message larger than 16 MiB");
  to_client_(error_response("null", kParseError, "message larger than 16 MiB"));
}

void Relay::from_client(const std::string& line) {
  if (blank(line)) return;
  Line parsed = parse_line(line);
  if (!parsed.ok) {
    log_("refused a client message: " + parsed.problem);
    to_client_(error_response(parsed.id, parsed.error_code, parsed.problem));
    return;
  }
  auto& alloc = parsed.doc.GetAllocator();
  std::vector<std::pair<std::string, Track>> ids;  // requests to forward
  std::vector<std::string> answers;                // the gateway's own answers
  std::vector<bool> keep(parsed.members.size(), true);
  bool changed = false;
  for (std::size_t i = 0; i < parsed.members.size(); ++i) {
    const Message& m = parsed.members[i];
    rapidjson::Value& value = parsed.batch ? parsed.doc[static_cast<rapidjson::SizeType>(i)]
                                           : static_cast<rapidjson::Value&>(parsed.doc);
    if (m.kind == Kind::Invalid) {
      log_("refused a client message: " + m.problem);
      answers.push_back(error_response(m.id, kInvalidRequest, m.problem));
      keep[i] = false;
      continue;
    }
    if (m.kind == Kind::Response) continue;  // the client's answers to the server pass unchanged
    const ClientMethod method = client_method(m.method);
    if (m.kind == Kind::Notification) {
      if (client_notification_passes(m.method)) {
        if (m.method == "notifications/cancelled") forget_cancelled(value);
        continue;  // passes unchanged; a cancelled request is no longer owed an answer
      }
      keep[i] = false;
      if (method == ClientMethod::ToolsCall || method == ClientMethod::Decide) {
        // No id, so no answer to carry a decision: a server that ran it anyway would run a
        // request nobody decided.
        log_("refused a " + m.method + " sent as a notification (no id)");
        answers.push_back(error_response(
            "null", kInvalidRequest, m.method + " must be a request with an id; it was not run"));
      } else {
        log_("dropped a client notification of a method the gateway does not relay: " +
             protocol::to_json_text(
                 rapidjson::Value(rapidjson::StringRef(m.method.data(), m.method.size()))));
      }
      continue;
    }
    if (method == ClientMethod::Unknown) {
      const std::string name = protocol::to_json_text(
          rapidjson::Value(rapidjson::StringRef(m.method.data(), m.method.size())));
      log_("refused a request of an unknown method " + name);
      answers.push_back(error_response(
          m.id, kMethodNotFound,
          "Warden: method " + name +
              " is not one the gateway relays (it forwards only the MCP methods it knows, "
              "spelled exactly); it was not run"));
      keep[i] = false;
      continue;
    }
    if (method == ClientMethod::ToolsCall || method == ClientMethod::Decide) {
      const bool tool = method == ClientMethod::ToolsCall;
      CallAnswer a = tool ? gate_.decide_call(value, alloc) : gate_.decide_request(value, alloc);
      const std::string what = tool ? "tools/call " + a.tool : m.method;
      if (a.action == CallAnswer::Action::Forward) {
        if (a.changed) log_(what + ": a rule rewrote the call");
        changed = true;  // forwarded as decided, never as the client's bytes
      } else {
        log_("refused " + what + ": " + a.text);
        if (a.action == CallAnswer::Action::Invalid) {
          answers.push_back(error_response(m.id, kInvalidParams, a.text));
        } else if (tool) {
          answers.push_back(refusal_response(m.id, a.text));
        } else {
          answers.push_back(error_response(m.id, kRefused, a.text));
        }
        keep[i] = false;
        continue;
      }
    }
    ids.emplace_back(m.id, m.method == "tools/list" ? Track::ToolsList : Track::Other);
  }

  bool any_kept = false;
  for (bool k : keep) any_kept = any_kept || k;
  if (any_kept) forward(kept_text(line, parsed, keep, changed), ids);
  if (answers.empty()) return;
  to_client_(parsed.batch ? batch_of(answers) : answers.front());
}

void Relay::server_line_too_long() {
  log_("dropped a message from the MCP server larger than 16 MiB");
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.size() == 1) ids.push_back(pending_.begin()->first);
  }
  // The one request the server owed an answer is the one it was probably answering.
  fail_pending(ids, "MCP server sent a message larger than 16 MiB");
}

void Relay::from_server(const std::string& line) {
  if (blank(line)) return;
  Line parsed = parse_line(line);
  if (!parsed.ok) {
    log_("dropped a malformed message from the MCP server: " + parsed.problem);
    std::vector<std::string> ids;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (parsed.id != "null" && pending_.count(parsed.id)) {
        ids.push_back(parsed.id);
      } else if (pending_.size() == 1) {
        ids.push_back(pending_.begin()->first);
      }
    }
    fail_pending(ids, "MCP server sent a malformed message: " + parsed.problem);
    return;
  }
  auto& alloc = parsed.doc.GetAllocator();
  bool changed = false;
  std::vector<bool> keep(parsed.members.size(), true);
  std::vector<std::string> broken;  // pending ids the server answered with garbage
  for (std::size_t i = 0; i < parsed.members.size(); ++i) {
    const Message& m = parsed.members[i];
    rapidjson::Value& value = parsed.batch ? parsed.doc[static_cast<rapidjson::SizeType>(i)]
                                           : static_cast<rapidjson::Value&>(parsed.doc);
    if (m.kind == Kind::Invalid) {
      log_("dropped an invalid message from the MCP server: " + m.problem);
      keep[i] = false;
      if (m.id != "null") broken.push_back(m.id);
      continue;
    }
    if (m.kind == Kind::Request && !server_request_passes(m.method)) {
      const std::string name = protocol::to_json_text(
          rapidjson::Value(rapidjson::StringRef(m.method.data(), m.method.size())));
      log_("refused a server request of a method the gateway does not relay: " + name);
      keep[i] = false;
      to_server_(error_response(m.id, kMethodNotFound,
                                "method " + name + " is not relayed to the client by Warden"));
      continue;
    }
    if (m.kind == Kind::Notification && !server_notification_passes(m.method)) {
      log_("dropped a server notification of a method the gateway does not relay");
      keep[i] = false;
      continue;
    }
    if (m.kind != Kind::Response) continue;  // server requests and notifications it knows
    Track track = Track::Other;
    bool drop = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = pending_.find(m.id);
      if (it != pending_.end()) {
        track = it->second;
        pending_.erase(it);
      } else if (answered_.erase(m.id)) {
        drop = true;  // the gateway already answered this one for the server
      }
    }
    if (drop) {
      keep[i] = false;
      continue;
    }
    if (track == Track::ToolsList) {
      std::string log;
      if (gate_.filter_list(value, alloc, &log) > 0) changed = true;
      for (std::size_t at = 0, nl; (nl = log.find('\n', at)) != std::string::npos; at = nl + 1) {
        log_("tools/list: " + log.substr(at, nl - at));
      }
    }
  }
  fail_pending(broken, "MCP server sent an invalid response");

  bool any_kept = false;
  for (bool k : keep) any_kept = any_kept || k;
  if (any_kept) to_client_(kept_text(line, parsed, keep, changed));
}

void Relay::server_gone(const std::string& why) {
  std::vector<std::string> ids;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    gone_ = true;
    gone_why_ = why;
    for (const auto& entry : pending_) ids.push_back(entry.first);
  }
  fail_pending(ids, why);
}

}  // namespace warden::agents::mcp
