// Shell word pieces: quotes, $'…', $NAME/${…}, $(…)/`…`/<(…) (parsed on the spot through the
// grammar, so inner commands are emitted before the word's command), $((…)) and name=(…).
// Part of detail::Parser, called from read_word() in shell_lexer.cpp; one Parser per piece of
// text in one parse() call, never shared between threads.
#include <algorithm>
#include <cstdint>

#include "bindings/shell_internal.h"
#include "bindings/text.h"

namespace warden::shell::detail {

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
      if (!nul)
        w.value += out;
      else
        w.value += out.substr(0, out.find('\0'));
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
      case 'n':
        out += '\n';
        break;
      case 't':
        out += '\t';
        break;
      case 'r':
        out += '\r';
        break;
      case 'a':
        out += '\a';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'v':
        out += '\v';
        break;
      case 'e':
      case 'E':
        out += '\x1b';
        break;
      case '\\':
        out += '\\';
        break;
      case '\'':
        out += '\'';
        break;
      case '"':
        out += '"';
        break;
      case '?':
        out += '?';
        break;
      case 'c':
        if (pos_ < n) out += static_cast<char>(text_[pos_++] & 0x1F);
        break;
      case 'x':
      case 'u':
      case 'U': {
        const int max = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        std::uint32_t v = 0;
        int digits = 0;
        while (digits < max && pos_ < n && text::hex_value(text_[pos_]) >= 0) {
          v = v * 16 + static_cast<std::uint32_t>(text::hex_value(text_[pos_++]));
          ++digits;
        }
        if (digits == 0) {
          out += '\\';
          out += e;
        } else if (e == 'x') {
          out += static_cast<char>(v);
        } else if (v <= 0x10FFFF && !(v >= 0xD800 && v <= 0xDFFF)) {
          text::append_utf8(out, v);  // beyond Unicode or a surrogate: dropped
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
      check_arith("$((…))", text_.substr(start + 3, pos_ - 2 - (start + 3)), false);
      w.value.append(text_.substr(start, pos_ - start));
      w.set_expansion();
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
  } else if (pos_ + 1 < n && d == '[') {
    // The old $[…] arithmetic: its text is evaluated like $((…)).
    const std::size_t close = text_.find(']', pos_ + 2);
    end = pos_ + 2;
    check_arith("$[…]",
                text_.substr(pos_ + 2, close == std::string_view::npos ? n : close - pos_ - 2),
                false);
  } else if (pos_ + 1 < n && (is_digit(d) || d == '@' || d == '*' || d == '#' || d == '?' ||
                              d == '-' || d == '$' || d == '!')) {
    end = pos_ + 2;  // $1 $@ $? …
  } else {
    w.value += '$';  // a lone `$` is literal
    ++pos_;
    return;
  }
  w.value.append(text_.substr(start, end - start));
  w.set_expansion();
  pos_ = end;
}

void Parser::read_brace_param(Word& w, bool in_dquote) {
  NestGuard guard(ctx_);
  const std::size_t n = text_.size();
  const std::size_t start = pos_;
  pos_ += 2;   // ${
  Word inner;  // collects nothing useful; substitutions inside are parsed for their commands
  while (pos_ < n) {
    const char c = text_[pos_];
    if (c == '}') {
      ++pos_;
      w.value.append(text_.substr(start, pos_ - start));
      w.set_expansion();
      check_brace_param(text_.substr(start + 2, pos_ - 1 - (start + 2)));
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
  pos_ += 2;        // $( or <( or >(
  peeked_.reset();  // empty here: we are in the middle of lexing a token
  ++depth_;
  std::vector<std::string> outer_code = std::move(pending_code_);
  pending_code_.clear();
  Token t;
  {
    SubshellScope scope(ctx_);  // a substitution runs in a subshell
    const std::size_t first = ctx_.out.size();
    parse_list();
    t = next();
    flush_code(first);
  }
  pending_code_.insert(pending_code_.begin(), outer_code.begin(), outer_code.end());
  --depth_;
  if (t.type != Tok::RParen) {
    if (t.type == Tok::End) {
      throw ShellError{kind == '$' ? "unterminated command substitution $(…)"
                                   : "unterminated process substitution"};
    }
    throw ShellError{"syntax error near " + t.describe()};
  }
  w.value.append(text_.substr(start, pos_ - start));
  w.set_expansion();
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
  SubshellScope scope(ctx_);  // a substitution runs in a subshell
  Parser sub(ctx_, body, depth_ + 1, wrappers_);
  sub.parse_all();
  w.value.append(text_.substr(start, pos_ - start));
  w.set_expansion();
}

// ${…} as written between the braces: prompt expansion (${x@P}) runs the value's
// substitutions; indirection (${!x}) reads the variable the value names, subscript
// included; a subscript of an indexed array and a substring's offset and length are
// arithmetic.
void Parser::check_brace_param(std::string_view body) {
  if (body.empty()) return;
  std::size_t i = 0;
  const bool indirect = body[0] == '!';
  if (body[0] == '#' || indirect) ++i;
  const std::size_t name_start = i;
  while (i < body.size() && is_name_char(body[i])) ++i;
  if (i == name_start && i < body.size() && (body[i] == '@' || body[i] == '*')) ++i;  // ${@:1}
  if (i == name_start) return;  // $#, $?, $- … special parameters
  const std::string_view param = body.substr(name_start, i - name_start);
  if (indirect) {
    // ${!prefix*}, ${!prefix@}, ${!a[@]} list names or keys; anything else dereferences.
    const std::string_view rest = body.substr(i);
    if (!(rest == "*" || rest == "@" || rest == "[@]" || rest == "[*]")) note_code("${!…}", body);
  }
  if (i < body.size() && body[i] == '[') {
    const std::size_t close = body.find(']', i);
    const std::string_view sub = body.substr(
        i + 1, close == std::string_view::npos ? std::string_view::npos : close - i - 1);
    if (sub != "@" && sub != "*") check_arith("${a[…]}", sub, false);
    if (close == std::string_view::npos) return;
    i = close + 1;
  }
  if (i >= body.size()) return;
  const std::string_view op = body.substr(i);
  if (op.size() >= 2 && op[0] == '@' && op[1] == 'P') note_code("${…@P}", body);
  // ${x:=VALUE}, ${x=VALUE} assign x: it may now hold a subscript evaluated by arithmetic.
  const std::size_t eq = op.starts_with(":=") ? 2 : op.starts_with("=") ? 1 : 0;
  if (eq != 0 && op.substr(eq).find_first_of("[$`'\"\\") != std::string_view::npos) {
    const std::string name(param);
    if (!ctx_.has(ctx_.tainted, name) && ctx_.tainted.size() < 4096) ctx_.tainted.push_back(name);
  }
  if (op[0] == ':' &&
      (op.size() == 1 || std::string_view("-=?+").find(op[1]) == std::string_view::npos)) {
    check_arith("${…:offset:length}", op.substr(1), false);
  }
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
    if (item.raw.starts_with("[")) {  // ([SUB]=value …): the subscript is arithmetic
      const std::size_t close = item.raw.find("]=");
      check_arith("array subscript",
                  item.raw.substr(1, close == std::string::npos ? std::string::npos : close - 1),
                  false);
    }
    w.value += item.raw;
    w.value += ' ';
    w.merge(item);
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

}  // namespace warden::shell::detail
