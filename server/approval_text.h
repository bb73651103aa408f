// What the approval service's files (approval_service.h) share: the limits of request fields,
// the JSON members they write, approval ids, the key a grant is bound to, the store's clock.
// Pure functions: thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace warden::server::approval_text {

constexpr std::size_t kMaxToken = 256;
constexpr std::size_t kMaxNote = 4096;
constexpr std::size_t kMaxFilter = 256;

std::int64_t now_ms();  // the wall clock, ms since the epoch

// "apr_" and 24 lowercase hex digits: the ids the store makes.
bool is_approval_id(std::string_view text);

// ,"name":"value" (value escaped).
void member(std::string& out, std::string_view name, std::string_view value);
// ["a","b",…]
void append_strings(std::string& out, const std::vector<std::string>& items);

// What a grant is bound to: the whole request as the rules decided it (the decided action
// JSON: target, action, payload and context — which tool asked, from which agent and source —
// and anything else the proposal carried), less the members that name one request rather
// than what it asks for: its "id", the agent's "explanation" text and context.tool_use_id;
// and less context.session, which the grant matches on its own beside the principal. The
// members are taken from what was decided, not from a list of what matters, so a member a
// rule may read is never left out; the few removed are per-request identifiers. Re-written
// compactly in the member order it came in, then hashed. Not JSON: the text's own hash.
std::string grant_key(const std::string& action_json);

}  // namespace warden::server::approval_text
