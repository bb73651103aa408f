// One JSON document, one interpretation: checks a parsed RapidJSON value for what other JSON
// readers take differently (a duplicate member name: RapidJSON's FindMember sees the first,
// JSON.parse and Python the last; a string that is not valid UTF-8 once its escapes are
// decoded, e.g. a lone "\udc00", which Node turns into U+FFFD). Called by the hook's stdin
// parser (agents/hook_call.cpp) and the MCP gateway (agents/mcp_message.cpp). Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace warden::agents {

// True when `value` has, at any depth, no object with two members of the same name and no
// string (member names included) that is invalid UTF-8. Else false, *problem says where
// ("duplicate member name \"x\" at params.arguments").
bool json_unambiguous(const rapidjson::Value& value, std::string* problem);

}  // namespace warden::agents
