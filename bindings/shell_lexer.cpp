// Shell lexer: splits text into tokens (words and operators), decides what a word's value
// is after quote removal (helpers in shell_words.cpp) and reads here-document bodies.
// Part of detail::Parser, called by the grammar (shell_grammar.cpp); one Parser per piece of
// text in one parse() call, never shared between threads.
#include <algorithm>

#include "bindings/shell_internal.h"

namespace warden::shell::detail {

namespace {

// `name=` or `name+=` (the start of an array assignment when followed by `(`).
bool is_array_assign_prefix(std::string_view raw) {
  if (raw.empty() || raw.back() != '=' || !is_name_start(raw[0])) return false;
  raw.remove_suffix(1);
  if (!raw.empty() && raw.back() == '+') raw.remove_suffix(1);
  return std::all_of(raw.begin(), raw.end(), is_name_char);
}

}  // namespace

NestGuard::NestGuard(Context& ctx) : ctx_(ctx) {
  if (++ctx_.nest > ctx_.max_nest) {
    throw ShellError{"nesting deeper than " + std::to_string(ctx_.max_nest) + " levels"};
  }
}

std::string Token::describe() const {
  switch (type) {
    case Tok::End:
      return "end of input";
    case Tok::Newline:
      return "newline";
    case Tok::Word:
      return "`" + (word.raw.size() > 40 ? word.raw.substr(0, 40) + "…" : word.raw) + "`";
    case Tok::Redir:
      return "`" + op + "`";
    case Tok::Semi:
      return "`;`";
    case Tok::Amp:
      return "`&`";
    case Tok::AndIf:
      return "`&&`";
    case Tok::OrIf:
      return "`||`";
    case Tok::Pipe:
      return "`|`";
    case Tok::PipeAmp:
      return "`|&`";
    case Tok::DSemi:
      return "`;;`";
    case Tok::SemiAmp:
      return "`;&`";
    case Tok::DSemiAmp:
      return "`;;&`";
    case Tok::LParen:
      return "`(`";
    case Tok::DLParen:
      return "`((`";
    case Tok::RParen:
      return "`)`";
  }
  return "token";
}

bool Parser::closes_bracket(std::size_t i) const {
  const std::size_t n = text_.size();
  if (i < n && (text_[i] == '!' || text_[i] == '^')) ++i;
  if (i < n && text_[i] == ']') ++i;  // a `]` first is part of the set
  for (; i < n && !is_meta(text_[i]) && text_[i] != '\n'; ++i) {
    if (text_[i] == ']') return true;
  }
  return false;
}

void Parser::enter_depth(int inc) const {
  if (depth_ + inc > ctx_.limits.max_depth) {
    throw ShellError{"nesting deeper than max depth " + std::to_string(ctx_.limits.max_depth)};
  }
}

const Token& Parser::peek() {
  if (!peeked_) peeked_ = lex();
  return *peeked_;
}

Token Parser::next() {
  peek();
  Token t = std::move(*peeked_);
  peeked_.reset();
  // Bodies are read only now, so the command that owns them is complete (see finish_simple).
  if (t.type == Tok::Newline && !heredocs_.empty()) read_heredocs();
  return t;
}

Token Parser::lex() {
  if ((++ctx_.ticks & 63) == 0 && ctx_.limits.deadline &&
      std::chrono::steady_clock::now() > *ctx_.limits.deadline) {
    throw ShellError{"the decision deadline passed while parsing the command", Failure::Deadline};
  }
  const std::size_t n = text_.size();
  for (;;) {
    while (pos_ < n && is_blank(text_[pos_])) ++pos_;
    if (text_.substr(pos_).starts_with("\\\n")) {
      pos_ += 2;
      continue;
    }
    if (pos_ < n && text_[pos_] == '#') {  // comment: up to (not including) the newline
      while (pos_ < n && text_[pos_] != '\n') ++pos_;
      continue;
    }
    break;
  }
  Token t;
  t.start = pos_;
  if (pos_ >= n) {
    if (!heredocs_.empty()) {
      throw ShellError{"here-document `" + heredocs_.front().delim + "` has no body"};
    }
    return t;
  }
  const char c = text_[pos_];
  if (c == '\n') {
    ++pos_;
    t.type = Tok::Newline;
    return t;
  }
  // An fd prefix: digits immediately followed by a redirection operator.
  std::size_t j = pos_;
  while (j < n && is_digit(text_[j])) ++j;
  if (j > pos_ && j - pos_ <= 9 && j < n && (text_[j] == '<' || text_[j] == '>') &&
      !(j + 1 < n && text_[j + 1] == '(')) {
    const int fd = std::stoi(std::string(text_.substr(pos_, j - pos_)));
    pos_ = j;
    Token r = lex_operator();
    r.fd = fd;
    r.start = t.start;
    return r;
  }
  if (c == '<' || c == '>') {
    if (pos_ + 1 < n && text_[pos_ + 1] == '(') {  // process substitution is a word
      t.type = Tok::Word;
      t.word = read_word();
      return t;
    }
    return lex_operator();
  }
  if (is_meta(c)) return lex_operator();
  t.type = Tok::Word;
  t.word = read_word();
  return t;
}

Token Parser::lex_operator() {
  struct Op {
    std::string_view text;
    Tok type;
  };
  // Longest first where one is a prefix of another.
  static constexpr Op kOps[] = {
      {";;&", Tok::DSemiAmp}, {";;", Tok::DSemi},   {";&", Tok::SemiAmp}, {";", Tok::Semi},
      {"&&", Tok::AndIf},     {"&>>", Tok::Redir},  {"&>", Tok::Redir},   {"&", Tok::Amp},
      {"||", Tok::OrIf},      {"|&", Tok::PipeAmp}, {"|", Tok::Pipe},     {"((", Tok::DLParen},
      {"(", Tok::LParen},     {")", Tok::RParen},   {"<<<", Tok::Redir},  {"<<-", Tok::Redir},
      {"<<", Tok::Redir},     {"<&", Tok::Redir},   {"<>", Tok::Redir},   {"<", Tok::Redir},
      {">>", Tok::Redir},     {">&", Tok::Redir},   {">|", Tok::Redir},   {">", Tok::Redir},
  };
  Token t;
  t.start = pos_;
  const std::string_view rest = text_.substr(pos_);
  for (const Op& op : kOps) {
    if (rest.starts_with(op.text)) {
      pos_ += op.text.size();
      t.type = op.type;
      if (op.type == Tok::Redir) t.op = std::string(op.text);
      return t;
    }
  }
  throw ShellError{"unexpected character"};  // unreachable: callers check is_meta first
}

Word Parser::read_word() {
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  Word w;
  int brace = 0;  // brace expansion: 1 after `{`, 2 after `{…,` or `{…..`
  while (pos_ < n) {
    const char c = text_[pos_];
    if ((c == '<' || c == '>') && pos_ + 1 < n && text_[pos_ + 1] == '(') {
      read_command_subst(w);  // process substitution <(…) / >(…)
      continue;
    }
    if (c == '(' && is_array_assign_prefix(text_.substr(start, pos_ - start))) {
      read_array(w);
      continue;
    }
    if (is_meta(c)) break;
    switch (c) {
      case '\\':
        if (pos_ + 1 >= n) {
          w.value += '\\';
          ++pos_;
        } else if (text_[pos_ + 1] == '\n') {
          pos_ += 2;  // line continuation
        } else {
          w.value += text_[pos_ + 1];
          w.quoted = true;
          pos_ += 2;
        }
        break;
      case '\'':
        read_single_quote(w);
        break;
      case '"':
        ++pos_;
        read_double_quote(w);
        break;
      case '$':
        if (pos_ + 1 < n && text_[pos_ + 1] == '\'') {
          read_ansi_c(w);
        } else if (pos_ + 1 < n && text_[pos_ + 1] == '"') {
          pos_ += 2;  // $"…" (locale translation) reads like "…"
          read_double_quote(w);
        } else {
          read_dollar(w, false);
        }
        break;
      case '`':
        read_backquote(w, false);
        break;
      case '*':
      case '?':
        w.set_glob();  // unquoted glob
        w.value += c;
        ++pos_;
        break;
      case '[':
        if (closes_bracket(pos_ + 1)) w.set_glob();  // `[…]`; a lone `[` (test) is literal
        w.value += c;
        ++pos_;
        break;
      case '{':
        if (brace == 0) brace = 1;
        w.value += c;
        ++pos_;
        break;
      case ',':
        if (brace == 1) brace = 2;
        w.value += c;
        ++pos_;
        break;
      case '.':
        if (brace == 1 && pos_ + 1 < n && text_[pos_ + 1] == '.') brace = 2;
        w.value += c;
        ++pos_;
        break;
      case '}':
        if (brace == 2) w.set_expansion();  // {a,b} / {1..9} brace expansion
        w.value += c;
        ++pos_;
        break;
      default:
        w.value += c;
        ++pos_;
        break;
    }
  }
  w.raw = std::string(text_.substr(start, pos_ - start));
  // ~user, ~+, ~- expand to something the parser cannot know; plain ~ and ~/… are left to
  // the path normalizer.
  if (!w.raw.empty() && w.raw[0] == '~' && w.raw != "~" && !w.raw.starts_with("~/")) {
    w.set_expansion();
  }
  return w;
}

void Parser::read_heredocs() {
  const std::size_t n = text_.size();
  std::vector<PendingHeredoc> docs;
  docs.swap(heredocs_);
  for (const PendingHeredoc& doc : docs) {
    const std::size_t body_start = pos_;
    std::size_t body_end = std::string_view::npos;
    while (pos_ < n) {
      const std::size_t eol = text_.find('\n', pos_);
      const std::size_t line_end = eol == std::string_view::npos ? n : eol;
      std::string_view line = text_.substr(pos_, line_end - pos_);
      if (doc.strip_tabs) {
        while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
      }
      const bool last = line == doc.delim;
      if (last) body_end = pos_;
      pos_ = eol == std::string_view::npos ? n : eol + 1;
      if (last) break;
    }
    if (body_end == std::string_view::npos) {
      throw ShellError{"here-document `" + doc.delim + "` is not terminated"};
    }
    const std::string_view text = text_.substr(body_start, body_end - body_start);
    if (doc.expand) {
      // The body undergoes $…/`…` expansion: its substitutions run.
      Parser body(ctx_, text, depth_, wrappers_);
      body.scan_heredoc_body();
    }
    if (doc.script) {
      enter_depth(doc.script_depth + 1 - depth_);
      NestGuard guard(ctx_);
      const std::size_t first = ctx_.out.size();
      SubshellScope scope(ctx_);  // another shell, started where the reading command ran
      ctx_.sh.cwds = doc.script_cwds;
      ctx_.sh.oldpwd = {unknown_cwd()};
      ctx_.sh.dirs.clear();
      ctx_.sh.dirs_known = true;
      Parser script(ctx_, text, doc.script_depth + 1, doc.script_wrappers);
      script.parse_all();
      ctx_.count_words((ctx_.out.size() - first) * doc.script_assignments.size());
      for (std::size_t k = first; k < ctx_.out.size(); ++k) {
        auto& a = ctx_.out[k].assignments;
        a.insert(a.begin(), doc.script_assignments.begin(), doc.script_assignments.end());
      }
    }
  }
}

void Parser::scan_heredoc_body() {
  const std::size_t n = text_.size();
  Word scratch;
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '\\') {
      pos_ = std::min(n, pos_ + 2);
    } else if (c == '$') {
      read_dollar(scratch, true);
    } else if (c == '`') {
      read_backquote(scratch, true);
    } else {
      ++pos_;
    }
  }
}

}  // namespace warden::shell::detail
