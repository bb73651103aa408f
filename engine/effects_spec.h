// The effects table's spec tree, shared by the table's parts (internal to the engine): what
// a word is to a program (K), a program's options, operands, runs, matches and subcommands
// (Spec), and the table's Program, Tool and Index entries. effects.cpp holds the names and
// lookups, effects_parse.cpp reads the TOML into this tree, effects_eval.cpp evaluates a
// simple command against it, effects_tools.cpp a tool call.
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "engine/effects.h"

namespace warden {
namespace effects_spec {

inline constexpr std::size_t kMaxSubDepth = 8;  // a program and up to 7 levels of subs

// What a word (operand, option value, run target, match hit) is to the program.
enum class K : std::uint8_t {
  None,
  Read,
  Write,
  Delete,
  Exec,         // a path that is executed (or whose content is run)
  ExecProgram,  // a program or command line run: object program
  ExecCode,     // code text: object code
  Network,      // URL or host: object host
  EnvDump,
  Privilege,
  Unknown,
  Cwd,    // changes the directory later relative paths are read from
  List,   // a file (or "-", standard input) naming what the program reads, runs or reaches:
          // the file is read, and what it names is unknown
  Patch,  // tools only: a patch in the apply_patch format; each file it adds, updates,
          // moves or deletes is a write or delete
};

struct KindName {
  std::string_view name;
  K kind;
};

inline constexpr KindName kKindNames[] = {
    {"none", K::None},           {"read", K::Read},       {"write", K::Write},
    {"delete", K::Delete},       {"exec", K::Exec},       {"exec-program", K::ExecProgram},
    {"exec-code", K::ExecCode},  {"network", K::Network}, {"env-dump", K::EnvDump},
    {"privilege", K::Privilege}, {"unknown", K::Unknown}, {"cwd", K::Cwd},
    {"list", K::List},
};

inline bool kind_from_name(std::string_view name, K* kind) {
  for (const KindName& k : kKindNames) {
    if (k.name == name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

inline bool is_path_kind(K k) {
  return k == K::Read || k == K::Write || k == K::Delete || k == K::Exec;
}

inline EffectKind effect_kind(K k) {
  switch (k) {
    case K::Read:
      return EffectKind::Read;
    case K::Write:
      return EffectKind::Write;
    case K::Delete:
      return EffectKind::Delete;
    case K::Exec:
    case K::ExecProgram:
    case K::ExecCode:
      return EffectKind::Exec;
    case K::Network:
      return EffectKind::Network;
    case K::EnvDump:
      return EffectKind::EnvDump;
    case K::Privilege:
      return EffectKind::Privilege;
    case K::None:
    case K::Unknown:
    case K::Cwd:
    case K::List:
    case K::Patch:
      break;
  }
  return EffectKind::Unknown;
}

struct Option {
  std::string name;  // as listed: "-o", "--output", "-name" (single-dash)
  K kind = K::None;  // the value's kind (takes_value) or the flag's effect
  bool takes_value = false;
  bool operands = false;     // flag "operands:KIND": turns the path operands into `kind`
  bool backup = false;       // flag "backup": operands:write, and its optional value (`-i.bak`,
                             // `--in-place=SUF`) names each operand's backup copy, written too
  bool path_list = false;    // option "paths:KIND": the value is a `:`-separated list of paths
  bool selects_sub = false;  // the subcommand option: its value names the sub
};

struct RunEffect {
  K kind = K::None;
  std::string target;  // "" when none was given
};

struct Match {
  std::unique_ptr<re2::RE2> re;
  K kind = K::None;
  bool argv = false;    // every word after the program, not only the operands
  bool groups = false;  // the regex has a capture group: the first one is the word
  std::string pattern;
};

struct Spec {
  std::vector<Option> options;  // sorted by name
  std::vector<K> operands;
  bool repeat = false;  // the last operand kind repeats ("K...")
  bool has_last = false;
  K last = K::None;
  std::vector<RunEffect> run;
  bool single_dash = false;
  bool stop_at_operand = false;
  // What an option no spec of the chain lists is: unknown (the default, closed world),
  // none (every option of this program was reviewed as harmless), or inherited from the
  // spec above (a sub that does not say).
  enum class Others : std::uint8_t { Inherit, Unknown, None };
  Others others = Others::Inherit;
  // The effect of running with no operand and no option that names code: the program
  // reads its program or its file names from standard input (`sh`, `bc`, `sqlite3`).
  bool has_input = false;
  K input = K::None;
  std::vector<std::string> no_input;  // options after which the program reads no input (--version)
  // Unlisted option words this regex matches in full are harmless (`-Wall`, `-O2` of a
  // compiler); code words (exec-code) it matches in full are not code (`bt` of a debugger).
  std::unique_ptr<re2::RE2> harmless_match;
  std::unique_ptr<re2::RE2> safe_code;
  bool remote = false;
  bool one_dash_long = false;  // getopt_long_only: "-eval" is "--eval" when that is listed
  bool subcommands = false;
  bool unknown_subs_none = false;
  std::string name;  // a sub's name as the table lists it ("" for a program)
  std::unordered_map<std::string, const Spec*> subs;  // names and aliases
  std::vector<std::unique_ptr<Spec>> owned_subs;
  std::vector<Match> matches;
  // The match regexes over argv and over operands as one RE2 set each, so a word is
  // scanned once whatever their number; `ids` maps a set index to its `matches` index.
  // A set that could not be built (memory) is null: the regexes are then tried one by one;
  // so is the set of a single regex, which that regex (compiled already) matches alone.
  struct MatchSet {
    std::unique_ptr<re2::RE2::Set> set;
    std::vector<std::uint32_t> ids;
  };
  MatchSet argv_set;
  MatchSet operand_set;

  const Option* find(std::string_view name) const {
    auto it = std::lower_bound(options.begin(), options.end(), name,
                               [](const Option& o, std::string_view n) { return o.name < n; });
    if (it != options.end() && it->name == name) return &*it;
    return nullptr;
  }

  const Spec* sub(const std::string& name) const {
    auto it = subs.find(name);
    return it == subs.end() ? nullptr : it->second;
  }

  K operand_kind(std::size_t pos, std::size_t count) const {
    if (has_last && count >= 2 && pos == count - 1) return last;
    if (pos < operands.size()) return operands[pos];
    if (repeat && !operands.empty()) return operands.back();
    // Closed world: an operand the spec does not describe (past its positions, or any
    // operand of a spec that lists none) is not data by default.
    return K::Unknown;
  }
};

}  // namespace effects_spec

struct EffectsTable::Program {
  std::string name;
  std::vector<std::string> aliases;
  std::string file;
  long line = 0;
  effects_spec::Spec spec;
};

// A [tool.NAME] entry: which arguments have which effect, in table order.
struct EffectsTable::Tool {
  struct Arg {
    effects_spec::K kind = effects_spec::K::None;
    std::string name;               // as listed: "path", "options.target"
    std::vector<std::string> path;  // the member names of `name`
    long line = 0;
  };
  std::string name;  // "SERVER/TOOL" or "TOOL"
  std::string file;
  long line = 0;
  std::vector<Arg> args;
};

struct EffectsTable::Index {
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  // Names and aliases.
  std::unordered_map<std::string, const Program*, Hash, std::equal_to<>> by_name;
  // Tool entries by key ("SERVER/TOOL" or "TOOL").
  std::unordered_map<std::string, const Tool*, Hash, std::equal_to<>> by_tool;
};

}  // namespace warden
