#include "engine/rule_inputs.h"

#include <memory>
#include <string_view>

namespace warden {
namespace {

// A CLIPS source read as nested lists of atoms: strings and comments are dropped (a string
// is kept as an atom "\"" so a slot holding one is known to hold a string, never a symbol).
struct Node {
  bool list = false;
  std::string atom;  // when !list
  std::vector<std::unique_ptr<Node>> items;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void parse_source(std::string_view text, Node* root) {
  std::vector<Node*> stack{root};
  std::size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    if (is_space(c)) {
      ++i;
    } else if (c == ';') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') i += text[i] == '\\' ? 2 : 1;
      ++i;
      auto n = std::make_unique<Node>();
      n->atom = "\"";
      stack.back()->items.push_back(std::move(n));
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
      while (i < text.size() && !is_space(text[i]) && text[i] != '(' && text[i] != ')' && text[i] != '"' &&
             text[i] != ';')
        ++i;
      auto n = std::make_unique<Node>();
      n->atom.assign(text.substr(start, i - start));
      stack.back()->items.push_back(std::move(n));
    }
  }
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Functions that read facts, or time, outside patterns. The sandbox refuses every one of
// them; the scan refuses to trust a rule set that names them anyway.
bool reads_facts_outside_patterns(std::string_view name) {
  static const char* const names[] = {
      "fact-slot-value", "fact-slot-names", "fact-relation", "fact-index", "fact-existp",
      "find-fact", "find-all-facts", "do-for-fact", "do-for-all-facts", "delayed-do-for-all-facts",
      "any-factp", "facts", "ppfact", "get-fact-list", "save-facts", "fact-set-query",
      "funcall", "eval", "build", "modify", "duplicate", "retract", "assert-string",
      "gensym", "gensym*", "random", "time", "local-time", "gm-time", "systime",
  };
  for (const char* n : names)
    if (name == n) return true;
  return false;
}

// The symbol slots of a history fact the filter may constrain, as the engine sets them.
bool filterable_slot(std::string_view slot) {
  return slot == "kind" || slot == "object" || slot == "class" || slot == "in-workspace";
}

bool is_constant_symbol(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c == '?' || c == '$' || c == '~' || c == '&' || c == ':' || c == '=' || c == '<' || c == '|') return false;
  }
  return true;
}

class Scanner {
 public:
  explicit Scanner(RuleInputs* out) : out_(out) {}

  void all(const std::string& why) {
    if (!out_->all_history) out_->why_all_history = why;
    out_->all_history = true;
    out_->uses_history_age = true;
    out_->uses_history_decision = true;
  }

  void walk(const Node& n) {
    if (!n.list) {
      const std::string& a = n.atom;
      if (a == "<-") all("a rule binds a fact address (<-)");
      if (ends_with(a, ":age")) out_->uses_history_age = true;
      if (ends_with(a, ":decision")) out_->uses_history_decision = true;
      if (reads_facts_outside_patterns(a)) {
        all("the rules name " + a);
        out_->uses_clock = true;
      }
      return;
    }
    if (!n.items.empty() && !n.items[0]->list) {
      const std::string& head = n.items[0]->atom;
      if (head == "now") out_->uses_clock = true;
      if (head == "history") history_pattern(n);
    }
    for (const auto& item : n.items) walk(*item);
  }

 private:
  void history_pattern(const Node& n) {
    out_->uses_history = true;
    RuleInputs::HistoryFilter filter;
    for (std::size_t i = 1; i < n.items.size(); ++i) {
      const Node& slot = *n.items[i];
      if (!slot.list || slot.items.empty() || slot.items[0]->list) {
        all("a history pattern the scan cannot read");
        return;
      }
      const std::string& name = slot.items[0]->atom;
      if (name == "age") out_->uses_history_age = true;
      if (name == "decision") out_->uses_history_decision = true;
      if (!filterable_slot(name) || slot.items.size() != 2 || slot.items[1]->list) continue;
      const std::string& value = slot.items[1]->atom;
      // `write` or `credential|secrets-config`: constants only; anything else constrains nothing.
      std::set<std::string> allowed;
      bool constant = true;
      std::size_t at = 0;
      while (constant) {
        std::size_t bar = value.find('|', at);
        std::string part = value.substr(at, bar == std::string::npos ? std::string::npos : bar - at);
        constant = is_constant_symbol(part) && part != "\"";
        allowed.insert(part);
        if (bar == std::string::npos) break;
        at = bar + 1;
      }
      if (constant) filter.slots[name] = std::move(allowed);
    }
    out_->history_filters.push_back(std::move(filter));
  }

  RuleInputs* out_;
};

bool one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (s == n) return true;
  return false;
}

}  // namespace

bool RuleInputs::history_relevant(const EffectRecord& e) const {
  if (all_history) return true;
  if (!uses_history) return false;
  // The values the engine gives the fact (engine/fact_codec.cpp: assert_history).
  const std::string kind =
      one_of(e.kind, {"exec", "write", "delete", "read", "network", "env-dump", "privilege", "unknown"}) ? e.kind
                                                                                                           : "unknown";
  const std::string object = one_of(e.object, {"path", "host", "program", "code", "none"}) ? e.object : "none";
  bool class_ok = !e.path_class.empty() && e.path_class[0] >= 'a' && e.path_class[0] <= 'z';
  for (char ch : e.path_class) class_ok &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
  const std::string path_class = class_ok ? e.path_class : "none";
  const std::string in_workspace = e.in_workspace ? "TRUE" : "FALSE";
  for (const auto& f : history_filters) {
    bool match = true;
    for (const auto& [slot, allowed] : f.slots) {
      const std::string& v = slot == "kind" ? kind : slot == "object" ? object : slot == "class" ? path_class : in_workspace;
      if (!allowed.count(v)) {
        match = false;
        break;
      }
    }
    if (match) return true;
  }
  return false;
}

RuleInputs scan_rule_inputs(const RuleSources& sources) {
  RuleInputs out;
  Scanner scanner(&out);
  for (const auto& s : sources) {
    if (ends_with(s.path, ".toml")) continue;
    Node root;
    root.list = true;
    parse_source(s.text, &root);
    for (const auto& item : root.items) scanner.walk(*item);
  }
  return out;
}

}  // namespace warden
