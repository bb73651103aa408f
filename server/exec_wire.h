// The body of an `envelope` reply (docs/PROTOCOL.md): one decided shell action with what its
// confinement is derived from — the decision (outcome, effects, grants, action), the command
// and where it runs. Written by the daemon, read by `warden exec`. Pure; thread-safe.
#pragma once

#include <rapidjson/document.h>

#include <string>

#include "actuators/confine.h"
#include "engine/decision.h"

namespace warden::server {

struct ExecEnvelopeWire {
  Decision decision;  // decision_id, outcome, reason, action_json, effects, allows, rules_digest
  std::string command;
  std::string cwd;
  std::string workspace_root;
  std::string home;
  // What the envelope is derived within besides the decision: the daemon's shell
  // configuration ([actuators.shell]) and its own files, hidden from the command.
  actuators::confine::Inputs inputs;
};

// JSON members without braces: "envelope":{"decision_id":…,"outcome":…,"reason":…,
// "action":{…},"rules_digest":…,"effects":[{kind,object,target,program,class,in_workspace,
// subcommand,via,dynamic}…],"allows":[{rule,capability,mode}…],"command":…,"cwd":…,
// "workspace_root":…,"home":…,"inputs":{workspace,own_files,hide,writable_roots,read,
// cache_dir,path,max_processes}}.
std::string exec_envelope_fields(const ExecEnvelopeWire& wire);

// Reads the "envelope" member of a reply payload. Strict: every member present with its
// type; false with *error naming the first problem (the exec then refuses to run).
bool parse_exec_envelope(const rapidjson::Value& payload, ExecEnvelopeWire* out,
                         std::string* error);

}  // namespace warden::server
