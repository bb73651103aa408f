#include "engine/source_layout.h"

#include <map>
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
          if ((on_first_line && t[k].column < o.column) ||
              (!on_first_line && stack[s].line_indent >= t[k].column)) {
            if (evidence) *evidence = k;
            return stack[s].index;
          }
        }
      }
    }
    if (t[k].type == TokenType::Open)
      stack.push_back({k, indent});
    else if (t[k].type == TokenType::Close && !stack.empty())
      stack.pop_back();
  }
  return to;
}

std::size_t extra_close_by_indentation(const std::vector<Token>& t, std::size_t from,
                                       std::size_t to) {
  if (to >= t.size() || from >= to) return to;
  struct LineStart {
    std::size_t index;
    int depth;
  };
  // The first ')' from `start` on that takes the depth to `floor` or below.
  auto first_close_to = [&](std::size_t start, int depth_at_start, int floor, std::size_t end) {
    int d = depth_at_start;
    for (std::size_t q = start; q < end; ++q) {
      if (t[q].type == TokenType::Open)
        ++d;
      else if (t[q].type == TokenType::Close && --d <= floor)
        return q;
    }
    return to;
  };
  std::map<long, LineStart>
      by_indent;  // column → the last line or group starting there, in the open blocks
  LineStart previous{to, 0};  // the line before
  int depth = 0;
  for (std::size_t k = from; k <= to; ++k) {
    if ((k == from || t[k].line != t[k - 1].line) && t[k].type != TokenType::Close) {
      // A line indented as a continuation of the one before, though that one left nothing open:
      // a ')' on it closed what the continuation belongs to.
      if (previous.index != to && t[k].column > t[previous.index].column &&
          depth <= previous.depth) {
        const std::size_t q = first_close_to(previous.index, previous.depth, previous.depth, k);
        if (q != to) return q;
      }
      // A line starting shallower than the last line or group aligned alike, with no line
      // further left between them: a ')' between them closed one group too many.
      auto alike = by_indent.find(t[k].column);
      if (alike != by_indent.end() && alike->second.depth > depth) {
        const std::size_t q =
            first_close_to(alike->second.index, alike->second.depth, alike->second.depth - 1, k);
        if (q != to) return q;
      }
      // A line starting further left ends the blocks indented deeper: no line after it is
      // their sibling.
      by_indent.erase(by_indent.upper_bound(t[k].column), by_indent.end());
      by_indent[t[k].column] = {k, depth};
      previous = {k, depth};
    } else if (t[k].type == TokenType::Open) {
      by_indent[t[k].column] = {k, depth};  // a later line may be aligned with it
    }
    if (k == to) break;
    if (t[k].type == TokenType::Open)
      ++depth;
    else if (t[k].type == TokenType::Close)
      --depth;
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
