// Actuator: what carries out an approved action (SPEC §9). Registered by name in a Registry;
// adding one touches no core code. An actuator gets the action exactly as approved (the
// decision's action JSON, after rewrites) and the approving decision's capabilities, and
// must do what the rules saw: the shell actuator runs the argv the shell parser produced,
// the http actuator contacts the host the URL parser produced, the file actuator opens the
// path beneath its root. It never throws: failures are a Result with ok=false.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decision.h"

namespace warden::actuators {

// Who asked and what the rules granted, for one dispatch.
struct Context {
  std::string decision_id;  // the decision that approved the action
  std::string principal;
  std::string session;
  std::string agent;
  std::string source;
  std::int64_t depth = 0;
  // Capabilities granted by enforcing `allow` facts of the approving decision
  // ("shell-syntax", "private-network"). Nothing else grants them.
  std::vector<std::string> allowed;
  // The effects the approving decision derived (Decision::effects): the shell actuator's
  // confinement is built from them (actuators/confine.h). Empty: the narrowest envelope.
  std::vector<EffectRecord> effects;
  // Sends an event to the requester's connection (reply, system notices). May be empty.
  std::function<void(std::string_view kind, std::string_view text)> notify;
  bool allows(std::string_view capability) const {
    for (const auto& a : allowed)
      if (a == capability) return true;
    return false;
  }
};

struct Result {
  bool ok = false;
  std::string output;      // what is fed back to the model (stdout+stderr, body, file text)
  std::string error;       // why it failed, for the user and the model ("" when ok)
  std::string error_code;  // E_ACT_TIMEOUT, E_ACT_DENIED, E_ACT_FAILED, E_ACT_BAD_ACTION …
  int exit_code = -1;      // shell: the exit status; http: the status code
  bool truncated = false;  // output was capped
  std::map<std::string, std::string> details;  // small extra facts for events and the audit log
};

class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual std::string_view name() const = 0;
  // Silent actuators produce no feedback signal (reply, log, system).
  virtual bool silent() const { return false; }
  // For the model's catalog: what the target does, and a JSON Schema object of its payload.
  virtual std::string description() const { return {}; }
  virtual std::string payload_schema_json() const { return "{\"type\":\"object\"}"; }
  // action_json: the approved proposal object (target, action, payload, …).
  virtual Result act(std::string_view action_json, const Context& context) = 0;
};

class Registry {
 public:
  // Replaces an actuator of the same name.
  void add(std::unique_ptr<Actuator> actuator);
  Actuator* find(std::string_view name) const;
  std::vector<std::string> names() const;

 private:
  std::map<std::string, std::unique_ptr<Actuator>, std::less<>> actuators_;
};

}  // namespace warden::actuators
