// EffectsTable: reading the table's TOML ([programs.*], [tool.*]) into the spec tree, every
// problem a diagnostic with its file and line; merging a later file's table into one.
#include "engine/effects.h"

#include <re2/re2.h>
#include <re2/set.h>
#include <toml++/toml.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "engine/effects_spec.h"
#include "engine/toml_document.h"

namespace warden {

using namespace effects_spec;

namespace {

constexpr std::int64_t kRegexMaxMem = 8 << 20;

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
          std::string_view kind_text = v;
          if (kind_text.starts_with("paths:")) {
            o.path_list = true;
            kind_text.remove_prefix(6);
          }
          const std::string what = where + ".options." + oname;
          if (!value_kind(std::string(kind_text), what, line_of(onode), &o.kind)) continue;
          if (o.path_list && !is_path_kind(o.kind)) {
            error(line_of(onode), what + ": \"" + v + "\" is not a list of paths");
            continue;
          }
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
          } else if (kind_text == "backup") {
            o.operands = true;
            o.backup = true;
            kind_text = "write";
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
    if (diagnostics != nullptr)
      diagnostics->insert(diagnostics->end(), syntax.begin(), syntax.end());
    return nullptr;
  }
  return parse(TomlDocument{source, std::move(*root)}, diagnostics);
}

std::shared_ptr<EffectsTable> EffectsTable::parse(const TomlDocument& document,
                                                  Diagnostics* diagnostics) {
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

}  // namespace warden
