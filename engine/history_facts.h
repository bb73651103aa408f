// HistoryFacts: the `history` facts of a decision, one per effect of the session's earlier
// approved decisions, their age counted from the decision's clock; only the entries the
// history filter selects for the proposal (engine/history_filter.h), every entry counted
// against the fact cap. Part of FactCodec (engine/fact_codec.h); one environment, one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/decision.h"
#include "engine/fact_writer.h"
#include "engine/history_filter.h"

namespace warden {

class HistoryFacts {
 public:
  explicit HistoryFacts(FactWriter& writer);

  // A new proposal: no history facts yet.
  void begin() { asserted_ = 0; }

  // The facts of `history` seen `now`: those `filter` selects (with `index`, its index of
  // `history`; `workspace_root` is what (workspace-root) returns), or all of them when either
  // is null. False when one cannot be asserted (*error set) or the cap is hit.
  bool assert_entries(const std::vector<HistoryEntry>& history, std::int64_t now,
                      const HistoryFilter* filter, const HistoryFilter::Index* index,
                      std::string_view workspace_root, FactError* error);

  // How many history facts the current proposal asserted.
  std::size_t asserted() const { return asserted_; }

 private:
  bool assert_entry(const HistoryEntry& entry, std::int64_t now);

  FactWriter& w_;
  FactWriter::Template history_;
  struct {
    int proposal, decision, age, kind, object, target, program, path_class, in_workspace;
  } history_slots_;
  std::size_t asserted_ = 0;
};

}  // namespace warden
