// EffectsTable: the command-effects table read from TOML (toml++) and evaluated per simple
// command. Parsing builds one immutable spec tree per program (options sorted for binary
// search and prefix lookup, subcommands in hash maps, match regexes compiled once) and one
// hash index from every program name and alias; effects_of walks argv once, getopt-like.
// This file: the table's names and lookups. The tree is engine/effects_spec.h; reading the
// TOML effects_parse.cpp, a command's effects effects_eval.cpp, a tool's effects_tools.cpp.
#include "engine/effects.h"

#include "engine/effects_spec.h"

namespace warden {

EffectsTable::EffectsTable() : index_(std::make_unique<Index>()) {}
EffectsTable::~EffectsTable() = default;

std::string_view effect_kind_name(EffectKind kind) {
  switch (kind) {
    case EffectKind::Exec:
      return "exec";
    case EffectKind::Write:
      return "write";
    case EffectKind::Delete:
      return "delete";
    case EffectKind::Read:
      return "read";
    case EffectKind::Network:
      return "network";
    case EffectKind::EnvDump:
      return "env-dump";
    case EffectKind::Privilege:
      return "privilege";
    case EffectKind::Unknown:
      return "unknown";
  }
  return "unknown";
}

std::string_view effect_object_name(EffectObject object) {
  switch (object) {
    case EffectObject::Path:
      return "path";
    case EffectObject::Host:
      return "host";
    case EffectObject::Program:
      return "program";
    case EffectObject::Code:
      return "code";
    case EffectObject::None:
      return "none";
  }
  return "none";
}

bool EffectsTable::knows(std::string_view program) const { return find(program) != nullptr; }

const EffectsTable::Program* EffectsTable::find(std::string_view program) const {
  auto it = index_->by_name.find(program);
  return it == index_->by_name.end() ? nullptr : it->second;
}

std::size_t EffectsTable::size() const { return index_->by_name.size(); }

std::size_t EffectsTable::tool_count() const { return index_->by_tool.size(); }

const EffectsTable::Tool* EffectsTable::find_tool(std::string_view server,
                                                  std::string_view tool) const {
  if (!server.empty()) {
    std::string key;
    key.reserve(server.size() + 1 + tool.size());
    key.append(server).push_back('/');
    key.append(tool);
    if (auto it = index_->by_tool.find(key); it != index_->by_tool.end()) return it->second;
  }
  if (auto it = index_->by_tool.find(tool); it != index_->by_tool.end()) return it->second;
  return nullptr;
}

bool EffectsTable::knows_tool(std::string_view server, std::string_view tool) const {
  return find_tool(server, tool) != nullptr;
}

}  // namespace warden
