// Duplicate names, undecodable strings and deep nesting in a parsed JSON value
// (agents/json_strict.h).
#include "agents/json_strict.h"

#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "bindings/json.h"

namespace warden::agents {

namespace {

bool valid_utf8(const rapidjson::Value& s) {
  rapidjson::MemoryStream in(s.GetString(), s.GetStringLength());
  struct Null {
    void Put(char) {}
  } out;
  while (in.Tell() < s.GetStringLength()) {
    if (!rapidjson::UTF8<>::Validate(in, out)) return false;
  }
  return true;
}

}  // namespace

bool json_unambiguous(const rapidjson::Value& root, std::string* problem) {
  // Iterative (the parser allows any depth): each entry is a value and how many arrays and
  // objects hold it.
  std::vector<std::pair<const rapidjson::Value*, int>> stack{{&root, 0}};
  json::MemberNames names;  // exact names: JSON readers agree on letter case
  while (!stack.empty()) {
    auto [value, depth] = stack.back();
    stack.pop_back();
    const rapidjson::Value& v = *value;
    if ((v.IsArray() || v.IsObject()) && depth >= kMaxJsonDepth) {
      *problem = "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
      return false;
    }
    if (v.IsString()) {
      if (!valid_utf8(v)) {
        *problem = "a string is not valid UTF-8 once decoded (a lone surrogate escape?)";
        return false;
      }
    } else if (v.IsArray()) {
      for (const auto& e : v.GetArray()) stack.emplace_back(&e, depth + 1);
    } else if (v.IsObject()) {
      names.clear();
      for (const auto& m : v.GetObject()) {
        if (!valid_utf8(m.name)) {
          *problem = "a member name is not valid UTF-8 once decoded (a lone surrogate escape?)";
          return false;
        }
        std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (names.add(name)) {
          std::size_t cut = std::min<std::size_t>(name.size(), 100);
          while (cut < name.size() && cut > 0 &&
                 (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80)
            --cut;
          *problem = "duplicate member name \"" + std::string(name.substr(0, cut)) + "\"";
          return false;
        }
        stack.emplace_back(&m.value, depth + 1);
      }
    }
  }
  return true;
}

}  // namespace warden::agents
