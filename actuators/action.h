// ActionDoc: the approved action JSON as an actuator reads it — target, action and payload
// fields, found by name regardless of ASCII case (the engine lowercases names), with every
// ambiguity (two keys equal up to case, a NUL in a string) refused so the actuator never
// reads a field the rules read differently. Also the Result builders shared by actuators.
// Pure functions; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <optional>
#include <string>
#include <string_view>

#include "actuators/actuator.h"
#include "engine/diagnostic.h"

namespace warden::actuators {

// Error codes of actuator results (docs/ACTUATORS.md).
namespace code {
inline constexpr const char* kBadAction =
    ::warden::code::kActBadAction;                                    // the payload is malformed
inline constexpr const char* kDenied = ::warden::code::kActDenied;    // confinement refused it
inline constexpr const char* kFailed = ::warden::code::kActFailed;    // it could not be carried out
inline constexpr const char* kTimeout = ::warden::code::kActTimeout;  // it ran past its time limit
inline constexpr const char* kShellSyntax =
    ::warden::code::kActShellSyntax;  // needs a shell; not granted
inline constexpr const char* kRedirect =
    ::warden::code::kActRedirect;  // an HTTP redirect, not followed
inline constexpr const char* kTooLarge = ::warden::code::kActTooLarge;  // over a size cap
inline constexpr const char* kUnknownTool =
    ::warden::code::kActUnknownTool;  // no tool of that name
}  // namespace code

Result failure(const char* error_code, std::string message);

class ActionDoc {
 public:
  // Parses `json` (an object). On failure ok() is false and error() says why.
  explicit ActionDoc(std::string_view json);
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

  const rapidjson::Value& root() const { return doc_; }
  // The payload object, or an empty object when the action has none.
  const rapidjson::Value& payload() const;
  // The member `name` of `object` compared ignoring ASCII case; null when absent.
  static const rapidjson::Value* member(const rapidjson::Value& object, std::string_view name);

  // A string field of the payload. nullopt when absent; *error set when present but not a
  // string or when it holds a NUL character.
  std::optional<std::string> text(std::string_view name, std::string* error) const;
  // The top-level `action`, lowercased ("" when absent).
  std::string action() const;

 private:
  rapidjson::Document doc_;
  rapidjson::Value empty_{rapidjson::kObjectType};
  std::string error_;
};

}  // namespace warden::actuators
