#include "engine/effect_facts.h"

#include <string_view>

#include "engine/clips_env.h"
#include "engine/fact_codec.h"
#include "engine/proposal_reader.h"
#include "engine/script_effects.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

EffectFacts::EffectFacts(ClipsEnv& env, FactWriter& writer, PathFacts& paths,
                         const EffectsTable& table)
    : env_(env),
      w_(writer),
      paths_(paths),
      table_(table),
      effect_(writer.bind_template("effect")),
      effect_slots_{effect_["proposal"],     effect_["index"],  effect_["kind"],
                    effect_["object"],       effect_["target"], effect_["program"],
                    effect_["subcommand"],   effect_["via"],    effect_["class"],
                    effect_["in-workspace"], effect_["dynamic"]} {}

// An effect fact. A path target is located like a `path` fact (PathFacts::locate_target).
bool EffectFacts::assert_effect(long long index, const Effect& e, const std::string& cwd) {
  EffectRecord rec;
  rec.kind = effect_kind_name(e.kind);
  rec.object = effect_object_name(e.object);
  rec.target = e.target;
  rec.program = e.program;
  rec.path_class = "none";
  rec.subcommand = e.subcommand;
  rec.via = e.via;
  rec.dynamic = e.dynamic;
  if (e.object == EffectObject::Path) paths_.locate_target(e.target, cwd, dotglob_, &rec);
  void* f = w_.fact(effect_);
  if (!f) return false;
  const EffectSlots& k = effect_slots_;
  w_.put(f, k.proposal, STRING, w_.id());
  w_.put_integer(f, k.index, index);
  w_.put_symbol(f, k.kind, rec.kind);
  w_.put_symbol(f, k.object, rec.object);
  w_.put_string(f, k.target, rec.target);
  w_.put_string(f, k.program, rec.program);
  w_.put_string(f, k.subcommand, rec.subcommand);
  w_.put_string(f, k.via, rec.via);
  w_.put_symbol(f, k.path_class, rec.path_class);
  w_.put_symbol(f, k.in_workspace, rec.in_workspace ? "TRUE" : "FALSE");
  w_.put_symbol(f, k.dynamic, rec.dynamic ? "TRUE" : "FALSE");
  if (!w_.finish(f)) return false;
  if (!w_.assert_derived_hits(derived_key::kEffectTarget, rec.target)) return false;
  records_.push_back(std::move(rec));
  return true;
}

// The effects table's effects of one simple command, and its redirections: output to a
// file is a write, input from one a read (`<>` both); descriptor duplications (`2>&1`,
// `>&-`) and here-documents touch no file. (EffectsTable::effects_of may already list the
// redirections; they are added here only when it did not.)
bool EffectFacts::assert_command(long long index, const shell::SimpleCommand& cmd,
                                 const std::string& cwd) {
  const BindingContext& c = env_.state();
  buffer_.clear();
  table_.effects_of(cmd, cwd, c.home, &buffer_);  // redirections included
  // Program text of awk and sed: its reads, writes and commands (engine/script_effects.h).
  script_effects(cmd, cwd, c.home, &buffer_);
  // Text the shell evaluates as code when the command runs (`test -v 'a[$(id)]'`, a trap,
  // prompt expansion …): code nobody can review here.
  for (const std::string& code : cmd.code) {
    Effect e;
    e.kind = EffectKind::Exec;
    e.object = EffectObject::Code;
    e.target = code;
    e.program = cmd.program;
    e.via = "shell evaluation";
    e.dynamic = true;
    buffer_.push_back(std::move(e));
  }
  for (const auto& e : buffer_)
    if (!assert_effect(index, e, cwd)) return false;
  return true;
}

// Effects of a proposal that is not a shell line: the file actuator reads, writes or
// deletes payload.path (the verb from `action` or payload.action, either counting), and a
// read with a file-name glob reads what it names; the HTTP actuator reaches the host of
// payload.url; a tool call (action `call` or none) has the effects the table gives its
// arguments (EffectsTable::tool_effects).
bool EffectFacts::assert_proposal(const ProposalFields& p, const rapidjson::Value& doc,
                                  const std::string& cwd) {
  const BindingContext& c = env_.state();
  if (p.target == "file") {
    const char* raw_path = payload_string(doc, "path");
    if (!raw_path) return true;
    bool kinds[3] = {false, false, false};  // read, write, delete
    auto add = [&](std::string_view verb) {
      if (verb == "read")
        kinds[0] = true;
      else if (verb == "write" || verb == "append")
        kinds[1] = true;
      else if (verb == "delete")
        kinds[2] = true;
    };
    add(p.action);
    if (const char* verb = payload_string(doc, "action")) add(verb);
    static const EffectKind kKinds[3] = {EffectKind::Read, EffectKind::Write, EffectKind::Delete};
    const std::string target = paths::normalize(raw_path, cwd, c.home);
    for (int i = 0; i < 3; ++i) {
      if (!kinds[i]) continue;
      Effect e;
      e.kind = kKinds[i];
      e.object = EffectObject::Path;
      e.target = target;
      e.via = "payload.path";
      if (!assert_effect(-1, e, cwd)) return false;
    }
    // A search under payload.path (an agent's Grep or Glob): the file-name glob in
    // payload.glob, and payload.pattern unless the proposal is a content search (Grep's
    // pattern is a regex over file contents, not a name), are reads of the files they
    // name, relative to payload.path (an exclusion, "!GLOB", reads nothing).
    if (kinds[0]) {
      const rapidjson::Value* tool = value_at(doc, {"context", "tool"});
      const bool content_search =
          tool && tool->IsString() && std::string_view(tool->GetString()) == "Grep";
      for (const char* field : {"glob", "pattern"}) {
        if (content_search && std::string_view(field) == "pattern") continue;
        const char* glob = payload_string(doc, field);
        if (!glob || glob[0] == '!') continue;  // "!GLOB" excludes files (rg): reads nothing
        Effect e;
        e.kind = EffectKind::Read;
        e.object = EffectObject::Path;
        e.target = paths::normalize(glob, target, c.home);
        e.via = std::string("payload.") + field;
        e.dynamic = std::string_view(glob).find_first_of("*?[{") != std::string_view::npos;
        if (!assert_effect(-1, e, target)) return false;
      }
    }
  } else if (p.target == "tool" && (p.action.empty() || p.action == "call")) {
    const char* tool = payload_string(doc, "tool");
    if (!tool) return true;
    const char* server = payload_string(doc, "server");
    buffer_.clear();
    table_.tool_effects(server ? server : "", tool, value_at(doc, {"payload", "args"}), cwd, c.home,
                        &buffer_);
    for (const auto& e : buffer_)
      if (!assert_effect(-1, e, cwd)) return false;
  } else if (p.target == "http") {
    const char* raw_url = payload_string(doc, "url");
    if (!raw_url) return true;
    const urls::Url& url = env_.state().url(raw_url);  // read once for the url fact too
    Effect e;
    e.kind = EffectKind::Network;
    e.object = EffectObject::Host;
    e.target = url.valid ? url.host : "";
    e.via = "payload.url";
    if (!assert_effect(-1, e, cwd)) return false;
  }
  return true;
}

}  // namespace warden
