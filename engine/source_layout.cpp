#include "engine/source_layout.h"

#include <string>

namespace warden {
namespace {
constexpr std::size_t kMaxLevels = 256;
}  // namespace

std::size_t unclosed_by_indentation(const std::vector<Token>& t, std::size_t from, std::size_t to,
                                    std::size_t* evidence) {
  struct Open {
    std::size_t index;
    long line_indent;  // column of the first token on the line it opened on
  };
  std::vector<Open> stack;
  long first_line = from < to ? t[from].line : 0;
  long indent = 1;  // of the current line
  for (std::size_t k = from; k < to; ++k) {
    const bool starts_line = k == from || t[k].line != t[k - 1].line;
    if (starts_line) {
      indent = t[k].column;
      // Closing parentheses at a line start say nothing: they may sit anywhere.
      if (k != from && t[k].type != TokenType::Close) {
        // Only the outer levels: deeper nesting is refused anyway (the checker's limit is 128),
        // and a hostile file of endless open parentheses stays linear.
        for (std::size_t s = 1; s < stack.size() && s <= kMaxLevels; ++s) {
          const Token& o = t[stack[s].index];
          if (o.line == t[k].line) continue;
          const bool on_first_line = o.line == first_line;
          if ((on_first_line && t[k].column < o.column) || (!on_first_line && stack[s].line_indent >= t[k].column)) {
            if (evidence) *evidence = k;
            return stack[s].index;
          }
        }
      }
    }
    if (t[k].type == TokenType::Open) stack.push_back({k, indent});
    else if (t[k].type == TokenType::Close && !stack.empty()) stack.pop_back();
  }
  return to;
}

std::string quoted_group(const std::vector<Token>& t, std::size_t open) {
  std::string out = "`(";
  if (open + 1 < t.size() && t[open + 1].type == TokenType::Atom) {
    const std::string& head = t[open + 1].text;
    out += head.substr(0, 40);
    // A construct is named by its name too: `(defrule block-rm`.
    if (head.rfind("def", 0) == 0 && open + 2 < t.size() && t[open + 2].type == TokenType::Atom)
      out += " " + t[open + 2].text.substr(0, 40);
  }
  return out + "`";
}

}  // namespace warden
