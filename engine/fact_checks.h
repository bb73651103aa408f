// FactChecks: a construct's patterns, asserted facts and variables judged against the
// engine's templates (engine/template_schema.h), each mistake reported at its token in the
// rule author's words: a missing `=>`, an unknown template or slot, a constant its slot cannot
// hold, an outcome that is none, a variable the actions use but the conditions never bind,
// and (a warning) a constant no proposal can have. Part of the rule checker's "check" stage;
// one instance per construct, on one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/diagnostic.h"
#include "engine/rule_tokens.h"
#include "engine/template_schema.h"

namespace warden {

class FactChecks {
 public:
  using Report = std::function<void(const char* code, Severity severity, const Token& at,
                                    std::string message)>;
  // " — did you mean `x`?" for a misspelt word among `names`, or "" (the caller budgets it).
  using Suggest =
      std::function<std::string(std::string_view word, const std::vector<std::string>& names)>;

  // The construct [open, close] of tokens `t`; `match` holds the ')' closing each '(' in it.
  // `functions` are the rule set's deffunctions.
  FactChecks(const std::vector<Token>& t, const std::vector<std::size_t>& match, std::size_t open,
             std::size_t close, const std::set<std::string, std::less<>>& functions, Report report,
             Suggest suggest);

  // The index of the defrule's top-level `=>` (its conditions start at `body`), or npos after
  // reporting why there is none: E_MISSING_ARROW, or E_UNBALANCED when a `(` left open
  // swallowed it.
  std::size_t arrow(std::size_t body);
  // A pattern conditional element `(template (slot constraint…)…)` at `open`.
  void pattern(std::size_t open);
  // A fact `(template (slot value…)…)` inside an assert, at `open`.
  void asserted(std::size_t open);
  // Every variable the actions [arrow, close) use must be bound by the conditions [body, arrow)
  // outside not/exists/forall, or on the right-hand side (bind, foreach, progn$, loop-for-count).
  void variables(std::size_t body, std::size_t arrow);

 private:
  bool is_function(const std::string& name) const;
  std::size_t end_of(std::size_t k) const {
    return t_[k].type == TokenType::Open ? match_[k] + 1 : k + 1;
  }
  // Each slot group of the pattern or asserted fact at `open`; a token outside one is E_PARSE.
  void slot_groups(std::size_t open, const TemplateSchema& tmpl, bool in_pattern);
  void slot_group(std::size_t owner, std::size_t group, const TemplateSchema& tmpl,
                  bool in_pattern);
  void constraint(std::size_t from, std::size_t to, const TemplateSchema& tmpl,
                  const SlotSchema& slot);
  void values(std::size_t from, std::size_t to, const TemplateSchema& tmpl, const SlotSchema& slot);
  void constant(const Token& value, bool negated, const TemplateSchema& tmpl,
                const SlotSchema& slot, bool in_pattern);
  void lhs_variables(std::size_t from, std::size_t to, std::set<std::string>* bound,
                     std::vector<std::pair<std::string, std::size_t>>* locals) const;

  const std::vector<Token>& t_;
  const std::vector<std::size_t>& match_;
  std::size_t open_, close_;
  const std::set<std::string, std::less<>>& functions_;
  Report report_;
  Suggest suggest_;
  std::set<std::string> variables_;  // every variable name the construct mentions (?x → "x")
};

}  // namespace warden
