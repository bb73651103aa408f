// Shell grammar: recursive descent over the lexer's tokens for lists, pipelines, simple
// commands, redirections and the compound commands (subshell, group, if, while/until,
// for/select, case, functions, [[ ]], (( ))). Every recursion passes a NestGuard first.
// Part of detail::Parser; one instance per parse, not shared between threads.
#include "bindings/shell_internal.h"

namespace warden::shell::detail {

namespace {

// NAME=…, NAME+=…, NAME[…]=… written without quotes before the `=`.
bool is_assignment(const Word& w) {
  const std::string& r = w.raw;
  if (r.empty() || !is_name_start(r[0])) return false;
  std::size_t i = 1;
  while (i < r.size() && is_name_char(r[i])) ++i;
  if (i < r.size() && r[i] == '[') {
    const std::size_t close = r.find(']', i);
    if (close == std::string::npos) return false;
    i = close + 1;
  }
  if (i < r.size() && r[i] == '+') ++i;
  return i < r.size() && r[i] == '=';
}

// Splits an assignment word (is_assignment holds) into NAME and value. The name part is
// unquoted name characters, so it reads the same in the raw text and in the value.
Assignment split_assignment(const Word& w) {
  const std::string& r = w.raw;
  std::size_t n = 1;
  while (n < r.size() && is_name_char(r[n])) ++n;
  Assignment a;
  a.name = r.substr(0, n);
  const std::size_t raw_eq = r.find('=', n);
  std::size_t eq = w.value.find('=', n);
  if (w.value.compare(0, n, a.name) != 0 || eq == std::string::npos) eq = w.value.find('=');
  a.value = eq == std::string::npos ? std::string() : w.value.substr(eq + 1);
  // Assignments are never globbed or split, so only expansions make the value dynamic.
  a.dynamic = raw_eq != std::string::npos && r.find_first_of("$`", raw_eq) != std::string::npos;
  return a;
}

bool is_stop_word(std::string_view raw) {
  return raw == "then" || raw == "elif" || raw == "else" || raw == "fi" || raw == "do" ||
         raw == "done" || raw == "esac" || raw == "}";
}

}  // namespace

bool Parser::is_kw(const Token& t, std::string_view kw) {
  return t.type == Tok::Word && t.word.raw == kw;  // raw == kw: unquoted, no expansion
}

bool Parser::is_compound_start(const Token& t) {
  return t.type == Tok::LParen || t.type == Tok::DLParen || is_kw(t, "{") || is_kw(t, "if") ||
         is_kw(t, "while") || is_kw(t, "until") || is_kw(t, "for") || is_kw(t, "select") ||
         is_kw(t, "case") || is_kw(t, "[[");
}

bool Parser::at_stop() {
  const Token& t = peek();
  switch (t.type) {
    case Tok::End:
    case Tok::RParen:
    case Tok::DSemi:
    case Tok::SemiAmp:
    case Tok::DSemiAmp:
      return true;
    case Tok::Word:
      return is_stop_word(t.word.raw);
    default:
      return false;
  }
}

void Parser::expect_kw(std::string_view kw) {
  const Token t = next();
  if (!is_kw(t, kw)) {
    throw ShellError{"syntax error: expected `" + std::string(kw) + "` before " + t.describe()};
  }
}

void Parser::skip_newlines() {
  while (peek().type == Tok::Newline) next();
}

void Parser::parse_all() {
  const std::size_t first = ctx_.out.size();
  parse_list();
  const Token& t = peek();
  if (t.type != Tok::End) throw ShellError{"syntax error near " + t.describe()};
  flush_code(first);
}

// list: and_or ((';' | '&' | newline) and_or)*, up to a token that ends the enclosing construct.
void Parser::parse_list() {
  for (;;) {
    skip_newlines();
    if (at_stop()) return;
    const std::size_t first = ctx_.out.size();
    const ShellState before = ctx_.sh;
    parse_and_or();
    const Tok sep = peek().type;
    if (sep == Tok::Semi || sep == Tok::Newline) {
      next();
    } else if (sep == Tok::Amp) {
      next();
      for (std::size_t i = first; i < ctx_.out.size(); ++i) ctx_.out[i].background = true;
      ctx_.sh = before;  // a background job runs in a subshell
      ctx_.cd_success.reset();
    } else if (at_stop()) {
      return;
    } else {
      throw ShellError{"syntax error near " + peek().describe()};
    }
  }
}

void Parser::parse_and_or() {
  Cwds stopped;  // where the shell is if the list stops at a failed `cd X &&`
  parse_pipeline();
  while (peek().type == Tok::AndIf || peek().type == Tok::OrIf) {
    const Tok op = next().type;
    // `cd X && A`: A runs only if the cd succeeded, so only in X.
    if (op == Tok::AndIf && ctx_.cd_success && ctx_.cd_index + 1 == ctx_.out.size()) {
      add_cwds(stopped, ctx_.cd_before);
      ctx_.sh.cwds = *ctx_.cd_success;
      ctx_.sh.oldpwd = ctx_.cd_oldpwd;
    }
    ctx_.cd_success.reset();
    skip_newlines();
    parse_pipeline();
  }
  add_cwds(ctx_.sh.cwds, stopped);
}

void Parser::parse_pipeline() {
  std::vector<Word> prefix;  // the `time [-p]` keyword, kept so it shows up as a wrapper
  bool negated = false;
  const ShellState before = ctx_.sh;
  for (;;) {
    const Token& t = peek();
    if (is_kw(t, "!")) {
      next();
      negated = true;
    } else if (is_kw(t, "time") && prefix.empty()) {
      prefix.push_back(next().word);
      if (is_kw(peek(), "-p")) prefix.push_back(next().word);
    } else {
      break;
    }
  }
  if (is_kw(peek(), "coproc")) {  // coproc [NAME] command: runs in the background
    next();
    const std::size_t first = ctx_.out.size();
    if (peek().type == Tok::Word && !is_compound_start(peek())) {
      Word word = next().word;
      if (!is_compound_start(peek())) prefix.push_back(std::move(word));  // else it was NAME
    }
    parse_command(std::move(prefix));
    for (std::size_t i = first; i < ctx_.out.size(); ++i) ctx_.out[i].background = true;
    ctx_.sh = before;  // a coprocess runs in a subshell
    ctx_.cd_success.reset();
  } else {
    parse_command(std::move(prefix));
  }
  if (negated) ctx_.cd_success.reset();  // `! cd X && A`: A runs when the cd failed
  if (peek().type == Tok::Pipe || peek().type == Tok::PipeAmp) {
    // Every command of a pipeline runs in a subshell: no cd in it changes this shell.
    ctx_.sh = before;
    ctx_.cd_success.reset();
    while (peek().type == Tok::Pipe || peek().type == Tok::PipeAmp) {
      next();
      skip_newlines();
      {
        SubshellScope scope(ctx_);
        parse_command({});
      }
    }
  }
}

void Parser::parse_command(std::vector<Word> prefix) {
  const Token& t = peek();
  // A loop's body may run again after its own cd: its commands, and what follows, may
  // then be anywhere.
  auto loop = [&](auto&& body) {
    const Cwds before = ctx_.sh.cwds;
    const std::size_t first = ctx_.out.size();
    body();
    if (!(ctx_.sh.cwds == before)) {
      for (std::size_t k = first; k < ctx_.out.size(); ++k)
        add_cwd(ctx_.out[k].cwds, unknown_cwd());
      add_cwd(ctx_.sh.cwds, unknown_cwd());
    }
    ctx_.cd_success.reset();
  };
  if (t.type == Tok::LParen) {
    next();
    SubshellScope scope(ctx_);
    parse_subshell_body();
  } else if (t.type == Tok::DLParen) {
    parse_arith_command();
  } else if (is_kw(t, "{")) {
    parse_group();
  } else if (is_kw(t, "if") || is_kw(t, "case")) {
    parse_compound_branches();
  } else if (is_kw(t, "while") || is_kw(t, "until")) {
    loop([&] { parse_loop(); });
  } else if (is_kw(t, "for") || is_kw(t, "select")) {
    loop([&] { parse_for(); });
  } else if (is_kw(t, "function")) {
    parse_function_kw();
  } else if (is_kw(t, "[[")) {
    parse_cond();
  } else if ((t.type == Tok::Word && !is_stop_word(t.word.raw)) || t.type == Tok::Redir ||
             !prefix.empty()) {
    parse_simple(std::move(prefix));
    return;
  } else {
    throw ShellError{"syntax error: expected a command before " + t.describe()};
  }
  parse_trailing_redirects();
}

void Parser::parse_simple(std::vector<Word> prefix) {
  const bool had_prefix = !prefix.empty();
  const std::size_t prefix_words = prefix.size();  // `time -p A=1 cmd`: A=1 is still an assignment
  const std::size_t first_heredoc = heredocs_.size();
  std::vector<Word> words = std::move(prefix);
  std::vector<Redirect> redirects;
  std::vector<Assignment> assignments;
  Unknowns dyn;
  auto count = [&] {
    if (words.size() + assignments.size() + redirects.size() > ctx_.limits.max_words) {
      throw ShellError{"a simple command has more than " + std::to_string(ctx_.limits.max_words) +
                           " words, assignments and redirections",
                       Failure::Limit};
    }
  };
  for (;;) {
    const Tok type = peek().type;
    if (type == Tok::Word) {
      Word w = next().word;
      if (words.size() == prefix_words && is_assignment(w)) {
        // FOO=$X cmd: the environment is not static; $(…) in the value was parsed already.
        assignments.push_back(split_assignment(w));
        if (assignments.back().dynamic) dyn.expansion = true;
        // `a[SUB]=v`: the subscript of an indexed array is arithmetic.
        if (const std::size_t open = w.raw.find('[');
            open != std::string::npos && open < w.raw.find('=')) {
          check_arith("array subscript", w.raw.substr(open, w.raw.find('=') - open), false);
        }
        taint_assignment(assignments.back());
        count();
        continue;
      }
      words.push_back(std::move(w));
      count();
      if (words.size() == 1 && assignments.empty() && !had_prefix && redirects.empty() &&
          peek().type == Tok::LParen) {
        const std::string name = words[0].value;
        parse_function_def(name);  // name () body
        return;
      }
    } else if (type == Tok::Redir) {
      redirects.push_back(parse_redirect(dyn));
      count();
    } else {
      break;
    }
  }
  finish_simple(std::move(words), std::move(assignments), std::move(redirects), dyn, first_heredoc);
}

Redirect Parser::parse_redirect(Unknowns& dyn) {
  const Token op = next();
  if (peek().type != Tok::Word) {
    throw ShellError{"syntax error: `" + op.op + "` without a target before " + peek().describe()};
  }
  const Word target = next().word;
  dyn.add(target);
  Redirect r;
  r.op = op.op;
  r.target = target.value;
  if (op.fd >= 0) {
    r.fd = op.fd;
  } else if (op.op == "&>" || op.op == "&>>") {
    r.fd = -1;
  } else {
    r.fd = op.op[0] == '>' ? 1 : 0;
  }
  if (op.op == "<<" || op.op == "<<-") {
    heredocs_.push_back({target.value, op.op == "<<-", !target.quoted, r.fd, false, {}, {}, 0, {}});
    r.op = "<<";
  }
  return r;
}

// Redirections after a compound command apply to all of it: report them on a command with an
// empty program so rules still see the write or read.
void Parser::parse_trailing_redirects() {
  std::vector<Redirect> redirects;
  Unknowns dyn;
  while (peek().type == Tok::Redir) redirects.push_back(parse_redirect(dyn));
  if (!redirects.empty()) finish_simple({}, {}, std::move(redirects), dyn, heredocs_.size());
}

void Parser::parse_function_body() {
  next();  // (
  if (peek().type != Tok::RParen) {
    throw ShellError{"syntax error: expected `)` in function definition before " +
                     peek().describe()};
  }
  next();
  skip_newlines();
  const Token& t = peek();
  if (!is_compound_start(t)) {
    throw ShellError{"syntax error: function body must be a compound command, not " + t.describe()};
  }
  NestGuard guard(ctx_);
  parse_command({});
}

void Parser::parse_function_kw() {
  next();  // function
  if (peek().type != Tok::Word) {
    throw ShellError{"syntax error: expected a function name before " + peek().describe()};
  }
  const std::string name = next().word.value;
  parse_function_def(name);
}

// The body runs when the function is called, wherever the shell then is (parse() adds an
// unknown directory to its commands if the line changes directory anywhere); a body that
// changes directory makes every later call of the name do so.
void Parser::parse_function_def(const std::string& name) {
  const std::size_t first = ctx_.out.size();
  const Cwds before = ctx_.sh.cwds;
  const bool moved_before = ctx_.moved;
  ctx_.moved = false;
  bool changed = false;
  {
    SubshellScope scope(ctx_);
    if (peek().type == Tok::LParen) {
      parse_function_body();
    } else {
      skip_newlines();
      if (!is_kw(peek(), "{") && peek().type != Tok::LParen) {
        throw ShellError{"syntax error: expected a function body before " + peek().describe()};
      }
      NestGuard guard(ctx_);
      parse_command({});
    }
    changed = !(ctx_.sh.cwds == before) || ctx_.moved;
  }
  ctx_.moved = ctx_.moved || moved_before;
  for (std::size_t k = first; k < ctx_.out.size(); ++k) ctx_.deferred.push_back(k);
  // A function named like a directory builtin replaces it.
  if ((changed || name == "cd" || name == "pushd" || name == "popd" || name == "builtin" ||
       name == "command" || name == "source" || name == ".") &&
      !ctx_.has(ctx_.cwd_functions, name) && ctx_.cwd_functions.size() < 4096) {
    ctx_.cwd_functions.push_back(name);
  }
  if (name == "builtin" || name == "command") ctx_.cd_untrusted = true;
}

// if … fi and case … esac: the branches are read in order and every cd only adds
// directories, so the set after is every directory any branch may leave.
void Parser::parse_compound_branches() {
  if (is_kw(peek(), "if"))
    parse_if();
  else
    parse_case();
  ctx_.cd_success.reset();
}

void Parser::parse_subshell_body() {
  NestGuard guard(ctx_);
  parse_list();
  const Token t = next();
  if (t.type != Tok::RParen) {
    if (t.type == Tok::End) throw ShellError{"unterminated subshell: missing `)`"};
    throw ShellError{"syntax error near " + t.describe()};
  }
}

void Parser::parse_group() {
  NestGuard guard(ctx_);
  next();  // {
  parse_list();
  if (peek().type == Tok::End) throw ShellError{"unterminated group: missing `}`"};
  expect_kw("}");
}

void Parser::parse_if() {
  NestGuard guard(ctx_);
  next();  // if
  parse_list();
  expect_kw("then");
  parse_list();
  for (;;) {
    if (is_kw(peek(), "elif")) {
      next();
      parse_list();
      expect_kw("then");
      parse_list();
    } else if (is_kw(peek(), "else")) {
      next();
      parse_list();
    } else {
      break;
    }
  }
  expect_kw("fi");
}

void Parser::parse_loop() {
  NestGuard guard(ctx_);
  next();  // while / until
  parse_list();
  expect_kw("do");
  parse_list();
  expect_kw("done");
}

// for NAME [in WORDS…] ; do LIST done, for ((…;…;…)) ; do LIST done (also select).
void Parser::parse_for() {
  NestGuard guard(ctx_);
  next();  // for / select
  if (peek().type == Tok::DLParen) {
    const std::size_t first = ctx_.out.size();
    next();
    const std::size_t start = pos_;
    if (!scan_arith()) throw ShellError{"syntax error in for ((…))"};
    check_arith("for ((…))", text_.substr(start, pos_ - 2 - start), false);
    flush_code(first);
  } else {
    if (peek().type != Tok::Word) {
      throw ShellError{"syntax error: expected a loop variable before " + peek().describe()};
    }
    const Word var = next().word;
    skip_newlines();
    Assignment loop{var.value, "", true};
    bool risky = false;
    if (is_kw(peek(), "in")) {
      next();
      std::size_t count = 0;
      while (peek().type == Tok::Word) {  // substitutions in the words have run
        const Word w = next().word;
        risky = risky || w.dynamic || w.value.find_first_of("[$`") != std::string::npos;
        loop.value += (loop.value.empty() ? "" : " ") + w.value;
        if (++count > ctx_.limits.max_words) {
          throw ShellError{
              "a loop has more than " + std::to_string(ctx_.limits.max_words) + " words",
              Failure::Limit};
        }
      }
    } else {
      risky = true;  // `for x; do`: the positional parameters
    }
    // The loop variable is set for the body: an assignment with a value known at run time
    // (which may hold code when the words do: a file name `a[$(id)]` from a glob).
    if (risky && !ctx_.has(ctx_.tainted, loop.name)) ctx_.tainted.push_back(loop.name);
    finish_simple({}, {std::move(loop)}, {}, Unknowns{.expansion = true}, heredocs_.size());
  }
  if (peek().type == Tok::Semi) next();
  skip_newlines();
  if (is_kw(peek(), "{")) {
    parse_group();
    return;
  }
  expect_kw("do");
  parse_list();
  expect_kw("done");
}

void Parser::parse_case() {
  NestGuard guard(ctx_);
  next();  // case
  if (peek().type != Tok::Word) {
    throw ShellError{"syntax error: expected a word after `case` before " + peek().describe()};
  }
  next();
  skip_newlines();
  expect_kw("in");
  for (;;) {
    skip_newlines();
    if (is_kw(peek(), "esac")) {
      next();
      return;
    }
    if (peek().type == Tok::LParen) next();
    for (;;) {  // pattern ( '|' pattern )*
      if (peek().type != Tok::Word) {
        throw ShellError{"syntax error in case pattern near " + peek().describe()};
      }
      next();
      if (peek().type != Tok::Pipe) break;
      next();
    }
    if (next().type != Tok::RParen) throw ShellError{"syntax error: expected `)` in case arm"};
    parse_list();
    const Tok t = peek().type;
    if (t == Tok::DSemi || t == Tok::SemiAmp || t == Tok::DSemiAmp) {
      next();
    } else if (!is_kw(peek(), "esac")) {
      if (t == Tok::End) throw ShellError{"unterminated case: missing `esac`"};
      throw ShellError{"syntax error in case near " + peek().describe()};
    }
  }
}

// [[ … ]]: a test, not a command; its words are lexed so substitutions inside are found.
// The operands of -v (a name, its subscript arithmetic) and of -eq, -lt … (arithmetic)
// are evaluated: code when they may hold a subscript.
void Parser::parse_cond() {
  const std::size_t first = ctx_.out.size();
  next();  // [[
  std::vector<Word> words;
  for (;;) {
    const Token t = next();
    if (t.type == Tok::End) throw ShellError{"unterminated [[ … ]]"};
    if (is_kw(t, "]]")) break;
    if (t.type == Tok::Word && words.size() < ctx_.limits.max_words) words.push_back(t.word);
  }
  auto arith_op = [](const Word& w) {
    return !w.quoted && (w.value == "-eq" || w.value == "-ne" || w.value == "-lt" ||
                         w.value == "-le" || w.value == "-gt" || w.value == "-ge");
  };
  for (std::size_t k = 0; k < words.size(); ++k) {
    if (!words[k].quoted && words[k].value == "-v" && k + 1 < words.size()) {
      check_name_subscript("[[ -v ]]", words[k + 1].value, words[k + 1].expansion);
    }
    if (arith_op(words[k])) {
      if (k > 0) check_arith("[[ arithmetic ]]", words[k - 1].value, false);
      if (k + 1 < words.size()) check_arith("[[ arithmetic ]]", words[k + 1].value, false);
    }
  }
  flush_code(first);
}

// (( … )): arithmetic, not a command. `((cmd) …)` is really nested subshells: fall back.
void Parser::parse_arith_command() {
  const std::size_t first = ctx_.out.size();
  const Token t = next();
  if (closes_as_arith(pos_)) {
    const std::size_t start = pos_;
    if (!scan_arith()) throw ShellError{"unterminated arithmetic ((…))"};
    check_arith("((…))", text_.substr(start, pos_ - 2 - start), false);
    flush_code(first);
    return;
  }
  pos_ = t.start + 1;  // read again from the second `(`: a subshell in a subshell
  NestGuard guard(ctx_);
  parse_subshell_body();
}

}  // namespace warden::shell::detail
