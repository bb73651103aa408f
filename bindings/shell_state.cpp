// What the shell remembers from one command to the next, as the line shows it: the working
// directory (cd, pushd, popd, dirs, OLDPWD, HOME, CDPATH, cdable_vars), and text that
// builtins evaluate as code when they run (arithmetic with array subscripts, `test -v`,
// `printf -v`, `read`, prompt expansion, traps, completion and mapfile callbacks, hash -p,
// enable -f). Part of detail::Parser; one Context per parse() call, never shared.
#include <algorithm>

#include "bindings/shell_internal.h"

namespace warden::shell::detail {

namespace {

using namespace std::string_view_literals;
using Args = std::vector<std::string>;

std::string base_name(const std::string& word) {
  std::string_view s = word;
  while (s.size() > 1 && s.back() == '/') s.remove_suffix(1);
  const std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos || s.size() == 1) return std::string(s);
  return std::string(s.substr(slash + 1));
}

bool is_var_name(std::string_view w) {
  return !w.empty() && is_name_start(w[0]) && std::all_of(w.begin(), w.end(), is_name_char);
}

// `+N` / `-N`: a position in the directory stack.
bool is_stack_index(const std::string& w) {
  return w.size() > 1 && (w[0] == '+' || w[0] == '-') &&
         std::all_of(w.begin() + 1, w.end(), is_digit);
}

// The text of an arithmetic expression may run code: a subscript (`a[$(id)]`), a
// substitution or expansion whose value is evaluated again, quotes (bash expands them
// first), or a variable whose value may hold a subscript.
bool arith_may_run(std::string_view text, const Context& ctx) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const char c = text[i];
    if (c == '[' || c == '`' || c == '\'' || c == '"' || c == '\\') return true;
    if (c == '$') {
      if (i + 1 < n && text[i + 1] == '{') {
        // ${NAME}, ${#NAME}, ${#NAME[@]}: a length or a plain value; anything else may run.
        std::size_t j = i + 2;
        if (j < n && text[j] == '#') ++j;
        const std::size_t name_start = j;
        while (j < n && is_name_char(text[j])) ++j;
        const std::string name(text.substr(name_start, j - name_start));
        if (!is_var_name(name)) return true;
        if (text.substr(j).starts_with("[@]}") || text.substr(j).starts_with("[*]}")) {
          j += 3;
        } else if (text[name_start - 1] != '#' && ctx.has(ctx.tainted, name)) {
          return true;
        }
        if (j >= n || text[j] != '}') return true;
        i = j + 1;
        continue;
      }
      if (i + 1 < n && is_name_start(text[i + 1])) {
        ++i;
        continue;  // the name is checked below
      }
      if (i + 1 < n && (text[i + 1] == '#' || text[i + 1] == '?')) {
        i += 2;
        continue;
      }
      // $(…), $((…)), $@, $* …, and positional parameters ($0 … $9): `set --`, a function's
      // arguments and `bash -c TEXT ARG…` give them any value.
      return true;
    }
    if (is_name_start(c)) {
      std::size_t j = i;
      while (j < n && is_name_char(text[j])) ++j;
      if (ctx.has(ctx.tainted, std::string(text.substr(i, j - i)))) return true;
      i = j;
      continue;
    }
    ++i;
  }
  return false;
}

}  // namespace

WorkingDir resolve_dir(const WorkingDir& from, const std::string& t, bool dynamic,
                       const Context& ctx) {
  if (dynamic || t.empty()) return unknown_cwd();
  if (t[0] == '/' || t == "~" || t.starts_with("~/")) return WorkingDir{true, {t}};
  if (t[0] == '~') return unknown_cwd();  // ~user, ~+, ~-
  if (!from.known || ctx.cd_untrusted) return unknown_cwd();
  const bool explicit_relative =
      t == "." || t == ".." || t.starts_with("./") || t.starts_with("../");
  if (!explicit_relative && (ctx.cdpath_set || ctx.cdable_vars)) return unknown_cwd();
  if (from.steps.size() >= kMaxCwdSteps) return unknown_cwd();
  WorkingDir d = from;
  d.steps.push_back(t);
  return d;
}

void add_cwd(Cwds& set, const WorkingDir& d) {
  if (std::find(set.begin(), set.end(), d) != set.end()) return;
  if (set.size() + 1 >= kMaxCwds) {
    const WorkingDir u = unknown_cwd();
    if (std::find(set.begin(), set.end(), u) == set.end()) set.push_back(u);
    return;
  }
  set.push_back(d);
}

void add_cwds(Cwds& set, const Cwds& more) {
  for (const WorkingDir& d : more) add_cwd(set, d);
}

bool Context::has(const std::vector<std::string>& names, const std::string& n) const {
  return std::find(names.begin(), names.end(), n) != names.end();
}

void Parser::note_code(std::string what, std::string_view text) {
  constexpr std::size_t kShown = 200;
  what += ": ";
  what.append(text.substr(0, kShown));
  if (pending_code_.size() < 64) pending_code_.push_back(std::move(what));
}

void Parser::flush_code(std::size_t first) {
  if (pending_code_.empty()) return;
  if (ctx_.out.size() > first) {
    std::vector<std::string>& code = ctx_.out.back().code;
    code.insert(code.end(), pending_code_.begin(), pending_code_.end());
    pending_code_.clear();
    return;
  }
  emit({}, wrappers_, {}, {}, Unknowns{});
}

void Parser::check_arith(std::string_view what, std::string_view text, bool dynamic) {
  if (dynamic || arith_may_run(text, ctx_)) note_code(std::string(what), text);
}

// NAME or NAME[SUBSCRIPT] given to a builtin that assigns or tests it: the subscript of an
// indexed array is arithmetic (`printf -v 'a[$(id)]'`, `test -v …`, `read …`).
void Parser::check_name_subscript(std::string_view what, std::string_view name, bool dynamic) {
  if (dynamic) {
    note_code(std::string(what), name);
    return;
  }
  const std::size_t open = name.find('[');
  if (open == std::string_view::npos) return;
  check_arith(what, name.substr(open), false);
}

void Parser::taint_assignment(const Assignment& a) {
  const bool risky = a.dynamic || a.value.find_first_of("[$`") != std::string::npos;
  if (risky && !ctx_.has(ctx_.tainted, a.name) && ctx_.tainted.size() < 4096) {
    ctx_.tainted.push_back(a.name);
  }
  if (ctx_.has(ctx_.integers, a.name))
    check_arith("assignment to an integer variable", a.value, a.dynamic);
  if (a.name == "HOME") ctx_.home_set = true;
  if (a.name == "CDPATH") ctx_.cdpath_set = true;
  if (a.name == "BASHOPTS") ctx_.cdable_vars = true;
  if (a.name == "OLDPWD") ctx_.sh.oldpwd = {unknown_cwd()};
}

void Parser::evaluated_text(const Args& argv, std::size_t i, const std::vector<Word>& words) {
  const std::string prog = base_name(argv[i]);
  auto dyn = [&](std::size_t k) { return k < words.size() && words[k].expansion; };
  const std::size_t n = argv.size();
  if (prog == "test"sv || prog == "["sv) {
    for (std::size_t k = i + 1; k + 1 < n; ++k) {
      if (argv[k] == "-v") check_name_subscript("test -v", argv[k + 1], dyn(k + 1));
    }
  } else if (prog == "let"sv) {
    for (std::size_t k = i + 1; k < n; ++k) check_arith("let", argv[k], dyn(k));
  } else if (prog == "declare"sv || prog == "typeset"sv || prog == "local"sv ||
             prog == "export"sv || prog == "readonly"sv) {
    bool integer = false, nameref = false;
    for (std::size_t k = i + 1; k < n; ++k) {
      const std::string& w = argv[k];
      if (w.size() > 1 && (w[0] == '-' || w[0] == '+') && is_alpha(w[1])) {
        if (w[0] == '-' && w.find('i') != std::string::npos) integer = true;
        if (w[0] == '-' && w.find('n') != std::string::npos) nameref = true;
        continue;
      }
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(0, std::min(w.find_first_of("[+="), w.size()));
      if (integer && is_var_name(name) && !ctx_.has(ctx_.integers, name) &&
          ctx_.integers.size() < 4096)
        ctx_.integers.push_back(name);
      const std::string lhs = w.substr(0, eq);
      if (lhs.find('[') != std::string::npos) check_name_subscript(prog, lhs, dyn(k));
      if (eq == std::string::npos) continue;
      const std::string value = w.substr(eq + 1);
      if (integer) check_arith(prog + " -i", value, dyn(k));
      if (nameref) check_name_subscript(prog + " -n", value, dyn(k));
    }
  } else if (prog == "printf"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      const std::string& w = argv[k];
      if (w == "-v" && k + 1 < n) {
        check_name_subscript("printf -v", argv[k + 1], dyn(k + 1));
        break;
      }
      if (w.starts_with("-v") && w.size() > 2) {
        check_name_subscript("printf -v", std::string_view(w).substr(2), dyn(k));
        break;
      }
      if (w.empty() || w[0] != '-' || w == "--") break;
    }
  } else if (prog == "read"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      const std::string& w = argv[k];
      if (w == "--") continue;
      if (w.size() > 1 && w[0] == '-') {
        const char last = w.back();
        if (std::string_view("adinNptu").find(last) != std::string_view::npos) ++k;
        continue;
      }
      check_name_subscript("read", w, dyn(k));
    }
  } else if (prog == "mapfile"sv || prog == "readarray"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      const std::string& w = argv[k];
      if (w.size() > 1 && w[0] == '-') {
        const std::size_t c = w.find('C');
        if (c != std::string::npos) {
          if (c + 1 < w.size())
            note_code(prog + " -C", std::string_view(w).substr(c + 1));
          else if (k + 1 < n)
            note_code(prog + " -C", argv[k + 1]);
          else
            note_code(prog + " -C", "");
        }
        if (std::string_view("dnOsuCc").find(w.back()) != std::string_view::npos) ++k;
      }
    }
  } else if (prog == "hash"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      if (argv[k].size() > 1 && argv[k][0] == '-' && argv[k].find('p') != std::string::npos) {
        note_code("hash -p", k + 1 < n ? std::string_view(argv[k + 1]) : std::string_view());
      }
    }
  } else if (prog == "complete"sv || prog == "compgen"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      const std::string& w = argv[k];
      if (w.size() < 2 || w[0] != '-') continue;
      for (std::size_t c = 1; c < w.size(); ++c) {
        if (w[c] == 'C' || w[c] == 'F') {
          note_code(prog + " -" + w[c], c + 1 < w.size() ? std::string_view(w).substr(c + 1)
                                        : k + 1 < n      ? std::string_view(argv[k + 1])
                                                         : std::string_view());
          break;
        }
        if (std::string_view("AGWXPSo").find(w[c]) != std::string_view::npos) break;
      }
    }
  } else if (prog == "enable"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      if (argv[k].size() > 1 && argv[k][0] == '-' && argv[k].find('f') != std::string::npos) {
        note_code("enable -f", k + 1 < n ? std::string_view(argv[k + 1]) : std::string_view());
      }
    }
  } else if (prog == "trap"sv) {
    std::size_t k = i + 1;
    if (k < n && argv[k] == "--") ++k;
    if (k < n && !argv[k].starts_with("-") && k + 1 < n) note_code("trap", argv[k]);
  } else if (prog == "unset"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      if (argv[k].find('[') != std::string::npos) check_name_subscript("unset", argv[k], dyn(k));
    }
  }
}

void Parser::follow_state(const Args& argv, std::size_t i, const std::vector<Word>& words,
                          bool in_shell) {
  ShellState& s = ctx_.sh;
  const std::string& word = argv[i];
  const std::string prog = base_name(word);
  const bool dynamic_name = i < words.size() && words[i].expansion;
  // `xargs -I{} sh -c 'cd {}'`: the words are filled in at run time.
  auto dyn = [&](std::size_t k) {
    return ctx_.runtime > 0 || (k < words.size() && words[k].dynamic);
  };
  const std::size_t n = argv.size();
  if (dynamic_name || ctx_.has(ctx_.cwd_functions, prog)) {
    // `$c ~` may be `cd ~` (or `source x`); a function whose body changes directory.
    add_cwd(s.cwds, unknown_cwd());
    if (dynamic_name) ctx_.cd_untrusted = true;
    ctx_.moved = true;
    return;
  }
  if (!in_shell) return;  // `sudo cd /`, `xargs cd`: another process, this shell stays
  if (prog == "alias"sv || prog == "enable"sv) {
    ctx_.cd_untrusted = true;  // cd may now be another command
    return;
  }
  if (prog == "source"sv || prog == "."sv) {
    // What a sourced file does is not in the line: it may move the shell anywhere and
    // replace cd (`echo 'cd ~' > x; . ./x`, `. /dev/stdin <<< 'cd ~'`). A virtualenv's
    // `bin/activate` is the exception everyday work needs: it changes no directory.
    const bool activate = i + 1 < n && !dyn(i + 1) &&
                          (argv[i + 1] == "activate" || argv[i + 1].ends_with("/bin/activate")) &&
                          !argv[i + 1].starts_with("/dev/") && !argv[i + 1].starts_with("/proc/");
    if (!activate) {
      ctx_.cd_untrusted = true;
      add_cwd(s.cwds, unknown_cwd());
      ctx_.moved = true;
    }
    return;
  }
  if (prog == "shopt"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      if (argv[k] == "cdable_vars" || dyn(k)) ctx_.cdable_vars = true;
    }
    return;
  }
  if (prog == "dirs"sv) {
    for (std::size_t k = i + 1; k < n; ++k) {
      if (argv[k] == "-c") {
        s.dirs.clear();
        s.dirs_known = true;
      }
    }
    return;
  }
  if (prog != "cd"sv && prog != "pushd"sv && prog != "popd"sv && prog != "chdir"sv) return;
  // Options, then operands.
  std::size_t k = i + 1;
  bool no_change = false;  // pushd -n / popd -n: the stack only
  while (k < n) {
    const std::string& w = argv[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w.size() < 2 || w[0] != '-' || is_stack_index(w)) break;
    if (w == "-n") no_change = true;
    ++k;
  }
  const std::size_t operands = n - k;
  const Cwds before = s.cwds;
  std::optional<Cwds> success;  // where the shell is when the command succeeds
  auto resolve_all = [&](const std::string& t, bool d) {
    Cwds out;
    for (const WorkingDir& from : before) add_cwd(out, resolve_dir(from, t, d, ctx_));
    return out;
  };
  if (prog == "cd"sv || prog == "chdir"sv) {
    if (operands == 0) {
      success = Cwds{ctx_.home_set || ctx_.cd_untrusted ? unknown_cwd() : WorkingDir{true, {"~"}}};
    } else if (operands > 1) {
      success = Cwds{unknown_cwd()};
    } else if (argv[k] == "-") {
      success = s.oldpwd;
      if (ctx_.cd_untrusted) add_cwd(*success, unknown_cwd());
    } else {
      success = resolve_all(argv[k], dyn(k));
    }
  } else if (prog == "pushd"sv) {
    if (operands == 0) {
      if (!s.dirs.empty()) {
        success = s.dirs.front();
        s.dirs.front() = before;
      } else if (!s.dirs_known) {
        success = Cwds{unknown_cwd()};
      }
    } else if (is_stack_index(argv[k]) || operands > 1) {
      success = Cwds{unknown_cwd()};
      s.dirs.clear();
      s.dirs_known = false;
    } else if (no_change) {
      s.dirs.insert(s.dirs.begin(), resolve_all(argv[k], dyn(k)));
    } else {
      success = resolve_all(argv[k], dyn(k));
      s.dirs.insert(s.dirs.begin(), before);
    }
    if (s.dirs.size() > 64) {
      s.dirs.clear();
      s.dirs_known = false;
    }
  } else {  // popd
    const bool top =
        operands == 0 || argv[k] == "+0" || (operands == 1 && argv[k] == "-0" && s.dirs.empty());
    if (!top || operands > 1) {
      s.dirs.clear();
      s.dirs_known = false;
      if (operands > 1) success = Cwds{unknown_cwd()};
    } else if (no_change) {
      if (!s.dirs.empty()) s.dirs.erase(s.dirs.begin());
    } else if (!s.dirs.empty()) {
      success = s.dirs.front();
      s.dirs.erase(s.dirs.begin());
    } else if (!s.dirs_known) {
      success = Cwds{unknown_cwd()};
    }
  }
  if (!success) return;
  ctx_.cd_oldpwd = before;
  add_cwds(s.oldpwd, before);  // OLDPWD: unchanged if it failed, `before` if not
  // The command may fail and leave the shell where it was: both stay possible, except for
  // the commands `&&` runs after it (parse_and_or).
  Cwds after = before;
  add_cwds(after, *success);
  s.cwds = std::move(after);
  if (!(s.cwds == before)) ctx_.moved = true;
  ctx_.cd_success = std::move(*success);
  ctx_.cd_before = before;
  ctx_.cd_index = ctx_.out.size() - 1;
}

}  // namespace warden::shell::detail
