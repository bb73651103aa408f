// Messages from the daemon as a client reads them (protocol/reply.h).
#include "protocol/reply.h"

#include "protocol/message.h"

namespace warden::protocol {

bool Message::parse(std::string_view text) {
  // The daemon bounds what it echoes itself (limits.max_json_depth): no depth limit here.
  if (json::parse(text, &document_, json::Limits::any_depth()) || !document_.IsObject())
    return false;
  const rapidjson::Value* p = find_member(document_, "payload");
  return p && p->IsObject();
}

bool Message::ok() const {
  const rapidjson::Value* ok = find_member(payload(), "ok");
  return ok && ok->IsBool() && ok->GetBool();
}

const rapidjson::Value& Message::error() const {
  const rapidjson::Value* e = find_member(payload(), "error");
  return e && e->IsObject() ? *e : payload();
}

const rapidjson::Value* Message::waiting_approval() const {
  const rapidjson::Value* approval = find_member(payload(), "approval");
  return approval && approval->IsObject() ? approval : nullptr;
}

ReplyStatus read_reply(Client& client, const std::function<Client::ms()>& timeout,
                       const std::function<void(const Message&)>& on_event, Message* reply) {
  for (;;) {
    std::string text;
    switch (client.read_message(&text, timeout())) {
      case Client::ReadStatus::Ok:
        break;
      case Client::ReadStatus::Timeout:
        return ReplyStatus::Timeout;
      case Client::ReadStatus::Closed:
      case Client::ReadStatus::Bad:
        return ReplyStatus::Closed;
    }
    if (!reply->parse(text)) return ReplyStatus::Malformed;
    const std::string type = reply->type();
    if (type == "response") return ReplyStatus::Ok;
    if (type == "event" && on_event) on_event(*reply);
  }
}

std::string decide_request(std::string_view id, const rapidjson::Value& proposal, bool explain,
                           int wait_s) {
  std::string fields = "\"proposal\":" + to_json_text(proposal);
  if (explain) fields += ",\"explain\":true";
  if (wait_s > 0) fields += ",\"wait_s\":" + std::to_string(wait_s);
  return make_request(id, "decide", fields);
}

}  // namespace warden::protocol
