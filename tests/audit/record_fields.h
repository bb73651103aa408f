// What the audit record tests share: a record's fields (the members `record_fields` and
// `approval_fields` write, without braces) parsed back, and a secret they plant in them.
#pragma once

#include <rapidjson/document.h>
#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace warden::audit::testing {

// A GitHub token, which the audit log must never hold in clear.
inline const char* const kGithubToken = "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5";

// FIELDS wrapped in braces and parsed; fails the test when that is not JSON.
inline rapidjson::Document parse_fields(const std::string& fields) {
  rapidjson::Document doc;
  const std::string text = "{" + fields + "}";
  doc.Parse(text.c_str(), text.size());
  REQUIRE_FALSE(doc.HasParseError());
  return doc;
}

// The names of V's members, in order.
inline std::vector<std::string> member_names(const rapidjson::Value& v) {
  std::vector<std::string> names;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) names.emplace_back(m->name.GetString());
  return names;
}

}  // namespace warden::audit::testing
