#include "engine/history_facts.h"

#include "engine/diagnostic.h"
#include "bindings/clips.h"  // last: CLIPS defines macros

#include "engine/fact_writer_inline.h"  // after bindings/clips.h: CLIPS's types

namespace warden {

HistoryFacts::HistoryFacts(FactWriter& writer)
    : w_(writer),
      history_(writer.bind_template("history")),
      history_slots_{history_["proposal"], history_["decision"], history_["age"],
                     history_["kind"],     history_["object"],   history_["target"],
                     history_["program"],  history_["class"],    history_["in-workspace"]} {}

bool HistoryFacts::assert_entries(const std::vector<HistoryEntry>& history, std::int64_t now,
                                  const HistoryFilter* filter, const HistoryFilter::Index* index,
                                  std::string_view workspace_root, FactError* error) {
  // Only the entries a rule that can fire for this proposal may match, now that its own
  // facts are in (engine/history_filter.h); every entry without a filter.
  const bool filtered = filter && index;
  std::vector<char> keep;
  if (filtered) keep = filter->select(w_.env(), *index, workspace_root);
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (filtered && !keep[i]) {
      // Not asserted, but counted: the fact cap refuses a history as it would with every
      // entry asserted, so a decision is the same with the filter or without.
      if (!w_.count_fact()) return false;
      continue;
    }
    ++asserted_;
    if (!assert_entry(history[i], now)) {
      *error = FactError{code::kFacts, "cannot assert a history fact"};
      return false;
    }
  }
  return true;
}

// An effect of an earlier approved decision of the session. Symbols come from the engine's
// own records; anything else is shown as unknown/none rather than refused by CLIPS.
bool HistoryFacts::assert_entry(const HistoryEntry& h, std::int64_t now) {
  const HistoryValues v = history_values(h);  // views of whole strings or literals: NUL-terminated
  void* f = w_.fact(history_);
  if (!f) return false;
  w_.put(f, history_slots_.proposal, STRING, w_.id());
  w_.put_string(f, history_slots_.decision, h.decision_id);
  w_.put_integer(f, history_slots_.age, now > h.time ? now - h.time : 0);
  w_.put_symbol(f, history_slots_.kind, v.kind.data());
  w_.put_symbol(f, history_slots_.object, v.object.data());
  w_.put_string(f, history_slots_.target, h.effect.target);
  w_.put_string(f, history_slots_.program, h.effect.program);
  w_.put_symbol(f, history_slots_.path_class, v.path_class.data());
  w_.put_symbol(f, history_slots_.in_workspace, v.in_workspace ? "TRUE" : "FALSE");
  return w_.finish(f);
}

}  // namespace warden
