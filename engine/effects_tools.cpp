// EffectsTable::tool_effects: a tool call's effects, from its [tool.*] entry's arguments.
#include "engine/effects.h"

#include <string>
#include <vector>

#include "bindings/paths.h"
#include "engine/effect_words.h"
#include "engine/effects_spec.h"

namespace warden {

using namespace effects_spec;
using namespace effect_words;

void EffectsTable::tool_effects(std::string_view server, std::string_view tool,
                                const rapidjson::Value* args, const std::string& cwd,
                                const std::string& home, std::vector<Effect>* out) const {
  auto emit = [&](EffectKind kind, EffectObject object, std::string target, std::string via) {
    Effect e;
    e.kind = kind;
    e.object = object;
    e.target = std::move(target);
    e.program = std::string(tool);
    e.via = std::move(via);
    out->push_back(std::move(e));
  };
  const Tool* spec = find_tool(server, tool);
  if (spec == nullptr) {
    emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), "payload.tool");
    return;
  }
  std::string via;
  // A patch in the apply_patch format (Codex): "*** Add File: P" and "*** Update File: P"
  // write P, "*** Delete File: P" deletes it, "*** Move to: Q" writes Q and deletes the file
  // being updated. False when the text names no file (what it does is not known).
  auto patch_effects = [&](std::string_view text) {
    static constexpr std::string_view kAdd = "*** Add File: ", kUpdate = "*** Update File: ",
                                      kDelete = "*** Delete File: ", kMove = "*** Move to: ";
    bool any = false;
    std::string updating;
    while (!text.empty()) {
      const std::size_t nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
      while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
        line.remove_suffix(1);
      auto file = [&](std::string_view prefix) -> std::string {
        return paths::normalize(line.substr(prefix.size()), cwd, home);
      };
      if (line.starts_with(kAdd) && line.size() > kAdd.size()) {
        emit(EffectKind::Write, EffectObject::Path, file(kAdd), via);
      } else if (line.starts_with(kUpdate) && line.size() > kUpdate.size()) {
        updating = file(kUpdate);
        emit(EffectKind::Write, EffectObject::Path, updating, via);
      } else if (line.starts_with(kDelete) && line.size() > kDelete.size()) {
        emit(EffectKind::Delete, EffectObject::Path, file(kDelete), via);
      } else if (line.starts_with(kMove) && line.size() > kMove.size()) {
        emit(EffectKind::Write, EffectObject::Path, file(kMove), via);
        if (!updating.empty()) emit(EffectKind::Delete, EffectObject::Path, updating, via);
      } else {
        continue;
      }
      any = true;
    }
    return any;
  };
  for (const Tool::Arg& arg : spec->args) {
    via = "payload.args." + arg.name;
    const rapidjson::Value* v = args;
    for (const std::string& member : arg.path) {
      if (v == nullptr || !v->IsObject()) {
        v = nullptr;
        break;
      }
      auto it = v->FindMember(rapidjson::StringRef(member.data(), member.size()));
      v = it == v->MemberEnd() ? nullptr : &it->value;
    }
    auto one = [&](std::string_view word) {
      switch (arg.kind) {
        case K::Read:
        case K::Write:
        case K::Delete:
        case K::Exec:
          emit(effect_kind(arg.kind), EffectObject::Path, paths::normalize(word, cwd, home), via);
          break;
        case K::ExecProgram:
          emit(EffectKind::Exec, EffectObject::Program, first_program(word), via);
          break;
        case K::ExecCode:
          emit(EffectKind::Exec, EffectObject::Code, std::string(word), via);
          break;
        case K::Network:
          if (std::string local; local_source(word, &local)) {
            emit(EffectKind::Read, EffectObject::Path, paths::normalize(local, cwd, home), via);
          } else {
            emit(EffectKind::Network, EffectObject::Host, host_of(word), via);
          }
          break;
        case K::Patch:
          if (!patch_effects(word))
            emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), via);
          break;
        default:
          emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), via);
          break;
      }
    };
    if (arg.kind == K::None) continue;  // data of any shape, or absent: no effect
    if (v != nullptr && v->IsString()) {
      one(std::string_view(v->GetString(), v->GetStringLength()));
    } else if (v != nullptr && v->IsArray()) {
      bool all_strings = true;
      for (const auto& item : v->GetArray()) all_strings = all_strings && item.IsString();
      if (!all_strings) {
        emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), via);
        continue;
      }
      for (const auto& item : v->GetArray())
        one(std::string_view(item.GetString(), item.GetStringLength()));
    } else {
      // Absent, null, or not text: what the tool would touch is not known.
      emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), via);
    }
  }
  // Closed world: an argument the entry does not name is not known to be harmless.
  if (args == nullptr || args->IsNull()) return;
  if (!args->IsObject()) {
    bool unknown = false;
    for (const Effect& e : *out) unknown = unknown || e.kind == EffectKind::Unknown;
    if (!unknown)
      emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), "payload.args");
    return;
  }
  std::vector<std::string_view> at;  // member names from args down to the object walked
  auto walk = [&](auto& self, const rapidjson::Value& object) -> void {
    for (const auto& m : object.GetObject()) {
      at.emplace_back(m.name.GetString(), m.name.GetStringLength());
      bool named = false, inner = false;  // `at` is an argument, or a prefix of one
      for (const Tool::Arg& arg : spec->args) {
        if (arg.path.size() < at.size() || !std::equal(at.begin(), at.end(), arg.path.begin()))
          continue;
        (arg.path.size() == at.size() ? named : inner) = true;
      }
      if (!named && inner && m.value.IsObject()) {
        self(self, m.value);
      } else if (!named && !inner) {
        std::string name = "payload.args";
        for (std::string_view part : at) name.append(".").append(part);
        emit(EffectKind::Unknown, EffectObject::Program, std::string(tool), std::move(name));
      }
      // named: judged above; inner but not an object: the named argument below it is unknown
      at.pop_back();
    }
  };
  walk(walk, *args);
}

}  // namespace warden
