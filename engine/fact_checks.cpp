#include "engine/fact_checks.h"

#include <algorithm>

#include "engine/nearest_name.h"
#include "engine/sandbox.h"
#include "engine/source_layout.h"

namespace warden {
namespace {

const std::vector<std::string> kConditionKeywords = {"test",   "not",    "and",    "or",
                                                     "exists", "forall", "logical"};

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// ?x, $?x → "x"; "" for the wildcards ? and $? and for globals.
std::string variable_name(const std::string& atom) {
  if (!is_variable(atom)) return "";
  const std::size_t at = atom[0] == '$' ? 2 : 1;
  if (atom.size() <= at || atom[at] == '*') return "";
  return atom.substr(at);
}

// A token as the author wrote it, shortened: "rm" with its quotes, a symbol as is.
std::string fact_shown(const Token& tok) {
  std::string text = tok.text.substr(0, 40);
  if (tok.text.size() > 40) text += "…";
  return tok.type == TokenType::String ? "\"" + text + "\"" : text;
}

std::string line_text(long line) { return "line " + std::to_string(line); }

// "strings", "symbols or strings" for a slot's types.
std::string type_words(const std::vector<std::string>& types) {
  std::string out;
  for (std::size_t i = 0; i < types.size(); ++i) {
    std::string word = types[i];
    std::transform(word.begin(), word.end(), word.begin(),
                   [](char c) { return static_cast<char>(c - 'A' + 'a'); });
    out += (i == 0 ? "" : i + 1 == types.size() ? " or " : ", ") + word + "s";
  }
  return out;
}

}  // namespace

FactChecks::FactChecks(const std::vector<Token>& t, const std::vector<std::size_t>& match,
                       std::size_t open, std::size_t close,
                       const std::set<std::string, std::less<>>& functions, Report report,
                       Suggest suggest)
    : t_(t),
      match_(match),
      open_(open),
      close_(close),
      functions_(functions),
      report_(std::move(report)),
      suggest_(std::move(suggest)) {
  for (std::size_t k = open; k <= close; ++k)
    if (t[k].type == TokenType::Atom) {
      std::string name = variable_name(t[k].text);
      if (!name.empty()) variables_.insert(std::move(name));
    }
}

bool FactChecks::is_function(const std::string& name) const {
  return sandbox::may_call(name) || functions_.count(name) > 0;
}

std::size_t FactChecks::arrow(std::size_t body) {
  for (std::size_t k = body; k < close_; k = end_of(k))
    if (t_[k].type == TokenType::Atom && t_[k].text == "=>") return k;
  // A `=>` inside a group: a '(' before it was never closed.
  for (std::size_t k = body; k < close_; ++k) {
    if (t_[k].type != TokenType::Atom || t_[k].text != "=>") continue;
    std::size_t evidence = k;
    std::size_t open =
        unclosed_by_indentation(t_, open_, k + 1, &evidence);  // `=>` itself is evidence
    if (open != k + 1) {
      report_(
          code::kUnbalanced, Severity::Error, t_[open],
          quoted_group(t_, open) + " opened on " + line_text(t_[open].line) +
              " is never closed: its `)` belongs before " + line_text(t_[evidence].line) +
              ", which is indented as its sibling" +
              (evidence == k ? ""
                             : " (`=>` on " + line_text(t_[k].line) + " is read as part of it)"));
      return std::string::npos;
    }
    open = k;
    for (std::size_t g = body; g < k; g = end_of(g))  // the condition holding it
      if (t_[g].type == TokenType::Open && match_[g] > k) open = g;
    report_(code::kUnbalanced, Severity::Error, t_[open],
            quoted_group(t_, open) + " opened on " + line_text(t_[open].line) +
                " is never closed: `=>` on " + line_text(t_[k].line) + " is read as part of it");
    return std::string::npos;
  }
  for (std::size_t g = body; g < close_; g = end_of(g)) {
    if (t_[g].type != TokenType::Open || g + 1 >= match_[g] || t_[g + 1].type != TokenType::Atom)
      continue;
    const std::string& head = t_[g + 1].text;
    if (find_template(head) || contains(kConditionKeywords, head) || !is_function(head)) continue;
    report_(code::kMissingArrow, Severity::Error, t_[g],
            "this rule has no `=>`: " + quoted_group(t_, g) + " on " + line_text(t_[g].line) +
                " is an action, so `=>` belongs before it");
    return std::string::npos;
  }
  report_(code::kMissingArrow, Severity::Error, t_[close_],
          "this rule has no `=>` between its conditions and its actions (a rule without actions "
          "still needs it)");
  return std::string::npos;
}

void FactChecks::pattern(std::size_t open) {
  const Token& head = t_[open + 1];
  const std::string& name = head.text;
  if (name == "initial-fact" || name == "object") return;
  const TemplateSchema* tmpl = find_template(name);
  if (!tmpl) {
    if (is_function(name)) {
      report_(code::kUnknownTemplate, Severity::Error, head,
              "`" + name +
                  "` is a function, not a template: a condition that calls a function is written "
                  "`(test (" +
                  name + " …))`");
      return;
    }
    std::vector<std::string> names = template_names();
    std::string hint = suggest_(name, [&] {
      auto all = names;
      all.insert(all.end(), kConditionKeywords.begin(), kConditionKeywords.end());
      return all;
    }());
    report_(
        code::kUnknownTemplate, Severity::Error, head,
        "unknown template `" + name.substr(0, 60) + "`" + hint +
            (hint.empty() ? " (patterns match the engine's facts: " + name_list(names) + ")" : ""));
    return;
  }
  slot_groups(open, *tmpl, true);
}

void FactChecks::asserted(std::size_t open) {
  const TemplateSchema* tmpl = find_template(t_[open + 1].text);
  if (tmpl) slot_groups(open, *tmpl, false);
}

void FactChecks::slot_groups(std::size_t open, const TemplateSchema& tmpl, bool in_pattern) {
  for (std::size_t k = open + 2; k < match_[open]; k = end_of(k)) {
    if (t_[k].type != TokenType::Open) {
      const std::string example =
          "(" + tmpl.name + " (" + tmpl.slots[0].name + (in_pattern ? " ?x))" : " ?id) …)");
      report_(code::kParse, Severity::Error, t_[k],
              (in_pattern ? "a pattern on `" : "an asserted `") + tmpl.name +
                  "` names each slot, as in `" + example + "`: `" + fact_shown(t_[k]) +
                  "` is not in a slot");
      return;
    }
    slot_group(open, k, tmpl, in_pattern);
  }
}

void FactChecks::slot_group(std::size_t owner, std::size_t group, const TemplateSchema& tmpl,
                            bool in_pattern) {
  const std::size_t close = match_[group];
  if (group + 1 == close || t_[group + 1].type != TokenType::Atom) {
    report_(code::kParse, Severity::Error, t_[group],
            "expected a slot name of `" + tmpl.name + "` after this `(`");
    return;
  }
  const Token& name = t_[group + 1];
  const SlotSchema* slot = tmpl.slot(name.text);
  if (!slot) {
    // A pattern or a condition read as a slot: the `)` of the pattern holding it is missing.
    if (in_pattern && (find_template(name.text) || contains(kConditionKeywords, name.text))) {
      report_(code::kUnbalanced, Severity::Error, t_[owner],
              quoted_group(t_, owner) + " opened on " + line_text(t_[owner].line) +
                  " is not closed before " + quoted_group(t_, group) + " on " +
                  line_text(name.line) +
                  ", which is read as one of its slots: is its `)` missing?");
      return;
    }
    const std::vector<std::string> names = tmpl.slot_names();
    report_(code::kUnknownSlot, Severity::Error, name,
            "slot `" + name.text.substr(0, 60) + "` is not a slot of `" + tmpl.name + "`" +
                suggest_(name.text, names) + " (its slots: " + name_list(names) + ")");
    return;
  }
  if (in_pattern)
    constraint(group + 2, close, tmpl, *slot);
  else
    values(group + 2, close, tmpl, *slot);
}

// A pattern slot's constraint: fields (one in a slot, any number in a multislot), each terms
// joined by & and |, a term a constant, a variable, ~term, or :(call) / =(call).
void FactChecks::constraint(std::size_t from, std::size_t to, const TemplateSchema& tmpl,
                            const SlotSchema& slot) {
  bool expect_term = true, negated = false, reported = false;
  std::size_t previous = to;  // the last term's first token
  for (std::size_t k = from; k < to;) {
    const Token& tok = t_[k];
    const bool connective = tok.type == TokenType::Atom && (tok.text == "&" || tok.text == "|");
    if (tok.type == TokenType::Open) {  // a call without `:` or `=` before it
      if (!reported)
        report_(code::kParse, Severity::Error, tok,
                "a call in a pattern's slot needs `:` before it to test the value (`?x&:(" +
                    (t_[k + 1].type == TokenType::Atom ? t_[k + 1].text.substr(0, 40)
                                                       : std::string("…")) +
                    " …)`) or `=` to compute it (`=(…)`)");
      reported = true;
      k = match_[k] + 1;
      expect_term = false;
      continue;
    }
    if (!expect_term) {
      if (connective) {
        expect_term = true;
        ++k;
        continue;
      }
      if (!slot.multislot && !reported) {  // a second field in a one-value slot
        reported = true;
        const Token& first = t_[previous];
        report_(code::kSlotValue, Severity::Error, tok,
                "slot `" + slot.name + "` of `" + tmpl.name +
                    "` holds one value, but this pattern gives it more (`" + fact_shown(first) +
                    "`, then `" + fact_shown(tok) + "`): to accept either, write `" +
                    fact_shown(first) + "|" + fact_shown(tok) + "`");
      }
      expect_term = true;
    }
    if (tok.type == TokenType::Atom && tok.text == "~") {
      negated = true;
      ++k;
      continue;
    }
    if (connective) {  // a connective with no term before it: CLIPS reports it
      ++k;
      continue;
    }
    previous = k;
    if (tok.type == TokenType::Atom && (tok.text == ":" || tok.text == "=") && k + 1 < to &&
        t_[k + 1].type == TokenType::Open) {
      k = match_[k + 1] + 1;
    } else {
      if (tok.type == TokenType::String || !is_variable(tok.text))
        constant(tok, negated, tmpl, slot, true);
      ++k;
    }
    expect_term = false;
    negated = false;
  }
}

// An asserted slot's values: expressions, one in a slot.
void FactChecks::values(std::size_t from, std::size_t to, const TemplateSchema& tmpl,
                        const SlotSchema& slot) {
  std::vector<std::size_t> items;
  for (std::size_t k = from; k < to; k = end_of(k)) items.push_back(k);
  if (!slot.multislot && items.size() > 1) {
    const bool words = std::all_of(items.begin(), items.end(), [&](std::size_t k) {
      return t_[k].type == TokenType::Atom && !is_variable(t_[k].text);
    });
    std::string message = "slot `" + slot.name + "` of `" + tmpl.name +
                          "` holds one value, but this gives it " + std::to_string(items.size());
    if (words && contains(slot.types, "STRING")) {
      std::string text;
      for (std::size_t k : items) text += (text.empty() ? "" : " ") + t_[k].text;
      message += ": to write text, quote it: `(" + slot.name + " \"" + text.substr(0, 60) + "\")`";
    }
    report_(code::kSlotValue, Severity::Error, t_[items[1]], message);
    return;
  }
  for (std::size_t k : items)
    if (t_[k].type == TokenType::String ||
        (t_[k].type == TokenType::Atom && !is_variable(t_[k].text)))
      constant(t_[k], false, tmpl, slot, false);
}

void FactChecks::constant(const Token& value, bool negated, const TemplateSchema& tmpl,
                          const SlotSchema& slot, bool in_pattern) {
  const std::string type = constant_type(value.text, value.type == TokenType::String);
  if (!slot.types.empty() && !contains(slot.types, type)) {
    std::string message =
        "slot `" + slot.name + "` of `" + tmpl.name + "` holds " + type_words(slot.types);
    if (type == "SYMBOL" && contains(slot.types, "STRING")) {
      message += ": write `\"" + value.text.substr(0, 60) + "\"`";
      if (variables_.count(value.text)) message += ", or `?" + value.text + "` for the variable";
    } else if (type == "STRING" && contains(slot.types, "SYMBOL") &&
               constant_type(value.text, false) == "SYMBOL" && !value.text.empty() &&
               value.text.find_first_of(" \t\n\"()&|~;<") == std::string::npos) {
      message += ": write `" + value.text + "` without quotes";
    } else {
      message += ", not `" + fact_shown(value) + "`";
    }
    report_(code::kSlotValue, Severity::Error, value, message);
    return;
  }
  if (type == "SYMBOL" && !slot.allowed_symbols.empty() &&
      !contains(slot.allowed_symbols, value.text)) {
    const std::string hint = suggest_(value.text, slot.allowed_symbols);
    if (tmpl.name == "decision" && slot.name == "outcome")
      report_(code::kUnknownOutcome, Severity::Error, value,
              "`" + value.text.substr(0, 60) + "` is not an outcome" + hint +
                  " (outcomes: " + name_list(slot.allowed_symbols) + ")");
    else
      report_(code::kSlotValue, Severity::Error, value,
              "`" + value.text.substr(0, 60) + "` is not a value of slot `" + slot.name + "` of `" +
                  tmpl.name + "`" + hint + " (its values: " + name_list(slot.allowed_symbols) +
                  ")");
    return;
  }
  if (!in_pattern) return;
  const std::vector<std::string>* known = known_values(tmpl.name, slot.name);
  if (known && type == "SYMBOL" && !contains(*known, value.text)) {
    report_(code::kDeadPattern, Severity::Warning, value,
            "no proposal has " + slot.name + " `" + value.text.substr(0, 60) + "`, so " +
                (negated ? "`~" + value.text.substr(0, 60) + "` holds for every proposal"
                         : "this pattern never matches") +
                suggest_(value.text, *known) + " (" + slot.name + "s Warden knows: " +
                name_list(*known) + "; an actuator of your own adds its name)");
    return;
  }
  // url facts hold the scheme and host lowercased (engine/fact_codec.cpp).
  if (type == "STRING" && tmpl.name == "url" && (slot.name == "host" || slot.name == "scheme") &&
      std::any_of(value.text.begin(), value.text.end(),
                  [](char c) { return c >= 'A' && c <= 'Z'; })) {
    std::string lower = value.text.substr(0, 60);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
      return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
    });
    report_(code::kDeadPattern, Severity::Warning, value,
            "a url's " + slot.name + " is lowercase, so `" + fact_shown(value) + "` " +
                (negated ? "is never there and `~` excludes nothing" : "never matches") +
                ": write `\"" + lower + "\"`");
  }
}

void FactChecks::lhs_variables(std::size_t from, std::size_t to, std::set<std::string>* bound,
                               std::vector<std::pair<std::string, std::size_t>>* locals) const {
  for (std::size_t k = from; k < to; k = end_of(k)) {
    if (t_[k].type == TokenType::Atom) {  // ?f of ?f <- (pattern)
      std::string name = variable_name(t_[k].text);
      if (!name.empty()) bound->insert(std::move(name));
      continue;
    }
    if (t_[k].type != TokenType::Open || k + 1 >= match_[k]) continue;
    const std::string& head = t_[k + 1].type == TokenType::Atom ? t_[k + 1].text : std::string();
    if (head == "and" || head == "or" || head == "logical") {
      lhs_variables(k + 2, match_[k], bound, locals);
    } else if (head != "test" && head != "declare") {
      const bool local = head == "not" || head == "exists" || head == "forall";
      for (std::size_t v = k; v < match_[k]; ++v) {
        if (t_[v].type != TokenType::Atom) continue;
        std::string name = variable_name(t_[v].text);
        if (name.empty()) continue;
        if (local)
          locals->emplace_back(std::move(name), k);
        else
          bound->insert(std::move(name));
      }
    }
  }
}

void FactChecks::variables(std::size_t body, std::size_t arrow) {
  std::set<std::string> bound;
  std::vector<std::pair<std::string, std::size_t>> locals;
  lhs_variables(body, arrow, &bound, &locals);
  // What the actions bind themselves, wherever (CLIPS refuses a use before the bind).
  for (std::size_t k = arrow + 1; k + 2 < close_; ++k) {
    if (t_[k].type != TokenType::Open || t_[k + 1].type != TokenType::Atom) continue;
    const std::string& head = t_[k + 1].text;
    std::size_t var = std::string::npos;
    if (head == "bind" || head == "foreach")
      var = k + 2;
    else if ((head == "progn$" || head == "loop-for-count") && t_[k + 2].type == TokenType::Open)
      var = k + 3;
    if (var < close_ && t_[var].type == TokenType::Atom) {
      std::string name = variable_name(t_[var].text);
      if (name.empty()) continue;
      if (head != "bind" && head != "loop-for-count")
        bound.insert(name + "-index");  // the position, bound too
      bound.insert(std::move(name));
    }
  }
  std::set<std::string> reported;
  std::vector<std::string> names;  // ?x for each bound variable, when one is missing
  for (std::size_t k = arrow + 1; k < close_; ++k) {
    if (t_[k].type != TokenType::Atom) continue;
    const std::string name = variable_name(t_[k].text);
    if (name.empty() || bound.count(name) || !reported.insert(name).second) continue;
    if (names.empty())
      for (const auto& b : bound) names.push_back("?" + b);
    std::string message = "`?" + name.substr(0, 60) +
                          "` is used in the actions but never bound in the conditions" +
                          suggest_("?" + name, names);
    for (const auto& [local, ce] : locals)
      if (local == name) {
        message += " (it is bound only inside " + quoted_group(t_, ce) + " on " +
                   line_text(t_[ce].line) + ", whose variables the actions cannot see)";
        break;
      }
    report_(code::kUnboundVariable, Severity::Error, t_[k], message);
  }
}

}  // namespace warden
