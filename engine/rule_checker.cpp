#include "engine/rule_checker.h"

#include <re2/re2.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

namespace warden {
namespace {

enum class TokenType { Open, Close, String, Atom };

struct Token {
  TokenType type;
  std::string text;  // unescaped for strings
  long line;
  std::size_t offset = 0;  // byte offset of the token's first character
};

// Tokenizes CLIPS source: parentheses, strings (with CLIPS escapes), atoms; skips comments.
// Returns false (with *error_line) on an unterminated string.
bool tokenize(std::string_view src, std::vector<Token>* tokens, long* error_line) {
  long line = 1;
  std::size_t i = 0;
  while (i < src.size()) {
    char c = src[i];
    if (c == '\n') { ++line; ++i; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') { ++i; continue; }
    if (c == ';') {
      while (i < src.size() && src[i] != '\n') ++i;
      continue;
    }
    if (c == '(') { tokens->push_back({TokenType::Open, "(", line, i}); ++i; continue; }
    if (c == ')') { tokens->push_back({TokenType::Close, ")", line, i}); ++i; continue; }
    if (c == '"') {
      long start = line;
      std::size_t start_offset = i;
      std::string value;
      ++i;
      bool closed = false;
      while (i < src.size()) {
        char d = src[i];
        if (d == '\\' && i + 1 < src.size()) {
          if (src[i + 1] == '\n') ++line;
          value.push_back(src[i + 1]);
          i += 2;
          continue;
        }
        if (d == '"') { closed = true; ++i; break; }
        if (d == '\n') ++line;
        value.push_back(d);
        ++i;
      }
      if (!closed) { *error_line = start; return false; }
      tokens->push_back({TokenType::String, std::move(value), start, start_offset});
      continue;
    }
    std::size_t begin = i;
    while (i < src.size()) {
      char d = src[i];
      if (d == '(' || d == ')' || d == '"' || d == ';' || d == ' ' || d == '\t' || d == '\n' ||
          d == '\r' || d == '\f' || d == '\v')
        break;
      ++i;
    }
    tokens->push_back({TokenType::Atom, std::string(src.substr(begin, i - begin)), line, begin});
  }
  return true;
}

// Functions rule files may not call: they reach the host, build code from strings, are
// non-deterministic, or change the engine's own state.
const std::set<std::string, std::less<>>& forbidden_set() {
  static const std::set<std::string, std::less<>> names = {
      // the host process and the outside world
      "exit", "system", "open", "close", "read", "readline", "read-number", "get-char",
      "put-char", "remove", "rename", "dribble-on", "dribble-off", "load", "load*", "batch",
      "batch*", "bload", "bsave", "save", "save-facts", "load-facts", "save-instances",
      "load-instances", "bsave-instances", "bload-instances", "restore-instances",
      "open-file", "set-locale", "format",
      // code from strings, indirection, non-determinism
      "eval", "build", "funcall", "assert-string", "str-assert", "seed", "random", "time",
      "timer", "gensym", "gensym*", "setgen",
      // the engine's own state
      "reset", "clear", "run", "halt", "retract", "modify", "duplicate", "focus", "pop-focus",
      "clear-focus-stack", "refresh", "refresh-agenda", "watch", "unwatch", "undefrule",
      "undeffunction", "undefglobal", "undeftemplate", "undeffacts", "undefmodule", "undefclass",
      "undefinstances", "undefgeneric", "undefmethod", "set-strategy", "set-salience-evaluation",
      "set-fact-duplication", "set-reset-globals", "set-sequence-operator-recognition",
      "set-static-constraint-checking", "set-dynamic-constraint-checking",
      "set-incremental-reset", "set-auto-float-dividend", "set-break", "remove-break",
      "set-current-module", "conserve-mem", "release-mem", "apropos", "matches", "ppfact",
      "facts", "agenda", "rules", "list-defrules", "instances", "send", "make-instance",
      "unmake-instance", "delete-instance", "initialize-instance", "modify-instance",
      "message-modify-instance", "active-modify-instance", "duplicate-instance",
      "do-for-all-facts", "delayed-do-for-all-facts", "do-for-fact", "find-all-facts",
      "find-fact", "any-factp", "fact-existp", "fact-index", "fact-relation", "fact-slot-value",
      "fact-slot-names", "get-fact-list"};
  return names;
}

constexpr int kMaxNesting = 128;

const std::set<std::string, std::less<>> kAllowedConstructs = {"defrule", "deffunction", "defglobal"};
const std::set<std::string, std::less<>> kKnownConstructs = {
    "deftemplate", "deffacts", "defmodule", "defclass", "definstances", "defmessage-handler",
    "defgeneric", "defmethod"};
const std::set<std::string, std::less<>> kPatternKinds = {"regex", "substring", "prefix", "glob",
                                                          "path-within"};

struct FileChecker {
  const RuleSource& source;
  Diagnostics* diagnostics;
  CheckedSources* out;
  std::map<std::string, std::pair<std::string, long>>* rule_names;
  std::map<std::string, std::pair<std::string, long>>* function_names;

  void error(const char* code, long line, const std::string& rule, std::string message) {
    diagnostics->push_back({code, Severity::Error, source.path, line, rule, std::move(message)});
  }

  // Byte offset of each line start, to cut construct text out of the source.
  std::vector<std::size_t> line_starts() const {
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 0; i < source.text.size(); ++i)
      if (source.text[i] == '\n') starts.push_back(i + 1);
    return starts;
  }

  void run() {
    std::vector<Token> tokens;
    long bad_line = 0;
    if (!tokenize(source.text, &tokens, &bad_line)) {
      error(code::kUnbalanced, bad_line, "", "string is not closed");
      return;
    }
    // Split into top-level constructs by parenthesis depth.
    std::size_t i = 0;
    while (i < tokens.size()) {
      if (tokens[i].type != TokenType::Open) {
        error(code::kParse, tokens[i].line, "",
              "expected a construct such as (defrule …), found '" + tokens[i].text.substr(0, 40) + "'");
        // Skip to the next top-level '(' to keep reporting.
        while (i < tokens.size() && tokens[i].type != TokenType::Open) ++i;
        continue;
      }
      std::size_t start = i;
      int depth = 0;
      std::size_t j = i;
      for (; j < tokens.size(); ++j) {
        if (tokens[j].type == TokenType::Open) ++depth;
        else if (tokens[j].type == TokenType::Close && --depth == 0) break;
      }
      if (j == tokens.size()) {
        error(code::kUnbalanced, tokens[start].line, "", "parenthesis opened here is not closed");
        return;
      }
      check_construct(tokens, start, j);
      i = j + 1;
    }
  }

  void check_construct(const std::vector<Token>& t, std::size_t open, std::size_t close) {
    Construct c;
    c.file = source.path;
    c.line = t[open].line;
    if (open + 1 >= close || t[open + 1].type != TokenType::Atom) {
      error(code::kParse, t[open].line, "", "expected a construct keyword after '('");
      return;
    }
    c.kind = t[open + 1].text;
    if (!kAllowedConstructs.count(c.kind)) {
      if (kKnownConstructs.count(c.kind))
        error(code::kForbiddenConstruct, t[open].line, "",
              c.kind + " is not allowed in rule files: the engine defines the templates; use defrule, deffunction or defglobal");
      else
        error(code::kParse, t[open].line, "", "unknown construct '" + c.kind.substr(0, 40) + "'");
      return;
    }
    if (c.kind != "defglobal" && open + 2 < close && t[open + 2].type == TokenType::Atom)
      c.name = t[open + 2].text;
    const std::size_t errors_before = diagnostics->size();

    if (c.kind == "defrule" && !c.name.empty()) note_name(rule_names, c, code::kDuplicateRule, "rule");
    if (c.kind == "deffunction" && !c.name.empty())
      note_name(function_names, c, code::kDuplicateFunction, "function");

    bool in_rhs = false;
    int depth = 0;
    bool too_deep = false;
    for (std::size_t k = open + 1; k < close; ++k) {
      const Token& tok = t[k];
      if (tok.type == TokenType::Open && ++depth > kMaxNesting && !too_deep) {
        // CLIPS parses expressions recursively: refuse what could exhaust its stack.
        error(code::kParse, tok.line, c.name, "expressions nest deeper than " + std::to_string(kMaxNesting));
        too_deep = true;
      }
      if (tok.type == TokenType::Close) --depth;
      if (c.kind == "defrule" && depth == 0 && tok.type == TokenType::Atom && tok.text == "=>")
        in_rhs = true;
      if (tok.type != TokenType::Open || k + 1 >= close || t[k + 1].type != TokenType::Atom) continue;
      const std::string& head = t[k + 1].text;
      if (forbidden_set().count(head)) {
        error(code::kForbiddenFunction, t[k + 1].line, c.name,
              "function '" + head + "' is disabled in rule files");
      } else if (head == "bind" && k + 2 < close && t[k + 2].type == TokenType::Atom &&
                 t[k + 2].text.rfind("?*", 0) == 0) {
        error(code::kGlobalMutation, t[k + 2].line, c.name,
              "globals are constants in Warden rules; cannot bind " + t[k + 2].text);
      } else if ((head == "regex-match") && k + 2 < close && t[k + 2].type == TokenType::String) {
        check_regex(t[k + 2], c.name);
      } else if (head == "pattern-hit" && c.kind == "defrule" && !in_rhs) {
        // Any depth: a pattern under not/or/and/exists/forall/logical must be indexed too,
        // or `(not (pattern-hit …))` would always hold and `(or (pattern-hit …) …)` never.
        collect_pattern(t, k, c);
      } else if (head == "assert") {
        check_asserted_rule_names(t, k, c);
      }
    }
    c.ok = diagnostics->size() == errors_before;
    // Whole construct text, indented so that its first line keeps the source column; lines
    // inside map back to the file by adding c.line - 1.
    std::size_t begin = t[open].offset, end = t[close].offset + 1;
    c.text.assign(begin - line_start(c.line), ' ');
    c.text.append(source.text, begin, end - begin);
    out->constructs.push_back(std::move(c));
  }

  std::size_t line_start(long line) const { return starts_[static_cast<std::size_t>(line - 1)]; }

  void note_name(std::map<std::string, std::pair<std::string, long>>* names, const Construct& c,
                 const char* code, const char* what) {
    auto [it, inserted] = names->emplace(c.name, std::make_pair(c.file, c.line));
    if (!inserted)
      error(code, c.line, c.name,
            std::string(what) + " '" + c.name + "' is already defined at " + it->second.first + ":" +
                std::to_string(it->second.second));
  }

  void check_regex(const Token& pattern, const std::string& rule) {
    RE2::Options options;
    options.set_log_errors(false);
    RE2 re(pattern.text, options);
    if (!re.ok()) error(code::kBadRegex, pattern.line, rule, "regex does not compile: " + re.error());
  }

  // Index of the ')' closing the '(' at `open` (t.size() if unbalanced).
  static std::size_t closing(const std::vector<Token>& t, std::size_t open) {
    int depth = 0;
    for (std::size_t k = open; k < t.size(); ++k) {
      if (t[k].type == TokenType::Open) ++depth;
      else if (t[k].type == TokenType::Close && --depth == 0) return k;
    }
    return t.size();
  }

  // Index of the token after the one at `k`, skipping a whole parenthesized group.
  static std::size_t next_sibling(const std::vector<Token>& t, std::size_t k) {
    return t[k].type == TokenType::Open ? closing(t, k) + 1 : k + 1;
  }

  // Every decision and rewrite names the rule that asserted it, and reports credit it: the
  // (rule NAME) slot of each (decision …) and (rewrite …) in an (assert …) must be the
  // constant name of the enclosing defrule. Only rules may assert them: a function or a
  // global initializer has no rule whose name could be checked.
  void check_asserted_rule_names(const std::vector<Token>& t, std::size_t assert_open, const Construct& c) {
    const std::size_t end = closing(t, assert_open);
    for (std::size_t f = assert_open + 2; f < end; f = next_sibling(t, f)) {
      if (t[f].type != TokenType::Open) continue;
      if (f + 1 >= end || t[f + 1].type != TokenType::Atom) continue;
      const std::string& tmpl = t[f + 1].text;
      if (tmpl != "decision" && tmpl != "rewrite") continue;
      const long line = t[f].line;
      if (c.kind != "defrule") {
        error(code::kRuleName, line, c.name,
              "a " + tmpl + " may only be asserted on the right-hand side of a defrule, not in a " + c.kind);
        continue;
      }
      const std::size_t fact_end = closing(t, f);
      int slots = 0;
      for (std::size_t s = f + 2; s < fact_end; s = next_sibling(t, s)) {
        if (t[s].type != TokenType::Open) continue;
        if (s + 1 >= fact_end || t[s + 1].type != TokenType::Atom || t[s + 1].text != "rule") continue;
        ++slots;
        const std::size_t slot_end = closing(t, s);
        const bool constant = slot_end == s + 3 &&
                              (t[s + 2].type == TokenType::String ||
                               (t[s + 2].type == TokenType::Atom && t[s + 2].text[0] != '?' &&
                                t[s + 2].text[0] != '$'));
        if (!constant) {
          error(code::kRuleName, t[s].line, c.name,
                "the (rule …) slot of a " + tmpl + " must be the constant name of its rule, '" + c.name + "'");
        } else if (t[s + 2].text != c.name) {
          error(code::kRuleName, t[s].line, c.name,
                "this " + tmpl + " credits rule '" + t[s + 2].text.substr(0, 80) + "' but is asserted by rule '" +
                    c.name + "'");
        }
      }
      if (slots == 0)
        error(code::kRuleName, line, c.name, "this " + tmpl + " has no (rule " + c.name + ") slot");
    }
  }

  void collect_pattern(const std::vector<Token>& t, std::size_t open, const Construct& c) {
    const std::string& rule = c.name;
    IndexedPattern p;
    p.file = c.file;
    p.line = t[open].line;
    p.rule = c.name;
    bool have_kind = false, have_pattern = false, bad = false;
    int depth = 0;
    std::size_t k = open;
    for (; k < t.size(); ++k) {
      if (t[k].type == TokenType::Open) ++depth;
      if (t[k].type == TokenType::Close && --depth == 0) break;
      if (depth == 2 && t[k].type == TokenType::Open && k + 2 < t.size() &&
          t[k + 1].type == TokenType::Atom) {
        const std::string& slot = t[k + 1].text;
        const Token& value = t[k + 2];
        bool constant_close = k + 3 < t.size() && t[k + 3].type == TokenType::Close;
        if (slot == "key") {
          if (value.type == TokenType::String && constant_close) p.key = value.text;
        } else if (slot == "kind") {
          if (value.type == TokenType::Atom && constant_close && kPatternKinds.count(value.text)) {
            p.kind = value.text;
            have_kind = true;
          } else {
            bad = true;
          }
        } else if (slot == "pattern") {
          if (value.type == TokenType::String && constant_close) {
            p.pattern = value.text;
            have_pattern = true;
          } else {
            bad = true;
          }
        }
      }
    }
    if (bad || !have_kind || !have_pattern) {
      error(code::kBadPattern, t[open].line, rule,
            "pattern-hit needs a constant (kind regex|substring|prefix|glob|path-within) and a constant (pattern \"…\")");
      return;
    }
    if (p.kind == "regex") check_regex(Token{TokenType::String, p.pattern, t[open].line}, rule);
    out->patterns.push_back(std::move(p));
  }

  std::vector<std::size_t> starts_;
};

}  // namespace


CheckedSources check_sources(const RuleSources& sources, Diagnostics* diagnostics) {
  CheckedSources out;
  std::map<std::string, std::pair<std::string, long>> rule_names, function_names;
  for (const auto& source : sources) {
    FileChecker checker{source, diagnostics, &out, &rule_names, &function_names, {}};
    checker.starts_ = checker.line_starts();
    checker.run();
  }
  return out;
}

}  // namespace warden

