// One JSON document, one interpretation: checks a parsed RapidJSON value for what other JSON
// readers take differently (a duplicate member name: RapidJSON's FindMember sees the first,
// JSON.parse and Python the last; a string that is not valid UTF-8 once its escapes are
// decoded, e.g. a lone "\udc00", which Node turns into U+FFFD). Called by the hook's stdin
// parser (agents/hook_call.cpp) and the MCP gateway (agents/mcp_message.cpp). Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <string>

namespace warden::agents {

// Deeper nesting than this is refused: copying and writing a value recurse once per level, and
// a line of a few MiB of "[" would otherwise overflow the stack (a crash, which an agent takes
// for "no objection"). Real tool calls nest a handful of levels.
inline constexpr int kMaxJsonDepth = 128;

// True when `value` has, at any depth, no object with two members of the same name and no
// string (member names included) that is invalid UTF-8, and nests at most kMaxJsonDepth
// arrays and objects. Else false, *problem says which (`duplicate member name "x"`).
bool json_unambiguous(const rapidjson::Value& value, std::string* problem);

}  // namespace warden::agents
