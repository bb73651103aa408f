// Duplicate names and undecodable strings in a parsed JSON value (agents/json_strict.h).
#include "agents/json_strict.h"

#include <rapidjson/encodings.h>
#include <rapidjson/memorystream.h>

#include <string_view>
#include <unordered_set>
#include <vector>

namespace warden::agents {

namespace {

bool valid_utf8(const rapidjson::Value& s) {
  rapidjson::MemoryStream in(s.GetString(), s.GetStringLength());
  while (in.Tell() < s.GetStringLength()) {
    struct Null {
      void Put(char) {}
    } out;
    if (!rapidjson::UTF8<>::Validate(in, out)) return false;
  }
  return true;
}

std::string where(const std::string& path) { return path.empty() ? "the top level" : path; }

struct Frame {
  const rapidjson::Value* value;
  std::string path;
};

}  // namespace

bool json_unambiguous(const rapidjson::Value& root, std::string* problem) {
  std::vector<Frame> stack{{&root, ""}};  // iterative: depth is bounded by the parser only
  std::unordered_set<std::string_view> names;
  while (!stack.empty()) {
    Frame f = std::move(stack.back());
    stack.pop_back();
    const rapidjson::Value& v = *f.value;
    if (v.IsString()) {
      if (!valid_utf8(v)) {
        *problem = "a string at " + where(f.path) + " is not valid UTF-8 (a lone surrogate escape?)";
        return false;
      }
    } else if (v.IsArray()) {
      for (rapidjson::SizeType i = 0; i < v.Size(); ++i)
        stack.push_back({&v[i], f.path + "[" + std::to_string(i) + "]"});
    } else if (v.IsObject()) {
      names.clear();
      for (const auto& m : v.GetObject()) {
        std::string_view name(m.name.GetString(), m.name.GetStringLength());
        if (!valid_utf8(m.name)) {
          *problem = "a member name at " + where(f.path) + " is not valid UTF-8 (a lone surrogate escape?)";
          return false;
        }
        if (!names.insert(name).second) {
          *problem = "duplicate member name \"" + std::string(name) + "\" at " + where(f.path);
          return false;
        }
      }
      for (const auto& m : v.GetObject())
        stack.push_back({&m.value, (f.path.empty() ? "" : f.path + ".") +
                                       std::string(m.name.GetString(), m.name.GetStringLength())});
    }
  }
  return true;
}

}  // namespace warden::agents
