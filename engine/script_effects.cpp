// awk and sed program text read for what it touches (see script_effects.h). The awk reader
// tokenizes the program (strings, regular expressions, comments) and follows the statements
// that reach outside awk; the sed reader parses GNU sed's script grammar command by command.
// Both fail closed: what they cannot read through becomes an exec of code known only at
// run time.
#include "engine/script_effects.h"

#include <algorithm>
#include <optional>
#include <string_view>

#include "bindings/paths.h"

namespace warden {

namespace {

using namespace std::string_view_literals;

constexpr std::string_view kAwkVia = "awk program";
constexpr std::string_view kSedVia = "sed program";

struct Emitter {
  const std::string& cwd;
  const std::string& home;
  std::vector<Effect>* out;
  std::string_view via;

  void path(EffectKind kind, std::string_view file) {
    Effect e;
    e.kind = kind;
    e.object = EffectObject::Path;
    e.target = paths::normalize(file, cwd, home);
    e.via = std::string(via);
    out->push_back(std::move(e));
  }
  // Code run by a shell (or not known at all): `dynamic` when its text is known only at
  // run time.
  void code(std::string_view text, bool dynamic) {
    Effect e;
    e.kind = EffectKind::Exec;
    e.object = EffectObject::Code;
    e.target = std::string(text.substr(0, 200));
    e.via = std::string(via);
    e.dynamic = dynamic;
    out->push_back(std::move(e));
  }
};

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// ---------------------------------------------------------------- awk

struct AwkToken {
  enum Kind { Ident, Number, String, Regex, Op, Newline } kind;
  std::string text;  // String: the value (escapes decoded); others: as written
};

// Tokenizes awk program text; nullopt when a string or regular expression does not close.
// A `/` starts a regular expression where an operand is expected (as gawk's lexer decides).
std::optional<std::vector<AwkToken>> awk_tokens(std::string_view p) {
  std::vector<AwkToken> t;
  bool operand_before = false;
  std::size_t i = 0;
  const std::size_t n = p.size();
  while (i < n) {
    const char c = p[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '\\' && i + 1 < n && (p[i + 1] == '\n' || p[i + 1] == '\r')) {
      i += 2;
    } else if (c == '\n') {
      t.push_back({AwkToken::Newline, "\n"});
      operand_before = false;
      ++i;
    } else if (c == '#') {
      while (i < n && p[i] != '\n') ++i;
    } else if (c == '"') {
      std::string v;
      ++i;
      bool closed = false;
      while (i < n) {
        if (p[i] == '\\' && i + 1 < n) {
          const char e = p[i + 1];
          v += e == 'n' ? '\n' : e == 't' ? '\t' : e == '/' ? '/' : e;
          if (e != 'n' && e != 't' && e != '"' && e != '\\' && e != '/')
            v.insert(v.size() - 1, 1, '\\');
          i += 2;
        } else if (p[i] == '"') {
          ++i;
          closed = true;
          break;
        } else if (p[i] == '\n') {
          return std::nullopt;
        } else {
          v += p[i++];
        }
      }
      if (!closed) return std::nullopt;
      t.push_back({AwkToken::String, std::move(v)});
      operand_before = true;
    } else if (c == '/' && !operand_before) {
      std::string v;
      ++i;
      bool closed = false, bracket = false;
      while (i < n) {
        if (p[i] == '\\' && i + 1 < n) {
          v += p.substr(i, 2);
          i += 2;
        } else if (p[i] == '\n') {
          return std::nullopt;
        } else if (bracket) {
          if (p[i] == ']') bracket = false;
          v += p[i++];
        } else if (p[i] == '[') {
          bracket = true;
          v += p[i++];
          if (i < n && p[i] == '^') v += p[i++];
          if (i < n && p[i] == ']') v += p[i++];
        } else if (p[i] == '/') {
          ++i;
          closed = true;
          break;
        } else {
          v += p[i++];
        }
      }
      if (!closed) return std::nullopt;
      t.push_back({AwkToken::Regex, std::move(v)});
      operand_before = true;
    } else if (is_ident_start(c)) {
      std::size_t j = i;
      while (j < n && is_ident(p[j])) ++j;
      std::string word(p.substr(i, j - i));
      i = j;
      // After a keyword an operand follows (`print /re/`, `return /x/`); after a name, not.
      static constexpr std::string_view kKeywords[] = {
          "print", "printf", "return", "in", "case", "if", "while", "for", "do", "else", "getline"};
      operand_before =
          std::find(std::begin(kKeywords), std::end(kKeywords), word) == std::end(kKeywords);
      t.push_back({AwkToken::Ident, std::move(word)});
    } else if ((c >= '0' && c <= '9') ||
               (c == '.' && i + 1 < n && p[i + 1] >= '0' && p[i + 1] <= '9')) {
      std::size_t j = i;
      while (j < n && (is_ident(p[j]) || p[j] == '.')) ++j;
      t.push_back({AwkToken::Number, std::string(p.substr(i, j - i))});
      i = j;
      operand_before = true;
    } else {
      static constexpr std::string_view kTwo[] = {
          "|&", "||", "&&", ">>", ">=", "<=", "==", "!=", "++",
          "--", "+=", "-=", "*=", "/=", "%=", "^=", "**"};
      std::string op(1, c);
      for (std::string_view two : kTwo) {
        if (p.substr(i, 2) == two) {
          op = std::string(two);
          break;
        }
      }
      i += op.size();
      operand_before = op == ")" || op == "]" || op == "$" ? op != "$" : false;
      if (op == "++" || op == "--") operand_before = !t.empty() && (t.back().kind != AwkToken::Op);
      t.push_back({AwkToken::Op, std::move(op)});
    }
  }
  return t;
}

// Counts whole-word occurrences of `word` in the raw text (inside strings too).
std::size_t raw_count(std::string_view p, std::string_view word) {
  std::size_t count = 0;
  for (std::size_t at = p.find(word); at != std::string_view::npos; at = p.find(word, at + 1)) {
    const bool start = at == 0 || !is_ident(p[at - 1]);
    const bool end = at + word.size() >= p.size() || !is_ident(p[at + word.size()]);
    if (start && end) ++count;
  }
  return count;
}

void awk_effects(std::string_view p, Emitter& em) {
  const auto tokens = awk_tokens(p);
  if (!tokens) {
    em.code(p, true);  // not awk this reader can follow
    return;
  }
  const std::vector<AwkToken>& t = *tokens;
  auto is_op = [&](std::size_t k, std::string_view op) {
    return k < t.size() && t[k].kind == AwkToken::Op && t[k].text == op;
  };
  auto is_ident_tok = [&](std::size_t k, std::string_view name) {
    return k < t.size() && t[k].kind == AwkToken::Ident && t[k].text == name;
  };
  // The target after a redirection or pipe at k: a string literal is known; anything else
  // (a variable, a concatenation) only at run time.
  auto literal_at = [&](std::size_t k) -> std::optional<std::string> {
    if (k < t.size() && t[k].kind == AwkToken::String) {
      const bool alone = k + 1 >= t.size() || t[k + 1].kind == AwkToken::Newline ||
                         is_op(k + 1, ";") || is_op(k + 1, "}") || is_op(k + 1, ")") ||
                         is_ident_tok(k + 1, "getline");
      if (alone) return t[k].text;
    }
    return std::nullopt;
  };
  std::size_t seen_system = 0, seen_getline = 0, seen_print = 0;
  bool in_print = false;
  int print_depth = 0;
  for (std::size_t k = 0; k < t.size(); ++k) {
    const AwkToken& tok = t[k];
    if (tok.kind == AwkToken::Newline || is_op(k, ";") || (is_op(k, "}") && print_depth == 0)) {
      in_print = false;
    }
    if (tok.kind == AwkToken::Ident) {
      if (tok.text == "print" || tok.text == "printf") {
        ++seen_print;
        in_print = true;
        print_depth = 0;
      } else if (tok.text == "system") {
        ++seen_system;
        if (is_op(k + 1, "(") && k + 3 < t.size() && t[k + 2].kind == AwkToken::String &&
            is_op(k + 3, ")")) {
          em.code(t[k + 2].text, false);
        } else {
          em.code("system(…)", true);
        }
      } else if (tok.text == "getline") {
        ++seen_getline;
        if (k > 0 && (is_op(k - 1, "|") || is_op(k - 1, "|&"))) continue;  // the pipe counts
        std::size_t j = k + 1;
        if (j < t.size() && t[j].kind == AwkToken::Ident) {
          ++j;
          if (is_op(j, "[")) {
            int depth = 0;
            for (; j < t.size(); ++j) {
              if (is_op(j, "[")) ++depth;
              if (is_op(j, "]") && --depth == 0) break;
            }
            ++j;
          }
        } else if (is_op(j, "$")) {
          j += 2;
        }
        if (is_op(j, "<")) {
          if (auto f = literal_at(j + 1)) {
            if (*f != "-" && *f != "/dev/stdin") em.path(EffectKind::Read, *f);
          } else {
            em.code("getline < (expression)", true);
          }
        }
      } else if (tok.text == "@include" || tok.text == "@load") {
        em.code(tok.text, true);
      } else if (tok.text == "ARGV" || tok.text == "ARGC") {
        // The program may change the files it reads (`ARGV[1]="/etc/shadow"; ARGC=2`).
        em.code(tok.text, true);
      }
    } else if (tok.kind == AwkToken::Op) {
      if (tok.text == "@" && k + 1 < t.size() && t[k + 1].kind == AwkToken::Ident &&
          (t[k + 1].text == "include" || t[k + 1].text == "load")) {
        if (auto f = literal_at(k + 2))
          em.path(EffectKind::Exec, *f);
        else
          em.code("@" + t[k + 1].text, true);
      } else if (tok.text == "@" && k + 1 < t.size() && t[k + 1].kind == AwkToken::Ident &&
                 t[k + 1].text != "namespace") {
        // gawk's indirect call `@f(…)`: the function a variable names, built-ins included
        // (`s = "system"; @s("sh")`).
        em.code("@" + t[k + 1].text, true);
      } else if (tok.text == "|" || tok.text == "|&") {
        // `"cmd" | getline`, `print … | "cmd"`, coprocesses: a shell runs the command.
        if (is_ident_tok(k + 1, "getline")) {
          if (k > 0 && t[k - 1].kind == AwkToken::String &&
              (k < 2 || t[k - 2].kind == AwkToken::Newline || t[k - 2].kind == AwkToken::Op)) {
            em.code(t[k - 1].text, false);
          } else {
            em.code("(expression) | getline", true);
          }
        } else if (auto cmd = literal_at(k + 1)) {
          em.code(*cmd, false);
        } else {
          em.code("print | (expression)", true);
        }
      } else if (in_print) {
        if (tok.text == "(" || tok.text == "[") ++print_depth;
        if (tok.text == ")" || tok.text == "]") --print_depth;
        if ((tok.text == ">" || tok.text == ">>") && print_depth == 0) {
          if (auto f = literal_at(k + 1)) {
            if (*f != "/dev/stdout" && *f != "/dev/stderr" && *f != "-")
              em.path(EffectKind::Write, *f);
          } else {
            em.code("print > (expression)", true);
          }
          in_print = false;
        }
      }
    }
  }
  // A word that reaches outside awk hidden where this reader saw a string or a regular
  // expression: awk may read it otherwise.
  if (raw_count(p, "system") > seen_system || raw_count(p, "getline") > seen_getline ||
      raw_count(p, "print") + raw_count(p, "printf") > seen_print) {
    em.code(p, true);
  }
}

// ---------------------------------------------------------------- sed

struct SedReader {
  std::string_view s;
  std::size_t i = 0;
  Emitter& em;
  bool failed = false;

  bool at_end() const { return i >= s.size(); }
  void skip_blanks() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  }
  // The rest of the line (a file name or a command): up to a newline, `;` included.
  std::string_view rest_of_line() {
    skip_blanks();
    const std::size_t end = std::min(s.find('\n', i), s.size());
    std::string_view v = s.substr(i, end - i);
    i = end;
    return v;
  }
  // A delimited part (`/re/`, the parts of s and y): false if it does not close.
  bool delimited(char d) {
    while (i < s.size()) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        i += 2;
      } else if (s[i] == d) {
        ++i;
        return true;
      } else {
        ++i;
      }
    }
    return false;
  }
  bool address() {
    skip_blanks();
    if (at_end()) return true;
    const char c = s[i];
    if (c >= '0' && c <= '9') {
      while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '~')) ++i;
    } else if (c == '$') {
      ++i;
    } else if (c == '/' || c == '\\') {
      char d = '/';
      if (c == '\\') {
        if (i + 1 >= s.size()) return false;
        d = s[i + 1];
        i += 2;
      } else {
        ++i;
      }
      if (!delimited(d)) return false;
      while (i < s.size() && (s[i] == 'I' || s[i] == 'M')) ++i;
    } else if (c == '+' || c == '~') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    }
    return true;
  }
  void file(EffectKind kind, std::string_view name) {
    if (name.empty()) {
      failed = true;
      return;
    }
    if (name == "/dev/stdout" || name == "/dev/stderr" || name == "/dev/stdin") return;
    em.path(kind, name);
  }
  void run() {
    while (!failed) {
      while (i < s.size() &&
             (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == ';' || s[i] == '\r'))
        ++i;
      if (at_end()) return;
      if (s[i] == '#') {
        while (i < s.size() && s[i] != '\n') ++i;
        continue;
      }
      if (!address()) break;
      skip_blanks();
      if (i < s.size() && s[i] == ',') {
        ++i;
        if (!address()) break;
      }
      skip_blanks();
      while (i < s.size() && s[i] == '!') {
        ++i;
        skip_blanks();
      }
      if (at_end()) break;
      const char cmd = s[i++];
      switch (cmd) {
        case '{':
        case '}':
        case '=':
        case 'd':
        case 'D':
        case 'g':
        case 'G':
        case 'h':
        case 'H':
        case 'n':
        case 'N':
        case 'p':
        case 'P':
        case 'x':
        case 'z':
        case 'F':
          break;
        case 'l':
        case 'L':
        case 'q':
        case 'Q':
          skip_blanks();
          while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
          break;
        case ':':
        case 'b':
        case 't':
        case 'T':
        case 'v':
          skip_blanks();
          while (i < s.size() && s[i] != '\n' && s[i] != ';' && (cmd == ':' || s[i] != '}')) ++i;
          break;
        case 'a':
        case 'i':
        case 'c':
          // Text to the end of the line; `\` at a line's end continues it.
          while (i < s.size()) {
            if (s[i] == '\\' && i + 1 < s.size()) {
              i += 2;
            } else if (s[i] == '\n') {
              break;
            } else {
              ++i;
            }
          }
          break;
        case 'r':
        case 'R':
          file(EffectKind::Read, rest_of_line());
          break;
        case 'w':
        case 'W':
          file(EffectKind::Write, rest_of_line());
          break;
        case 'e': {
          const std::string_view command = rest_of_line();
          if (command.empty())
            em.code("e (the pattern space)", true);
          else
            em.code(command, false);
          break;
        }
        case 's': {
          if (at_end() || s[i] == '\n' || s[i] == '\\') {
            failed = true;
            break;
          }
          const char d = s[i++];
          if (!delimited(d) || !delimited(d)) {
            failed = true;
            break;
          }
          while (i < s.size()) {
            const char f = s[i];
            if (f == 'g' || f == 'p' || f == 'i' || f == 'I' || f == 'm' || f == 'M' ||
                (f >= '0' && f <= '9')) {
              ++i;
            } else if (f == 'e') {
              ++i;
              em.code("s///e (the pattern space)", true);
            } else if (f == 'w') {
              ++i;
              file(EffectKind::Write, rest_of_line());
              break;
            } else {
              break;
            }
          }
          break;
        }
        case 'y': {
          if (at_end()) {
            failed = true;
            break;
          }
          const char d = s[i++];
          if (!delimited(d) || !delimited(d)) failed = true;
          break;
        }
        default:
          failed = true;
          break;
      }
      if (failed) break;
      skip_blanks();
      if (i < s.size() &&
          !(s[i] == ';' || s[i] == '\n' || s[i] == '}' || s[i] == '#' || s[i] == '\r')) {
        failed = true;
      }
    }
    failed = true;
  }
};

bool is_awk(std::string_view p) {
  return p == "awk" || p == "gawk" || p == "mawk" || p == "nawk" || p == "original-awk" ||
         p == "busybox-awk" || p == "goawk";
}
bool is_sed(std::string_view p) { return p == "sed" || p == "gsed"; }

// A long option as written (`--expr=X`, `--expression`): its name if it abbreviates one of
// `names` uniquely, else "".
std::string_view long_name(std::string_view written,
                           std::initializer_list<std::string_view> names) {
  std::string_view found;
  for (std::string_view n : names) {
    if (n == written) return n;
    if (!written.empty() && n.starts_with(written)) {
      if (!found.empty()) return "";
      found = n;
    }
  }
  return found;
}

}  // namespace

void awk_program_effects(std::string_view text, const std::string& cwd, const std::string& home,
                         std::vector<Effect>* out) {
  Emitter em{cwd, home, out, kAwkVia};
  awk_effects(text, em);
}

void sed_program_effects(std::string_view text, const std::string& cwd, const std::string& home,
                         std::vector<Effect>* out) {
  Emitter em{cwd, home, out, kSedVia};
  SedReader r{text, 0, em};
  r.run();
  if (r.failed) em.code(text, true);
}

void script_effects(const shell::SimpleCommand& cmd, const std::string& cwd,
                    const std::string& home, std::vector<Effect>* out) {
  const bool awk = is_awk(cmd.program);
  const bool sed = is_sed(cmd.program);
  if (!awk && !sed) return;
  const std::size_t start = out->size();
  Emitter em{cwd, home, out, awk ? kAwkVia : kSedVia};
  const std::vector<std::string>& a = cmd.argv;
  // A word holding an expansion, or a string a wrapper replaces at run time (`find -exec awk
  // '/{}/' …`): its program text is known only then.
  auto expanded = [&](std::size_t k) {
    if (shell::holds_replacement(a[k], cmd.replaced)) return true;
    if (k < cmd.expanded.size()) return static_cast<bool>(cmd.expanded[k]);
    return cmd.expansion && a[k].find_first_of("$`") != std::string::npos;
  };
  std::vector<std::pair<std::string, bool>> texts;  // program texts, dynamic or not
  bool program_file = false;
  auto from_file = [&](const std::string& f) {
    program_file = true;
    em.code("program file " + f, true);
  };
  std::size_t k = 1;
  for (; k < a.size(); ++k) {
    const std::string& w = a[k];
    if (w == "--") {
      ++k;
      break;
    }
    if (w.size() < 2 || w[0] != '-') break;
    auto value = [&](std::size_t at) -> std::pair<std::string, bool> {  // attached or next word
      if (at < w.size()) return {w.substr(at), expanded(k)};
      if (k + 1 < a.size()) {
        ++k;
        return {a[k], expanded(k)};
      }
      return {"", false};
    };
    if (w[1] == '-') {
      const std::size_t eq = w.find('=');
      const std::string_view written =
          std::string_view(w).substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      auto long_value = [&]() -> std::pair<std::string, bool> {
        if (eq != std::string::npos) return {w.substr(eq + 1), expanded(k)};
        if (k + 1 < a.size()) {
          ++k;
          return {a[k], expanded(k)};
        }
        return {"", false};
      };
      if (awk) {
        const std::string_view name = long_name(
            written, {"source", "file", "exec", "include", "load", "assign", "field-separator",
                      "pretty-print", "profile", "dump-variables", "debug", "lint"});
        if (name == "source")
          texts.push_back(long_value());
        else if (name == "file" || name == "exec" || name == "include" || name == "load")
          from_file(long_value().first);
        else if (name == "assign" || name == "field-separator")
          long_value();
        else if ((name == "pretty-print" || name == "profile" || name == "dump-variables") &&
                 eq != std::string::npos)
          em.path(EffectKind::Write, w.substr(eq + 1));
      } else {
        const std::string_view name =
            long_name(written, {"expression", "file", "line-length", "in-place", "quiet", "silent",
                                "regexp-extended", "separate", "sandbox", "unbuffered", "null-data",
                                "zero-terminated", "follow-symlinks", "posix", "debug", "binary"});
        if (name == "expression")
          texts.push_back(long_value());
        else if (name == "file")
          from_file(long_value().first);
        else if (name == "line-length")
          long_value();
        else if (name.empty())
          em.code(w, true);  // an option sed may read as another
      }
      continue;
    }
    for (std::size_t c = 1; c < w.size(); ++c) {
      const char o = w[c];
      if (awk) {
        if (o == 'f' || o == 'E' || o == 'i' || o == 'l') {
          from_file(value(c + 1).first);
          break;
        }
        if (o == 'e') {
          texts.push_back(value(c + 1));
          break;
        }
        if (o == 'v' || o == 'F') {
          value(c + 1);
          break;
        }
        if (o == 'W') {
          const auto [v, d] = value(c + 1);
          if (v.starts_with("source=") || v.starts_with("s="))
            texts.push_back({v.substr(v.find('=') + 1), d});
          else if (v.starts_with("e") || v.starts_with("f") || v.starts_with("i") ||
                   v.starts_with("l") || d)
            from_file(v);
          break;
        }
        if (o == 'o' || o == 'p' || o == 'd' || o == 'D') {
          if (c + 1 < w.size()) em.path(EffectKind::Write, w.substr(c + 1));
          break;
        }
        if (o == 'L') break;  // -L[value]
      } else {
        if (o == 'e') {
          texts.push_back(value(c + 1));
          break;
        }
        if (o == 'f') {
          from_file(value(c + 1).first);
          break;
        }
        if (o == 'l') {
          value(c + 1);
          break;
        }
        if (o == 'i') break;  // -i[SUFFIX]: the rest of the word is the suffix
      }
    }
  }
  if (texts.empty() && !program_file) {
    if (k < a.size())
      texts.push_back({a[k], expanded(k)});
    else
      em.code("program from standard input", true);
  }
  for (const auto& [text, dynamic] : texts) {
    if (dynamic) {
      em.code(text, true);
      continue;
    }
    if (awk) {
      awk_effects(text, em);
    } else {
      SedReader r{text, 0, em};
      r.run();
      if (r.failed) em.code(text, true);
    }
  }
  for (std::size_t e = start; e < out->size(); ++e) (*out)[e].program = cmd.program;
}

}  // namespace warden
