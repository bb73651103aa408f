#include "engine/rule_tokens.h"

#include "engine/diagnostic.h"

namespace warden {
namespace {

// Byte classes of the CLIPS 6.30 scanner (scanner.c), so that the checker splits source into
// the same tokens CLIPS does: "(funcall<x" is "(" "funcall" "<x", and a comment ends at a
// carriage return as well as a line feed.
bool token_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}
bool is_alpha(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_utf8_start(unsigned char c) { return c >= 0xC0 && c <= 0xF7; }
// Ends a symbol or number: what ScanSymbol stops at (any non-printable ASCII byte included).
bool is_delimiter(unsigned char c) {
  return c == '<' || c == '"' || c == '(' || c == ')' || c == '&' || c == '|' || c == '~' ||
         c == ' ' || c == ';' || c < 0x20 || c == 0x7F;
}

// Length of the valid UTF-8 sequence at s[i], or 0.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = c >= 0xF0 && c <= 0xF4  ? 4
                  : c >= 0xE0 && c < 0xF0 ? 3
                  : c >= 0xC2 && c < 0xE0 ? 2
                                          : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}

}  // namespace

// True if a multi-line string's text reads as code: a line starting with '(' or ';' after its
// indentation, or a closing quote that starts its line (the opening quote of the next string
// there). A rule's text (a reason wrapped over lines) practically never does; a string whose
// closing quote was left out runs on through what follows, pairing the quotes after it wrongly.
bool string_runs_through_code(const std::string& text) {
  std::size_t n = text.find('\n');
  for (; n != std::string::npos; n = text.find('\n', n + 1)) {
    std::size_t k = n + 1;
    while (k < text.size() && (text[k] == ' ' || text[k] == '\t')) ++k;
    if (k == text.size() || text[k] == '(' || text[k] == ';') return true;
  }
  return false;
}

bool is_variable(const std::string& atom) {
  return !atom.empty() && (atom[0] == '?' || atom.rfind("$?", 0) == 0);
}

bool tokenize(std::string_view src, std::vector<Token>* tokens, TokenError* error) {
  long line = 1;
  std::size_t i = 0;
  // Columns, counted incrementally (tokens come in order): `col` is the column at `col_at`.
  std::size_t col_at = 0;
  long col = 1;
  auto newline = [&](std::size_t at) {  // src[at] is a line feed
    ++line;
    col_at = at + 1;
    col = 1;
  };
  auto column = [&](std::size_t at) {
    for (; col_at < at; ++col_at)
      if ((static_cast<unsigned char>(src[col_at]) & 0xC0) != 0x80) ++col;
    return col;
  };
  auto fail = [&](long at_line, std::size_t at, const char* code, std::string why) {
    error->code = code;
    error->line = at_line;
    error->column = at_line == line ? column(at) : 0;
    error->message = std::move(why);
    return false;
  };
  // Strings that ran on through lines of code, with the line each closed on.
  std::vector<std::pair<std::size_t, long>> runaway;
  // Scans symbol bytes from `from` (ScanSymbol); multi-byte characters must be valid UTF-8.
  auto scan_symbol = [&](std::size_t from, std::size_t* to) {
    std::size_t k = from;
    while (k < src.size()) {
      const auto d = static_cast<unsigned char>(src[k]);
      if (d >= 0x80) {
        std::size_t n = utf8_length(src, k);
        if (n == 0) return false;
        k += n;
        continue;
      }
      if (is_delimiter(d)) break;
      ++k;
    }
    *to = k;
    return true;
  };
  while (i < src.size()) {
    const auto c = static_cast<unsigned char>(src[i]);
    if (c == '\n') {
      newline(i);
      ++i;
      continue;
    }
    if (token_space(c)) {
      ++i;
      continue;
    }
    if (c == ';') {
      while (i < src.size() && src[i] != '\n' && src[i] != '\r') {
        if (src[i] == '\0') return fail(line, i, code::kParse, "NUL byte in a comment");
        ++i;
      }
      continue;
    }
    if (c == '(') {
      tokens->push_back({TokenType::Open, "(", line, i, column(i)});
      ++i;
      continue;
    }
    if (c == ')') {
      tokens->push_back({TokenType::Close, ")", line, i, column(i)});
      ++i;
      continue;
    }
    if (c == '"') {
      const long start = line;
      const std::size_t start_offset = i;
      const long start_column = column(i);
      std::string value;
      ++i;
      bool closed = false;
      while (i < src.size()) {
        char d = src[i];
        if (d == '\0') return fail(line, i, code::kParse, "NUL byte in a string");
        if (d == '\\' && i + 1 < src.size()) {
          if (src[i + 1] == '\n') newline(i + 1);
          if (src[i + 1] == '\0') return fail(line, i + 1, code::kParse, "NUL byte in a string");
          value.push_back(src[i + 1]);
          i += 2;
          continue;
        }
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\n') newline(i);
        value.push_back(d);
        ++i;
      }
      if (!closed) {
        if (!runaway.empty()) {
          const Token& s = (*tokens)[runaway.front().first];
          error->code = code::kUnbalanced;
          error->line = s.line;
          error->column = s.column;
          error->message =
              "this string opened on line " + std::to_string(s.line) + " runs on to line " +
              std::to_string(runaway.front().second) +
              " through lines that read as rules: its closing `\"` is probably missing";
          return false;
        }
        error->code = code::kUnbalanced;
        error->line = start;
        error->column = start_column;
        error->message = "this string opened on line " + std::to_string(start) +
                         " is never closed: its closing `\"` is missing";
        return false;
      }
      if (line != start && string_runs_through_code(value))
        runaway.emplace_back(tokens->size(), line);
      tokens->push_back({TokenType::String, std::move(value), start, start_offset, start_column});
      continue;
    }
    if (c < 0x20 || c == 0x7F)
      return fail(line, i, code::kParse, "control character outside a string");
    if (c >= 0x80 && utf8_length(src, i) == 0)
      return fail(line, i, code::kParse, "invalid UTF-8 outside a string");
    std::size_t begin = i, end = i;
    if (c == '&' || c == '|' || c == '~') {
      end = i + 1;
    } else if (c == '?' || (c == '$' && i + 1 < src.size() && src[i + 1] == '?')) {
      // ?name, $?name, ?*global*; a lone ? or $? is a wildcard and the next byte starts a token.
      std::size_t name = i + (c == '?' ? 1 : 2);
      const auto n = name < src.size() ? static_cast<unsigned char>(src[name]) : 0;
      if (is_alpha(n) || is_utf8_start(n) || n == '*') {
        if (!scan_symbol(name, &end))
          return fail(line, i, code::kParse, "invalid UTF-8 outside a string");
      } else {
        end = name;
      }
    } else {
      // '<' and '$' start a symbol and are not delimiters there; everything else scans alike.
      std::size_t from = (c == '<' || c == '$') ? i + 1 : i;
      if (!scan_symbol(from, &end))
        return fail(line, i, code::kParse, "invalid UTF-8 outside a string");
    }
    tokens->push_back(
        {TokenType::Atom, std::string(src.substr(begin, end - begin)), line, begin, column(begin)});
    i = end;
  }
  return true;
}

}  // namespace warden
