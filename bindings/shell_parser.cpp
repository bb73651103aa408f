// Turns a parsed simple command into SimpleCommand facts: strips wrappers (sudo, env, timeout,
// nice, xargs, …), re-parses `bash -c STRING`, `eval …` and `env -S STRING`, splits flags, and
// holds the public parse() entry point. Called by the grammar (shell_grammar.cpp).
// Pure and re-entrant: each parse() call has its own Context.
#include <algorithm>
#include <new>
#include <span>

#include "bindings/shell_internal.h"

namespace warden::shell {
namespace detail {

namespace {

using Args = std::vector<std::string>;

std::string basename_of(const std::string& word) {
  std::string_view s = word;
  while (s.size() > 1 && s.back() == '/') s.remove_suffix(1);
  const std::size_t slash = s.rfind('/');
  if (slash == std::string_view::npos || s.size() == 1) return std::string(s);
  return std::string(s.substr(slash + 1));
}

bool is_env_assignment(const std::string& w) {
  const std::size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!(is_alpha(w[0]) || w[0] == '_')) return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq), [](char c) {
    return is_alpha(c) || c == '_' || (c >= '0' && c <= '9');
  });
}

// Options of a wrapper, read up to its first operand.
struct Options {
  std::size_t next = 0;  // index of the first operand
  std::string shorts;    // every short option letter seen
  Args longs;            // every long option name seen (without `--` and `=value`)
};

// short_val: letters that take a value (attached or next word); short_opt: letters whose
// optional value can only be attached (xargs -i[R]); long_val: long options taking a value.
Options read_options(const Args& a, std::size_t k, std::string_view short_val,
                     std::span<const std::string_view> long_val, std::string_view short_opt = {}) {
  Options o;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    ++k;
    if (w[1] == '-') {
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      o.longs.push_back(name);
      if (eq == std::string::npos &&
          std::find(long_val.begin(), long_val.end(), name) != long_val.end()) {
        ++k;
      }
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      o.shorts += w[c];
      if (short_opt.find(w[c]) != std::string_view::npos) break;
      if (short_val.find(w[c]) != std::string_view::npos) {
        if (c + 1 == w.size()) ++k;
        break;
      }
    }
  }
  o.next = std::min(k, a.size());
  return o;
}

bool has(const Options& o, std::string_view shorts, std::initializer_list<std::string_view> longs) {
  for (char c : shorts) {
    if (o.shorts.find(c) != std::string::npos) return true;
  }
  for (std::string_view l : longs) {
    if (std::find(o.longs.begin(), o.longs.end(), l) != o.longs.end()) return true;
  }
  return false;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  out += '\'';
  return out;
}

bool is_shell(const std::string& p) {
  static constexpr std::string_view kShells[] = {"bash", "sh",  "zsh",  "dash",
                                                 "ksh",  "ash", "mksh", "rbash"};
  return std::find(std::begin(kShells), std::end(kShells), p) != std::end(kShells);
}

// What to do with argv[i] when it names a wrapper.
struct Step {
  enum Kind { Stop, Next, Recurse } kind = Stop;
  std::size_t next = 0;  // Next: index of the wrapped command
  std::string text;      // Recurse: the command string
  int depth_inc = 0;     // Recurse: depth added to the inner commands
  bool stdin_script = false;  // Stop: a shell that reads its commands from stdin
  std::vector<std::size_t> assignments;  // argv indices of NAME=value operands (env, sudo)
};

Step step_next(std::size_t k) { return {Step::Next, k, {}, 0, false, {}}; }
Step step_recurse(std::string text, int depth_inc) {
  return {Step::Recurse, 0, std::move(text), depth_inc, false, {}};
}

Step unwrap_shell(const Args& a, std::size_t i) {
  bool has_c = false;
  bool reads_stdin = false;  // -s: commands come from stdin even with operands
  std::size_t k = i + 1;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--" || w == "-") {
      ++k;
      break;
    }
    if (w.size() < 2 || (w[0] != '-' && w[0] != '+')) break;
    ++k;
    if (w.starts_with("--")) {
      if (w == "--rcfile" || w == "--init-file") ++k;
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      if (w[c] == 'c') has_c = true;
      if (w[c] == 's') reads_stdin = true;
      if (w[c] == 'o' || w[c] == 'O') {
        if (c + 1 == w.size()) ++k;
        break;
      }
    }
  }
  if (!has_c || k >= a.size()) {  // `bash script.sh`, `curl … | sh`: a program
    Step s;
    s.stdin_script = k >= a.size() || reads_stdin;
    return s;
  }
  return step_recurse(a[k], 1);
}

Step unwrap_env(const Args& a, std::size_t i) {
  std::size_t k = i + 1;
  std::optional<std::string> split;
  std::vector<std::size_t> assignments;
  while (k < a.size()) {
    const std::string& w = a[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w == "-") {  // same as -i
      ++k;
      continue;
    }
    if (w.starts_with("--")) {
      const std::size_t eq = w.find('=');
      const std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      const bool takes = name == "split-string" || name == "unset" || name == "chdir" ||
                         name == "default-signal" || name == "ignore-signal" ||
                         name == "block-signal";
      std::string value;
      if (eq != std::string::npos) {
        value = w.substr(eq + 1);
      } else if (takes && name != "default-signal" && name != "ignore-signal" &&
                 name != "block-signal" && k + 1 < a.size()) {
        value = a[++k];
      }
      if (name == "split-string") split = value;
      ++k;
      continue;
    }
    if (w.size() > 1 && w[0] == '-') {
      ++k;
      for (std::size_t c = 1; c < w.size(); ++c) {
        if (w[c] == 'S' || w[c] == 'u' || w[c] == 'C') {
          std::string value;
          if (c + 1 < w.size()) value = w.substr(c + 1);
          else if (k < a.size()) value = a[k++];
          if (w[c] == 'S') split = value;
          break;
        }
      }
      continue;
    }
    if (is_env_assignment(w)) {
      assignments.push_back(k);
      ++k;
      continue;
    }
    break;
  }
  k = std::min(k, a.size());
  Step s = step_next(k);
  if (split) {
    std::string text = *split;
    for (std::size_t r = k; r < a.size(); ++r) text += " " + shell_quote(a[r]);
    s = step_recurse(std::move(text), 0);
  }
  s.assignments = std::move(assignments);
  return s;
}

Step unwrap_one(const std::string& prog, const Args& a, std::size_t i) {
  using L = std::initializer_list<std::string_view>;
  auto opts = [&](std::string_view short_val, L long_val, std::string_view short_opt = {}) {
    return read_options(a, i + 1, short_val, std::span(long_val.begin(), long_val.size()),
                        short_opt);
  };
  if (prog == "sudo") {
    const Options o = opts("ugCDhprtUTR", {"user", "group", "close-from", "chdir", "host",
                                           "prompt", "role", "type", "other-user", "chroot",
                                           "command-timeout"});
    if (has(o, "elvVK", {"edit", "list", "validate", "version", "remove-timestamp"})) return {};
    std::size_t k = o.next;
    std::vector<std::size_t> assignments;
    while (k < a.size() && is_env_assignment(a[k])) assignments.push_back(k++);
    Step s = step_next(k);
    s.assignments = std::move(assignments);
    return s;
  }
  if (prog == "doas") return step_next(opts("uC", {}).next);
  if (prog == "env") return unwrap_env(a, i);
  if (prog == "timeout") {
    std::size_t k = opts("sk", {"signal", "kill-after"}).next;
    if (k < a.size()) ++k;  // DURATION
    return step_next(k);
  }
  if (prog == "nice") return step_next(opts("n", {"adjustment"}).next);
  if (prog == "ionice") {
    const Options o = opts("cnpPu", {"class", "classdata", "pid", "pgid", "uid"});
    if (has(o, "pPu", {"pid", "pgid", "uid"})) return {};
    return step_next(o.next);
  }
  if (prog == "nohup" || prog == "builtin") return step_next(opts("", {}).next);
  if (prog == "stdbuf") return step_next(opts("ioe", {"input", "output", "error"}).next);
  if (prog == "time") return step_next(opts("fo", {"format", "output"}).next);
  if (prog == "xargs") {
    return step_next(opts("adEILnPs",
                          {"arg-file", "delimiter", "max-args", "max-procs", "max-chars",
                           "process-slot-var"},
                          "eil")
                         .next);
  }
  if (prog == "command") {
    const Options o = opts("", {});
    if (has(o, "vV", {})) return {};  // a lookup, not a run
    return step_next(o.next);
  }
  if (prog == "exec") return step_next(opts("a", {}).next);
  if (prog == "eval") {
    if (i + 1 >= a.size()) return {};
    std::string text;
    for (std::size_t k = i + 1; k < a.size(); ++k) {
      if (k > i + 1) text += ' ';
      text += a[k];
    }
    return step_recurse(std::move(text), 1);
  }
  if (is_shell(prog)) return unwrap_shell(a, i);
  return {};
}

// Builtins whose NAME=value operands set variables (`export LD_PRELOAD=/x.so`).
bool is_declaration(const std::string& p) {
  return p == "export" || p == "declare" || p == "typeset" || p == "local" || p == "readonly";
}

// NAME=value of an argv word (after quote removal), as env and the declaration builtins
// read it: the name up to the first `=` (without a `+` or `[index]`).
Assignment assignment_of(const std::string& w, bool dynamic) {
  const std::size_t eq = w.find('=');
  Assignment a;
  a.name = w.substr(0, eq);
  const std::size_t end = a.name.find_first_of("+[");
  if (end != std::string::npos) a.name.resize(end);
  a.value = w.substr(eq + 1);
  a.dynamic = dynamic;
  return a;
}

bool is_name(const std::string& w) {
  return !w.empty() && is_name_start(w[0]) && std::all_of(w.begin(), w.end(), is_name_char);
}

// The variables a builtin sets, as assignments: `export A=1` and `declare A=1` (value as
// written), `export A` and `declare -x A` (A enters the environment with a value set
// elsewhere: dynamic), `read A B` and `printf -v A …` (value known only at run time).
void variables_set(const Args& argv, std::size_t i, const std::vector<Word>& words,
                   std::vector<Assignment>* out) {
  const std::string prog = basename_of(argv[i]);
  auto dynamic_word = [&](std::size_t k) { return k < words.size() && words[k].dynamic; };
  auto unknown = [&](const std::string& name) { out->push_back({name, "", true}); };
  if (is_declaration(prog)) {
    bool exports = prog == "export";
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w.size() > 1 && w[0] == '-') {
        if (w.find('x') != std::string::npos) exports = true;
      } else if (is_env_assignment(w)) {
        out->push_back(assignment_of(w, dynamic_word(k)));
      } else if (exports && is_name(w)) {
        unknown(w);
      }
    }
  } else if (prog == "read") {
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w == "--") continue;
      if (w.size() > 1 && w[0] == '-') {
        // `-a ARRAY`, and options whose value is the next word (`-p PROMPT`, `-d DELIM` …).
        const char last = w.back();
        if (last == 'a' && k + 1 < argv.size()) {
          unknown(argv[++k]);
        } else if (std::string_view("dinNptu").find(last) != std::string_view::npos) {
          ++k;
        }
      } else if (is_name(w)) {
        unknown(w);
      }
    }
  } else if (prog == "printf") {
    for (std::size_t k = i + 1; k < argv.size(); ++k) {
      const std::string& w = argv[k];
      if (w == "-v" && k + 1 < argv.size()) {
        unknown(argv[k + 1]);
        break;
      }
      if (w.starts_with("-v") && w.size() > 2) {
        unknown(w.substr(2));
        break;
      }
      if (w.empty() || w[0] != '-' || w == "--") break;
    }
  }
}

}  // namespace

void Parser::finish_simple(const std::vector<Word>& words, std::vector<Assignment> assignments,
                           std::vector<Redirect> redirects, bool dynamic, std::size_t first_heredoc) {
  Args argv;
  for (const Word& w : words) {
    argv.push_back(w.value);
    dynamic = dynamic || w.dynamic;
  }
  if (argv.empty()) {
    if (!redirects.empty() || !assignments.empty()) {
      emit({}, wrappers_, std::move(assignments), std::move(redirects), dynamic);
    }
    return;
  }
  std::vector<std::string> wrappers = wrappers_;
  std::size_t i = 0;
  bool stdin_script = false;
  for (;;) {
    const std::string prog = basename_of(argv[i]);
    Step s = unwrap_one(prog, argv, i);
    if (s.kind == Step::Stop) {
      stdin_script = s.stdin_script;
      break;
    }
    // `env A=1 cmd`, `sudo A=1 cmd`: the wrapped command runs with these set.
    for (std::size_t k : s.assignments) {
      assignments.push_back(assignment_of(argv[k], k < words.size() && words[k].dynamic));
    }
    wrappers.push_back(prog);
    if (s.kind == Step::Recurse) {
      parse_nested(s.text, std::move(wrappers), s.depth_inc, assignments, redirects, dynamic);
      return;
    }
    if (s.next >= argv.size()) {  // nothing wrapped
      if (prog == "xargs") {
        emit({"echo"}, std::move(wrappers), std::move(assignments), std::move(redirects), dynamic);
        return;
      }
      wrappers.pop_back();
      break;
    }
    i = s.next;
  }
  variables_set(argv, i, words, &assignments);
  argv.erase(argv.begin(), argv.begin() + static_cast<std::ptrdiff_t>(i));
  std::vector<std::string> inner_wrappers = wrappers;
  inner_wrappers.push_back(basename_of(argv[0]));
  emit(std::move(argv), std::move(wrappers), assignments, redirects, dynamic);
  if (!stdin_script) return;
  // `bash <<EOF` / `sh <<< '…'`: the shell runs its stdin as a script; parse that too.
  for (std::size_t d = first_heredoc; d < heredocs_.size(); ++d) {
    if (heredocs_[d].fd == 0) {
      heredocs_[d].script = true;
      heredocs_[d].script_wrappers = inner_wrappers;
      heredocs_[d].script_assignments = assignments;
    }
  }
  for (const Redirect& r : redirects) {
    if (r.op == "<<<" && r.fd == 0) parse_nested(r.target, inner_wrappers, 1, assignments, {}, dynamic);
  }
}

void Context::count_words(std::size_t n) {
  total_words += n;
  if (total_words > limits.max_total_words) {
    throw ShellError{"more than " + std::to_string(limits.max_total_words) +
                         " words, assignments and redirections in the whole line",
                     Failure::Limit};
  }
}

void Parser::emit(std::vector<std::string> argv, std::vector<std::string> wrappers,
                  std::vector<Assignment> assignments, std::vector<Redirect> redirects, bool dynamic) {
  if (ctx_.out.size() >= ctx_.limits.max_commands) {
    throw ShellError{"more than " + std::to_string(ctx_.limits.max_commands) + " commands",
                     Failure::Limit};
  }
  ctx_.count_words(argv.size() + assignments.size() + redirects.size() + wrappers.size());
  SimpleCommand c;
  if (!argv.empty()) c.program = basename_of(argv[0]);
  bool operands_only = false;
  for (std::size_t k = 1; k < argv.size(); ++k) {
    const std::string& w = argv[k];
    if (operands_only || w.size() < 2 || w[0] != '-') {
      c.args.push_back(w);
    } else if (w == "--") {
      operands_only = true;
    } else if (w[1] != '-' && std::all_of(w.begin() + 1, w.end(), is_alpha)) {
      for (std::size_t j = 1; j < w.size(); ++j) c.flags.push_back(std::string{'-', w[j]});
    } else {
      c.flags.push_back(w);
    }
  }
  c.argv = std::move(argv);
  c.wrappers = std::move(wrappers);
  c.assignments = std::move(assignments);
  c.redirects = std::move(redirects);
  c.depth = depth_;
  c.dynamic = dynamic;
  ctx_.out.push_back(std::move(c));
}

void Parser::parse_nested(const std::string& text, std::vector<std::string> wrappers,
                          int depth_inc, const std::vector<Assignment>& assignments,
                          const std::vector<Redirect>& redirects, bool dynamic) {
  if (depth_inc > 0) enter_depth();
  NestGuard guard(ctx_);
  const std::size_t first = ctx_.out.size();
  Parser sub(ctx_, text, depth_ + depth_inc, std::move(wrappers));
  sub.parse_all();
  // The outer command's assignments, redirections and unresolved words apply to everything
  // it runs (outer assignments first: inner ones override them).
  ctx_.count_words((ctx_.out.size() - first) * (assignments.size() + redirects.size()));
  for (std::size_t k = first; k < ctx_.out.size(); ++k) {
    SimpleCommand& c = ctx_.out[k];
    c.dynamic = c.dynamic || dynamic;
    c.assignments.insert(c.assignments.begin(), assignments.begin(), assignments.end());
    c.redirects.insert(c.redirects.end(), redirects.begin(), redirects.end());
    if (c.argv.size() + c.assignments.size() + c.redirects.size() > ctx_.limits.max_words) {
      throw ShellError{"a simple command has more than " + std::to_string(ctx_.limits.max_words) +
                           " words, assignments and redirections",
                       Failure::Limit};
    }
  }
  if (ctx_.out.size() == first && (!redirects.empty() || !assignments.empty())) {
    emit({}, sub.wrappers_, assignments, redirects, dynamic);
  }
}

}  // namespace detail

ParseResult parse(std::string_view line, const Limits& limits) {
  ParseResult result;
  try {
    detail::Context ctx;
    ctx.limits = limits;
    ctx.max_nest = std::clamp(limits.max_depth * 4, 64, 256);
    detail::Parser parser(ctx, line, 0, {});
    parser.parse_all();
    result.commands = std::move(ctx.out);
    result.ok = true;
  } catch (detail::ShellError& e) {
    result.error = std::move(e.message);
    result.failure = e.failure;
  } catch (const std::bad_alloc&) {
    result.commands.clear();
    result.error = "out of memory";
    result.failure = Failure::Internal;
  } catch (...) {
    result.commands.clear();
    result.error = "internal error";
    result.failure = Failure::Internal;
  }
  return result;
}

}  // namespace warden::shell
