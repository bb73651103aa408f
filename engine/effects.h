// EffectsTable: what a command does, as data. The shipped table (rules/effects.toml) says,
// per program and subcommand, which operands and options execute code, write, delete, read,
// reach the network, dump the environment or change privileges, and which options take a
// value. effects_of() turns one parsed simple command into Effects; the engine asserts them
// as `effect` facts so rules judge what will happen, not program names. Immutable once
// parsed; thread-safe to query. The format is documented in docs/RULES.md ("Command effects").
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "bindings/shell_parser.h"
#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

enum class EffectKind { Exec, Write, Delete, Read, Network, EnvDump, Privilege, Unknown };
enum class EffectObject { Path, Host, Program, Code, None };

std::string_view effect_kind_name(EffectKind kind);      // "exec" "write" … "env-dump" … "unknown"
std::string_view effect_object_name(EffectObject object);  // "path" "host" "program" "code" "none"

struct Effect {
  EffectKind kind = EffectKind::Unknown;
  EffectObject object = EffectObject::None;
  // Path: the word as the program sees it, normalized against cwd and home (paths::normalize);
  // the engine adds class, resolved path and in-workspace. Host: lower-case host name or IP
  // (no port, no user). Program: the program name run. Code: the code text as written.
  std::string target;
  std::string program;     // the command's program ("git"), as in the shell-command fact
  std::string subcommand;  // "status" (git status), "rm" (cmake -E rm), "pytest" (python -m pytest); "" if none
  std::string via;         // where it came from: "operand", "-o", "--compress-program", "program", "wrapper"
  bool dynamic = false;    // the word holds an expansion or glob whose value is known only at run time
};

class EffectsTable {
 public:
  // Parses one effects file (TOML with [program.NAME] tables). Every problem is an
  // E_EFFECTS_TABLE diagnostic with the file and line; returns null if there was any.
  static std::shared_ptr<EffectsTable> parse(const RuleSource& source, Diagnostics* diagnostics);
  // Adds the programs of `other` (a later file). A program defined in both is an
  // E_EFFECTS_TABLE error naming both places; returns false then.
  bool merge(const EffectsTable& other, Diagnostics* diagnostics);

  // Appends the effects of one simple command run in `cwd` (absolute) with `home` as "~".
  // A program the table does not know, an unknown subcommand of a program with subcommands,
  // or a dynamic program name gives one Unknown effect (object Program, target the name).
  // Wrappers that change privileges (sudo, doas, su, pkexec, runuser) add a Privilege effect.
  // An assignment-only command (empty program) has no effects.
  void effects_of(const shell::SimpleCommand& cmd, const std::string& cwd, const std::string& home,
                  std::vector<Effect>* out) const;

  bool knows(std::string_view program) const;
  std::size_t size() const;  // programs, aliases included

  struct Program;  // defined in effects.cpp
  ~EffectsTable();
  EffectsTable();

 private:
  std::vector<std::shared_ptr<const Program>> programs_;
  struct Index;
  std::unique_ptr<Index> index_;
};

}  // namespace warden
