#include "engine/rule_checker.h"

#include <re2/re2.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "bindings/clips_functions.h"
#include "bindings/local_time.h"
#include "engine/fact_checks.h"
#include "engine/nearest_name.h"
#include "engine/rule_tokens.h"
#include "engine/sandbox.h"
#include "engine/source_layout.h"
#include "engine/template_schema.h"

namespace warden {
namespace {

// Each template slot's value types, from the engine's own template text: template → slot →
// (multislot, types). What a variable bound to a slot can hold.
struct SlotType {
  bool multislot = false;
  std::set<std::string> types;
};
const std::map<std::string, std::map<std::string, SlotType>>& template_slots();

bool ends_with(const std::string& s, std::string_view tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// An atom CLIPS may read as a number (1, -2, +3.5, .5, 1e3): never taken for a symbol here.
// An integer constant as CLIPS reads one: optional sign, digits.
bool is_integer_constant(const std::string& atom) {
  std::size_t i = atom[0] == '+' || atom[0] == '-' ? 1 : 0;
  if (i >= atom.size()) return false;
  for (; i < atom.size(); ++i)
    if (atom[i] < '0' || atom[i] > '9') return false;
  return true;
}

bool looks_numeric(const std::string& atom) {
  const char c = atom[0];
  return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.';
}

const std::map<std::string, std::map<std::string, SlotType>>& template_slots() {
  static const auto table = [] {
    std::map<std::string, std::map<std::string, SlotType>> out;
    for (const TemplateSchema& t : engine_templates())
      for (const SlotSchema& s : t.slots) {
        SlotType& st = out[t.name][s.name];
        st.multislot = s.multislot;
        st.types.insert(s.types.begin(), s.types.end());
      }
    return out;
  }();
  return table;
}

constexpr int kMaxNesting = 128;

const std::set<std::string, std::less<>> kAllowedConstructs = {"defrule", "deffunction",
                                                               "defglobal"};
const std::set<std::string, std::less<>> kKnownConstructs = {
    "deftemplate",  "deffacts",           "defmodule",  "defclass",
    "definstances", "defmessage-handler", "defgeneric", "defmethod"};
const std::set<std::string, std::less<>> kPatternKinds = {
    "regex", "substring", "prefix", "suffix", "exact", "glob", "path-within"};

// How deeply a construct nests expressions, and the deffunctions it calls with the nesting
// at the call. Evaluation recurses in C once per level, and a deffunction call continues
// the callee's nesting on top of the caller's.
struct Nesting {
  int own = 0;
  std::map<std::string, int> calls;  // deffunction -> deepest call site
};

struct FileChecker {
  const RuleSource& source;
  Diagnostics* diagnostics;
  CheckedSources* out;
  std::map<std::string, std::pair<std::string, long>>* rule_names;
  std::map<std::string, std::pair<std::string, long>>* function_names;
  const std::set<std::string, std::less<>>* deffunctions;  // every deffunction in the set
  std::map<std::size_t, Nesting>* nesting;  // by index in out->constructs, for check_nesting
  std::size_t* suggestions_left;            // "did you mean" searches this set may still make
  std::unordered_map<std::string, std::string>*
      regex_verdicts;  // check_regex: pattern → error or ""

  void error(const char* code, long line, const std::string& rule, std::string message) {
    diagnostics->push_back({code, Severity::Error, source.path, line, rule, std::move(message)});
  }
  // A problem at a token: its line and column.
  void report(const char* code, Severity severity, const Token& at, const std::string& rule,
              std::string message) {
    diagnostics->push_back(
        {code, severity, source.path, at.line, rule, std::move(message), at.column});
  }
  void error_at(const char* code, const Token& at, const std::string& rule, std::string message) {
    report(code, Severity::Error, at, rule, std::move(message));
  }

  // What a rule may call: the allowed built-ins, Warden's functions, the set's deffunctions.
  std::vector<std::string> callable_names() const {
    std::vector<std::string> names;
    for (const auto& f : sandbox::allowed_builtins()) names.push_back(f.name);
    for (const char* n : rule_function_names()) names.push_back(n);
    names.insert(names.end(), deffunctions->begin(), deffunctions->end());
    return names;
  }

  // " — did you mean `x`?", within the set's budget of suggestions (a hostile file with a
  // million misspelt names gets the first suggestions, not a million searches).
  bool can_suggest() const { return *suggestions_left > 0; }
  std::string suggest(std::string_view word, const std::vector<std::string>& names) {
    if (*suggestions_left == 0) return "";
    --*suggestions_left;
    return did_you_mean(word, names);
  }

  // Byte offset of each line start, to cut construct text out of the source.
  std::vector<std::size_t> line_starts() const {
    std::vector<std::size_t> starts{0};
    for (std::size_t i = 0; i < source.text.size(); ++i)
      if (source.text[i] == '\n') starts.push_back(i + 1);
    return starts;
  }

  static bool is_construct_keyword(const std::string& word) {
    return kAllowedConstructs.count(word) > 0 || kKnownConstructs.count(word) > 0;
  }
  static bool starts_construct(const std::vector<Token>& t, std::size_t k) {
    return t[k].type == TokenType::Open && k + 1 < t.size() && t[k + 1].type == TokenType::Atom &&
           is_construct_keyword(t[k + 1].text);
  }
  // Whether the top-level tokens at k read as the rest of a rule rather than a construct of
  // their own: `=>`, a condition, a pattern or a call, or anything indented.
  bool reads_as_rule_body(const std::vector<Token>& t, std::size_t k) const {
    if (t[k].type == TokenType::Close) return false;  // one `)` too many after a whole construct
    if (t[k].type == TokenType::Atom && t[k].text == "=>") return true;
    if (t[k].column > 1) return true;
    if (t[k].type != TokenType::Open || k + 1 >= t.size() || t[k + 1].type != TokenType::Atom)
      return false;
    const std::string& head = t[k + 1].text;
    return find_template(head) || sandbox::may_call(head) || deffunctions->count(head) ||
           head == "test" || head == "not" || head == "and" || head == "or" || head == "exists" ||
           head == "forall" || head == "logical";
  }

  // `file_tokens`: the file's tokens, or null when it did not tokenize (`bad` says why).
  void run(const std::vector<Token>* file_tokens, const TokenError& bad) {
    if (!file_tokens) {
      diagnostics->push_back(
          {bad.code, Severity::Error, source.path, bad.line, "", bad.message, bad.column});
      return;
    }
    const std::vector<Token>& tokens = *file_tokens;
    // Split into top-level constructs by parenthesis depth, placing every parenthesis that
    // does not pair up where the author most likely left it out or put one too many; then
    // check each construct that is whole.
    std::vector<std::pair<std::size_t, std::size_t>> constructs;
    std::size_t i = 0;
    while (i < tokens.size()) {
      if (!constructs.empty() && constructs.back().second + 1 == i &&
          !starts_construct(tokens, i) && reads_as_rule_body(tokens, i)) {
        // The construct before was closed early: what follows still belongs to it.
        const auto [open, close] = constructs.back();
        constructs.pop_back();
        if (report_runaway_string(tokens, i)) return;
        const std::size_t extra = extra_close_by_indentation(tokens, open, i);
        if (extra != i)
          error_at(code::kUnbalanced, tokens[extra], construct_name(tokens, open),
                   "this `)` is one too many: it closes " + quoted_group(tokens, open) +
                       " (opened on line " + std::to_string(tokens[open].line) +
                       ") early, and line " + std::to_string(tokens[i].line) +
                       " is still indented as part of it");
        else
          error_at(code::kUnbalanced, tokens[close], construct_name(tokens, open),
                   "this `)` closes " + quoted_group(tokens, open) + " (opened on line " +
                       std::to_string(tokens[open].line) + "), but line " +
                       std::to_string(tokens[i].line) +
                       " still reads as part of it: one `)` too many on this line or before it");
        while (i < tokens.size() && !starts_construct(tokens, i)) ++i;
        continue;
      }
      if (tokens[i].type == TokenType::Close) {
        if (report_runaway_string(tokens, i)) return;
        // Right after a construct, the `)` too many may be inside it, where it closed a group
        // early: then the construct is not what the author wrote, and is not checked.
        const std::size_t extra =
            !constructs.empty() && constructs.back().second + 1 == i
                ? extra_close_by_indentation(tokens, constructs.back().first, i)
                : i;
        if (extra != i) {
          error_at(
              code::kUnbalanced, tokens[extra], construct_name(tokens, constructs.back().first),
              "this `)` is one too many: it closes a group early, and the line after it is still indented as "
              "part of that group (so the `)` on line " +
                  std::to_string(tokens[i].line) + " closes nothing)");
          constructs.pop_back();
        } else {
          error_at(code::kUnbalanced, tokens[i], "", "this `)` closes nothing: one `)` too many");
        }
        ++i;
        continue;
      }
      if (tokens[i].type != TokenType::Open) {
        error(code::kParse, tokens[i].line, "",
              "expected a construct such as (defrule …), found '" + tokens[i].text.substr(0, 40) +
                  "'");
        // Skip to the next top-level '(' to keep reporting.
        while (i < tokens.size() && tokens[i].type != TokenType::Open) ++i;
        continue;
      }
      const std::size_t start = i;
      std::size_t nested = tokens.size();  // a construct keyword inside: this one was never closed
      int depth = 0;
      std::size_t j = i;
      for (; j < tokens.size(); ++j) {
        if (tokens[j].type == TokenType::Open && ++depth > 1 && nested == tokens.size() &&
            starts_construct(tokens, j))
          nested = j;
        else if (tokens[j].type == TokenType::Close && --depth == 0)
          break;
      }
      if (j == tokens.size() || nested < j) {
        if (report_runaway_string(tokens, std::min(j, nested))) return;
        report_unclosed(tokens, start, nested);
        if (nested == tokens.size()) return;
        i = nested;  // go on with the construct that starts there
        continue;
      }
      constructs.emplace_back(start, j);
      i = j + 1;
    }
    for (const auto& [open, close] : constructs) check_construct(tokens, open, close);
  }

  // The name of the rule or function the construct at `open` defines, for its diagnostics.
  static std::string construct_name(const std::vector<Token>& t, std::size_t open) {
    if (open + 2 >= t.size() || t[open + 1].type != TokenType::Atom ||
        t[open + 2].type != TokenType::Atom ||
        (t[open + 1].text != "defrule" && t[open + 1].text != "deffunction"))
      return "";
    return t[open + 2].text;
  }

  // A parenthesis that does not pair up after a string that ran on through code (its closing
  // quote missing, and the quotes after it paired wrongly, a comment's among them) is that
  // string's doing: reported instead, as the tokenizer reports one never closed.
  bool report_runaway_string(const std::vector<Token>& t, std::size_t before) {
    for (std::size_t k = 0; k < before && k < t.size(); ++k) {
      if (t[k].type != TokenType::String || t[k].text.find('\n') == std::string::npos ||
          !string_runs_through_code(t[k].text))
        continue;
      const long end =
          t[k].line + static_cast<long>(std::count(t[k].text.begin(), t[k].text.end(), '\n'));
      error_at(code::kUnbalanced, t[k], "",
               "this string opened on line " + std::to_string(t[k].line) + " runs on to line " +
                   std::to_string(end) +
                   " through lines that read as rules: its closing `\"` is probably missing");
      return true;
    }
    return false;
  }

  // The construct at `start` is never closed before `end` (the next construct, or the end of
  // the file): name the '(' the indentation says was left open, else the construct's own.
  void report_unclosed(const std::vector<Token>& t, std::size_t start, std::size_t end) {
    // The next construct's line is evidence too: it starts left of everything still open.
    const std::size_t limit = std::min(end + 1, t.size());
    std::size_t evidence = end;
    const std::size_t open = unclosed_by_indentation(t, start, limit, &evidence);
    const std::string line = std::to_string(open == limit ? t[start].line : t[open].line);
    if (open != limit) {
      error_at(code::kUnbalanced, t[open], construct_name(t, start),
               "this " + quoted_group(t, open) + " opened on line " + line +
                   " is never closed: its `)` belongs before line " +
                   std::to_string(t[evidence].line) + ", which is indented as its sibling");
      return;
    }
    // Its `)` belongs after its last token: the one before the next construct (or the file's end).
    const std::string last_line = std::to_string(t[end - 1].line);
    error_at(code::kUnbalanced, t[start], construct_name(t, start),
             "this " + quoted_group(t, start) + " opened on line " + line +
                 " is never closed: its `)` is missing at the end of line " + last_line +
                 (end < t.size() ? ", before " + quoted_group(t, end) + " on line " +
                                       std::to_string(t[end].line)
                                 : std::string(", the end of the file")));
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
        error(
            code::kForbiddenConstruct, t[open].line, "",
            c.kind +
                " is not allowed in rule files: the engine defines the templates; use defrule, deffunction or defglobal");
      else
        error_at(code::kParse, t[open + 1], "",
                 "unknown construct `" + c.kind.substr(0, 40) + "`" +
                     suggest(c.kind, {"defrule", "deffunction", "defglobal"}) +
                     " (rule files hold defrule, deffunction and defglobal)");
      return;
    }
    if (c.kind != "defglobal" && open + 2 < close && t[open + 2].type == TokenType::Atom)
      c.name = t[open + 2].text;
    const std::size_t errors_before = diagnostics->size();

    if (c.kind == "defrule" && !c.name.empty())
      note_name(rule_names, c, code::kDuplicateRule, "rule");
    if (c.kind == "deffunction" && !c.name.empty())
      note_name(function_names, c, code::kDuplicateFunction, "function");

    bool in_rhs = false;
    int depth = 0;
    bool too_deep = false;
    const bool is_rule = c.kind == "defrule";
    using namespace std::string_view_literals;  // heads compared as views: a length test first
    for (std::size_t k = open + 1; k < close; ++k) {
      const Token& tok = t[k];
      if (tok.type == TokenType::Open && ++depth > kMaxNesting && !too_deep) {
        // CLIPS parses expressions recursively: refuse what could exhaust its stack.
        error(code::kParse, tok.line, c.name,
              "expressions nest deeper than " + std::to_string(kMaxNesting));
        too_deep = true;
      }
      if (tok.type == TokenType::Close) --depth;
      if (is_rule && depth == 0 && tok.type == TokenType::Atom &&
          std::string_view(tok.text) == "=>"sv)
        in_rhs = true;
      if (tok.type != TokenType::Open || k + 1 >= close || t[k + 1].type != TokenType::Atom)
        continue;
      const std::string_view head = t[k + 1].text;
      if (head == "bind"sv && k + 2 < close && t[k + 2].type == TokenType::Atom &&
          t[k + 2].text.rfind("?*", 0) == 0) {
        error(code::kGlobalMutation, t[k + 2].line, c.name,
              "globals are constants in Warden rules; cannot bind " + t[k + 2].text);
      } else if (head == "regex-match"sv && k + 2 < close && t[k + 2].type == TokenType::String) {
        check_regex(t[k + 2], c.name);
      } else if (is_local_time_function(head) && k + 2 < close) {
        check_time_zone(t[k + 2], c.name);
      } else if (is_data_function(head) && k + 2 < close) {
        note_data_reference(t[k + 1].text, t[k + 2], c.name);
      } else if (head == "pattern-hit"sv && is_rule && !in_rhs) {
        // Any depth: a pattern under not/or/and/exists/forall/logical must be indexed too,
        // or `(not (pattern-hit …))` would always hold and `(or (pattern-hit …) …)` never.
        collect_pattern(t, k, c);
      } else if (head == "assert"sv) {
        check_asserted_rule_names(t, k, c);
      }
    }
    if (!too_deep) check_calls(t, open, close, c);
    c.ok = std::none_of(diagnostics->begin() + static_cast<std::ptrdiff_t>(errors_before),
                        diagnostics->end(),
                        [](const Diagnostic& d) { return d.severity == Severity::Error; });
    // Whole construct text, indented so that its first line keeps the source column; lines
    // inside map back to the file by adding c.line - 1.
    std::size_t begin = t[open].offset, end = t[close].offset + 1;
    c.text.assign(begin - line_start(c.line), ' ');
    c.text.append(source.text, begin, end - begin);
    out->constructs.push_back(std::move(c));
  }

  // ---- Calls: every function a construct calls must be on the sandbox allowlist ----------
  // The walk follows CLIPS's grammar for the allowed constructs, so that names in data
  // positions (pattern templates and slots, asserted facts and slots, switch cases, declare)
  // are not taken for calls, and every other "(name" is one.

  struct Walk {
    FileChecker& fc;
    const std::vector<Token>& t;
    const std::vector<std::size_t>& match;  // index of the ')' closing each '('
    const std::vector<int>& level;          // parentheses open around each token
    const Construct& c;
    Nesting& nest;
    FactChecks& facts;
    std::vector<std::size_t> history_at = {};  // where each history pattern of this construct opens
    bool in_lhs = false;                       // walking a rule's conditions
    std::set<std::string> age_vars = {};       // variables bound to a history pattern's age
    std::set<std::string> lexeme_vars = {};    // variables bound only where strings or symbols are
    std::vector<std::string> lhs_calls = {};   // what they call (member$ as checked below)
    std::vector<std::string> lhs_globals = {};  // member$ second arguments among them

    // A call in a rule's conditions, as total_call() judges it: its name; "(compare ages)" for
    // a numeric comparison of history ages (integers) and integer constants, which cannot fail;
    // for member$, whether its list is a global (noted in `globals`, checked once loaded).
    std::string classified_call(std::size_t open, std::vector<std::string>* globals) const {
      const std::string& name = t[open + 1].text;
      static const std::set<std::string, std::less<>> kCompare = {
          "<", ">", "<=", ">=", "=", "<>", "!="};
      if (kCompare.count(name)) {
        bool numbers = true;
        for (std::size_t a = open + 2; a < match[open] && numbers; a = end_of_token(a))
          numbers = t[a].type == TokenType::Atom &&
                    (age_vars.count(t[a].text) > 0 || is_integer_constant(t[a].text));
        return numbers ? "(compare ages)" : name;
      }
      // Functions that fail only on an argument that is no string or symbol: total when each
      // argument is a lexeme constant, a lexeme variable or a call returning a string. The
      // data functions also fail on a set no data file defines: total only when the set is
      // named by a constant, which Policy::compile checks (a list read by data-value too).
      static const std::set<std::string, std::less<>> kLexemeArgs = {
          "str-prefix", "str-suffix", "str-index",   "path-normalize", "in-workspace",
          "str-cat",    "sym-cat",    "data-member", "data-value"};
      if (kLexemeArgs.count(name)) {
        bool lexemes =
            !is_data_function(name) || (open + 2 < match[open] && is_constant_lexeme(t[open + 2]));
        for (std::size_t a = open + 2; a < match[open] && lexemes; a = end_of_token(a)) {
          if (t[a].type == TokenType::String) continue;
          if (t[a].type == TokenType::Open) {
            lexemes = head_is_name(a) &&
                      (t[a + 1].text == "str-cat" || t[a + 1].text == "sym-cat" ||
                       t[a + 1].text == "path-normalize" || t[a + 1].text == "workspace-root");
            continue;  // the call itself is classified on its own
          }
          const std::string& x = t[a].text;
          lexemes = lexeme_vars.count(x) > 0 || (x[0] != '?' && x[0] != '$' && !looks_numeric(x));
        }
        return lexemes ? "(lexeme function)" : name;
      }
      if (name != "member$") return name;
      const std::size_t second = end_of_token(open + 2);
      if (second < match[open] && t[second].type == TokenType::Atom &&
          t[second].text.rfind("?*", 0) == 0 && end_of_token(second) == match[open]) {
        globals->push_back(t[second].text);
        return name;
      }
      return "(member$ without a global list)";
    }
    void note_lhs_call(std::size_t open) {
      lhs_calls.push_back(classified_call(open, &lhs_globals));
    }

    int level_at(const Token& tok) const {
      return level[static_cast<std::size_t>(&tok - t.data())];
    }

    bool head_is_name(std::size_t open) const {
      return t[open + 1].type == TokenType::Atom && !is_variable(t[open + 1].text);
    }
    std::size_t end_of(std::size_t open) const { return match[open] + 1; }

    // One expression at i (a constant, a variable or a call); returns the index after it.
    std::size_t expression(std::size_t i) {
      if (t[i].type != TokenType::Open) return i + 1;
      return call(i);
    }
    void expressions(std::size_t from, std::size_t close) {
      for (std::size_t k = from; k < close;) k = expression(k);
    }

    std::size_t call(std::size_t open) {
      const std::size_t close = match[open];
      if (open + 1 == close) return close + 1;
      if (!head_is_name(open)) {  // "(?x 1 10)" of loop-for-count, a parameter list …
        expressions(open + 1, close);
        return close + 1;
      }
      const Token& head = t[open + 1];
      if (c.kind == "deffunction") fc.out->function_calls[c.name].insert(head.text);
      if (in_lhs) note_lhs_call(open);
      if (!allowed(head)) return close + 1;  // reported; its arguments are not looked at
      if (head.text == "assert") {
        for (std::size_t k = open + 2; k < close;)
          k = t[k].type == TokenType::Open ? fact(k) : k + 1;
      } else if (head.text == "switch") {
        std::size_t k = open + 2 < close ? expression(open + 2) : close;
        while (k < close) {
          if (t[k].type == TokenType::Open && head_is_name(k) &&
              (t[k + 1].text == "case" || t[k + 1].text == "default")) {
            expressions(k + 2, match[k]);
            k = end_of(k);
          } else {
            k = expression(k);
          }
        }
      } else {
        expressions(open + 2, close);
      }
      return close + 1;
    }

    // (template (slot value…)…) inside assert: only decision, rewrite, allow, hint and approval may be asserted.
    std::size_t fact(std::size_t open) {
      const std::size_t close = match[open];
      if (open + 1 == close || !head_is_name(open)) {
        expressions(open + 1, close);
        return close + 1;
      }
      const Token& name = t[open + 1];
      if (!sandbox::may_assert(name.text)) {
        fc.error_at(
            code::kForbiddenAssert, name, c.name,
            "rules may assert only decision, rewrite, allow, hint and approval facts, not '" +
                name.text.substr(0, 40) + "'" +
                fc.suggest(name.text, {"decision", "rewrite", "allow", "hint", "approval"}));
        return close + 1;
      }
      facts.asserted(open);
      slots(open + 2, close);
      return close + 1;
    }

    // (slot value…) groups: the slot name is data, the values are expressions.
    void slots(std::size_t from, std::size_t close) {
      for (std::size_t k = from; k < close;) {
        if (t[k].type == TokenType::Open && k + 1 < match[k] && head_is_name(k)) {
          expressions(k + 2, match[k]);
          k = end_of(k);
        } else {
          k = expression(k);
        }
      }
    }

    // A conditional element of a rule's left-hand side.
    std::size_t condition(std::size_t i) {
      if (t[i].type != TokenType::Open) return i + 1;  // "?f", "<-"
      const std::size_t close = match[i];
      if (i + 1 == close || !head_is_name(i)) {
        expressions(i + 1, close);
        return close + 1;
      }
      const std::string& head = t[i + 1].text;
      if (head == "test") {
        expressions(i + 2, close);
      } else if (head == "not" || head == "and" || head == "or" || head == "exists" ||
                 head == "forall" || head == "logical") {
        for (std::size_t k = i + 2; k < close;) k = condition(k);
      } else {
        facts.pattern(i);
        slots(i + 2, close);  // a pattern: (template (slot constraint…)…); calls follow : or =
        if (c.kind == "defrule" && (head == "history" || ends_with(head, "::history")))
          history_pattern(i, close);
      }
      return close + 1;
    }

    // A `history` pattern: the constants each slot's constraint accepts (engine/history_filter.h).
    void history_pattern(std::size_t open, std::size_t close) {
      HistoryPattern p;
      p.rule = c.name;
      p.file = c.file;
      p.line = t[open].line;
      p.slots = slot_constants(open, close);
      // The calls of its constraints, and the constant slots written before the first.
      bool called = false;
      for (std::size_t k = open + 2; k < close; k = end_of_token(k)) {
        if (t[k].type != TokenType::Open || !head_is_name(k)) continue;
        const std::size_t slot_close = match[k];
        const std::size_t calls_before = p.calls.size();
        for (std::size_t q = k + 2; q < slot_close; ++q) {
          if (t[q].type != TokenType::Open || q + 1 >= slot_close ||
              t[q + 1].type != TokenType::Atom)
            continue;
          p.calls.push_back(classified_call(q, &p.multifield_globals));
        }
        if (p.calls.size() != calls_before) called = true;
        if (!called)
          for (const auto& constraint : p.slots)
            if (constraint.slot == t[k + 1].text) p.before_calls.push_back(constraint);
      }
      fc.out->history_patterns.push_back(std::move(p));
      history_at.push_back(open);
    }

    // The constants each slot of the pattern at `open` accepts.
    SlotConstants slot_constants(std::size_t open, std::size_t close) const {
      SlotConstants slots;
      for (std::size_t k = open + 2; k < close;) {
        if (t[k].type == TokenType::Open && k + 1 < match[k] && head_is_name(k)) {
          if (auto accepted = accepted_constants(k + 2, match[k])) {
            accepted->slot = t[k + 1].text;
            slots.push_back(std::move(*accepted));
          }
          k = end_of(k);
        } else {
          k = end_of_token(k);
        }
      }
      return slots;
    }

    // A plain pattern on a template only the engine asserts for the proposal: (name slots…).
    std::optional<FactPattern> proposal_pattern(std::size_t open) const {
      if (t[open].type != TokenType::Open || !head_is_name(open)) return std::nullopt;
      const std::string& name = t[open + 1].text;
      // Only the engine's own templates: `object` patterns match instances (initial-object),
      // and a name that is no template is none of the proposal's facts.
      if (name == "history" || sandbox::may_assert(name) || !template_slots().count(name))
        return std::nullopt;
      return FactPattern{name, slot_constants(open, match[open])};
    }

    // The gates of the rule's conditions [from, to): its positive patterns on the proposal's
    // facts, in its top-level conjunction (through `and` and `logical`), and each `or` all of
    // whose branches are such patterns.
    void gates(std::size_t from, std::size_t to, std::vector<HistoryGate>* out) const {
      for (std::size_t k = from; k < to; k = end_of_token(k)) {
        if (t[k].type != TokenType::Open || !head_is_name(k)) continue;
        const std::string& head = t[k + 1].text;
        if (head == "and" || head == "logical") {
          gates(k + 2, match[k], out);
        } else if (head == "or") {
          HistoryGate g;
          bool plain = true;
          for (std::size_t b = k + 2; b < match[k] && plain; b = end_of_token(b)) {
            auto pattern = proposal_pattern(b);
            if (pattern)
              g.any_of.push_back(std::move(*pattern));
            else
              plain = false;
          }
          if (plain && !g.any_of.empty()) out->push_back(std::move(g));
        } else if (auto pattern = proposal_pattern(k)) {
          out->push_back(HistoryGate{{std::move(*pattern)}});
        }
      }
    }
    std::size_t end_of_token(std::size_t k) const {
      return t[k].type == TokenType::Open ? end_of(k) : k + 1;
    }

    // What a single-field constraint (tokens [from, to)) accepts, judged by its constants, by
    // CLIPS's precedence: ~ binds tightest, then &, then |; a leading `?x&` only binds (?x&a|b
    // is ?x&(a|b)). In a disjunct, a conjunct that is one constant restricts it to that value, a
    // `~constant` excludes the value; anything else (a variable, a predicate, a return value, a
    // number, a wildcard) restricts nothing. nullopt: the constraint may accept any value.
    std::optional<SlotConstraint> accepted_constants(std::size_t from, std::size_t to) const {
      struct Item {
        char connective = 0;  // '&', '|', '~' or 0 for a term
        bool constant = false;
        SlotConstant value;
      };
      std::vector<Item> items;
      for (std::size_t k = from; k < to; k = end_of_token(k)) {
        const Token& tok = t[k];
        Item item;
        if (tok.type == TokenType::Atom &&
            (tok.text == "&" || tok.text == "|" || tok.text == "~")) {
          item.connective = tok.text[0];
        } else if (tok.type == TokenType::String) {
          item.constant = true;
          item.value = {true, tok.text};
        } else if (tok.type == TokenType::Atom && !tok.text.empty() && tok.text[0] != '?' &&
                   tok.text[0] != '$' && tok.text != ":" && tok.text != "=" &&
                   !looks_numeric(tok.text)) {
          item.constant = true;
          item.value = {false, tok.text};
        } else if (tok.type == TokenType::Atom && (tok.text == ":" || tok.text == "=")) {
          if (k + 1 < to && t[k + 1].type == TokenType::Open)
            k = k + 1;  // the call is part of this term
        }
        items.push_back(std::move(item));
      }
      std::size_t at = 0;
      // ?x&… or ?&…: the first term only binds (or, a wildcard, accepts anything).
      const bool variable_first = from < to && t[from].type == TokenType::Atom &&
                                  (t[from].text[0] == '?' || t[from].text.rfind("$?", 0) == 0);
      if (variable_first && items.size() > 1 && items[1].connective == '&') at = 2;
      if (at == items.size()) return std::nullopt;
      auto contains = [](const std::vector<SlotConstant>& v, const SlotConstant& c) {
        return std::find(v.begin(), v.end(), c) != v.end();
      };
      SlotConstraint all;  // the union of the disjuncts so far: starts as nothing
      for (std::size_t d = at; d <= items.size();) {
        std::size_t d_end = d;
        while (d_end < items.size() && items[d_end].connective != '|') ++d_end;
        std::vector<SlotConstant> only, excluded;
        for (std::size_t q = d; q < d_end;) {
          std::size_t q_end = q;
          while (q_end < d_end && items[q_end].connective != '&') ++q_end;
          if (q_end == q + 1 && items[q].constant && !contains(only, items[q].value))
            only.push_back(items[q].value);
          if (q_end == q + 2 && items[q].connective == '~' && items[q + 1].constant)
            excluded.push_back(items[q + 1].value);
          q = q_end + 1;
        }
        if (d == d_end) return std::nullopt;
        SlotConstraint one;  // this disjunct
        if (!only.empty()) {
          if (only.size() == 1 && !contains(excluded, only[0])) one.values = only;  // else: nothing
        } else if (!excluded.empty()) {
          one.excluding = true;
          one.values = excluded;
        } else {
          return std::nullopt;  // this disjunct accepts anything
        }
        // all ∪ one
        SlotConstraint u;
        if (!all.excluding && !one.excluding) {
          u.values = all.values;
          for (const auto& v : one.values)
            if (!contains(u.values, v)) u.values.push_back(v);
        } else if (all.excluding && one.excluding) {
          u.excluding = true;
          for (const auto& v : all.values)
            if (contains(one.values, v)) u.values.push_back(v);
        } else {
          const SlotConstraint& ex = all.excluding ? all : one;
          const SlotConstraint& in = all.excluding ? one : all;
          u.excluding = true;
          for (const auto& v : ex.values)
            if (!contains(in.values, v)) u.values.push_back(v);
        }
        all = std::move(u);
        d = d_end + 1;
      }
      if (all.excluding && all.values.empty()) return std::nullopt;
      return all;
    }

    // The variable a slot's constraint binds as its first term, when the slot's value must
    // equal it: `?t` alone or `?t&…` (CLIPS reads ?t&a|b as ?t&(a|b)); "" for anything else
    // (`?t|"x"` accepts values other than ?t).
    std::string bound_variable(std::size_t slot_open) const {
      const std::size_t first = slot_open + 2, close = match[slot_open];
      if (first >= close || t[first].type != TokenType::Atom) return "";
      const std::string& v = t[first].text;
      if (v.size() < 2 || v[0] != '?' || v[1] == '*') return "";
      if (first + 1 < close && !(t[first + 1].type == TokenType::Atom && t[first + 1].text == "&"))
        return "";
      return v;
    }

    // The plain patterns of the rule's conjunction [from, to): through `and` and `logical`,
    // never under not, exists, forall or or.
    void conjunction(std::size_t from, std::size_t to, std::vector<std::size_t>* out) const {
      for (std::size_t k = from; k < to; k = end_of_token(k)) {
        if (t[k].type != TokenType::Open || !head_is_name(k)) continue;
        const std::string& head = t[k + 1].text;
        if (head == "and" || head == "logical")
          conjunction(k + 2, match[k], out);
        else if (head != "not" && head != "or" && head != "exists" && head != "forall" &&
                 head != "test" && head != "declare")
          out->push_back(k);
      }
    }

    // A plain pattern of a rule's conjunction and the variables it binds: (variable, slot).
    struct Bound {
      std::size_t open;
      std::size_t history;  // index into patterns, or npos for a pattern on the proposal's facts
      std::vector<std::pair<std::string, std::string>> vars;
    };

    // A variable of a history predicate: the entry's own slot when `own` binds it, else a slot
    // of a pattern on the proposal's facts that binds it, else unknown.
    PredicateTerm variable_term(const std::string& v, const Bound& own,
                                const std::vector<Bound>& bound) const {
      PredicateTerm term;
      for (const auto& [var, slot] : own.vars)
        if (var == v) {
          term.kind = PredicateTerm::Kind::kEntry;
          term.slot = slot;
          return term;
        }
      for (const auto& q : bound) {
        if (q.history != std::string::npos) continue;
        for (const auto& [var, slot] : q.vars)
          if (var == v) {
            term.kind = PredicateTerm::Kind::kFact;
            term.slot = slot;
            term.fact = *proposal_pattern(q.open);
            return term;
          }
      }
      return term;
    }

    // One term of an operand at k: a constant, a variable, (workspace-root); unknown else.
    PredicateTerm predicate_term(std::size_t k, const Bound& own,
                                 const std::vector<Bound>& bound) const {
      PredicateTerm term;
      const Token& tok = t[k];
      if (tok.type == TokenType::String) {
        term.kind = PredicateTerm::Kind::kConstant;
        term.constant = {true, tok.text};
      } else if (tok.type == TokenType::Atom && !tok.text.empty() && tok.text[0] == '?' &&
                 tok.text.rfind("?*", 0) != 0) {
        term = variable_term(tok.text, own, bound);
      } else if (tok.type == TokenType::Atom && !tok.text.empty() &&
                 ((tok.text[0] >= 'a' && tok.text[0] <= 'z') ||
                  (tok.text[0] >= 'A' && tok.text[0] <= 'Z')) &&
                 tok.text.find_first_of("[]") == std::string::npos) {
        // A symbol as CLIPS reads it (`write`, `TRUE`). A global (`?*x*`), an instance name
        // (`[x]`: str-cat drops its brackets) or a number is no constant the filter judges.
        term.kind = PredicateTerm::Kind::kConstant;
        term.constant = {false, tok.text};
      } else if (tok.type == TokenType::Open && head_is_name(k) &&
                 t[k + 1].text == "workspace-root" && k + 2 == match[k]) {
        term.kind = PredicateTerm::Kind::kRoot;
      }
      return term;
    }

    // An argument of a comparison at k: a term, or (str-cat terms…) as one string.
    PredicateOperand predicate_operand(std::size_t k, const Bound& own,
                                       const std::vector<Bound>& bound) const {
      PredicateOperand o;
      if (t[k].type == TokenType::Open && head_is_name(k) && t[k + 1].text == "str-cat") {
        o.concatenated = true;
        for (std::size_t a = k + 2; a < match[k]; a = end_of_token(a)) {
          PredicateOperand inner = predicate_operand(a, own, bound);
          o.terms.insert(o.terms.end(), inner.terms.begin(), inner.terms.end());
        }
        return o;
      }
      o.terms.push_back(predicate_term(k, own, bound));
      return o;
    }

    // The call at `open` as a predicate the filter can judge (engine/history_filter.h).
    HistoryPredicate predicate(std::size_t open, const Bound& own,
                               const std::vector<Bound>& bound) const {
      using Kind = HistoryPredicate::Kind;
      HistoryPredicate p;
      if (t[open].type != TokenType::Open || !head_is_name(open)) return p;
      const std::string& head = t[open + 1].text;
      std::vector<std::size_t> args;
      for (std::size_t a = open + 2; a < match[open]; a = end_of_token(a)) args.push_back(a);
      if (head == "and" || head == "or" || (head == "not" && args.size() == 1)) {
        p.kind = head == "and" ? Kind::kAnd : head == "or" ? Kind::kOr : Kind::kNot;
        for (std::size_t a : args) p.args.push_back(predicate(a, own, bound));
      } else if (((head == "eq" || head == "neq") && args.size() >= 2) ||
                 (head == "str-prefix" && args.size() == 2)) {
        p.kind = head == "eq" ? Kind::kEq : head == "neq" ? Kind::kNeq : Kind::kStrPrefix;
        for (std::size_t a : args) p.operands.push_back(predicate_operand(a, own, bound));
      }
      return p;
    }

    // The predicates an entry must pass to match the history pattern `own`: each slot's `:`
    // calls joined to it by `&` at the top of a constraint without `|` (a `~:` or a call
    // inside a `|` alternative is not one).
    std::vector<HistoryPredicate> predicates(const Bound& own,
                                             const std::vector<Bound>& bound) const {
      std::vector<HistoryPredicate> out;
      const std::size_t open = own.open;
      for (std::size_t k = open + 2; k < match[open]; k = end_of_token(k)) {
        if (t[k].type != TokenType::Open || !head_is_name(k)) continue;
        const std::size_t from = k + 2, to = match[k];
        bool alternatives = false;
        for (std::size_t q = from; q < to; q = end_of_token(q))
          alternatives |= t[q].type == TokenType::Atom && t[q].text == "|";
        if (alternatives) continue;
        for (std::size_t q = from; q + 1 < to; q = end_of_token(q)) {
          if (!(t[q].type == TokenType::Atom && t[q].text == ":" &&
                t[q + 1].type == TokenType::Open))
            continue;
          const bool negated = q > from && t[q - 1].type == TokenType::Atom && t[q - 1].text == "~";
          if (!negated) out.push_back(predicate(q + 1, own, bound));
        }
      }
      return out;
    }

    // The joins of the rule's history patterns (those at `first` on, found at history_at).
    void joins(std::size_t first, std::size_t from, std::size_t to) const {
      auto& patterns = fc.out->history_patterns;
      std::vector<std::size_t> conj;
      conjunction(from, to, &conj);
      std::vector<Bound> bound;
      for (std::size_t open : conj) {
        Bound b{open, std::string::npos, {}};
        const std::string& name = t[open + 1].text;
        if (name == "history") {
          auto at = std::find(history_at.begin(), history_at.end(), open);
          if (at == history_at.end()) continue;
          b.history = first + static_cast<std::size_t>(at - history_at.begin());
        } else if (!proposal_pattern(open)) {
          continue;  // a template rules assert, or one not known here
        }
        for (std::size_t k = open + 2; k < match[open]; k = end_of_token(k)) {
          if (t[k].type != TokenType::Open || !head_is_name(k)) continue;
          const std::string& slot = t[k + 1].text;
          if (slot == "proposal" || slot == "age" || slot == "id") continue;
          std::string v = bound_variable(k);
          if (!v.empty()) b.vars.emplace_back(std::move(v), slot);
        }
        bound.push_back(std::move(b));
      }
      for (const auto& p : bound) {
        if (p.history == std::string::npos) continue;
        for (const auto& [var, slot] : p.vars) {
          for (const auto& q : bound) {
            if (q.open == p.open) continue;
            for (const auto& [other_var, other_slot] : q.vars) {
              if (other_var != var) continue;
              HistoryJoin j;
              j.slot = slot;
              j.other_slot = other_slot;
              j.with_history = q.history != std::string::npos;
              if (j.with_history)
                j.history = q.history;
              else
                j.fact = *proposal_pattern(q.open);
              patterns[p.history].joins.push_back(std::move(j));
            }
          }
        }
      }
      for (const auto& p : bound)
        if (p.history != std::string::npos) patterns[p.history].predicates = predicates(p, bound);
    }

    void rule(std::size_t open) {
      const std::size_t close = match[open];
      std::size_t k = open + 3;  // after "(defrule name"
      if (k < close && t[k].type == TokenType::String) ++k;
      const std::size_t arrow = facts.arrow(k);
      if (arrow == std::string::npos) return;  // reported; nothing else reads right without it
      facts.variables(k, arrow);
      const std::size_t first_history = fc.out->history_patterns.size();
      // What the rule's variables hold, from the slots that bind them anywhere in it: a history
      // age (an integer), or only strings and symbols. A variable bound where it could hold
      // anything else is neither.
      {
        std::set<std::string> other;
        const auto& templates = template_slots();
        for (std::size_t h = k; h < close; ++h) {
          if (t[h].type != TokenType::Open || !head_is_name(h)) continue;
          auto tmpl = templates.find(t[h + 1].text);
          if (tmpl == templates.end()) continue;
          for (std::size_t q = h + 2; q < match[h]; q = end_of_token(q)) {
            if (t[q].type != TokenType::Open || !head_is_name(q)) continue;
            auto slot = tmpl->second.find(t[q + 1].text);
            const bool lexeme =
                slot != tmpl->second.end() && !slot->second.types.empty() &&
                std::all_of(slot->second.types.begin(), slot->second.types.end(),
                            [](const std::string& ty) { return ty == "STRING" || ty == "SYMBOL"; });
            const bool age = t[h + 1].text == "history" && t[q + 1].text == "age";
            // Single-field variables of the slot: its first term in a slot, any ?v in a multislot.
            for (std::size_t v = q + 2; v < match[q]; v = end_of_token(v)) {
              if (t[v].type != TokenType::Atom || t[v].text.size() < 2 || t[v].text[0] != '?' ||
                  t[v].text[1] == '*')
                continue;
              const bool single =
                  slot != tmpl->second.end() && (slot->second.multislot || v == q + 2);
              if (single && age)
                age_vars.insert(t[v].text);
              else if (single && lexeme)
                lexeme_vars.insert(t[v].text);
              else
                other.insert(t[v].text);
            }
          }
        }
        for (const auto& v : other) {
          age_vars.erase(v);
          lexeme_vars.erase(v);
        }
        for (const auto& v : age_vars) lexeme_vars.erase(v);
      }
      std::size_t lhs_end = k;
      while (lhs_end < close && !(t[lhs_end].type == TokenType::Atom && t[lhs_end].text == "=>"))
        lhs_end = end_of_token(lhs_end);
      struct
          GatesOnExit {  // the rule's history patterns get its gates and joins once all are found
        const Walk& w;
        std::size_t first, from, to;
        ~GatesOnExit() {
          auto& patterns = w.fc.out->history_patterns;
          if (patterns.size() == first) return;
          std::vector<HistoryGate> g;
          w.gates(from, to, &g);
          for (std::size_t i = first; i < patterns.size(); ++i) {
            patterns[i].gates = g;
            patterns[i].rule_calls = w.lhs_calls;
            patterns[i].multifield_globals.insert(patterns[i].multifield_globals.end(),
                                                  w.lhs_globals.begin(), w.lhs_globals.end());
          }
          w.joins(first, from, to);
        }
      } gates_on_exit{*this, first_history, k, lhs_end};
      bool rhs = false;
      in_lhs = true;
      while (k < close) {
        if (!rhs && t[k].type == TokenType::Atom && t[k].text == "=>") {
          rhs = true;
          in_lhs = false;
          ++k;
        } else if (rhs) {
          k = expression(k);
        } else if (t[k].type == TokenType::Open && head_is_name(k) && t[k + 1].text == "declare") {
          slots(k + 2, match[k]);  // (salience expr) (auto-focus TRUE)
          k = end_of(k);
        } else {
          k = condition(k);
        }
      }
    }

    void function(std::size_t open) {
      const std::size_t close = match[open];
      std::size_t k = open + 3;  // after "(deffunction name"
      if (k < close && t[k].type == TokenType::String) ++k;
      if (k < close && t[k].type == TokenType::Open) {
        for (std::size_t p = k + 1; p < match[k]; ++p)
          if (t[p].type == TokenType::Atom && t[p].text.rfind("$?", 0) == 0)
            fc.error(code::kWildcardParameter, t[p].line, c.name,
                     "wildcard parameters are not allowed: one call could multiply a value's size");
        k = end_of(k);
      }
      expressions(k, close);
    }

    bool allowed(const Token& head) {
      const std::string& name = head.text;
      if (c.kind == "deffunction" && name == c.name) {
        fc.error(code::kRecursion, head.line, c.name, "deffunction '" + name + "' calls itself");
        return false;
      }
      if (sandbox::may_call(name)) return true;
      // A deffunction cannot take a built-in's name (CLIPS refuses it), so that name still
      // means the built-in.
      if (fc.deffunctions->count(name) && !sandbox::is_clips_builtin(name)) {
        int& site = nest.calls[name];
        site = std::max(site, level_at(head));
        return true;
      }
      if (sandbox::is_clips_builtin(name)) {
        fc.error_at(code::kForbiddenFunction, head, c.name,
                    "function '" + name + "' is not allowed in rules");
      } else if (find_template(name)) {
        fc.error_at(code::kUnknownFunction, head, c.name,
                    "`" + name + "` is a template, not a function" +
                        (c.kind == "defrule" && !in_lhs ? std::string(": patterns go before `=>`")
                                                        : std::string()));
      } else {
        fc.error_at(code::kUnknownFunction, head, c.name,
                    "unknown function `" + name.substr(0, 60) + "`" +
                        (fc.can_suggest() ? fc.suggest(name, fc.callable_names()) : std::string()));
      }
      return false;
    }
  };

  void check_calls(const std::vector<Token>& t, std::size_t open, std::size_t close,
                   const Construct& c) {
    // Indexed by token in the file, filled for this construct only: one pair of arrays for the
    // whole file (sized per construct, they made checking a file quadratic in its length).
    std::vector<std::size_t>& match = match_;
    std::vector<int>& level = level_;
    if (match.size() < t.size()) {
      match.resize(t.size());
      level.resize(t.size());
    }
    std::fill(match.begin() + static_cast<std::ptrdiff_t>(open),
              match.begin() + static_cast<std::ptrdiff_t>(close) + 1, close);
    std::vector<std::size_t> stack;
    Nesting& n = (*nesting)[out->constructs.size()];  // c is appended at this index
    for (std::size_t k = open; k <= close; ++k) {
      level[k] = static_cast<int>(stack.size());
      if (t[k].type == TokenType::Open) stack.push_back(k);
      if (t[k].type == TokenType::Close && !stack.empty()) {
        match[stack.back()] = k;
        stack.pop_back();
      }
      n.own = std::max(n.own, static_cast<int>(stack.size()));
    }
    FactChecks facts(
        t, match, open, close, *deffunctions,
        [&](const char* code, Severity severity, const Token& at, std::string message) {
          report(code, severity, at, c.name, std::move(message));
        },
        [&](std::string_view word, const std::vector<std::string>& names) {
          return suggest(word, names);
        });
    Walk walk{*this, t, match, level, c, n, facts};
    if (c.kind == "defrule")
      walk.rule(open);
    else if (c.kind == "deffunction")
      walk.function(open);
    else
      walk.expressions(open + 2, close);  // defglobal: [module] ?*name* = expression …
  }

  std::size_t line_start(long line) const { return starts_[static_cast<std::size_t>(line - 1)]; }

  void note_name(std::map<std::string, std::pair<std::string, long>>* names, const Construct& c,
                 const char* code, const char* what) {
    auto [it, inserted] = names->emplace(c.name, std::make_pair(c.file, c.line));
    if (!inserted)
      error(code, c.line, c.name,
            std::string(what) + " '" + c.name + "' is already defined at " + it->second.first +
                ":" + std::to_string(it->second.second));
  }

  static bool is_local_time_function(std::string_view name) {
    return name == "local-weekday" || name == "local-hour" || name == "local-minute" ||
           name == "local-date";
  }

  // A constant zone (a string, or a symbol that is not a variable) must be one the tz
  // database knows: a misspelt zone would otherwise fail every decision that reaches it.
  void check_time_zone(const Token& zone, const std::string& rule) {
    if (zone.type != TokenType::String && (zone.type != TokenType::Atom || zone.text.empty() ||
                                           zone.text[0] == '?' || zone.text[0] == '$'))
      return;
    std::string why = local_time::zone_error(zone.text);
    if (!why.empty()) error(code::kTimeZone, zone.line, rule, why);
  }

  static bool is_data_function(std::string_view name) {
    return name == "data-member" || name == "data-value";
  }

  // A constant set name (a string, or a symbol that is not a variable): Policy::compile
  // checks it against the data files, so a misspelt name cannot make a rule that never fires.
  void note_data_reference(const std::string& function, const Token& name,
                           const std::string& rule) {
    if (!is_constant_lexeme(name)) return;
    out->data_references.push_back({function, name.text, source.path, name.line, rule});
  }

  static bool is_constant_lexeme(const Token& t) {
    return t.type == TokenType::String ||
           (t.type == TokenType::Atom && !t.text.empty() && t.text[0] != '?' && t.text[0] != '$' &&
            !looks_numeric(t.text));
  }

  void check_regex(const Token& pattern, const std::string& rule) {
    // A pack repeats its regexes (the same constant in several rules): each is compiled once
    // per check, its verdict ("" when it compiles) reused at every place it is written.
    auto [verdict, fresh] = regex_verdicts->try_emplace(pattern.text);
    if (fresh) {
      RE2::Options options;
      options.set_log_errors(false);
      RE2 re(pattern.text, options);
      if (!re.ok()) verdict->second = "regex does not compile: " + re.error();
    }
    if (!verdict->second.empty()) error(code::kBadRegex, pattern.line, rule, verdict->second);
  }

  // Index of the ')' closing the '(' at `open` (t.size() if unbalanced).
  static std::size_t closing(const std::vector<Token>& t, std::size_t open) {
    int depth = 0;
    for (std::size_t k = open; k < t.size(); ++k) {
      if (t[k].type == TokenType::Open)
        ++depth;
      else if (t[k].type == TokenType::Close && --depth == 0)
        return k;
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
  void check_asserted_rule_names(const std::vector<Token>& t, std::size_t assert_open,
                                 const Construct& c) {
    const std::size_t end = closing(t, assert_open);
    for (std::size_t f = assert_open + 2; f < end; f = next_sibling(t, f)) {
      if (t[f].type != TokenType::Open) continue;
      if (f + 1 >= end || t[f + 1].type != TokenType::Atom) continue;
      const std::string& tmpl = t[f + 1].text;
      if (tmpl != "decision" && tmpl != "rewrite" && tmpl != "allow" && tmpl != "hint" &&
          tmpl != "approval")
        continue;
      const long line = t[f].line;
      if (c.kind != "defrule") {
        error(code::kRuleName, line, c.name,
              "a " + tmpl + " may only be asserted on the right-hand side of a defrule, not in a " +
                  c.kind);
        continue;
      }
      const std::size_t fact_end = closing(t, f);
      int slots = 0;
      for (std::size_t s = f + 2; s < fact_end; s = next_sibling(t, s)) {
        if (t[s].type != TokenType::Open) continue;
        if (s + 1 >= fact_end || t[s + 1].type != TokenType::Atom || t[s + 1].text != "rule")
          continue;
        ++slots;
        const std::size_t slot_end = closing(t, s);
        const bool constant =
            slot_end == s + 3 && (t[s + 2].type == TokenType::String ||
                                  (t[s + 2].type == TokenType::Atom && t[s + 2].text[0] != '?' &&
                                   t[s + 2].text[0] != '$'));
        if (!constant) {
          error(code::kRuleName, t[s].line, c.name,
                "the (rule …) slot of a " + tmpl + " must be the constant name of its rule, '" +
                    c.name + "'");
        } else if (t[s + 2].text != c.name) {
          error(code::kRuleName, t[s].line, c.name,
                "this " + tmpl + " credits rule '" + t[s + 2].text.substr(0, 80) +
                    "' but is asserted by rule '" + c.name + "'");
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
      error(
          code::kBadPattern, t[open].line, rule,
          "pattern-hit needs a constant (kind regex|substring|prefix|suffix|exact|glob|path-within) and a constant "
          "(pattern \"…\")");
      return;
    }
    if (p.kind == "regex") check_regex(Token{TokenType::String, p.pattern, t[open].line}, rule);
    // Hosts are lowercased before they are matched: a literal with an uppercase letter
    // would never hit, and a forbid written that way would silently never fire.
    if (p.key == "url.host" &&
        (p.kind == "exact" || p.kind == "suffix" || p.kind == "prefix" || p.kind == "substring") &&
        std::any_of(p.pattern.begin(), p.pattern.end(),
                    [](char ch) { return ch >= 'A' && ch <= 'Z'; })) {
      error(code::kBadPattern, t[open].line, rule,
            "url.host values are lowercase, so this " + p.kind +
                " pattern with an uppercase letter never hits: write it in lowercase");
      return;
    }
    out->patterns.push_back(std::move(p));
  }

  std::vector<std::size_t> starts_;
  std::vector<std::size_t> match_;  // check_calls: the ')' closing each '(' of the construct
  std::vector<int> level_;          // check_calls: parentheses open around each token
};

}  // namespace

// CLIPS evaluates nested expressions and deffunction calls by C recursion with no limit, so
// the nesting a rule reaches through the deffunctions it calls must be bounded, or a deep
// enough chain overflows the worker's stack. A deffunction call counts as kCallCost levels
// (it takes several C frames). CLIPS resolves a call only to a deffunction loaded before
// (self-calls are refused above), so depths are computed in load order; a call to one not yet
// loaded is left to CLIPS, which refuses it.
constexpr int kMaxEffectiveNesting = 1024;
constexpr int kCallCost = 2;

static void check_nesting(std::map<std::size_t, Nesting>& nesting, CheckedSources* out,
                          Diagnostics* diagnostics) {
  std::map<std::string, int, std::less<>> depth;  // deffunction -> effective nesting
  for (int pass = 0; pass < 2; ++pass) {          // deffunctions first (load order), then rules
    for (std::size_t i = 0; i < out->constructs.size(); ++i) {
      Construct& c = out->constructs[i];
      if ((c.kind == "deffunction") != (pass == 0)) continue;
      const Nesting& n = nesting[i];
      int d = n.own;
      bool deep_callee = false;
      for (const auto& [g, site] : n.calls) {
        auto it = depth.find(g);
        if (it == depth.end()) continue;
        deep_callee |= it->second > kMaxEffectiveNesting;
        d = std::max(d, site + kCallCost + it->second);
      }
      d = std::min(d, kMaxEffectiveNesting + 1);
      if (c.kind == "deffunction" && !c.name.empty()) depth[c.name] = d;
      if (d <= kMaxEffectiveNesting || !c.ok) continue;
      c.ok = false;
      if (!deep_callee)  // report where nesting first gets too deep, not every caller above
        diagnostics->push_back({code::kRecursion, Severity::Error, c.file, c.line, c.name,
                                "expressions nest deeper than " +
                                    std::to_string(kMaxEffectiveNesting) +
                                    " levels through the deffunctions '" + c.name + "' calls"});
    }
  }
}

bool total_call(const std::string& name,
                const std::map<std::string, std::set<std::string>>& functions) {
  // Pure and defined for every argument: comparisons, logic, type tests, control forms, a
  // constant (workspace-root), a list. member$ fails when its second argument is no list: the
  // history pattern's caller checks that (a global it names).
  static const std::set<std::string, std::less<>> kTotal = {"eq",
                                                            "neq",
                                                            "not",
                                                            "and",
                                                            "or",
                                                            "lexemep",
                                                            "stringp",
                                                            "symbolp",
                                                            "numberp",
                                                            "integerp",
                                                            "floatp",
                                                            "multifieldp",
                                                            "workspace-root",
                                                            "create$",
                                                            "if",
                                                            "progn",
                                                            "member$",
                                                            "(compare ages)",
                                                            "(lexeme function)"};
  if (kTotal.count(name)) return true;
  // A deffunction: total when everything it calls is, member$ aside (its arguments are not
  // looked at there). Recursion is refused by the checker; the depth bound is for safety.
  std::function<bool(const std::string&, int)> function_total = [&](const std::string& f,
                                                                    int depth) {
    auto it = functions.find(f);
    if (it == functions.end() || depth > 32) return false;
    for (const auto& callee : it->second) {
      if (callee == "member$") return false;
      if (!kTotal.count(callee) && !function_total(callee, depth + 1)) return false;
    }
    return true;
  };
  return function_total(name, 0);
}

CheckedSources check_sources(const RuleSources& sources, Diagnostics* diagnostics) {
  CheckedSources out;
  std::map<std::string, std::pair<std::string, long>> rule_names, function_names;
  // Deffunction names first: a rule may call one defined in any file of the set.
  std::set<std::string, std::less<>> deffunctions;
  std::map<std::size_t, Nesting> nesting;
  std::size_t suggestions_left = 1000;
  std::unordered_map<std::string, std::string> regex_verdicts;
  // Each file is tokenized once, here: the checker below reads the same tokens.
  std::vector<std::vector<Token>> file_tokens(sources.size());
  std::vector<TokenError> file_errors(sources.size());
  std::vector<char> tokenized(sources.size(), 0);
  for (std::size_t f = 0; f < sources.size(); ++f) {
    const auto& source = sources[f];
    std::vector<Token>& tokens = file_tokens[f];
    tokenized[f] = tokenize(source.text, &tokens, &file_errors[f]);
    if (!tokenized[f]) continue;  // reported by the checker
    int depth = 0;
    for (std::size_t k = 0; k + 2 < tokens.size(); ++k) {
      if (tokens[k].type == TokenType::Open && depth++ == 0 &&
          tokens[k + 1].type == TokenType::Atom && tokens[k + 1].text == "deffunction" &&
          tokens[k + 2].type == TokenType::Atom)
        deffunctions.insert(tokens[k + 2].text);
      if (tokens[k].type == TokenType::Close) --depth;
    }
  }
  for (std::size_t f = 0; f < sources.size(); ++f) {
    FileChecker checker{sources[f],
                        diagnostics,
                        &out,
                        &rule_names,
                        &function_names,
                        &deffunctions,
                        &nesting,
                        &suggestions_left,
                        &regex_verdicts,
                        {},
                        {},
                        {}};
    checker.starts_ = checker.line_starts();
    checker.run(tokenized[f] ? &file_tokens[f] : nullptr, file_errors[f]);
    std::vector<Token>().swap(file_tokens[f]);  // done with this file
  }
  check_nesting(nesting, &out, diagnostics);
  return out;
}

}  // namespace warden
