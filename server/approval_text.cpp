#include "server/approval_text.h"

#include <rapidjson/document.h>

#include <chrono>

#include "approvals/store.h"
#include "bindings/json.h"
#include "protocol/json_text.h"

namespace warden::server::approval_text {

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// "apr_" and 24 lowercase hex digits: the ids the store makes.
bool is_approval_id(std::string_view text) {
  if (text.size() != 4 + 24 || text.substr(0, 4) != "apr_") return false;
  for (char c : text.substr(4)) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

void append_strings(std::string& out, const std::vector<std::string>& items) {
  out += '[';
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ',';
    append_json_string(out, items[i]);
  }
  out += ']';
}

void member(std::string& out, std::string_view name, std::string_view value) {
  out += ",\"";
  out += name;
  out += "\":";
  append_json_string(out, value);
}

std::string grant_key(const std::string& action_json) {
  // RapidJSON's default flags, not bindings/json.h: the key is the hash of the text written
  // back, and full precision would write some numbers otherwise, so a stored grant would no
  // longer match its own action.
  rapidjson::Document d;
  d.Parse(action_json.data(), action_json.size());
  if (d.HasParseError() || !d.IsObject()) return approvals::action_hash(action_json);
  // EraseMember keeps the other members' order; a name given twice is erased each time.
  while (d.EraseMember("id")) {
  }
  while (d.EraseMember("explanation")) {
  }
  for (auto& m : d.GetObject()) {
    if (m.name == "context" && m.value.IsObject()) {
      while (m.value.EraseMember("tool_use_id")) {
      }
      while (m.value.EraseMember("session")) {
      }
    }
  }
  return approvals::action_hash(warden::json::to_text(d));
}

}  // namespace warden::server::approval_text
