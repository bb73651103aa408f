// RuleTokens: CLIPS rule source split into tokens (parentheses, strings, atoms) the way the
// CLIPS 6.30 scanner splits it, each with its line and column. Used by the rule checker and by
// ClipsEnv to place CLIPS's own errors. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace warden {

enum class TokenType { Open, Close, String, Atom };

struct Token {
  TokenType type;
  std::string text;        // unescaped for strings
  long line = 0;           // 1-based line of the token's first character
  std::size_t offset = 0;  // byte offset of the token's first character
  long column = 0;         // 1-based column of that character, in UTF-8 characters
};

// Why source could not be split into tokens, and where.
struct TokenError {
  const char* code = nullptr;  // code::kUnbalanced (a string not closed) or code::kParse
  long line = 0;
  long column = 0;
  std::string message;
};

// Tokenizes CLIPS source: parentheses, strings (with CLIPS escapes), atoms (symbols, numbers,
// variables, the constraint operators & | ~); skips comments. Outside strings, control
// characters and invalid UTF-8 are refused (CLIPS reads them as odd tokens or as the end of
// input); NUL is refused everywhere. A string never closed is placed where the author most
// likely left out its closing quote: the first string that runs on past lines which read as
// code, else where it opened. Returns false with *error.
bool tokenize(std::string_view src, std::vector<Token>* tokens, TokenError* error);

// True if a string's text spans lines that read as code: a line starting with '(' or ';', or
// the closing quote starting its line. The mark of a string whose closing quote is missing.
bool string_runs_through_code(const std::string& text);

// True for the atoms CLIPS reads as variables: ?x, $?x, ?*global*, and the wildcards ? and $?.
bool is_variable(const std::string& atom);

}  // namespace warden
