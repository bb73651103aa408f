#include "engine/rule_inputs.h"

#include <memory>
#include <string_view>

#include "engine/data_files.h"

namespace warden {
namespace {

using Values = RuleInputs::Values;

// A CLIPS source read as nested lists of atoms, comments dropped. A string is kept as an
// atom starting with '"' followed by its bytes (escapes resolved), so it is never taken for
// a symbol or a function name.
struct Node {
  bool list = false;
  std::string atom;  // when !list
  std::vector<std::unique_ptr<Node>> items;
  bool is_atom(std::string_view a) const { return !list && atom == a; }
  bool is_string() const { return !list && !atom.empty() && atom[0] == '"'; }
  const std::string* head() const {
    return list && !items.empty() && !items[0]->list ? &items[0]->atom : nullptr;
  }
};

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

void parse_source(std::string_view text, Node* root) {
  std::vector<Node*> stack{root};
  std::size_t i = 0;
  auto add_atom = [&](std::string atom) {
    auto n = std::make_unique<Node>();
    n->atom = std::move(atom);
    stack.back()->items.push_back(std::move(n));
  };
  while (i < text.size()) {
    char c = text[i];
    if (is_space(c)) {
      ++i;
    } else if (c == ';') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      std::string s = "\"";
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        s += text[i++];
      }
      ++i;
      add_atom(std::move(s));
    } else if (c == '(') {
      ++i;
      auto n = std::make_unique<Node>();
      n->list = true;
      Node* raw = n.get();
      stack.back()->items.push_back(std::move(n));
      stack.push_back(raw);
    } else if (c == ')') {
      ++i;
      if (stack.size() > 1) stack.pop_back();  // an unbalanced file does not compile anyway
    } else {
      std::size_t start = i;
      while (i < text.size() && !is_space(text[i]) && text[i] != '(' && text[i] != ')' &&
             text[i] != '"' && text[i] != ';')
        ++i;
      add_atom(std::string(text.substr(start, i - start)));
    }
  }
}

bool input_ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Functions that read facts or time outside patterns, or build code. The sandbox refuses
// every one of them; the scan refuses to trust a rule set that names them anyway.
bool reads_outside_patterns(std::string_view name) {
  static const char* const names[] = {
      "fact-slot-value",
      "fact-slot-names",
      "fact-relation",
      "fact-index",
      "fact-existp",
      "find-fact",
      "find-all-facts",
      "do-for-fact",
      "do-for-all-facts",
      "delayed-do-for-all-facts",
      "any-factp",
      "facts",
      "ppfact",
      "get-fact-list",
      "save-facts",
      "fact-set-query",
      "funcall",
      "eval",
      "build",
      "modify",
      "duplicate",
      "retract",
      "assert-string",
      "gensym",
      "gensym*",
      "random",
      "time",
      "local-time",
      "gm-time",
      "systime",
  };
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

bool history_symbol_slot(std::string_view slot) {
  return slot == "kind" || slot == "object" || slot == "class" || slot == "in-workspace";
}
bool effect_symbol_slot(std::string_view slot) {
  return history_symbol_slot(slot) || slot == "dynamic";
}
bool effect_string_slot(std::string_view slot) {
  return slot == "target" || slot == "program" || slot == "subcommand" || slot == "via";
}

// `?name`: a variable with no constraint attached.
bool plain_variable(std::string_view s) {
  for (std::size_t i = 1; i < s.size(); ++i)
    if (s[i] == '&' || s[i] == '|' || s[i] == ':' || s[i] == '~' || s[i] == '=' || s[i] == '?' ||
        s[i] == '$')
      return false;
  return true;
}

bool is_constant_symbol(std::string_view s) {
  if (s.empty() || s[0] == '"') return false;
  for (char c : s)
    if (c == '?' || c == '$' || c == '~' || c == '&' || c == ':' || c == '=' || c == '<' ||
        c == '|')
      return false;
  return true;
}

// `write`, `credential|secrets-config`: the set of constants; false for anything else.
bool symbol_constants(const std::string& value, Values* out) {
  std::size_t at = 0;
  while (true) {
    std::size_t bar = value.find('|', at);
    std::string part = value.substr(at, bar == std::string::npos ? std::string::npos : bar - at);
    if (!is_constant_symbol(part)) return false;
    out->insert(part);
    if (bar == std::string::npos) return true;
    at = bar + 1;
  }
}

// A slot's constraint when it only admits constants: `write`, `?k&read|write`,
// `"tar"|"unzip"`, `?p&"tar"|"unzip"` (strings only for string slots, symbols only for
// symbol slots). False for anything else: then the slot constrains nothing here.
bool constant_set(const Node& slot, bool symbols, bool strings, Values* out) {
  std::size_t k = 1;
  if (k >= slot.items.size()) return false;
  std::string first = slot.items[k]->list ? std::string() : slot.items[k]->atom;
  // A leading binding `?v&` (possibly glued to the first constant when it is a symbol).
  if (first.size() > 1 && first[0] == '?') {
    std::size_t amp = first.find('&');
    if (amp == std::string::npos || !plain_variable(first.substr(0, amp))) return false;
    first = first.substr(amp + 1);
    if (first.empty()) {
      ++k;
    } else {
      if (slot.items.size() != 2 || !symbols) return false;
      return symbol_constants(first, out);
    }
  } else if (slot.items.size() == 2 && symbols && !slot.items[1]->list &&
             !slot.items[1]->is_string()) {
    return symbol_constants(first, out);
  }
  if (!strings) return false;
  // "a" | "b" | …
  bool expect_string = true;
  for (; k < slot.items.size(); ++k) {
    const Node& item = *slot.items[k];
    if (item.list) return false;
    if (expect_string) {
      if (!item.is_string()) return false;
      out->insert(item.atom.substr(1));
    } else if (item.atom != "|") {
      return false;
    }
    expect_string = !expect_string;
  }
  return !expect_string && !out->empty();
}

void collect_variables(const Node& n, std::set<std::string>* vars) {
  if (!n.list) {
    // ?x, ?x&…, $?x: the variable names in an atom
    const std::string& a = n.atom;
    if (a.empty() || a[0] == '"') return;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] != '?') continue;
      std::size_t j = i + 1;
      while (j < a.size() && a[j] != '&' && a[j] != '|' && a[j] != ':' && a[j] != '~' &&
             a[j] != '=')
        ++j;
      if (j > i + 1) vars->insert(a.substr(i + 1, j - i - 1));
      i = j;
    }
    return;
  }
  for (const auto& item : n.items) collect_variables(*item, vars);
}

// Every function called in a list (its head and its nested lists' heads).
void collect_calls(const Node& n, std::set<std::string>* calls) {
  if (!n.list) return;
  if (const std::string* head = n.head()) calls->insert(*head);
  for (const auto& item : n.items) collect_calls(*item, calls);
}

// Functions that return a value for arguments of any type, never an error: a test made of
// them alone, run on a history fact no pattern matches, changes nothing.
bool total_function(std::string_view name) {
  static const char* const names[] = {"eq",       "neq",      "and",     "or",
                                      "not",      "str-cat",  "sym-cat", "workspace-root",
                                      "home-dir", "stringp",  "symbolp", "lexemep",
                                      "numberp",  "integerp", "floatp",  "multifieldp"};
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

class Scanner {
 public:
  explicit Scanner(RuleInputs* out) : out_(out) {}

  void all(const std::string& why) {
    if (!out_->all_history) out_->why_all_history = why;
    out_->uses_session = true;
    out_->uses_agent = true;
    out_->all_history = true;
    out_->uses_history_age = true;
    out_->uses_history_decision = true;
  }

  void top(const Node& n) {
    const std::string* head = n.head();
    if (head && *head == "defrule") {
      rule(n);
    } else {
      walk(n, nullptr);
    }
  }

 private:
  // A defrule: name, optional comment and declare, then CEs up to =>.
  void rule(const Node& n) {
    std::vector<RuleInputs::Filter> guards;
    guard_vars_.clear();
    bool lhs = true;
    for (std::size_t i = 2; i < n.items.size(); ++i) {
      const Node& item = *n.items[i];
      if (item.is_atom("=>")) {
        lhs = false;
        continue;
      }
      if (lhs && item.list) {
        const std::string* head = item.head();
        if (head && *head == "effect") {
          walk(item, &guards);
          guards.push_back(effect_filter(item));
          // Plain variables in its string slots, first binding kept.
          for (std::size_t k = 1; k < item.items.size(); ++k) {
            const Node& slot = *item.items[k];
            const std::string* name = slot.head();
            if (!name || !effect_string_slot(*name) || slot.items.size() != 2 ||
                slot.items[1]->list)
              continue;
            const std::string& v = slot.items[1]->atom;
            if (v.size() > 1 && v[0] == '?' && plain_variable(v) && !guard_vars_.count(v))
              guard_vars_[v] = {guards.size() - 1, *name};
          }
          continue;
        }
      }
      walk(item, lhs ? &guards : nullptr);
    }
  }

  RuleInputs::Filter effect_filter(const Node& n) {
    RuleInputs::Filter f;
    for (std::size_t i = 1; i < n.items.size(); ++i) {
      const Node& slot = *n.items[i];
      const std::string* name = slot.head();
      if (!name || slot.items.size() != 2 || slot.items[1]->list) continue;
      const std::string& value = slot.items[1]->atom;
      Values allowed;
      if (effect_symbol_slot(*name) && symbol_constants(value, &allowed)) {
        f.slots[*name] = std::move(allowed);
      } else if (effect_string_slot(*name) && slot.items[1]->is_string()) {
        f.slots[*name] = {value.substr(1)};
      }
    }
    return f;
  }

  void walk(const Node& n, const std::vector<RuleInputs::Filter>* guards) {
    if (!n.list) {
      const std::string& a = n.atom;
      if (n.is_string()) {
        if (a.find("context.session") != std::string::npos) out_->uses_session = true;
        if (a.find("context.agent") != std::string::npos) out_->uses_agent = true;
        return;
      }
      if (input_ends_with(a, ":session")) out_->uses_session = true;
      if (input_ends_with(a, ":agent")) out_->uses_agent = true;
      if (a == "<-") all("a rule binds a fact address (<-)");
      if (input_ends_with(a, ":age")) out_->uses_history_age = true;
      if (input_ends_with(a, ":decision")) out_->uses_history_decision = true;
      if (reads_outside_patterns(a)) {
        all("the rules name " + a);
        out_->uses_clock = true;
        out_->uses_session = true;
        out_->uses_agent = true;
      }
      return;
    }
    if (const std::string* head = n.head()) {
      // The decision's clock: (now), and the local time functions, which read it when not
      // given a time.
      if (*head == "now" || *head == "local-weekday" || *head == "local-hour" ||
          *head == "local-minute" || *head == "local-date")
        out_->uses_clock = true;
      if (*head == "session") out_->uses_session = true;
      if (*head == "agent") out_->uses_agent = true;
      if (*head == "history") history_pattern(n, guards);
    }
    for (const auto& item : n.items) walk(*item, guards);
  }

  void history_pattern(const Node& n, const std::vector<RuleInputs::Filter>* guards) {
    out_->uses_history = true;
    if (!guards) {
      all("a history list outside a rule's conditions");
      return;
    }
    RuleInputs::HistoryPattern p;
    p.guards = *guards;
    std::set<std::string> own;  // variables this pattern binds
    for (std::size_t i = 1; i < n.items.size(); ++i) {
      const Node& slot = *n.items[i];
      if (!slot.head()) {
        all("a history pattern the scan cannot read");
        return;
      }
      for (std::size_t k = 1; k < slot.items.size(); ++k) {
        const Node& v = *slot.items[k];
        if (v.list || v.is_string()) continue;
        const std::string& a = v.atom;
        std::size_t q = a.find('?');
        if (q == std::string::npos) continue;
        std::size_t end = q + 1;
        while (end < a.size() && a[end] != '&' && a[end] != '|' && a[end] != ':' && a[end] != '~' &&
               a[end] != '=')
          ++end;
        own.insert(a.substr(q + 1, end - q - 1));
      }
    }
    for (std::size_t i = 1; i < n.items.size(); ++i) {
      const Node& slot = *n.items[i];
      const std::string& name = *slot.head();
      if (name == "age") out_->uses_history_age = true;
      if (name == "decision") out_->uses_history_decision = true;
      // A predicate or return-value constraint on the pattern's own variables only is an
      // alpha test, which may run on every history fact: it must be unable to fail.
      for (std::size_t k = 1; k < slot.items.size(); ++k) {
        if (!slot.items[k]->list) continue;
        std::set<std::string> vars;
        collect_variables(*slot.items[k], &vars);
        bool joins = false;
        for (const auto& v : vars)
          joins |= !v.empty() && v[0] != '*' && !own.count(v);  // ?*global* is no join
        if (joins) continue;
        std::set<std::string> calls;
        collect_calls(*slot.items[k], &calls);
        for (const auto& c : calls) {
          if (!total_function(c)) {
            all("a history pattern tests its own slots with " + c +
                ", which may fail on any history fact");
            return;
          }
        }
      }
      Values allowed;
      if (constant_set(slot, history_symbol_slot(name), name == "target" || name == "program",
                       &allowed))
        p.filter.slots[name] = std::move(allowed);
    }
    bool has_function = false;
    for (std::size_t i = 1; i < n.items.size(); ++i)
      for (std::size_t k = 1; k < n.items[i]->items.size(); ++k)
        has_function |= n.items[i]->items[k]->list;
    for (std::size_t i = 1; i < n.items.size() && !has_function; ++i) {
      const Node& slot = *n.items[i];
      const std::string& name = *slot.head();
      if ((name != "target" && name != "program") || slot.items.size() != 2 || slot.items[1]->list)
        continue;
      auto g = guard_vars_.find(slot.items[1]->atom);
      if (g == guard_vars_.end() || g->second.first >= p.guards.size()) continue;
      p.joins.push_back({name, g->second.first, g->second.second});
    }
    if (out_->history_patterns.size() == 64) {
      all("more than 64 history patterns");
      return;
    }
    out_->history_patterns.push_back(std::move(p));
  }

  RuleInputs* out_;
  std::map<std::string, std::pair<std::size_t, std::string>>
      guard_vars_;  // ?v → (guard, effect slot)
};

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (s == n) return true;
  return false;
}

// The value a slot of a history fact (history true) or of the effect fact (false) built from
// `e` holds, as the engine sets it (engine/history_facts.cpp, engine/effect_facts.cpp).
std::string_view input_slot_value(const EffectRecord& e, std::string_view slot, bool history) {
  if (!history) {
    if (slot == "kind") return e.kind;
    if (slot == "object") return e.object;
    if (slot == "class") return e.path_class;
  }
  if (slot == "kind")
    return one_of(e.kind, {"exec", "write", "delete", "read", "network", "env-dump", "privilege",
                           "unknown"})
               ? std::string_view(e.kind)
               : std::string_view("unknown");
  if (slot == "object")
    return one_of(e.object, {"path", "host", "program", "code", "none"})
               ? std::string_view(e.object)
               : std::string_view("none");
  if (slot == "class") {
    bool ok = !e.path_class.empty() && e.path_class[0] >= 'a' && e.path_class[0] <= 'z';
    for (char ch : e.path_class)
      ok &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
    return ok ? std::string_view(e.path_class) : std::string_view("none");
  }
  if (slot == "in-workspace") return e.in_workspace ? "TRUE" : "FALSE";
  if (slot == "dynamic") return e.dynamic ? "TRUE" : "FALSE";
  if (slot == "target") return e.target;
  if (slot == "program") return e.program;
  if (slot == "subcommand") return e.subcommand;
  if (slot == "via") return e.via;
  return {};
}

bool input_passes(const RuleInputs::Filter& f, const EffectRecord& e, bool history) {
  for (const auto& [slot, allowed] : f.slots)
    if (!allowed.count(input_slot_value(e, slot, history))) return false;
  return true;
}

}  // namespace

std::uint64_t RuleInputs::history_mask(const EffectRecord& effect) const {
  if (all_history) return ~std::uint64_t(0);
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < history_patterns.size(); ++i)
    if (input_passes(history_patterns[i].filter, effect, true)) mask |= std::uint64_t(1) << i;
  return mask;
}

std::uint64_t RuleInputs::active_mask(const std::vector<EffectRecord>& effects) const {
  if (all_history) return ~std::uint64_t(0);
  std::uint64_t mask = 0;
  for (std::size_t i = 0; i < history_patterns.size(); ++i) {
    bool active = true;
    for (const auto& guard : history_patterns[i].guards) {
      bool any = false;
      for (const auto& e : effects) any = any || input_passes(guard, e, false);
      if (!any) {
        active = false;
        break;
      }
    }
    if (active) mask |= std::uint64_t(1) << i;
  }
  return mask;
}

RuleInputs::Reach RuleInputs::reach(const std::vector<EffectRecord>& effects) const {
  Reach r;
  r.active = active_mask(effects);
  if (all_history) return r;
  r.values.resize(history_patterns.size());
  for (std::size_t i = 0; i < history_patterns.size(); ++i) {
    const HistoryPattern& p = history_patterns[i];
    if (!(r.active >> i & 1) || p.joins.empty()) continue;
    r.joined |= std::uint64_t(1) << i;
    for (const Join& j : p.joins) {
      Values values;
      for (const auto& e : effects)
        if (input_passes(p.guards[j.guard], e, false))
          values.insert(std::string(input_slot_value(e, j.effect_slot, false)));
      r.values[i].emplace_back(j.slot, std::move(values));
    }
  }
  return r;
}

bool RuleInputs::reaches(const Reach& r, std::uint64_t mask, const EffectRecord& effect) const {
  std::uint64_t m = mask & r.active;
  if (!m) return false;
  if (m & ~r.joined) return true;  // an active pattern without joins
  for (std::size_t i = 0; i < history_patterns.size(); ++i) {
    if (!(m >> i & 1)) continue;
    bool all = true;
    for (const auto& [slot, values] : r.values[i])
      all = all && values.count(input_slot_value(effect, slot, true));
    if (all) return true;
  }
  return false;
}

RuleInputs scan_rule_inputs(const RuleSources& sources) {
  RuleInputs out;
  Scanner scanner(&out);
  for (const auto& s : sources) {
    if (input_ends_with(s.path, ".toml") || is_data_file(s.path)) continue;
    Node root;
    root.list = true;
    parse_source(s.text, &root);
    for (const auto& item : root.items) scanner.top(*item);
  }
  if (out.all_history) out.history_patterns.clear();
  return out;
}

}  // namespace warden
