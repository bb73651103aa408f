// EffectsTable: the command-effects table read from TOML (toml++) and evaluated per simple
// command. Parsing builds one immutable spec tree per program (options sorted for binary
// search and prefix lookup, subcommands in hash maps, match regexes compiled once) and one
// hash index from every program name and alias; effects_of walks argv once, getopt-like.
#include "engine/effects.h"

#include <re2/re2.h>
#include <re2/set.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <tuple>
#include <unordered_map>

#include "bindings/paths.h"
#include "bindings/urls.h"
#include "engine/toml_document.h"

namespace warden {

// ---------------------------------------------------------------- spec tree

namespace {

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

constexpr KindName kKindNames[] = {
    {"none", K::None},           {"read", K::Read},       {"write", K::Write},
    {"delete", K::Delete},       {"exec", K::Exec},       {"exec-program", K::ExecProgram},
    {"exec-code", K::ExecCode},  {"network", K::Network}, {"env-dump", K::EnvDump},
    {"privilege", K::Privilege}, {"unknown", K::Unknown}, {"cwd", K::Cwd},
    {"list", K::List},
};

bool kind_from_name(std::string_view name, K* kind) {
  for (const KindName& k : kKindNames) {
    if (k.name == name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

bool is_path_kind(K k) { return k == K::Read || k == K::Write || k == K::Delete || k == K::Exec; }

EffectKind effect_kind(K k) {
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

}  // namespace

struct EffectsTable::Program {
  std::string name;
  std::vector<std::string> aliases;
  std::string file;
  long line = 0;
  Spec spec;
};

// A [tool.NAME] entry: which arguments have which effect, in table order.
struct EffectsTable::Tool {
  struct Arg {
    K kind = K::None;
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

bool EffectsTable::knows(std::string_view program) const {
  return index_->by_name.find(program) != index_->by_name.end();
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

// ---------------------------------------------------------------- parsing

namespace {

constexpr std::int64_t kRegexMaxMem = 8 << 20;
constexpr std::size_t kMaxSubDepth = 8;  // a program and up to 7 levels of subs

class Loader {
 public:
  Loader(const std::string& file, Diagnostics* diagnostics)
      : file_(file), diagnostics_(diagnostics) {}

  bool failed() const { return failed_; }

  void error(long line, std::string message) {
    failed_ = true;
    if (diagnostics_ != nullptr) {
      diagnostics_->push_back(
          {code::kEffectsTable, Severity::Error, file_, line, "", std::move(message)});
    }
  }

  // An entry that is valid but probably incomplete (`warden check` prints it; --strict fails).
  void warn(long line, std::string message) {
    if (diagnostics_ != nullptr) {
      diagnostics_->push_back(
          {code::kEffectsTable, Severity::Warning, file_, line, "", std::move(message)});
    }
  }

  static long line_of(const toml::node& node) {
    return static_cast<long>(node.source().begin.line);
  }
  static long line_of(const toml::key& key) { return static_cast<long>(key.source().begin.line); }

  // A program table or a sub table. `where` is "program.git" or "program.git.sub.log".
  void spec(const toml::table& table, const std::string& where, Spec* spec,
            std::vector<std::pair<std::string, long>>* aliases, std::size_t depth = 1) {
    // Scalars first: single-dash decides how option names are checked.
    if (const toml::node* n = table.get("single-dash"))
      spec->single_dash = boolean(*n, where, "single-dash");
    if (const toml::node* n = table.get("stop-at-operand"))
      spec->stop_at_operand = boolean(*n, where, "stop-at-operand");
    if (const toml::node* n = table.get("remote")) spec->remote = boolean(*n, where, "remote");
    if (const toml::node* n = table.get("one-dash-long"))
      spec->one_dash_long = boolean(*n, where, "one-dash-long");
    if (const toml::node* n = table.get("subcommands"))
      spec->subcommands = boolean(*n, where, "subcommands");
    if (const toml::node* n = table.get("other-options")) {
      std::string v;
      if (string(*n, where, "other-options", &v)) {
        if (v == "none") {
          spec->others = Spec::Others::None;
        } else if (v == "unknown") {
          spec->others = Spec::Others::Unknown;
        } else {
          error(line_of(*n),
                where + ".other-options: \"" + v + "\" is neither \"none\" nor \"unknown\"");
        }
      }
    }
    if (const toml::node* n = table.get("input")) {
      std::string v;
      if (string(*n, where, "input", &v)) {
        if (!kind_from_name(v, &spec->input) || spec->input == K::None || spec->input == K::Cwd ||
            spec->input == K::Network || is_path_kind(spec->input)) {
          error(line_of(*n),
                where + ".input: \"" + v +
                    "\" is not an input kind (exec-code, exec-program, unknown, env-dump)");
        } else {
          spec->has_input = true;
        }
      }
    }
    for (const char* key : {"harmless-match", "safe-code"}) {
      const toml::node* n = table.get(key);
      std::string v;
      if (n == nullptr || !string(*n, where, key, &v)) continue;
      RE2::Options opts;
      opts.set_log_errors(false);
      opts.set_max_mem(kRegexMaxMem);
      auto re = std::make_unique<re2::RE2>(v, opts);
      if (!re->ok()) {
        error(line_of(*n), where + "." + key + ": bad regex '" + v + "': " + re->error());
        continue;
      }
      (std::string_view(key) == "safe-code" ? spec->safe_code : spec->harmless_match) =
          std::move(re);
    }
    if (const toml::node* n = table.get("unknown-subcommands")) {
      std::string v;
      if (string(*n, where, "unknown-subcommands", &v)) {
        if (v == "none") {
          spec->unknown_subs_none = true;
        } else if (v != "unknown") {
          error(line_of(*n),
                where + ".unknown-subcommands: \"" + v + "\" is neither \"none\" nor \"unknown\"");
        }
      }
    }
    std::string sub_option;
    long sub_option_line = 0;
    if (const toml::node* n = table.get("subcommand-option")) {
      if (string(*n, where, "subcommand-option", &sub_option)) {
        sub_option_line = line_of(*n);
        if (!option_name_ok(sub_option, spec->single_dash, where + ".subcommand-option",
                            sub_option_line)) {
          sub_option.clear();
        }
      }
    }

    // Every option name once, over values, options and flags.
    std::unordered_map<std::string, long> seen;
    auto add_option = [&](Option o, long line, const std::string& what) {
      if (!option_name_ok(o.name, spec->single_dash, what, line)) return;
      auto [it, fresh] = seen.emplace(o.name, line);
      if (!fresh) {
        error(line, what + ": option \"" + o.name + "\" is listed twice (also on line " +
                        std::to_string(it->second) + ")");
        return;
      }
      spec->options.push_back(std::move(o));
    };

    std::vector<std::pair<std::string, long>> values;
    std::vector<std::pair<std::string, long>> no_effect;  // harmless options, for the checks
    std::unordered_map<std::string, long> reviewed;       // names the checks should not report
    const toml::table* subs = nullptr;
    long subs_line = 0;
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      const long line = line_of(node);
      if (k == "single-dash" || k == "stop-at-operand" || k == "remote" || k == "subcommands" ||
          k == "unknown-subcommands" || k == "subcommand-option" || k == "other-options" ||
          k == "input" || k == "one-dash-long" || k == "harmless-match" || k == "safe-code") {
        continue;
      } else if (k == "no-input") {
        for_strings(node, where + ".no-input", [&](const std::string& v, long l) {
          if (option_name_ok(v, spec->single_dash, where + ".no-input", l))
            spec->no_input.push_back(v);
        });
      } else if (k == "harmless") {
        for_strings(node, where + ".harmless", [&](const std::string& v, long l) {
          Option o;
          o.name = v;
          add_option(std::move(o), l, where + ".harmless");
          no_effect.emplace_back(v, l);
        });
      } else if (k == "reviewed") {
        for_strings(node, where + ".reviewed",
                    [&](const std::string& v, long l) { reviewed.emplace(v, l); });
      } else if (k == "aliases") {
        for_strings(node, where + ".aliases", [&](const std::string& v, long l) {
          if (!program_name_ok(v, where + ".aliases", l)) return;
          aliases->emplace_back(v, l);
        });
      } else if (k == "values") {
        for_strings(node, where + ".values", [&](const std::string& v, long l) {
          if (option_name_ok(v, spec->single_dash, where + ".values", l)) values.emplace_back(v, l);
        });
      } else if (k == "operands") {
        std::vector<std::pair<std::string, long>> items;
        for_strings(node, where + ".operands",
                    [&](const std::string& v, long l) { items.emplace_back(v, l); });
        for (std::size_t i = 0; i < items.size(); ++i) {
          std::string name = items[i].first;
          if (name.ends_with("...")) {
            name.resize(name.size() - 3);
            if (i + 1 != items.size()) {
              error(items[i].second, where + ".operands: only the last kind may repeat (\"" +
                                         items[i].first + "\")");
              continue;
            }
            spec->repeat = true;
          }
          K kind;
          if (!value_kind(name, where + ".operands", items[i].second, &kind)) continue;
          spec->operands.push_back(kind);
        }
      } else if (k == "last") {
        std::string v;
        if (string(node, where, "last", &v) && value_kind(v, where + ".last", line, &spec->last)) {
          spec->has_last = true;
        }
      } else if (k == "run") {
        for_strings(node, where + ".run",
                    [&](const std::string& v, long l) { run(v, where + ".run", l, spec); });
      } else if (k == "options") {
        const toml::table* t = node.as_table();
        if (t == nullptr) {
          error(line, where + ".options must be a table of option = \"kind\"");
          continue;
        }
        for (auto&& [okey, onode] : *t) {
          std::string v;
          const std::string oname(okey.str());
          if (!string(onode, where + ".options", oname, &v)) continue;
          Option o;
          o.name = oname;
          o.takes_value = true;
          if (!value_kind(v, where + ".options." + oname, line_of(onode), &o.kind)) continue;
          add_option(std::move(o), line_of(onode), where + ".options");
        }
      } else if (k == "flags") {
        const toml::table* t = node.as_table();
        if (t == nullptr) {
          error(line, where + ".flags must be a table of flag = \"kind\"");
          continue;
        }
        for (auto&& [fkey, fnode] : *t) {
          std::string v;
          const std::string fname(fkey.str());
          if (!string(fnode, where + ".flags", fname, &v)) continue;
          Option o;
          o.name = fname;
          std::string_view kind_text = v;
          if (kind_text.starts_with("operands:")) {
            o.operands = true;
            kind_text.remove_prefix(9);
          }
          const std::string what = where + ".flags." + fname;
          if (!kind_from_name(kind_text, &o.kind)) {
            error(line_of(fnode), what + ": unknown kind \"" + v + "\"");
            continue;
          }
          if (o.kind == K::Cwd || o.kind == K::List || (o.operands && o.kind == K::None)) {
            error(line_of(fnode), what + ": \"" + v + "\" is not a flag kind");
            continue;
          }
          add_option(std::move(o), line_of(fnode), where + ".flags");
        }
      } else if (k == "match") {
        matches(node, where + ".match", spec);
      } else if (k == "sub") {
        subs = node.as_table();
        subs_line = line;
        if (subs == nullptr) error(line, where + ".sub must hold [" + where + ".sub.NAME] tables");
      } else {
        const long kline = line_of(key) != 0 ? line_of(key) : line;
        error(kline, where + ": unknown key \"" + k + "\"");
      }
    }

    // Values take a value and have no effect; one also listed under options keeps its
    // effect there; one listed under flags is a contradiction.
    for (auto& [name, line] : values) {
      const std::string& value_name =
          name;  // a lambda may not capture a structured binding (clang 14)
      auto it = std::find_if(spec->options.begin(), spec->options.end(),
                             [&](const Option& o) { return o.name == value_name; });
      if (it == spec->options.end()) {
        Option o;
        o.name = name;
        o.takes_value = true;
        spec->options.push_back(std::move(o));
      } else if (!it->takes_value) {
        error(line, where + ".values: \"" + name + "\" is also a flag (a flag takes no value)");
      }
    }

    if (!sub_option.empty()) {
      auto it = std::find_if(spec->options.begin(), spec->options.end(),
                             [&](const Option& o) { return o.name == sub_option; });
      if (it == spec->options.end()) {
        Option o;
        o.name = sub_option;
        o.takes_value = true;
        o.selects_sub = true;
        spec->options.push_back(std::move(o));
      } else if (it->takes_value && it->kind == K::None) {
        it->selects_sub = true;
      } else {
        error(sub_option_line, where + ".subcommand-option \"" + sub_option +
                                   "\" is also listed as an option or flag with an effect");
      }
    }
    std::sort(spec->options.begin(), spec->options.end(),
              [](const Option& a, const Option& b) { return a.name < b.name; });
    build_match_sets(spec);
    check_complete(table, where, *spec, values, no_effect, reviewed);

    if (subs != nullptr) {
      std::vector<std::pair<const Spec*, std::vector<std::pair<std::string, long>>>> sub_aliases;
      if (!spec->subcommands && sub_option.empty()) {
        error(subs_line,
              where + " has sub tables but neither subcommands = true nor a subcommand-option");
      }
      for (auto&& [skey, snode] : *subs) {
        const std::string sname(skey.str());
        const std::string swhere = where + ".sub." + sname;
        const toml::table* st = snode.as_table();
        if (st == nullptr) {
          error(line_of(snode), swhere + " must be a table");
          continue;
        }
        if (sname.empty()) {
          error(line_of(snode), where + ".sub: empty subcommand name");
          continue;
        }
        if (depth >= kMaxSubDepth) {
          error(line_of(snode), swhere + ": subcommands nest deeper than " +
                                    std::to_string(kMaxSubDepth - 1) + " levels");
          continue;
        }
        auto child = std::make_unique<Spec>();
        child->name = sname;
        std::vector<std::pair<std::string, long>> child_aliases;
        this->spec(*st, swhere, child.get(), &child_aliases, depth + 1);
        spec->subs.emplace(sname, child.get());
        sub_aliases.emplace_back(child.get(), std::move(child_aliases));
        spec->owned_subs.push_back(std::move(child));
      }
      // Aliases after every sub (an alias clashes with a sub listed later too), in file
      // order (the later of two is the error).
      std::vector<std::tuple<long, std::string, const Spec*>> ordered;
      for (auto& [child, child_aliases] : sub_aliases) {
        for (auto& [alias, line] : child_aliases) ordered.emplace_back(line, alias, child);
      }
      std::stable_sort(ordered.begin(), ordered.end(), [](const auto& a, const auto& b) {
        return std::get<0>(a) < std::get<0>(b);
      });
      for (auto& [line, alias, child] : ordered) {
        auto [it, fresh] = spec->subs.emplace(alias, child);
        if (!fresh) {
          error(line, where + ".sub." + child->name + ".aliases: \"" + alias +
                          "\" is already a subcommand of " + where + " (" + it->second->name + ")");
        }
      }
    }
  }

  // Warnings for entries that are probably incomplete: an option without effect whose name
  // says it names a file, a configuration or code; a subcommand named like one that runs
  // something (`exec`, `run`, `dlx`, `shell` …) with no exec effect; an interpreter (exec
  // first operand, options end at it) that says nothing about reading its program from
  // standard input. `reviewed = ["-f"]` records that such a listing was checked.
  void check_complete(const toml::table& table, const std::string& where, const Spec& spec,
                      const std::vector<std::pair<std::string, long>>& values,
                      const std::vector<std::pair<std::string, long>>& no_effect,
                      const std::unordered_map<std::string, long>& reviewed) {
    static const RE2 kFileName(
        "--?(?:[a-z0-9]+-)*(?:file|files|config|conf|rcfile|rc|script|eval|exec|execute|command|"
        "cmd|load|"
        "require|plugin|plugins|preload|init-file|batch|source|hook|hooks)(?:-(?:file|path|dir|"
        "from))?");
    auto check = [&](const std::vector<std::pair<std::string, long>>& list, const char* as) {
      for (const auto& [name, line] : list) {
        if (reviewed.count(name) != 0) continue;
        const Option* o = spec.find(name);
        if (o == nullptr || o->kind != K::None || o->selects_sub) continue;
        if (name == "-f" || RE2::FullMatch(name, kFileName)) {
          warn(line,
               where + "." + as + ": \"" + name +
                   "\" has no effect, but its name says it names a file, a configuration or code "
                   "(give it a kind, or list it in reviewed)");
        }
      }
    };
    check(values, "values");  // (a harmless flag takes no value: it names nothing)
    (void)no_effect;
    const long line = table.source().begin.line;
    static const std::array<std::string_view, 12> kRunners = {
        "exec",    "x",    "run",    "dlx",    "shell",      "eval",
        "console", "repl", "script", "tunnel", "run-script", "exec-command"};
    const bool runner_name =
        std::find(kRunners.begin(), kRunners.end(), std::string_view(spec.name)) != kRunners.end();
    if (runner_name && reviewed.count(spec.name) == 0) {
      bool runs = spec.has_input;
      auto code = [](K k) { return k == K::Exec || k == K::ExecCode || k == K::ExecProgram; };
      for (K k : spec.operands) runs = runs || code(k);
      runs = runs || (spec.has_last && code(spec.last));
      for (const RunEffect& r : spec.run) runs = runs || code(r.kind);
      for (const Match& m : spec.matches) runs = runs || code(m.kind);
      if (!runs) {
        warn(line, where + ": a subcommand named \"" + spec.name +
                       "\" has no exec effect (run, operands or matches): what it runs is not "
                       "accounted for");
      }
    }
    if (!spec.has_input && spec.stop_at_operand && !spec.operands.empty() &&
        spec.operands[0] == K::Exec && spec.name.empty() && reviewed.count("input") == 0) {
      warn(line, where +
                     ": runs its first operand as a program but says nothing about standard input "
                     "(input = \"exec-code\" when it reads its program from there without one)");
    }
  }

  static void build_match_sets(Spec* spec) {
    for (bool argv : {true, false}) {
      Spec::MatchSet& ms = argv ? spec->argv_set : spec->operand_set;
      RE2::Options opts;
      opts.set_log_errors(false);
      opts.set_max_mem(kRegexMaxMem);
      for (std::size_t i = 0; i < spec->matches.size(); ++i)
        if (spec->matches[i].argv == argv) ms.ids.push_back(static_cast<std::uint32_t>(i));
      if (ms.ids.size() < 2) continue;  // no set to scan once: the regex is tried alone
      auto set = std::make_unique<re2::RE2::Set>(opts, RE2::UNANCHORED);
      bool ok = true;
      for (std::uint32_t i : ms.ids) ok = ok && set->Add(spec->matches[i].pattern, nullptr) >= 0;
      if (ok && set->Compile()) ms.set = std::move(set);
    }
  }

  // A [tool.NAME] table: keys are effect kinds, each an array of argument names.
  void tool(const toml::table& table, const std::string& where, EffectsTable::Tool* tool) {
    std::unordered_map<std::string, long> seen;  // argument name and kind → line
    for (auto&& [key, node] : table) {
      const std::string k(key.str());
      K kind = K::None;
      if (k == "patch") {
        kind = K::Patch;
      } else if (!kind_from_name(k, &kind) || kind == K::Cwd || kind == K::Unknown ||
                 kind == K::EnvDump || kind == K::Privilege || kind == K::List) {
        const long kline = line_of(key) != 0 ? line_of(key) : line_of(node);
        error(kline, where + ": unknown key \"" + k +
                         "\" (a tool entry holds read, write, delete, exec, exec-program, "
                         "exec-code, network, patch or none)");
        continue;
      }
      for_strings(node, where + "." + k, [&](const std::string& v, long l) {
        EffectsTable::Tool::Arg arg;
        arg.kind = kind;
        arg.name = v;
        arg.line = l;
        std::size_t start = 0;
        bool ok = !v.empty();
        while (ok) {
          const std::size_t dot = v.find('.', start);
          std::string part =
              v.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
          if (part.empty() || part.find_first_of(" \t\r\n") != std::string::npos) ok = false;
          arg.path.push_back(std::move(part));
          if (dot == std::string::npos) break;
          start = dot + 1;
        }
        if (!ok) {
          error(l,
                where + "." + k + ": \"" + v + "\" is not an argument name (NAME or NAME.MEMBER…)");
          return;
        }
        if (auto [it, fresh] = seen.emplace(k + " " + v, l); !fresh) {
          error(l, where + "." + k + ": \"" + v + "\" is listed twice (also on line " +
                       std::to_string(it->second) + ")");
          return;
        }
        tool->args.push_back(std::move(arg));
      });
    }
    // toml++ iterates keys in name order: effects come in table (line) order.
    std::stable_sort(tool->args.begin(), tool->args.end(),
                     [](const auto& a, const auto& b) { return a.line < b.line; });
  }

  // A tool key: "TOOL" or "SERVER/TOOL", no whitespace or control characters.
  bool tool_name_ok(const std::string& name, long line) {
    const std::size_t slash = name.find('/');
    bool ok = !name.empty() &&
              name.find('/', slash == std::string::npos ? 0 : slash + 1) == std::string::npos &&
              slash != 0 && slash + 1 != name.size();
    for (unsigned char c : name) ok = ok && c > 0x20 && c != 0x7f;
    if (!ok) error(line, "tool \"" + name + "\" is not a tool name (TOOL or SERVER/TOOL)");
    return ok;
  }

  bool program_name_ok(const std::string& name, const std::string& what, long line) {
    if (name.empty() || name.find_first_of("/ \t\r\n$`") != std::string::npos) {
      error(line, what + ": \"" + name + "\" is not a program name");
      return false;
    }
    return true;
  }

 private:
  bool boolean(const toml::node& node, const std::string& where, std::string_view key) {
    if (const auto* b = node.as_boolean()) return b->get();
    error(line_of(node), where + "." + std::string(key) + " must be true or false");
    return false;
  }

  bool string(const toml::node& node, const std::string& where, std::string_view key,
              std::string* out) {
    if (const auto* s = node.as_string()) {
      *out = s->get();
      return true;
    }
    error(line_of(node), where + "." + std::string(key) + " must be a string");
    return false;
  }

  template <typename F>
  void for_strings(const toml::node& node, const std::string& what, F&& f) {
    const toml::array* a = node.as_array();
    if (a == nullptr) {
      error(line_of(node), what + " must be an array of strings");
      return;
    }
    for (const toml::node& item : *a) {
      const auto* s = item.as_string();
      if (s == nullptr) {
        error(line_of(item) != 0 ? line_of(item) : line_of(node),
              what + " must be an array of strings");
        continue;
      }
      f(s->get(), line_of(item) != 0 ? line_of(item) : line_of(node));
    }
  }

  bool value_kind(const std::string& name, const std::string& what, long line, K* kind) {
    if (!kind_from_name(name, kind)) {
      error(line, what + ": unknown kind \"" + name + "\"");
      return false;
    }
    if (*kind == K::Unknown) {
      error(line, what + ": \"unknown\" is not a value or operand kind");
      return false;
    }
    return true;
  }

  bool option_name_ok(const std::string& name, bool single_dash, const std::string& what,
                      long line) {
    if (name.size() < 2 || name[0] != '-' || name == "--" ||
        name.find_first_of("= \t\r\n") != std::string::npos) {
      error(line, what + ": \"" + name + "\" is not an option name");
      return false;
    }
    if (!single_dash && name[1] != '-' && name.size() > 2) {
      error(line,
            what + ": \"" + name +
                "\" is a one-dash option longer than one letter; it needs single-dash = true");
      return false;
    }
    return true;
  }

  void run(const std::string& text, const std::string& what, long line, Spec* spec) {
    RunEffect r;
    const std::size_t colon = text.find(':');
    const std::string kind_text = text.substr(0, colon);
    if (!kind_from_name(kind_text, &r.kind)) {
      error(line, what + ": unknown kind \"" + kind_text + "\" in \"" + text + "\"");
      return;
    }
    if (r.kind == K::None || r.kind == K::Cwd || r.kind == K::List) {
      error(line, what + ": \"" + kind_text + "\" is not an effect of running a program");
      return;
    }
    if (colon != std::string::npos) {
      r.target = text.substr(colon + 1);
      if (r.target.empty()) {
        error(line, what + ": empty target in \"" + text + "\"");
        return;
      }
      if (r.kind == K::EnvDump || r.kind == K::Privilege || r.kind == K::Unknown) {
        error(line, what + ": \"" + kind_text + "\" takes no target (\"" + text + "\")");
        return;
      }
    }
    spec->run.push_back(std::move(r));
  }

  void matches(const toml::node& node, const std::string& what, Spec* spec) {
    const toml::array* a = node.as_array();
    if (a == nullptr) {
      error(line_of(node), what + " must be an array of tables ([[" + what + "]])");
      return;
    }
    for (const toml::node& item : *a) {
      const toml::table* t = item.as_table();
      if (t == nullptr) {
        error(line_of(item), what + " entries must be tables");
        continue;
      }
      Match m;
      bool ok = true;
      bool have_regex = false;
      bool have_kind = false;
      for (auto&& [key, value] : *t) {
        const std::string k(key.str());
        if (k == "regex") {
          have_regex = true;
          std::string pattern;
          if (!string(value, what, k, &pattern)) {
            ok = false;
            continue;
          }
          RE2::Options opts;
          opts.set_log_errors(false);
          opts.set_max_mem(kRegexMaxMem);
          m.re = std::make_unique<re2::RE2>(pattern, opts);
          m.pattern = pattern;
          if (!m.re->ok()) {
            error(line_of(value), what + ": bad regex '" + pattern + "': " + m.re->error());
            ok = false;
          }
        } else if (k == "kind") {
          have_kind = true;
          std::string v;
          if (!string(value, what, k, &v)) {
            ok = false;
            continue;
          }
          if (!kind_from_name(v, &m.kind) || m.kind == K::Cwd || m.kind == K::List) {
            error(line_of(value), what + ": unknown kind \"" + v + "\"");
            ok = false;
          }
        } else if (k == "on") {
          std::string v;
          if (!string(value, what, k, &v)) {
            ok = false;
            continue;
          }
          if (v == "argv") {
            m.argv = true;
          } else if (v != "operands") {
            error(line_of(value), what + ".on: \"" + v + "\" is neither \"operands\" nor \"argv\"");
            ok = false;
          }
        } else {
          const long kline = line_of(key) != 0 ? line_of(key) : line_of(value);
          error(kline, what + ": unknown key \"" + k + "\"");
          ok = false;
        }
      }
      if (!have_regex || !have_kind) {
        error(line_of(item), what + ": an entry needs both regex and kind");
        ok = false;
      }
      if (ok) {
        m.groups = m.re->NumberOfCapturingGroups() > 0;
        spec->matches.push_back(std::move(m));
      }
    }
  }

  const std::string& file_;
  Diagnostics* diagnostics_;
  bool failed_ = false;
};

}  // namespace

std::shared_ptr<EffectsTable> EffectsTable::parse(const RuleSource& source,
                                                  Diagnostics* diagnostics) {
  Diagnostics syntax;
  std::optional<toml::table> root = parse_toml(source, code::kEffectsTable, "TOML: ", &syntax);
  if (!root) {
    if (diagnostics != nullptr) diagnostics->insert(diagnostics->end(), syntax.begin(), syntax.end());
    return nullptr;
  }
  return parse(TomlDocument{source, std::move(*root)}, diagnostics);
}

std::shared_ptr<EffectsTable> EffectsTable::parse(const TomlDocument& document, Diagnostics* diagnostics) {
  const RuleSource& source = document.source;
  const toml::table& root = document.root;
  // Problems are reported in line order (the TOML tables are read in key order).
  Diagnostics found;
  struct Report {
    Diagnostics* found;
    Diagnostics* out;
    ~Report() {
      std::stable_sort(found->begin(), found->end(),
                       [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
      if (out != nullptr) out->insert(out->end(), found->begin(), found->end());
    }
  } report{&found, diagnostics};
  Loader loader(source.path, &found);

  auto table = std::make_shared<EffectsTable>();
  // Every name (program or alias) → where it was defined, for clash messages.
  std::unordered_map<std::string, long> names;
  std::vector<std::pair<std::shared_ptr<Program>, std::vector<std::pair<std::string, long>>>>
      parsed;
  for (auto&& [key, node] : root) {
    const std::string k(key.str());
    if (k == "tool") {
      const toml::table* tools = node.as_table();
      if (tools == nullptr) {
        loader.error(Loader::line_of(node), "\"tool\" must hold [tool.NAME] tables");
        continue;
      }
      for (auto&& [tkey, tnode] : *tools) {
        const std::string name(tkey.str());
        const long line =
            Loader::line_of(tnode) != 0 ? Loader::line_of(tnode) : Loader::line_of(tkey);
        const toml::table* tt = tnode.as_table();
        if (tt == nullptr) {
          loader.error(line, "tool." + name + " must be a table");
          continue;
        }
        if (!loader.tool_name_ok(name, line)) continue;
        auto tool = std::make_shared<Tool>();
        tool->name = name;
        tool->file = source.path;
        tool->line = line;
        loader.tool(*tt, "tool.\"" + name + "\"", tool.get());  // TOML refuses a key twice
        table->tools_.push_back(std::move(tool));
      }
      continue;
    }
    if (k != "program") {
      loader.error(Loader::line_of(key) != 0 ? Loader::line_of(key) : Loader::line_of(node),
                   "unknown top-level key \"" + k +
                       "\" (an effects table holds [program.NAME] and [tool.NAME] tables)");
      continue;
    }
    const toml::table* programs = node.as_table();
    if (programs == nullptr) {
      loader.error(Loader::line_of(node), "\"program\" must hold [program.NAME] tables");
      continue;
    }
    for (auto&& [pkey, pnode] : *programs) {
      const std::string name(pkey.str());
      const std::string where = "program." + name;
      const toml::table* pt = pnode.as_table();
      const long line =
          Loader::line_of(pnode) != 0 ? Loader::line_of(pnode) : Loader::line_of(pkey);
      if (pt == nullptr) {
        loader.error(line, where + " must be a table");
        continue;
      }
      if (!loader.program_name_ok(name, "program", line)) continue;
      auto program = std::make_shared<Program>();
      program->name = name;
      program->file = source.path;
      program->line = line;
      std::vector<std::pair<std::string, long>> aliases;
      loader.spec(*pt, where, &program->spec, &aliases);
      if (auto [it, fresh] = names.emplace(name, line); !fresh) {
        loader.error(line, where + ": \"" + name + "\" is already defined on line " +
                               std::to_string(it->second));
      }
      parsed.emplace_back(std::move(program), std::move(aliases));
    }
  }
  // Aliases after all programs (an alias clashes with a program defined later too), in file
  // order (the later of two is the error).
  std::vector<std::tuple<long, std::string, Program*>> ordered;
  for (auto& [program, aliases] : parsed) {
    for (auto& [alias, line] : aliases) ordered.emplace_back(line, alias, program.get());
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  for (auto& [line, alias, program] : ordered) {
    if (auto [it, fresh] = names.emplace(alias, line); !fresh) {
      loader.error(line, "program." + program->name + ".aliases: \"" + alias +
                             "\" is already a program or alias (line " +
                             std::to_string(it->second) + ")");
      continue;
    }
    program->aliases.push_back(alias);
  }
  if (loader.failed()) return nullptr;
  for (auto& [program, aliases] : parsed) {
    table->index_->by_name.emplace(program->name, program.get());
    for (const std::string& alias : program->aliases)
      table->index_->by_name.emplace(alias, program.get());
    table->programs_.push_back(std::move(program));
  }
  for (const auto& tool : table->tools_) table->index_->by_tool.emplace(tool->name, tool.get());
  return table;
}

bool EffectsTable::merge(const EffectsTable& other, Diagnostics* diagnostics) {
  bool ok = true;
  for (const auto& program : other.programs_) {
    auto check = [&](const std::string& name) {
      auto it = index_->by_name.find(name);
      if (it == index_->by_name.end()) return true;
      if (diagnostics != nullptr) {
        diagnostics->push_back({code::kEffectsTable, Severity::Error, program->file, program->line,
                                "",
                                "program \"" + name + "\" is also defined in " + it->second->file +
                                    ":" + std::to_string(it->second->line)});
      }
      return false;
    };
    bool fresh = check(program->name);
    for (const std::string& alias : program->aliases) fresh = check(alias) && fresh;
    if (!fresh) {
      ok = false;
      continue;
    }
  }
  for (const auto& tool : other.tools_) {
    auto it = index_->by_tool.find(tool->name);
    if (it == index_->by_tool.end()) continue;
    if (diagnostics != nullptr) {
      diagnostics->push_back({code::kEffectsTable, Severity::Error, tool->file, tool->line, "",
                              "tool \"" + tool->name + "\" is also defined in " + it->second->file +
                                  ":" + std::to_string(it->second->line)});
    }
    ok = false;
  }
  if (!ok) return false;
  for (const auto& tool : other.tools_) {
    index_->by_tool.emplace(tool->name, tool.get());
    tools_.push_back(tool);
  }
  for (const auto& program : other.programs_) {
    index_->by_name.emplace(program->name, program.get());
    for (const std::string& alias : program->aliases) index_->by_name.emplace(alias, program.get());
    programs_.push_back(program);
  }
  return true;
}

// ---------------------------------------------------------------- evaluation

namespace {

bool has_expansion(std::string_view w) { return w.find_first_of("$`") != std::string_view::npos; }
bool has_dynamic_char(std::string_view w) {
  return w.find_first_of("$`*?[") != std::string_view::npos;
}

bool is_privilege_wrapper(std::string_view w) {
  return w == "sudo" || w == "doas" || w == "su" || w == "pkexec" || w == "runuser";
}

void lower_in_place(std::string* s) {
  for (char& c : *s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

// "scheme://…": the length of the scheme, else 0.
std::size_t url_scheme_length(std::string_view w) {
  if (w.empty() || !((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z'))) return 0;
  std::size_t i = 1;
  while (i < w.size() && (std::isalnum(static_cast<unsigned char>(w[i])) || w[i] == '+' ||
                          w[i] == '-' || w[i] == '.'))
    ++i;
  if (w.substr(i).starts_with("://")) return i;
  return 0;
}

// The host part of an authority or of "[user@]host[:rest]": user dropped, port or path
// dropped, IPv6 brackets kept, lower-case, one trailing dot dropped.
std::string host_of_authority(std::string_view a) {
  if (std::size_t at = a.rfind('@'); at != std::string_view::npos) a.remove_prefix(at + 1);
  std::string_view host;
  if (!a.empty() && a[0] == '[') {
    std::size_t close = a.find(']');
    host = close == std::string_view::npos ? a : a.substr(0, close + 1);
  } else {
    host = a.substr(0, a.find(':'));
  }
  std::string out(host);
  lower_in_place(&out);
  if (out.size() > 1 && out.back() == '.') out.pop_back();
  return out;
}

// "a.b.c.d" with four decimal parts 0-255 and no leading zeros: URL parsers keep it as is.
bool canonical_ipv4(std::string_view name) {
  int parts = 0;
  std::size_t start = 0;
  while (start <= name.size()) {
    std::size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part.size() > 3 || (part.size() > 1 && part[0] == '0')) return false;
    int value = 0;
    for (char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
    ++parts;
    start = end + 1;
  }
  return parts == 4;
}

// The host of "scheme://host[:port][/?#…]" when the host is a plain DNS name (letters,
// digits, "-", non-empty labels, a last label that is no number, which URL parsers would
// read as an IPv4 address) or a canonical dotted IPv4 address, and no userinfo precedes it: every
// URL parser reads that host the same way, lower-cased, so the full parser is not needed.
bool simple_url_host(std::string_view rest, std::string* host) {
  std::size_t end = 0;
  std::size_t label_start = 0;
  while (end < rest.size()) {
    const char c = rest[end];
    if (c == '.') {
      if (end == label_start) return false;
      label_start = end + 1;
    } else if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-')) {
      break;
    }
    ++end;
  }
  if (end == 0) return false;
  std::string_view name = rest.substr(0, end);
  std::string_view after = rest.substr(end);
  if (!after.empty() && after[0] == ':') {
    std::size_t k = 1;
    while (k < after.size() && after[k] >= '0' && after[k] <= '9') ++k;
    if (k == 1) return false;
    after.remove_prefix(k);
  }
  if (!after.empty() && after[0] != '/' && after[0] != '?' && after[0] != '#') return false;
  if (name.back() == '.') name.remove_suffix(1);
  if (name.empty() || name.back() == '.') return false;
  std::string_view last =
      name.substr(name.rfind('.') == std::string_view::npos ? 0 : name.rfind('.') + 1);
  const bool digits = last.find_first_not_of("0123456789") == std::string_view::npos;
  const bool hex = last.size() >= 2 && last[0] == '0' && (last[1] == 'x' || last[1] == 'X') &&
                   last.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos;
  if (hex) return false;
  if (digits && !canonical_ipv4(name)) return false;
  host->assign(name);
  lower_in_place(host);
  return true;
}

// The host a network word names: a URL's host (as libcurl reads it), or the host of
// "[user@]host[:port|:path][/path]".
std::string host_of(std::string_view w) {
  if (std::size_t scheme = url_scheme_length(w); scheme != 0) {
    if (std::string host; simple_url_host(w.substr(scheme + 3), &host)) return host;
    urls::Url u = urls::parse(w);
    if (u.valid) return u.host;
    std::string_view rest = w.substr(scheme + 3);
    return host_of_authority(rest.substr(0, rest.find_first_of("/?#\\")));
  }
  // user@host:path: the first ":" or "/" after the user ends the host.
  std::string_view a = w;
  std::size_t at = a.find('@');
  std::size_t slash = a.find('/');
  if (at != std::string_view::npos && (slash == std::string_view::npos || at < slash))
    a.remove_prefix(at + 1);
  if (!a.empty() && a[0] == '[') return host_of_authority(a);
  return host_of_authority(a.substr(0, a.find_first_of(":/")));
}

// A network word that names a local file: a file: URL (its path, percent-decoded) or a
// path ("/srv/repo.git", "./x", "../x", "~/x", ".", ".."), as `git clone` and `curl` read
// them. Sets *path to the path to read.
bool local_source(std::string_view w, std::string* path) {
  if (std::size_t scheme = url_scheme_length(w); scheme == 4) {
    std::string_view s = w.substr(0, 4);
    if (!((s[0] | 0x20) == 'f' && (s[1] | 0x20) == 'i' && (s[2] | 0x20) == 'l' &&
          (s[3] | 0x20) == 'e'))
      return false;
    std::string_view rest = w.substr(7);
    std::size_t slash = rest.find('/');
    rest = slash == std::string_view::npos ? std::string_view("/") : rest.substr(slash);
    rest = rest.substr(0, rest.find_first_of("?#"));
    auto hex = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    path->clear();
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == '%' && i + 2 < rest.size() && hex(rest[i + 1]) >= 0 && hex(rest[i + 2]) >= 0) {
        path->push_back(static_cast<char>(hex(rest[i + 1]) * 16 + hex(rest[i + 2])));
        i += 2;
      } else {
        path->push_back(rest[i]);
      }
    }
    return true;
  }
  if (w == "." || w == ".." || w.starts_with("/") || w.starts_with("./") || w.starts_with("../") ||
      w.starts_with("~/") || w == "~") {
    path->assign(w);
    return true;
  }
  return false;
}

// scp/rsync: "[user@]host:path", "host::module" or "scheme://…" name a remote side.
bool looks_remote(std::string_view w) {
  if (url_scheme_length(w) != 0) return true;
  if (!w.empty() && w[0] == '[') {
    std::size_t close = w.find(']');
    return close != std::string_view::npos && close + 1 < w.size() && w[close + 1] == ':';
  }
  std::size_t colon = w.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::size_t slash = w.find('/');
  if (slash != std::string_view::npos && slash < colon) return false;
  std::string_view host = w.substr(0, colon);
  if (std::size_t at = host.rfind('@'); at != std::string_view::npos) host.remove_prefix(at + 1);
  return !host.empty();
}

// Basename of the first word of a command line ("/bin/sh -c x" → "sh").
std::string first_program(std::string_view w) {
  std::size_t b = w.find_first_not_of(" \t\n");
  if (b == std::string_view::npos) return std::string();
  w.remove_prefix(b);
  w = w.substr(0, w.find_first_of(" \t\n"));
  if (std::size_t slash = w.rfind('/'); slash != std::string_view::npos && slash + 1 < w.size()) {
    w.remove_prefix(slash + 1);
  }
  return std::string(w);
}

// True when paths::normalize would only join `w` to a clean cwd: no home prefix, no
// expansion, no empty, "." or ".." component, no trailing "/". Such words skip the general
// normalizer (the common case: "src/main.c", "/tmp/x").
bool clean_path(std::string_view w) {
  if (w.empty() || w[0] == '~' || w.back() == '/') return false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= w.size(); ++i) {
    if (i == w.size() || w[i] == '/') {
      const std::size_t len = i - start;
      if (len == 0 && i != 0) return false;
      if (len == 1 && w[start] == '.') return false;
      if (len == 2 && w[start] == '.' && w[start + 1] == '.') return false;
      start = i + 1;
    } else if (w[i] == '$' || w[i] == '`' || w[i] == '\0') {
      return false;
    }
  }
  return true;
}

bool clean_cwd(std::string_view cwd) {
  return cwd == "/" || (!cwd.empty() && cwd[0] == '/' && clean_path(cwd));
}

// paths::normalize(w, cwd, home), without its work for clean words under a clean cwd.
// `cwd_dynamic`: the cwd was set by an option to a value known only at run time.
std::string normalize(std::string_view w, const std::string& cwd, bool cwd_clean, bool cwd_dynamic,
                      const std::string& home) {
  if (cwd_clean && w == ".") return cwd;
  if (cwd_dynamic && has_expansion(cwd) && !w.empty() && w[0] != '/' && w[0] != '~' &&
      w[0] != '$') {
    // Under a directory known only at run time (`-C "$D"`): "$D/w", left unnormalized.
    if (w == ".") return cwd;
    std::string out(cwd);
    out.push_back('/');
    out.append(w);
    return out;
  }
  if (!cwd_clean || !clean_path(w)) return paths::normalize(w, cwd, home);
  if (w[0] == '/') return std::string(w);
  std::string out;
  out.reserve(cwd.size() + 1 + w.size());
  if (cwd != "/") out.append(cwd);
  out.push_back('/');
  out.append(w);
  return out;
}

constexpr std::size_t kMaxDepth = kMaxSubDepth;

struct OperandRef {
  std::uint32_t word;
  std::uint32_t cwd;
  std::uint32_t segment;
};

// Per-thread buffers of the evaluator, reused from command to command (effects_of runs on
// every decision: after warm-up it allocates only the effects it returns).
struct Scratch {
  std::vector<const Spec*> segments;
  std::vector<std::string> cwds;  // the first `ncwd` are in use
  std::vector<char> cwd_clean;
  std::vector<char> cwd_dynamic;  // not an absolute path without expansions (`-C "$D"`)
  std::size_t ncwd = 0;
  std::vector<OperandRef> operands;
  std::vector<std::size_t> counts;
  std::vector<const Option*> turners;
  std::vector<const Option*> hits;
  std::vector<int> set_hits;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> match_hits;  // (entry, word)
  std::string subcommand;
  bool code_given = false;  // an option named code or a file to run (`python -c`, `bash -s`)
  std::string long_word;    // "-eval" read as "--eval"

  void reset() {
    code_given = false;
    segments.clear();
    ncwd = 0;
    operands.clear();
    turners.clear();
    subcommand.clear();
  }
  void push_cwd(std::string_view cwd) {
    if (ncwd == cwds.size()) {
      cwds.emplace_back();
      cwd_clean.push_back(0);
      cwd_dynamic.push_back(0);
    }
    cwds[ncwd].assign(cwd);
    cwd_clean[ncwd] = clean_cwd(cwd) ? 1 : 0;
    cwd_dynamic[ncwd] = ncwd != 0 && (has_expansion(cwd) || cwd.empty() || cwd[0] != '/') ? 1 : 0;
    ++ncwd;
  }
};

thread_local Scratch t_scratch;

class Evaluator {
 public:
  Evaluator(const shell::SimpleCommand& cmd, const std::string& cwd, const std::string& home,
            std::vector<Effect>* out)
      : cmd_(cmd), home_(home), out_(out), s_(t_scratch) {
    s_.reset();
    s_.push_cwd(cwd);
  }

  // Appends the effects of the words of a known program.
  void run(const Spec* top) {
    chain_[0] = top;
    by_option_[0] = false;
    depth_ = 1;
    s_.segments.push_back(top);
    const auto& argv = cmd_.argv;
    const std::size_t n = argv.size();
    std::size_t i = 1;
    bool options_done = false;
    bool sub_pending = top->subcommands;
    while (i < n) {
      const std::string& w = argv[i++];
      const Spec* spec = chain_[depth_ - 1];
      if (!options_done && w.size() > 1 && w[0] == '-') {
        if (w == "--") {
          options_done = true;
          continue;
        }
        if (!option(spec, w, &i, &sub_pending)) return;  // unknown subcommand
        continue;
      }
      if (sub_pending) {
        sub_pending = false;
        if (const Spec* sub = spec->sub(w)) {
          enter(sub, w, false);
          sub_pending = sub->subcommands;
          continue;
        }
        if (!spec->unknown_subs_none) {
          unknown_sub(w);
          return;
        }
      }
      s_.operands.push_back({static_cast<std::uint32_t>(i - 1),
                             static_cast<std::uint32_t>(cwd_index()),
                             static_cast<std::uint32_t>(s_.segments.size() - 1)});
      if (spec->stop_at_operand) options_done = true;
    }
    flush_operands();
    const Spec* last = chain_[depth_ - 1];
    std::size_t own = 0;  // operands of the innermost spec
    for (const OperandRef& r : s_.operands) own += r.segment + 1 == s_.segments.size() ? 1 : 0;
    if (last->has_input && !s_.code_given)
      emit(effect_kind(last->input),
           last->input == K::ExecCode ? EffectObject::Code : EffectObject::None, std::string(),
           "input", false);
    // xargs and parallel append words read from their input: what they are to the program
    // (a file read, a script run) is known only at run time.
    for (const std::string& w : cmd_.wrappers) {
      if (w != "xargs" && w != "parallel") continue;
      // `parallel CMD ::: A B`: the words are on the line (`::::` FILE is judged by the rules)
      if (w == "parallel" &&
          std::find(cmd_.argv.begin(), cmd_.argv.end(), ":::") != cmd_.argv.end())
        break;
      if (sub_pending || last->operand_kind(own, own + 1) != K::None)
        emit(EffectKind::Unknown, EffectObject::None, w, "wrapper", true);
      break;
    }
    for (const RunEffect& r : last->run) run_effect(r);
    matches(last);
  }

  // Code text the program's safe-code regex matches in full (read-only debugger commands).
  bool safe_code(std::string_view w) const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->safe_code != nullptr) return RE2::FullMatch(w, *chain_[d]->safe_code);
      if (by_option_[d]) break;
    }
    return false;
  }

  // What an option no spec of the chain lists is: the nearest spec that says, else unknown.
  bool others_harmless() const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->others == Spec::Others::None) return true;
      if (chain_[d]->others == Spec::Others::Unknown) return false;
    }
    return false;
  }

  // A cluster word the harmless-match regex takes whole (`-O2`, `-Wall`): no letters split.
  bool unlisted_whole(std::string_view w) const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->harmless_match != nullptr && RE2::FullMatch(w, *chain_[d]->harmless_match))
        return true;
      if (by_option_[d]) break;
    }
    return false;
  }

  bool one_dash_long() const {
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->one_dash_long) return true;
      if (by_option_[d]) break;
    }
    return false;
  }

  // An option the table does not list: an unknown effect (closed world), unless the
  // program's other options were all reviewed as harmless.
  bool unlisted(std::string_view name, std::string_view word = {}) {
    if (word.empty()) word = name;
    for (std::size_t d = depth_; d-- > 0;) {
      if (chain_[d]->harmless_match != nullptr && RE2::FullMatch(word, *chain_[d]->harmless_match))
        return true;
      if (by_option_[d]) break;
    }
    if (!others_harmless())
      emit(EffectKind::Unknown, EffectObject::None, std::string(name), "option",
           cmd_.dynamic && has_dynamic_char(name));
    return true;
  }

  const std::string& subcommand() const { return s_.subcommand; }

  void emit(EffectKind kind, EffectObject object, std::string target, std::string_view via,
            bool dynamic) {
    Effect& e = out_->emplace_back();
    e.kind = kind;
    e.object = object;
    e.target = std::move(target);
    e.via.assign(via);
    e.dynamic = dynamic;
  }

  // A redirection's file ("-" is a file there, not standard input or output).
  void redirect(EffectKind kind, const std::string& target) {
    emit(kind, EffectObject::Path, path_of(target, 0), "redirect",
         cmd_.dynamic && has_dynamic_char(target));
  }

  // One word of kind `kind` (an operand, an option value, a match hit), relative to the
  // cwd of version `cwd_at`.
  void word(K kind, std::string_view w, std::string_view via, std::size_t cwd_at, bool remote) {
    const std::string& cwd = s_.cwds[cwd_at];
    const bool dyn = cmd_.dynamic && has_dynamic_char(w);
    switch (kind) {
      case K::None:
      case K::Patch:  // never a word's kind: only tool entries have it
        return;
      case K::Cwd: {
        s_.push_cwd(paths::normalize(w, cwd, home_));
        return;
      }
      case K::List:
        // The list is read; what it names (files, URLs, settings) is known only at run time.
        if (w != "-")
          emit(EffectKind::Read, EffectObject::Path, path_of(w, cwd_at), via,
               dyn || (s_.cwd_dynamic[cwd_at] != 0 && !w.starts_with("/")));
        emit(EffectKind::Unknown, EffectObject::None, std::string(via), via, dyn);
        return;
      case K::Exec:
        // "-": the program (a makefile, a script) is read from standard input.
        if (w == "-") {
          emit(EffectKind::Exec, EffectObject::Code, std::string(w), via, dyn);
          return;
        }
        [[fallthrough]];
      case K::Read:
      case K::Write:
      case K::Delete:
        if (w == "-") return;  // standard input or output
        if (remote && looks_remote(w)) {
          emit(EffectKind::Network, EffectObject::Host,
               has_expansion(w) ? std::string(w) : host_of(w), via, dyn);
          return;
        }
        emit(effect_kind(kind), EffectObject::Path, path_of(w, cwd_at), via,
             dyn || (s_.cwd_dynamic[cwd_at] != 0 && !w.starts_with("/")));
        return;
      case K::ExecProgram:
        emit(EffectKind::Exec, EffectObject::Program, first_program(w), via, dyn);
        return;
      case K::ExecCode:
        if (!dyn && safe_code(w)) return;
        emit(EffectKind::Exec, EffectObject::Code, std::string(w), via, dyn);
        return;
      case K::Network:
        if (std::string path; local_source(w, &path)) {
          emit(EffectKind::Read, EffectObject::Path, path_of(path, cwd_at), via,
               dyn || (s_.cwd_dynamic[cwd_at] != 0 && !path.starts_with("/")));
          return;
        }
        emit(EffectKind::Network, EffectObject::Host,
             has_expansion(w) ? std::string(w) : host_of(w), via, dyn);
        return;
      case K::EnvDump:
      case K::Privilege:
      case K::Unknown:
        emit(effect_kind(kind), EffectObject::None, std::string(), via, dyn);
        return;
    }
  }

 private:
  std::string path_of(std::string_view w, std::size_t cwd_at) const {
    return normalize(w, s_.cwds[cwd_at], s_.cwd_clean[cwd_at] != 0, s_.cwd_dynamic[cwd_at] != 0,
                     home_);
  }

  std::size_t cwd_index() const { return s_.ncwd - 1; }
  const std::string& cwd() const { return s_.cwds[s_.ncwd - 1]; }

  // Selects a sub; `subcommand` is the word as written (`npm i` gives "i"): a sub table's
  // aliases share its effects, they are not necessarily synonyms (`cargo publish` reads like
  // `cargo add` but is judged by its own name).
  void enter(const Spec* sub, std::string_view word, bool by_option) {
    if (!s_.subcommand.empty()) s_.subcommand.push_back(' ');
    s_.subcommand.append(word);
    if (depth_ < kMaxDepth) ++depth_;
    chain_[depth_ - 1] = sub;
    by_option_[depth_ - 1] = by_option;
    s_.segments.push_back(sub);
  }

  void unknown_sub(std::string_view name) {
    if (!s_.subcommand.empty()) s_.subcommand.push_back(' ');
    s_.subcommand.append(name);
    emit(EffectKind::Unknown, EffectObject::Program, cmd_.program, "subcommand",
         cmd_.dynamic && has_dynamic_char(name));
    flush_operands();
  }

  // The option named `name` in the spec or, failing that, in the specs it is a sub of
  // (global options after the subcommand: `npm install --prefix DIR`). Not across a sub
  // named by a subcommand option (`python -m pytest -c FILE`: the words are the module's),
  // and a subcommand option is not inherited.
  const Option* find(std::string_view name) const {
    for (std::size_t d = depth_; d-- > 0;) {
      const Option* o = chain_[d]->find(name);
      if (o != nullptr && (d + 1 == depth_ || !o->selects_sub)) return o;
      if (by_option_[d]) break;
    }
    return nullptr;
  }

  // GNU long-option abbreviation: the listed long options `prefix` begins, in the nearest
  // spec that lists any (searched as find() does).
  void abbreviations(std::string_view prefix, std::vector<const Option*>* hits) const {
    for (std::size_t d = depth_; d-- > 0;) {
      const auto& options = chain_[d]->options;
      auto it = std::lower_bound(options.begin(), options.end(), prefix,
                                 [](const Option& o, std::string_view n) { return o.name < n; });
      for (; it != options.end() && std::string_view(it->name).starts_with(prefix); ++it) {
        if (d + 1 == depth_ || !it->selects_sub) hits->push_back(&*it);
      }
      if (!hits->empty() || by_option_[d]) return;
    }
  }

  // Reads the option word `w` (argv[*i - 1]); may consume the next word as its value.
  // False when it selected an unknown subcommand (the rest of the command is unknown).
  bool option(const Spec* spec, const std::string& w, std::size_t* i, bool* sub_pending) {
    const auto& argv = cmd_.argv;
    auto next_value = [&](std::string_view* value) {
      if (*i >= argv.size()) return false;
      *value = argv[(*i)++];
      return true;
    };
    if (spec->single_dash) {
      std::string_view name = w;
      std::string_view value;
      bool inline_value = false;
      const Option* o = find(name);
      if (o == nullptr) {
        if (std::size_t eq = name.find('='); eq != std::string_view::npos) {
          value = name.substr(eq + 1);
          name = name.substr(0, eq);
          inline_value = true;
          o = find(name);
        }
        if (o == nullptr && name.starts_with("--")) o = find(name.substr(1));
      }
      if (o == nullptr) return unlisted(name, w);
      if (o->takes_value && !inline_value && !next_value(&value)) return true;
      return apply(*o, value, sub_pending);
    }
    if (w[1] != '-' && w.size() > 2 && one_dash_long()) {
      // getopt_long_only: "-eval" is "--eval" when a long option of that name is listed.
      s_.long_word.assign("-");
      s_.long_word.append(w);
      const std::size_t eq = s_.long_word.find('=');
      if (find(std::string_view(s_.long_word).substr(0, eq)) != nullptr)
        return long_option(s_.long_word, i, sub_pending);
    }
    if (w[1] == '-') return long_option(w, i, sub_pending);
    // A cluster of one-letter options: "-rf", "-oFILE", "-uo FILE".
    if (find(std::string_view(w).substr(0, 2)) == nullptr) {
      if (unlisted_whole(w)) return true;
      // "-5", "-20": a count (`head -20`, `git log -3`), not letters.
      if (w.find_first_not_of("0123456789", 1) == std::string::npos) return true;
    }
    char name[2] = {'-', 0};
    for (std::size_t j = 1; j < w.size(); ++j) {
      name[1] = w[j];
      const Option* o = find(std::string_view(name, 2));
      if (o == nullptr) {
        unlisted(std::string_view(name, 2));
        continue;
      }
      if (!o->takes_value) {
        if (!apply(*o, {}, sub_pending)) return false;
        // GNU optional argument glued to a flag (`sed -i.bak`, `-i''`): the rest is its value.
        if (j + 1 < w.size() && std::isalnum(static_cast<unsigned char>(w[j + 1])) == 0)
          return true;
        continue;
      }
      std::string_view value;
      if (j + 1 < w.size()) {
        value = std::string_view(w).substr(j + 1);
      } else if (!next_value(&value)) {
        return true;
      }
      return apply(*o, value, sub_pending);
    }
    return true;
  }

  // A long option word ("--name", "--name=value", a GNU abbreviation).
  bool long_option(std::string_view w, std::size_t* i, bool* sub_pending) {
    const auto& argv = cmd_.argv;
    auto next_value = [&](std::string_view* value) {
      if (*i >= argv.size()) return false;
      *value = argv[(*i)++];
      return true;
    };
    {
      std::string_view name = w;
      std::string_view value;
      bool inline_value = false;
      if (std::size_t eq = name.find('='); eq != std::string_view::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
        inline_value = true;
      }
      if (const Option* o = find(name)) {
        if (o->takes_value && !inline_value && !next_value(&value)) return true;
        return apply(*o, value, sub_pending);
      }
      if (name.size() < 5) return unlisted(name, w);
      s_.hits.clear();
      abbreviations(name, &s_.hits);
      if (s_.hits.empty()) return unlisted(name, w);
      if (s_.hits.size() > 1) {
        // Ambiguous: it counts as every candidate with an effect (over-approximated).
        std::size_t kept = 0;
        for (const Option* o : s_.hits) {
          if (o->kind != K::None || o->operands || o->selects_sub) s_.hits[kept++] = o;
        }
        s_.hits.resize(kept);
        if (s_.hits.empty()) return true;
      }
      bool wants_value = false;
      for (const Option* o : s_.hits) wants_value = wants_value || o->takes_value;
      if (wants_value && !inline_value && !next_value(&value)) return true;
      for (const Option* o : s_.hits) {
        if (!apply(*o, value, sub_pending)) return false;
      }
      return true;
    }
  }

  bool apply(const Option& o, std::string_view value, bool* sub_pending) {
    if (o.selects_sub) {
      const Spec* spec = chain_[depth_ - 1];
      const std::string name(value);
      if (const Spec* sub = spec->sub(name)) {
        enter(sub, name, true);
        *sub_pending = sub->subcommands;
        return true;
      }
      if (spec->unknown_subs_none) return true;
      unknown_sub(name);
      return false;
    }
    if (o.kind == K::Exec || o.kind == K::ExecCode || o.kind == K::ExecProgram)
      s_.code_given = true;
    for (std::size_t d = depth_; d-- > 0 && !s_.code_given;) {
      for (const std::string& n : chain_[d]->no_input) s_.code_given = s_.code_given || n == o.name;
    }
    if (o.takes_value) {
      word(o.kind, value, o.name, cwd_index(), false);
      return true;
    }
    if (o.operands) {
      s_.turners.push_back(&o);
      return true;
    }
    if (o.kind != K::None)
      emit(effect_kind(o.kind), EffectObject::None, std::string(), o.name, false);
    return true;
  }

  void flush_operands() {
    if (s_.operands.empty()) return;
    // Operand counts per segment, for `last`.
    s_.counts.assign(s_.segments.size(), 0);
    for (const OperandRef& r : s_.operands) ++s_.counts[r.segment];
    std::uint32_t seg = s_.operands.front().segment;
    std::size_t pos = 0;
    for (const OperandRef& r : s_.operands) {
      if (r.segment != seg) {
        seg = r.segment;
        pos = 0;
      }
      const Spec* spec = s_.segments[r.segment];
      const K kind = spec->operand_kind(pos++, s_.counts[r.segment]);
      if (r.segment + 1 == s_.segments.size() &&
          (kind == K::Exec || kind == K::ExecCode || kind == K::ExecProgram))
        s_.code_given = true;  // the program is named: it reads none from its input
      const std::string& w = cmd_.argv[r.word];
      if (!s_.turners.empty() && is_path_kind(kind)) {
        for (const Option* t : s_.turners) word(t->kind, w, t->name, r.cwd, spec->remote);
        continue;
      }
      word(kind, w, "operand", r.cwd, spec->remote);
    }
  }

  void run_effect(const RunEffect& r) {
    if (r.target.empty()) {
      emit(effect_kind(r.kind), EffectObject::None, std::string(), "program", false);
      return;
    }
    switch (r.kind) {
      case K::Network: {
        std::string host = r.target;
        lower_in_place(&host);
        emit(EffectKind::Network, EffectObject::Host, std::move(host), "program", false);
        return;
      }
      case K::ExecProgram:
        emit(EffectKind::Exec, EffectObject::Program, r.target, "program", false);
        return;
      case K::ExecCode:
        emit(EffectKind::Exec, EffectObject::Code, r.target, "program", false);
        return;
      default:
        emit(effect_kind(r.kind), EffectObject::Path, path_of(r.target, cwd_index()), "program",
             s_.cwd_dynamic[cwd_index()] != 0 && !r.target.starts_with("/"));
        return;
    }
  }

  // The match entries of `spec`: hits in entry order, then word order.
  void matches(const Spec* spec) {
    if (spec->matches.empty()) return;
    s_.match_hits.clear();
    collect_matches(spec, spec->argv_set, true);
    collect_matches(spec, spec->operand_set, false);
    std::stable_sort(s_.match_hits.begin(), s_.match_hits.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [entry, word_index] : s_.match_hits) {
      const Match& m = spec->matches[entry];
      const std::string& w = cmd_.argv[word_index];
      std::string_view target = w;
      re2::StringPiece group;
      if (m.groups && RE2::PartialMatch(w, *m.re, &group) && group.data() != nullptr) {
        target = std::string_view(group.data(), group.size());
      }
      word(m.kind, target, "match", cwd_index(), false);
    }
  }

  void collect_matches(const Spec* spec, const Spec::MatchSet& ms, bool argv) {
    if (ms.ids.empty()) return;
    auto one = [&](std::uint32_t word_index) {
      const std::string& w = cmd_.argv[word_index];
      re2::RE2::Set::ErrorInfo info;
      if (ms.set != nullptr && ms.set->Match(w, &s_.set_hits, &info)) {
        for (int k : s_.set_hits) s_.match_hits.emplace_back(ms.ids[k], word_index);
        return;
      }
      if (ms.set != nullptr && info.kind == re2::RE2::Set::kNoError) return;  // no hit
      for (std::uint32_t entry : ms.ids) {
        if (RE2::PartialMatch(w, *spec->matches[entry].re))
          s_.match_hits.emplace_back(entry, word_index);
      }
    };
    if (argv) {
      for (std::size_t i = 1; i < cmd_.argv.size(); ++i) one(static_cast<std::uint32_t>(i));
      return;
    }
    for (const OperandRef& r : s_.operands) one(r.word);
  }

 private:
  const shell::SimpleCommand& cmd_;
  const std::string& home_;
  std::vector<Effect>* out_;
  std::array<const Spec*, kMaxDepth> chain_{};
  std::array<bool, kMaxDepth> by_option_{};  // chain_[d] was named by a subcommand option
  std::size_t depth_ = 0;
  Scratch& s_;
};

}  // namespace

void EffectsTable::effects_of(const shell::SimpleCommand& cmd, const std::string& cwd,
                              const std::string& home, std::vector<Effect>* out) const {
  const std::size_t start = out->size();
  Evaluator ev(cmd, cwd, home, out);
  for (const std::string& w : cmd.wrappers) {
    if (is_privilege_wrapper(w))
      ev.emit(EffectKind::Privilege, EffectObject::Program, w, "wrapper", false);
  }
  for (const shell::Redirect& r : cmd.redirects) {
    if (r.duplicates_fd() || r.op == "<<" || r.op == "<<<" || r.op == "<<-") continue;
    // Any other operator writes (fail safe for operators this list does not know).
    if (r.op == "<" || r.op == "<&" || r.op == "<>") ev.redirect(EffectKind::Read, r.target);
    if (r.op != "<" && r.op != "<&") ev.redirect(EffectKind::Write, r.target);
  }
  if (!cmd.program.empty()) {
    const bool dynamic_name =
        has_expansion(cmd.program) || (cmd.dynamic && has_dynamic_char(cmd.program));
    auto it = dynamic_name ? index_->by_name.end() : index_->by_name.find(cmd.program);
    if (it == index_->by_name.end()) {
      ev.emit(EffectKind::Unknown, EffectObject::Program, cmd.program, "program", dynamic_name);
    } else {
      ev.run(&it->second->spec);
    }
  }
  for (std::size_t k = start; k < out->size(); ++k) {
    Effect& e = (*out)[k];
    e.program = cmd.program;
    e.subcommand = ev.subcommand();
  }
}

// ---------------------------------------------------------------- tools

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
