// What a client reads from the daemon (docs/PROTOCOL.md): a message — a response to one of its
// requests, or an event on the way to one — with typed views of what every client looks at (the
// type, the request id, ok, the error's code and message, the approval a waiting decide names),
// and reading the response to a request off a Client with the events before it handed to the
// caller. Used by every `warden` client command and the agents' daemon decider; a Message is a
// value, read_reply runs on the Client's one thread.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <string>
#include <string_view>

#include "bindings/json.h"
#include "protocol/client.h"

namespace warden::protocol {

// The member `key` of `v` when it is a string, else "" (also when `v` is not an object).
using warden::json::string_member;

class Message {
 public:
  // Parses one frame's payload: a JSON object (valid UTF-8) whose "payload" is an object.
  // False otherwise; the message is then not to be read.
  bool parse(std::string_view text);

  const rapidjson::Document& document() const { return document_; }
  const rapidjson::Value& payload() const { return document_["payload"]; }
  std::string type() const { return string_member(document_, "type"); }  // "response", "event"
  // The request id when it is a string, else "".
  std::string id() const { return string_member(document_, "id"); }
  // payload.ok is true.
  bool ok() const;
  // The error of a response that is not ok: payload.error when it is an object, else the
  // payload itself.
  const rapidjson::Value& error() const;
  std::string error_code() const { return string_member(error(), "code"); }
  std::string error_message() const { return string_member(error(), "message"); }
  // The approval a decide with wait_s waits for, as the event before its response names it
  // (payload.approval: id, token, how, …); null when the message names none.
  const rapidjson::Value* waiting_approval() const;

 private:
  rapidjson::Document document_;
};

enum class ReplyStatus {
  Ok,         // *reply is the response
  Timeout,    // no message within the time given
  Closed,     // the connection ended, or its framing broke
  Malformed,  // a message that is not a JSON object with an object payload
};

// Reads messages until a response: every event before it is handed to on_event (which may be
// empty), other messages are passed over. timeout() is asked before each read.
ReplyStatus read_reply(Client& client, const std::function<Client::ms()>& timeout,
                       const std::function<void(const Message&)>& on_event, Message* reply);

// The request of `decide` for request id `id`: the proposal (already parsed) goes out as its own
// compact JSON (one line), then "explain" and "wait_s" when asked for (wait_s > 0).
std::string decide_request(std::string_view id, const rapidjson::Value& proposal, bool explain,
                           int wait_s);

}  // namespace warden::protocol
