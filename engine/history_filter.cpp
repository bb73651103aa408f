// Which remembered effects a rule set's history patterns can match (engine/history_filter.h).
#include "engine/history_filter.h"

#include <algorithm>

#include "engine/clips.h"  // last: CLIPS defines macros

namespace warden {

namespace {

// The history fact's value of a slot, with its type; false for a slot the filter does not
// judge (proposal, age: every entry has them, and patterns join or compare on them).
bool slot_value(const HistoryValues& v, std::string_view slot, bool* is_string, std::string_view* value) {
  if (slot == "kind") *value = v.kind;
  else if (slot == "object") *value = v.object;
  else if (slot == "class") *value = v.path_class;
  else if (slot == "in-workspace") *value = v.in_workspace ? "TRUE" : "FALSE";
  else if (slot == "target") *value = v.target;
  else if (slot == "program") *value = v.program;
  else if (slot == "decision") *value = v.decision;
  else return false;
  *is_string = slot == "target" || slot == "program" || slot == "decision";
  return true;
}

bool accepts(const std::vector<SlotConstant>& accepted, bool is_string, std::string_view value) {
  return std::any_of(accepted.begin(), accepted.end(),
                     [&](const SlotConstant& c) { return c.is_string == is_string && c.text == value; });
}

// Whether the fact `f` passes the constants of `p` (same template). A slot whose value is not
// a symbol or a string (a number, a multifield) is not judged: the pattern may match it.
bool passes(void* env, void* f, const FactPattern& p) {
  for (const auto& [slot, accepted] : p.slots) {
    DATA_OBJECT value;
    if (!EnvGetFactSlot(env, f, slot.c_str(), &value)) continue;
    const int type = GetType(value);
    if (type != SYMBOL && type != STRING) continue;
    if (!accepts(accepted, type == STRING, ValueToString(GetValue(value)))) return false;
  }
  return true;
}

}  // namespace

HistoryFilter::HistoryFilter(std::vector<HistoryPattern> patterns) : patterns_(std::move(patterns)) {
  for (std::size_t p = 0; p < patterns_.size(); ++p) {
    for (std::size_t g = 0; g < patterns_[p].gates.size(); ++g) {
      ++gate_count_;
      const auto& alternatives = patterns_[p].gates[g].any_of;
      for (std::size_t a = 0; a < alternatives.size(); ++a) {
        auto it = std::find_if(by_template_.begin(), by_template_.end(),
                               [&](const auto& e) { return e.first == alternatives[a].name; });
        if (it == by_template_.end()) it = by_template_.insert(by_template_.end(), {alternatives[a].name, {}});
        it->second.push_back({p, g, a});
      }
    }
  }
}

std::vector<char> HistoryFilter::live(void* env) const {
  // held[p][g]: some fact of the proposal passes gate g of pattern p.
  std::vector<std::vector<char>> held(patterns_.size());
  for (std::size_t p = 0; p < patterns_.size(); ++p) held[p].assign(patterns_[p].gates.size(), 0);
  std::size_t open = gate_count_;
  for (void* f = EnvGetNextFact(env, nullptr); f && open > 0; f = EnvGetNextFact(env, f)) {
    const char* name = EnvGetDeftemplateName(env, EnvFactDeftemplate(env, f));
    auto it = std::find_if(by_template_.begin(), by_template_.end(),
                           [&](const auto& e) { return e.first == name; });
    if (it == by_template_.end()) continue;
    for (const GateRef& r : it->second) {
      char& h = held[r.pattern][r.gate];
      if (h) continue;
      if (passes(env, f, patterns_[r.pattern].gates[r.gate].any_of[r.alternative])) {
        h = 1;
        --open;
      }
    }
  }
  std::vector<char> live(patterns_.size(), 0);
  for (std::size_t p = 0; p < patterns_.size(); ++p)
    live[p] = std::all_of(held[p].begin(), held[p].end(), [](char h) { return h != 0; });
  return live;
}

bool HistoryFilter::may_match(const HistoryValues& values, const std::vector<char>& live) const {
  for (std::size_t p = 0; p < patterns_.size(); ++p) {
    if (!live[p]) continue;
    bool all = true;
    for (const auto& [slot, accepted] : patterns_[p].slots) {
      bool is_string = false;
      std::string_view value;
      if (!slot_value(values, slot, &is_string, &value)) continue;
      if (!accepts(accepted, is_string, value)) {
        all = false;
        break;
      }
    }
    if (all) return true;
  }
  return false;
}

}  // namespace warden
