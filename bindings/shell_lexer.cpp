// Shell lexer: splits text into words (quote removal, $'…' decoding, dynamic detection) and
// operators, and reads here-document bodies. Command substitutions found inside words are
// parsed on the spot through the grammar (shell_grammar.cpp), so inner commands come first.
// Part of detail::Parser; one instance per parse, not shared between threads.
#include <algorithm>
#include <cstdint>

#include "bindings/shell_internal.h"

namespace warden::shell::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_name_start(char c) { return is_alpha(c) || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }
bool is_meta(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == '(' ||
         c == ')' || c == '<' || c == '>';
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return;
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

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
    case Tok::End: return "end of input";
    case Tok::Newline: return "newline";
    case Tok::Word:
      return "`" + (word.raw.size() > 40 ? word.raw.substr(0, 40) + "…" : word.raw) + "`";
    case Tok::Redir: return "`" + op + "`";
    case Tok::Semi: return "`;`";
    case Tok::Amp: return "`&`";
    case Tok::AndIf: return "`&&`";
    case Tok::OrIf: return "`||`";
    case Tok::Pipe: return "`|`";
    case Tok::PipeAmp: return "`|&`";
    case Tok::DSemi: return "`;;`";
    case Tok::SemiAmp: return "`;&`";
    case Tok::DSemiAmp: return "`;;&`";
    case Tok::LParen: return "`(`";
    case Tok::DLParen: return "`((`";
    case Tok::RParen: return "`)`";
  }
  return "token";
}

void Parser::enter_depth() const {
  if (depth_ + 1 > ctx_.limits.max_depth) {
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
      {";;&", Tok::DSemiAmp}, {";;", Tok::DSemi}, {";&", Tok::SemiAmp}, {";", Tok::Semi},
      {"&&", Tok::AndIf},     {"&>>", Tok::Redir}, {"&>", Tok::Redir},  {"&", Tok::Amp},
      {"||", Tok::OrIf},      {"|&", Tok::PipeAmp}, {"|", Tok::Pipe},
      {"((", Tok::DLParen},   {"(", Tok::LParen},  {")", Tok::RParen},
      {"<<<", Tok::Redir},    {"<<-", Tok::Redir}, {"<<", Tok::Redir},  {"<&", Tok::Redir},
      {"<>", Tok::Redir},     {"<", Tok::Redir},   {">>", Tok::Redir},  {">&", Tok::Redir},
      {">|", Tok::Redir},     {">", Tok::Redir},
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
      case '[':
        w.dynamic = true;  // unquoted glob
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
        if (brace == 2) w.dynamic = true;  // {a,b} / {1..9} brace expansion
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
    w.dynamic = true;
  }
  return w;
}

void Parser::read_single_quote(Word& w) {
  const std::size_t close = text_.find('\'', pos_ + 1);
  if (close == std::string_view::npos) throw ShellError{"unterminated single quote"};
  w.value.append(text_.substr(pos_ + 1, close - pos_ - 1));
  w.quoted = true;
  pos_ = close + 1;
}

void Parser::read_double_quote(Word& w) {
  const std::size_t n = text_.size();
  w.quoted = true;
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      return;
    }
    if (c == '\\' && pos_ + 1 < n) {
      const char d = text_[pos_ + 1];
      if (d == '$' || d == '`' || d == '"' || d == '\\') {
        w.value += d;
        pos_ += 2;
      } else if (d == '\n') {
        pos_ += 2;
      } else {
        w.value += '\\';
        ++pos_;
      }
      continue;
    }
    if (c == '$') {
      read_dollar(w, true);
    } else if (c == '`') {
      read_backquote(w, true);
    } else {
      w.value += c;
      ++pos_;
    }
  }
  throw ShellError{"unterminated double quote"};
}

void Parser::read_ansi_c(Word& w) {
  const std::size_t n = text_.size();
  pos_ += 2;  // $'
  w.quoted = true;
  bool nul = false;  // bash cuts the string at a decoded NUL
  std::string out;
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '\'') {
      ++pos_;
      if (!nul) w.value += out;
      else w.value += out.substr(0, out.find('\0'));
      return;
    }
    if (c != '\\' || pos_ + 1 >= n) {
      out += c;
      ++pos_;
      continue;
    }
    const char e = text_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'v': out += '\v'; break;
      case 'e':
      case 'E': out += '\x1b'; break;
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case '?': out += '?'; break;
      case 'c':
        if (pos_ < n) out += static_cast<char>(text_[pos_++] & 0x1F);
        break;
      case 'x':
      case 'u':
      case 'U': {
        const int max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t v = 0;
        int digits = 0;
        while (digits < max && pos_ < n && hex_value(text_[pos_]) >= 0) {
          v = v * 16 + static_cast<std::uint32_t>(hex_value(text_[pos_++]));
          ++digits;
        }
        if (digits == 0) {
          out += '\\';
          out += e;
        } else if (e == 'x') {
          out += static_cast<char>(v);
        } else {
          append_utf8(out, v);
        }
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t v = static_cast<std::uint32_t>(e - '0');
          for (int k = 0; k < 2 && pos_ < n && text_[pos_] >= '0' && text_[pos_] <= '7'; ++k) {
            v = v * 8 + static_cast<std::uint32_t>(text_[pos_++] - '0');
          }
          out += static_cast<char>(v & 0xFF);
        } else {
          out += '\\';
          out += e;
        }
        break;
    }
    if (!out.empty() && out.back() == '\0') nul = true;
  }
  throw ShellError{"unterminated $'…' string"};
}

void Parser::read_dollar(Word& w, bool in_dquote) {
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  const char d = pos_ + 1 < n ? text_[pos_ + 1] : '\0';
  if (pos_ + 1 < n && d == '(') {
    if (pos_ + 2 < n && text_[pos_ + 2] == '(' && closes_as_arith(pos_ + 3)) {
      pos_ += 3;
      if (!scan_arith()) throw ShellError{"unterminated arithmetic $((…))"};
      w.value.append(text_.substr(start, pos_ - start));
      w.dynamic = true;
      return;
    }
    read_command_subst(w);
    return;
  }
  if (pos_ + 1 < n && d == '{') {
    read_brace_param(w, in_dquote);
    return;
  }
  std::size_t end = pos_ + 1;
  if (pos_ + 1 < n && is_name_start(d)) {
    while (end < n && is_name_char(text_[end])) ++end;
  } else if (pos_ + 1 < n && (is_digit(d) || d == '@' || d == '*' || d == '#' || d == '?' ||
                              d == '-' || d == '$' || d == '!' || d == '[')) {
    end = pos_ + 2;  // $1 $@ $? … and the old $[…] arithmetic (its `[` follows)
  } else {
    w.value += '$';  // a lone `$` is literal
    ++pos_;
    return;
  }
  w.value.append(text_.substr(start, end - start));
  w.dynamic = true;
  pos_ = end;
}

void Parser::read_brace_param(Word& w, bool in_dquote) {
  NestGuard guard(ctx_);
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  pos_ += 2;  // ${
  Word inner;  // collects nothing useful; substitutions inside are parsed for their commands
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '}') {
      ++pos_;
      w.value.append(text_.substr(start, pos_ - start));
      w.dynamic = true;
      return;
    }
    if (c == '\\') {
      pos_ = std::min(n, pos_ + 2);
    } else if (c == '\'' && !in_dquote) {
      read_single_quote(inner);
    } else if (c == '"') {
      ++pos_;
      read_double_quote(inner);
    } else if (c == '$') {
      read_dollar(inner, in_dquote);
    } else if (c == '`') {
      read_backquote(inner, in_dquote);
    } else {
      ++pos_;
    }
  }
  throw ShellError{"unterminated ${…}"};
}

void Parser::read_command_subst(Word& w) {
  enter_depth();
  NestGuard guard(ctx_);
  const std::size_t start = pos_;
  const char kind = text_[pos_];
  pos_ += 2;  // $( or <( or >(
  peeked_.reset();  // empty here: we are in the middle of lexing a token
  ++depth_;
  parse_list();
  const Token t = next();
  --depth_;
  if (t.type != Tok::RParen) {
    if (t.type == Tok::End) {
      throw ShellError{kind == '$' ? "unterminated command substitution $(…)"
                                   : "unterminated process substitution"};
    }
    throw ShellError{"syntax error near " + t.describe()};
  }
  w.value.append(text_.substr(start, pos_ - start));
  w.dynamic = true;
}

void Parser::read_backquote(Word& w, bool in_dquote) {
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  std::string body;
  ++pos_;
  for (;;) {
    if (pos_ >= n) throw ShellError{"unterminated backquote"};
    const char c = text_[pos_];
    if (c == '`') {
      ++pos_;
      break;
    }
    if (c == '\\' && pos_ + 1 < n) {
      const char d = text_[pos_ + 1];
      if (d == '$' || d == '`' || d == '\\' || (in_dquote && d == '"')) {
        body += d;
        pos_ += 2;
        continue;
      }
    }
    body += c;
    ++pos_;
  }
  enter_depth();
  NestGuard guard(ctx_);
  Parser sub(ctx_, body, depth_ + 1, wrappers_);
  sub.parse_all();
  w.value.append(text_.substr(start, pos_ - start));
  w.dynamic = true;
}

void Parser::read_array(Word& w) {
  NestGuard guard(ctx_);
  const std::size_t n = text_.size();
  w.value += '(';
  ++pos_;
  for (;;) {
    while (pos_ < n && (is_blank(text_[pos_]) || text_[pos_] == '\n')) ++pos_;
    if (pos_ >= n) throw ShellError{"unterminated array assignment"};
    if (text_[pos_] == ')') {
      w.value += ')';
      ++pos_;
      return;
    }
    const Word item = read_word();
    if (item.raw.empty()) throw ShellError{"syntax error in array assignment"};
    w.value += item.raw;
    w.value += ' ';
    w.dynamic = w.dynamic || item.dynamic;
  }
}

bool Parser::closes_as_arith(std::size_t i) const {
  const std::size_t n = text_.size();
  int open = 0;
  for (; i < n; ++i) {
    const char c = text_[i];
    if (c == '\\') {
      ++i;
    } else if (c == '\'' || c == '"') {
      while (++i < n && text_[i] != c) {
        if (c == '"' && text_[i] == '\\') ++i;
      }
    } else if (c == '(') {
      ++open;
    } else if (c == ')') {
      if (open == 0) return i + 1 < n && text_[i + 1] == ')';
      --open;
    }
  }
  return true;  // unterminated: the arithmetic scanner reports it
}

bool Parser::scan_arith() {
  NestGuard guard(ctx_);
  const std::size_t n = text_.size();
  int open = 0;
  Word scratch;
  while (pos_ < n) {
    const char c = text_[pos_];
    switch (c) {
      case '(':
        ++open;
        ++pos_;
        break;
      case ')':
        if (open > 0) {
          --open;
          ++pos_;
          break;
        }
        if (pos_ + 1 < n && text_[pos_ + 1] == ')') {
          pos_ += 2;
          return true;
        }
        return false;
      case '\\':
        pos_ = std::min(n, pos_ + 2);
        break;
      case '\'':
        read_single_quote(scratch);
        break;
      case '"':
        ++pos_;
        read_double_quote(scratch);
        break;
      case '$':
        read_dollar(scratch, true);
        break;
      case '`':
        read_backquote(scratch, true);
        break;
      default:
        ++pos_;
        break;
    }
  }
  return false;
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
      enter_depth();
      NestGuard guard(ctx_);
      Parser script(ctx_, text, depth_ + 1, doc.script_wrappers);
      script.parse_all();
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
