// Which remembered effects a rule set's history patterns can match (engine/history_filter.h).
#include "engine/history_filter.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "bindings/clips.h"  // last: CLIPS defines macros

namespace warden {

namespace {

// A slot's value with its type: a string, or a symbol.
struct Value {
  bool is_string = false;
  std::string_view text;
};

// The history slots the filter judges, as indexes into an entry's values; -1 for another slot
// (proposal, age: every entry has them, and patterns join or compare on them).
constexpr const char* kSlots[] = {"kind",   "object",  "class",   "in-workspace",
                                  "target", "program", "decision"};
constexpr int kSlotCount = 7;
int slot_index(std::string_view slot) {
  for (int i = 0; i < kSlotCount; ++i)
    if (slot == kSlots[i]) return i;
  return -1;
}
using EntryValues = std::array<Value, kSlotCount>;
EntryValues entry_values(const HistoryValues& v) {
  return {Value{false, v.kind},       Value{false, v.object},
          Value{false, v.path_class}, Value{false, v.in_workspace ? "TRUE" : "FALSE"},
          Value{true, v.target},      Value{true, v.program},
          Value{true, v.decision}};
}

// The value of a fact's slot at `position` in its template (-1: the template has no such slot)
// when it is a symbol or a string (CLIPS keeps the text while the fact lives); nullopt
// otherwise (no slot, a number, a multifield: not judged, the pattern may match it). What
// EnvGetFactSlot gives for the slot's name.
std::optional<Value> fact_value(void* f, int position) {
  if (position < 0) return std::nullopt;
  const struct field& v = static_cast<struct fact*>(f)->theProposition.theFields[position];
  if (v.type != SYMBOL && v.type != STRING) return std::nullopt;
  return Value{v.type == STRING, ValueToString(v.value)};
}

// Each name's position among a template's slots, -1 for a name it does not have.
std::vector<int> slot_positions(void* tmpl, const std::vector<std::string>& names) {
  std::vector<int> positions(names.size(), -1);
  int i = 0;
  for (auto* slot = static_cast<struct deftemplate*>(tmpl)->slotList; slot; slot = slot->next, ++i)
    for (std::size_t n = 0; n < names.size(); ++n)
      if (positions[n] < 0 && names[n] == ValueToString(slot->slotName)) positions[n] = i;
  return positions;
}

bool accepts(const SlotConstraint& c, const Value& v) {
  const bool listed = std::any_of(c.values.begin(), c.values.end(), [&](const SlotConstant& k) {
    return k.is_string == v.is_string && k.text == v.text;
  });
  return c.excluding ? !listed : listed;
}

// Whether fact `f` passes the constants of `p`, whose slots are at `slots` (indexes into
// `positions`, the template's positions of the names they read).
bool passes(void* f, const FactPattern& p, const std::vector<std::size_t>& slots,
            const std::vector<int>& positions) {
  for (std::size_t c = 0; c < p.slots.size(); ++c) {
    auto value = fact_value(f, positions[slots[c]]);
    if (value && !accepts(p.slots[c], *value)) return false;
  }
  return true;
}

// The values a join's other side offers; `any` when one of them cannot be judged. Views of
// strings that outlive the selection (the entries, the facts' symbols); sorted once filled.
struct JoinValues {
  bool any = false;
  std::vector<std::string_view> strings, symbols;
  void add(const std::optional<Value>& v) {
    if (!v)
      any = true;
    else
      (v->is_string ? strings : symbols).push_back(v->text);
  }
  void seal() {
    for (auto* list : {&strings, &symbols}) {
      std::sort(list->begin(), list->end());
      list->erase(std::unique(list->begin(), list->end()), list->end());
    }
  }
  bool has(const std::optional<Value>& v) const {
    if (any || !v) return true;
    const auto& list = v->is_string ? strings : symbols;
    return std::binary_search(list.begin(), list.end(), v->text);
  }
};

}  // namespace

bool SlotConstraint::accepts(const SlotConstant& value) const {
  return warden::accepts(*this, Value{value.is_string, value.text});
}

bool HistoryFilter::Test::accepts(std::string_view text, bool is_string) const {
  const auto& set = is_string ? strings : symbols;
  return (set.find(text) != set.end()) != excluding;
}

namespace {

// The kinds and objects the engine's effects have (engine/effects.h); anything else reads as
// unknown / none. By length first: this runs for every entry of every decision.
bool known_kind(std::string_view k) {
  switch (k.size()) {
    case 4:
      return k == "exec" || k == "read";
    case 5:
      return k == "write";
    case 6:
      return k == "delete";
    case 7:
      return k == "network" || k == "unknown";
    case 8:
      return k == "env-dump";
    case 9:
      return k == "privilege";
    default:
      return false;
  }
}
bool known_object(std::string_view o) {
  switch (o.size()) {
    case 4:
      return o == "path" || o == "host" || o == "code" || o == "none";
    case 7:
      return o == "program";
    default:
      return false;
  }
}

std::string_view class_value(const std::string& c) {
  bool ok = !c.empty() && c[0] >= 'a' && c[0] <= 'z';
  for (char ch : c) ok &= (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
  return ok ? std::string_view(c) : "none";
}

// One value history_values gives, by its index in kSlots.
Value entry_value(const HistoryEntry& h, int slot) {
  const EffectRecord& e = h.effect;
  switch (slot) {
    case 0:
      return {false, known_kind(e.kind) ? std::string_view(e.kind) : "unknown"};
    case 1:
      return {false, known_object(e.object) ? std::string_view(e.object) : "none"};
    case 2:
      return {false, class_value(e.path_class)};
    case 3:
      return {false, e.in_workspace ? "TRUE" : "FALSE"};
    case 4:
      return {true, e.target.c_str()};
    case 5:
      return {true, e.program.c_str()};
    default:
      return {true, h.decision_id.c_str()};
  }
}

}  // namespace

HistoryValues history_values(const HistoryEntry& h) {
  const EffectRecord& e = h.effect;
  HistoryValues v;
  v.kind = known_kind(e.kind) ? std::string_view(e.kind) : "unknown";
  v.object = known_object(e.object) ? std::string_view(e.object) : "none";
  v.path_class = class_value(e.path_class);
  v.in_workspace = e.in_workspace;
  // CLIPS interns strings as C strings: a NUL ends what the rules see.
  v.target = e.target.c_str();
  v.program = e.program.c_str();
  v.decision = h.decision_id.c_str();
  return v;
}

HistoryFilter::HistoryFilter(std::vector<HistoryPattern> patterns)
    : patterns_(std::move(patterns)) {
  auto by_template = [&](const std::string& name) -> ByTemplate& {
    for (auto& b : by_template_)
      if (b.name == name) return b;
    by_template_.push_back({});
    by_template_.back().name = name;
    return by_template_.back();
  };
  // The slots `fact` reads, then `collected` when there is one, as indexes into b.slots.
  auto slots_of = [](ByTemplate& b, const FactPattern& fact, const std::string* collected) {
    auto ref = [&b](const std::string& slot) {
      auto at = std::find(b.slots.begin(), b.slots.end(), slot);
      if (at == b.slots.end()) at = b.slots.insert(at, slot);
      return static_cast<std::size_t>(at - b.slots.begin());
    };
    std::vector<std::size_t> refs;
    for (const auto& c : fact.slots) refs.push_back(ref(c.slot));
    if (collected) refs.push_back(ref(*collected));
    return refs;
  };
  for (std::size_t p = 0; p < patterns_.size(); ++p) {
    const HistoryPattern& hp = patterns_[p];
    Compiled c;
    for (const auto& t : hp.slots) {
      const int slot = slot_index(t.slot);
      if (slot < 0) continue;
      Test test{slot, t.excluding, {}, {}};
      for (const auto& v : t.values) (v.is_string ? test.strings : test.symbols).insert(v.text);
      c.tests.push_back(std::move(test));
    }
    for (std::size_t j = 0; j < hp.joins.size(); ++j) {
      c.join_slots.push_back(slot_index(hp.joins[j].slot));
      c.other_slots.push_back(hp.joins[j].with_history ? slot_index(hp.joins[j].other_slot) : -1);
      if (hp.joins[j].with_history) continue;
      ByTemplate& b = by_template(hp.joins[j].fact.name);
      b.joins.push_back({p, j});
      b.join_slots.push_back(slots_of(b, hp.joins[j].fact, &hp.joins[j].other_slot));
    }
    for (std::size_t g = 0; g < hp.gates.size(); ++g)
      for (std::size_t a = 0; a < hp.gates[g].any_of.size(); ++a) {
        ByTemplate& b = by_template(hp.gates[g].any_of[a].name);
        b.gates.push_back({p, g, a});
        b.gate_slots.push_back(slots_of(b, hp.gates[g].any_of[a], nullptr));
      }
    compiled_.push_back(std::move(c));
  }
  // Each predicate term on a fact gets the values its facts offer, collected as joins' are.
  std::function<void(HistoryPredicate&)> number = [&](HistoryPredicate& predicate) {
    for (auto& a : predicate.args) number(a);
    for (auto& o : predicate.operands)
      for (auto& t : o.terms) {
        if (t.kind == PredicateTerm::Kind::kEntry) t.entry_slot = slot_index(t.slot);
        if (t.kind != PredicateTerm::Kind::kFact) continue;
        t.values = fact_terms_.size();
        fact_terms_.push_back(&t);
        ByTemplate& b = by_template(t.fact.name);
        b.terms.push_back(t.values);
        b.term_slots.push_back(slots_of(b, t.fact, &t.slot));
      }
  };
  for (auto& hp : patterns_)
    for (auto& predicate : hp.predicates) number(predicate);
}

struct HistoryFilter::Index {
  const std::vector<HistoryEntry>* entries = nullptr;  // what it indexes (outlives it)
  std::size_t words = 0;                               // bit words per entry
  std::vector<std::uint64_t> accepted;  // per entry, `words` words: the patterns accepting it
  std::vector<std::vector<std::uint32_t>> passing;     // per pattern: entries its constants accept
  std::vector<std::vector<JoinValues>> history_joins;  // per pattern, per join (history joins only)
  std::size_t reused = 0;                              // entries whose bits came from `previous`
};

namespace {

// Two entries the filter reads alike: every value history_values takes from them is equal.
bool same_values(const HistoryEntry& a, const HistoryEntry& b) {
  const EffectRecord &x = a.effect, &y = b.effect;
  return x.target == y.target && x.kind == y.kind && x.object == y.object &&
         x.program == y.program && x.path_class == y.path_class &&
         x.in_workspace == y.in_workspace && a.decision_id == b.decision_id;
}

std::optional<Value> entry_slot(const HistoryEntry& entry, int slot) {
  if (slot < 0) return std::nullopt;
  return entry_value(entry, slot);
}

}  // namespace

std::shared_ptr<const HistoryFilter::Index> HistoryFilter::index(
    const std::vector<HistoryEntry>& entries, const Index* previous) const {
  auto index = std::make_shared<Index>();
  const std::size_t n = patterns_.size();
  index->entries = &entries;
  index->words = (n + 63) / 64;
  index->accepted.assign(entries.size() * index->words, 0);
  // Which patterns' constants accept each entry. A session's next snapshot is its last one
  // with entries dropped (expired, capped, or repeated by a newer one) and new ones at its end,
  // so an entry is first looked for after the last one found in `previous`: found, its bits are
  // copied; not found, it and every later entry are judged anew.
  const std::vector<HistoryEntry>* before =
      previous && previous->words == index->words ? previous->entries : nullptr;
  std::size_t from = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    std::uint64_t* bits = &index->accepted[i * index->words];
    if (before) {
      std::size_t k = from;
      while (k < before->size() && !same_values((*before)[k], entries[i])) ++k;
      if (k < before->size()) {
        std::copy_n(&previous->accepted[k * index->words], index->words, bits);
        from = k + 1;
        ++index->reused;
        continue;
      }
      before = nullptr;
    }
    const EntryValues values = entry_values(history_values(entries[i]));
    for (std::size_t p = 0; p < n; ++p) {
      bool all = true;
      for (const Test& t : compiled_[p].tests) {
        const Value& x = values[static_cast<std::size_t>(t.slot)];
        if (!t.accepts(x.text, x.is_string)) {
          all = false;
          break;
        }
      }
      if (all) bits[p / 64] |= std::uint64_t{1} << (p % 64);
    }
  }
  index->passing.resize(n);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    for (std::size_t w = 0; w < index->words; ++w) {
      for (std::uint64_t bits = index->accepted[i * index->words + w]; bits; bits &= bits - 1)
        index->passing[w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))].push_back(
            static_cast<std::uint32_t>(i));
    }
  }
  index->history_joins.resize(n);
  for (std::size_t p = 0; p < n; ++p) {
    index->history_joins[p].resize(patterns_[p].joins.size());
    for (std::size_t j = 0; j < patterns_[p].joins.size(); ++j) {
      const HistoryJoin& join = patterns_[p].joins[j];
      if (!join.with_history) continue;
      JoinValues& values = index->history_joins[p][j];
      for (std::uint32_t i : index->passing[join.history])
        values.add(entry_slot(entries[i], compiled_[p].other_slots[j]));
      values.seal();
    }
  }
  return index;
}

std::size_t HistoryFilter::reused(const Index& index) { return index.reused; }

bool HistoryFilter::continues(const Index& earlier, const std::vector<HistoryEntry>& entries) {
  // How far into the earlier snapshot the first entry is looked for: as many of its oldest
  // entries as one decision's effects can drop.
  constexpr std::size_t kLook = 64;
  if (entries.empty()) return false;
  const auto& before = *earlier.entries;
  for (std::size_t k = 0; k < before.size() && k < kLook; ++k)
    if (same_values(before[k], entries.front())) return true;
  return false;
}

std::string HistoryFilter::describe(const Index& index) const {
  std::string out;
  for (std::size_t p = 0; p < patterns_.size(); ++p) {
    out += patterns_[p].rule + ":" + std::to_string(patterns_[p].line) + " accepts";
    // (appended piecewise: GCC 12 at -O3 misreads `" " + std::to_string(i)` as an
    // overlapping copy, -Wrestrict)
    for (std::uint32_t i : index.passing[p]) {
      out += ' ';
      out += std::to_string(i);
    }
    for (std::size_t j = 0; j < index.history_joins[p].size(); ++j) {
      const JoinValues& v = index.history_joins[p][j];
      if (!patterns_[p].joins[j].with_history) continue;
      out += "; join " + std::to_string(j) + (v.any ? " any" : "");
      for (auto s : v.strings) out += " \"" + std::string(s) + "\"";
      for (auto s : v.symbols) {
        out += ' ';
        out += s;
      }
    }
    out += "\n";
  }
  return out;
}

namespace {

// Whether a predicate may hold for one entry, some fact of the proposal binding its fact
// variables: false only when no binding can make it hold. Exact where the predicate reads
// only the entry, constants and the root; each comparison with one fact variable tries the
// values the facts offer; anything else may hold.
class PredicateJudge {
 public:
  PredicateJudge(const HistoryEntry& entry, std::string_view root,
                 const std::vector<JoinValues>& facts)
      : entry_(entry), root_(root), facts_(facts) {}

  bool may(const HistoryPredicate& p) {
    using Kind = HistoryPredicate::Kind;
    switch (p.kind) {
      case Kind::kAnd:
        return std::all_of(p.args.begin(), p.args.end(), [&](const auto& a) { return may(a); });
      case Kind::kOr:
        return std::any_of(p.args.begin(), p.args.end(), [&](const auto& a) { return may(a); });
      case Kind::kNot:
        return p.args.size() != 1 || !exact(p.args[0]) || !may(p.args[0]);
      case Kind::kEq:
      case Kind::kNeq:
      case Kind::kStrPrefix:
        return compare_may(p);
      case Kind::kUnknown:
        break;
    }
    return true;
  }

 private:
  using TermKind = PredicateTerm::Kind;
  const HistoryEntry& entry_;
  std::string_view root_;
  const std::vector<JoinValues>& facts_;
  std::vector<std::string> texts_;  // the operands' strings, reused
  std::vector<Value> values_;       // the operands' values, reused

  // A term whose value is known (for a fact term: once a fact's value is given).
  static bool judged(const PredicateTerm& t) {
    return t.kind != TermKind::kUnknown && (t.kind != TermKind::kEntry || t.entry_slot >= 0);
  }

  // Reads only the entry, constants and the root.
  static bool exact(const HistoryPredicate& p) {
    if (p.kind == HistoryPredicate::Kind::kUnknown) return false;
    for (const auto& a : p.args)
      if (!exact(a)) return false;
    for (const auto& o : p.operands)
      for (const auto& t : o.terms)
        if (!judged(t) || t.kind == TermKind::kFact) return false;
    return true;
  }

  Value term_value(const PredicateTerm& t, const Value* fact) const {
    switch (t.kind) {
      case TermKind::kConstant:
        return Value{t.constant.is_string, t.constant.text};
      case TermKind::kEntry:
        return entry_value(entry_, t.entry_slot);
      case TermKind::kRoot:
        return Value{true, root_};
      case TermKind::kFact:
        return fact ? *fact : Value{};
      case TermKind::kUnknown:
        break;
    }
    return Value{};
  }

  // The comparison's operands with `fact` for the one fact term: strings and symbols as CLIPS
  // compares them (a str-cat is a string of its terms' texts).
  bool holds(const HistoryPredicate& p, const Value* fact) {
    if (texts_.size() < p.operands.size()) texts_.resize(p.operands.size());
    std::vector<Value>& values = values_;
    values.assign(p.operands.size(), Value{});
    for (std::size_t i = 0; i < p.operands.size(); ++i) {
      const PredicateOperand& o = p.operands[i];
      if (!o.concatenated && o.terms.size() == 1) {
        values[i] = term_value(o.terms[0], fact);
        continue;
      }
      std::string& text = texts_[i];
      text.clear();
      for (const auto& t : o.terms) text += term_value(t, fact).text;
      values[i] = Value{true, text};
    }
    auto same = [](const Value& a, const Value& b) {
      return a.is_string == b.is_string && a.text == b.text;
    };
    switch (p.kind) {
      case HistoryPredicate::Kind::kEq:
        return std::all_of(values.begin() + 1, values.end(),
                           [&](const Value& v) { return same(values[0], v); });
      case HistoryPredicate::Kind::kNeq:
        return std::none_of(values.begin() + 1, values.end(),
                            [&](const Value& v) { return same(values[0], v); });
      case HistoryPredicate::Kind::kStrPrefix:
        return values.size() == 2 &&
               values[1].text.substr(0, values[0].text.size()) == values[0].text;
      default:
        return true;
    }
  }

  bool compare_may(const HistoryPredicate& p) {
    const bool arity = p.kind == HistoryPredicate::Kind::kStrPrefix ? p.operands.size() == 2
                                                                    : p.operands.size() >= 2;
    if (!arity) return true;
    const PredicateTerm* fact = nullptr;
    for (const auto& o : p.operands)
      for (const auto& t : o.terms) {
        if (!judged(t)) return true;
        if (t.kind != TermKind::kFact) continue;
        if (fact) return true;  // two fact terms: bound together, not judged
        fact = &t;
      }
    if (!fact) return holds(p, nullptr);
    const JoinValues& values = facts_[fact->values];
    if (values.any) return true;
    for (auto s : values.strings) {
      const Value v{true, s};
      if (holds(p, &v)) return true;
    }
    for (auto s : values.symbols) {
      const Value v{false, s};
      if (holds(p, &v)) return true;
    }
    return false;  // no fact binds it: the pattern that binds it matches none
  }
};

}  // namespace

std::vector<char> HistoryFilter::select(void* env, const Index& index,
                                        std::string_view workspace_root) const {
  const std::size_t n = patterns_.size();
  std::vector<char> keep(index.entries->size(), 0);
  if (n == 0 || keep.empty()) return keep;
  // Gates and joins with the proposal's facts, in one pass over its facts.
  std::vector<std::vector<char>> held(n);
  std::vector<std::vector<JoinValues>> joined(n);
  std::vector<JoinValues> term_values(fact_terms_.size());
  for (std::size_t p = 0; p < n; ++p) {
    held[p].assign(patterns_[p].gates.size(), 0);
    joined[p].resize(patterns_[p].joins.size());
  }
  // Where each template's facts count, and where its slots are, found once per template of
  // this environment.
  struct Seen {
    void* tmpl;
    const ByTemplate* b;
    std::vector<int> positions;  // of b->slots
  };
  std::vector<Seen> templates;
  for (void* f = EnvGetNextFact(env, nullptr); f; f = EnvGetNextFact(env, f)) {
    void* tmpl = EnvFactDeftemplate(env, f);
    auto known = std::find_if(templates.begin(), templates.end(),
                              [&](const Seen& t) { return t.tmpl == tmpl; });
    if (known == templates.end()) {
      const char* name = EnvGetDeftemplateName(env, tmpl);
      const ByTemplate* found = nullptr;
      for (const auto& candidate : by_template_)
        if (candidate.name == name) found = &candidate;
      templates.push_back(
          {tmpl, found, found ? slot_positions(tmpl, found->slots) : std::vector<int>{}});
      known = templates.end() - 1;
    }
    const ByTemplate* b = known->b;
    if (!b) continue;
    const std::vector<int>& at = known->positions;
    for (std::size_t i = 0; i < b->gates.size(); ++i) {
      const auto& [p, g, a] = b->gates[i];
      char& h = held[p][g];
      if (!h && passes(f, patterns_[p].gates[g].any_of[a], b->gate_slots[i], at)) h = 1;
    }
    for (std::size_t i = 0; i < b->joins.size(); ++i) {
      const auto& [p, j] = b->joins[i];
      const std::vector<std::size_t>& slots = b->join_slots[i];
      if (passes(f, patterns_[p].joins[j].fact, slots, at))
        joined[p][j].add(fact_value(f, at[slots.back()]));
    }
    for (std::size_t i = 0; i < b->terms.size(); ++i) {
      const std::size_t k = b->terms[i];
      const std::vector<std::size_t>& slots = b->term_slots[i];
      if (passes(f, fact_terms_[k]->fact, slots, at))
        term_values[k].add(fact_value(f, at[slots.back()]));
    }
  }
  for (auto& v : term_values) v.seal();
  // CLIPS interns strings as C strings: a NUL ends what (workspace-root) returns.
  const std::string_view root(workspace_root.data(),
                              std::min(workspace_root.size(), workspace_root.find('\0')));
  // Each live pattern keeps the entries its constants accept and its joins allow.
  for (std::size_t p = 0; p < n; ++p) {
    if (!std::all_of(held[p].begin(), held[p].end(), [](char h) { return h != 0; })) continue;
    for (auto& j : joined[p]) j.seal();
    const auto& joins = patterns_[p].joins;
    const auto& predicates = patterns_[p].predicates;
    for (std::uint32_t i : index.passing[p]) {
      if (keep[i]) continue;
      bool ok = true;
      for (std::size_t j = 0; j < joins.size() && ok; ++j) {
        const auto value = entry_slot((*index.entries)[i], compiled_[p].join_slots[j]);
        ok = joins[j].with_history ? index.history_joins[p][j].has(value) : joined[p][j].has(value);
      }
      if (ok && !predicates.empty()) {
        PredicateJudge judge((*index.entries)[i], root, term_values);
        for (std::size_t k = 0; k < predicates.size() && ok; ++k) ok = judge.may(predicates[k]);
      }
      keep[i] = ok;
    }
  }
  return keep;
}

}  // namespace warden
