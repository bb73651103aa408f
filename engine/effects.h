// EffectsTable: what a command does, as data. The shipped table (rules/effects.toml) says,
// per program and subcommand, which operands and options execute code, write, delete, read,
// reach the network, dump the environment or change privileges, and which options take a
// value. effects_of() turns one parsed simple command into Effects; the engine asserts them
// as `effect` facts so rules judge what will happen, not program names. Immutable once
// parsed; thread-safe to query. The format is documented in docs/RULES.md ("Command effects").
// The same table maps tools (the `tool` target: MCP tools, an agent's own tools) to the
// effects of their arguments ([tool."SERVER/TOOL"] / [tool.TOOL]); tool_effects() reads them.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include "bindings/shell_parser.h"
#include "engine/diagnostic.h"
#include "engine/rule_source.h"

namespace warden {

struct TomlDocument;  // engine/toml_document.h (internal): a *.toml file parsed once

enum class EffectKind { Exec, Write, Delete, Read, Network, EnvDump, Privilege, Unknown };
enum class EffectObject { Path, Host, Program, Code, None };

std::string_view effect_kind_name(EffectKind kind);  // "exec" "write" … "env-dump" … "unknown"
std::string_view effect_object_name(EffectObject object);  // "path" "host" "program" "code" "none"

struct Effect {
  EffectKind kind = EffectKind::Unknown;
  EffectObject object = EffectObject::None;
  // Path: the word as the program sees it, normalized against cwd and home (paths::normalize);
  // the engine adds class, resolved path and in-workspace. Host: lower-case host name or IP
  // (no port, no user). Program: the program name run. Code: the code text as written.
  std::string target;
  std::string program;  // the command's program ("git"), as in the shell-command fact
  std::string
      subcommand;  // "status" (git status), "rm" (cmake -E rm), "pytest" (python -m pytest); "" if none
  // Where it came from: "operand", "-o", "--compress-program", "program", "wrapper",
  // "subcommand", "redirect", "match"; an option as the table lists it, also when abbreviated.
  std::string via;
  bool dynamic =
      false;  // the word holds an expansion or glob whose value is known only at run time
};

class EffectsTable {
 public:
  // Parses one effects file (TOML with [program.NAME] and [tool.KEY] tables). Every problem
  // is an E_EFFECTS_TABLE diagnostic with the file and line (in line order): TOML syntax,
  // unknown keys, wrong types, unknown kinds, bad regexes, bad option, program, tool or
  // argument names, an option listed both as a flag and with a value, an alias that is
  // already a name, sub tables no subcommand selects. Returns null if there was any.
  static std::shared_ptr<EffectsTable> parse(const RuleSource& source, Diagnostics* diagnostics);
  // The same for a file already parsed as TOML (Policy::compile parses each file once).
  static std::shared_ptr<EffectsTable> parse(const TomlDocument& document,
                                             Diagnostics* diagnostics);
  // Adds the programs and tools of `other` (a later file). A program (or alias) or a tool
  // defined in both is an E_EFFECTS_TABLE error at the later place naming the earlier one;
  // returns false then and adds nothing of `other`. Not thread-safe: merge while loading,
  // before any query.
  bool merge(const EffectsTable& other, Diagnostics* diagnostics);

  // Appends the effects of one simple command run in `cwd` (absolute) with `home` as "~".
  // A program the table does not know, an unknown subcommand of a program with subcommands,
  // or a dynamic program name gives one Unknown effect (object Program, target the name;
  // via "program", or "subcommand" with the unknown word in `subcommand`); the words after
  // an unknown subcommand have no effects of their own.
  // Wrappers that change privileges (sudo, doas, su, pkexec, runuser) add a Privilege effect.
  // Redirections are effects of the command: `>`, `>>`, `>|`, `&>`, `>&FILE` write, `<`
  // reads, `<>` both (via "redirect"); fd duplications and here-documents have none.
  // An assignment-only command (empty program) has no effects but its redirections'.
  // Order: wrappers, redirections, option effects in argv order, operands, run, match.
  //
  // How the words are read (the format is in docs/RULES.md):
  // - Options before a subcommand are read with the program's spec, the rest with the
  //   sub's; an option a sub does not list is looked up in the specs above it, except in
  //   a sub named by a subcommand option (`python -m pytest -c F`: pytest's words) and
  //   never the subcommand option itself. `run` and `match` entries are those of the
  //   selected (innermost) spec only. `subcommand` is the path of selected subs joined by
  //   spaces, each as written ("compose up", "run env"; `git st` → "st" even when
  //   [program.git.sub.status] has aliases = ["st"]: aliases share effects, not names). Subs nest at most 7 levels.
  // - Operand positions (and `last`) count per spec; a sub starts at position 0.
  // - A flag "operands:KIND" replaces the kind of every operand whose kind is a path kind
  //   (read, write, delete, exec); via is then the flag ("-delete"). Code and host operands
  //   (a sed script) keep theirs.
  // - A match regex with a capture group takes the first group as the word
  //   (`git show HEAD:.env` → read .env); via "match".
  // - Path words "-" (standard input/output) have no effect. A network word that is a
  //   file: URL or a local path ("/srv/repo.git", "./x", "~/x") is a read of that path.
  void effects_of(const shell::SimpleCommand& cmd, const std::string& cwd, const std::string& home,
                  std::vector<Effect>* out) const;

  // Appends the effects of one tool call: the entry "SERVER/TOOL" when `server` is not
  // empty and the table has it, else the entry "TOOL". Each argument an entry names
  // (`payload.args.NAME`, dotted for nested objects) gives one effect of its kind, or one
  // per element when it is an array of strings: a path kind (read, write, delete, exec)
  // is the path normalized against `cwd` (object Path), network the host of a URL or
  // "[user@]host[:…]" (a file: URL or a local path is a read of it), exec-program the
  // program of a command line, exec-code the text, patch a patch in the apply_patch format
  // (each file it adds, updates or moves to is written, each it deletes or moves away is
  // deleted; a patch naming no file is Unknown). Via is "payload.args.NAME"; program is the
  // tool name; subcommand "".
  // An argument listed as `none` is data (text, a count, an object of options …): no
  // effect, whatever its shape, also when absent.
  // Fails closed: a tool the table does not know gives one Unknown effect (object
  // Program, target the tool, via "payload.tool"); a named argument that is absent, null,
  // not a string (or an array holding a non-string) gives one Unknown effect with via
  // "payload.args.NAME". The entry is the whole of what is known of the tool (closed
  // world): every argument it does not name (a member of `args`, or of an object below a
  // dotted name, that no listed name covers) gives one Unknown effect via
  // "payload.args.NAME" after the named ones, and `args` that is not an object gives one via
  // "payload.args" (unless a named argument was already Unknown). An entry naming no
  // argument, called without arguments, gives no effect at all. `args` may be null (no
  // arguments).
  void tool_effects(std::string_view server, std::string_view tool, const rapidjson::Value* args,
                    const std::string& cwd, const std::string& home,
                    std::vector<Effect>* out) const;

  bool knows(std::string_view program) const;
  bool knows_tool(std::string_view server, std::string_view tool) const;
  std::size_t size() const;  // programs, aliases included
  std::size_t tool_count() const;

  struct Program;  // defined in effects_spec.h
  struct Tool;     // defined in effects_spec.h
  // The entry of `program` (its name or an alias), or null when the table has none.
  const Program* find(std::string_view program) const;
  ~EffectsTable();
  EffectsTable();

 private:
  const Tool* find_tool(std::string_view server, std::string_view tool) const;
  std::vector<std::shared_ptr<const Program>> programs_;
  std::vector<std::shared_ptr<const Tool>> tools_;
  struct Index;
  std::unique_ptr<Index> index_;
};

}  // namespace warden
