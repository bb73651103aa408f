// RuleOverlay: the [[rule]] entries of an overlay file, read with toml++ as data and applied
// to the decision facts as they are read back. Nothing here builds rule code.
#include "engine/overlay.h"

#include <algorithm>

#include "engine/toml_document.h"

namespace warden {
namespace {
constexpr std::size_t kMaxReasonBytes = 4096;
}  // namespace

std::string OverlayEntry::summary() const {
  const std::string now = disable   ? "disabled"
                          : outcome ? std::string(outcome_name(*outcome))
                                    : declared;
  std::string out = declared + " \u2192 " + now;
  if (reason) out += " \"" + reason->substr(0, 80) + (reason->size() > 80 ? "…" : "") + "\"";
  return out + " (" + at() + ")";
}

std::shared_ptr<RuleOverlay> RuleOverlay::parse(const TomlDocument& document,
                                                Diagnostics* diagnostics) {
  const RuleSource& source = document.source;
  const toml::table& root = document.root;
  const TomlErrors error(source, code::kOverlay, diagnostics);
  auto overlay = std::make_shared<RuleOverlay>();
  for (const auto& [key, node] : root) {
    if (key.str() != "rule") {
      error(toml_line(node), "unknown key \"" + std::string(key.str()).substr(0, 80) +
                                 "\" (an overlay file holds [[rule]] entries)");
      continue;
    }
    const toml::array* entries = node.as_array();
    if (!entries || !entries->is_array_of_tables()) {
      error(toml_line(node), "\"rule\" must be a list of tables: write [[rule]]");
      continue;
    }
    for (const auto& entry_node : *entries) {
      const toml::table& table = *entry_node.as_table();
      OverlayEntry e;
      e.file = source.path;
      e.line = toml_line(entry_node);
      const long entry_line = e.line;
      bool named = false, bad = false, has_disable = false;
      for (const auto& [ek, ev] : table) {
        const std::string_view name = ek.str();
        const long line = toml_line(ev);
        if (name == "name") {
          if (!ev.is_string() || ev.as_string()->get().empty()) {
            error(line, "\"name\" must be the name of a rule (a non-empty string)");
            bad = true;
            continue;
          }
          e.rule = ev.as_string()->get();
          e.line = line;
          named = true;
        } else if (name == "outcome") {
          const auto parsed = ev.is_string() ? parse_outcome(ev.as_string()->get()) : std::nullopt;
          if (!parsed) {
            error(line, "\"outcome\" must be \"approve\", \"approval-required\" or \"reject\"");
            bad = true;
            continue;
          }
          e.outcome = *parsed;
        } else if (name == "reason") {
          if (!ev.is_string()) {
            error(line, "\"reason\" must be a string");
            bad = true;
            continue;
          }
          if (ev.as_string()->get().size() > kMaxReasonBytes) {
            error(line, "\"reason\" is longer than " + std::to_string(kMaxReasonBytes) + " bytes");
            bad = true;
            continue;
          }
          e.reason = ev.as_string()->get();
        } else if (name == "disable") {
          if (!ev.is_boolean() || !ev.as_boolean()->get()) {
            error(line, "\"disable\" must be true (leave it out to keep the rule)");
            bad = true;
            continue;
          }
          e.disable = true;
          has_disable = true;
        } else {
          error(line, "unknown key \"" + std::string(name).substr(0, 80) +
                          "\" (a [[rule]] entry holds name, outcome, reason, disable)");
          bad = true;
        }
      }
      if (bad) continue;
      if (!named) {
        error(entry_line, "a [[rule]] entry needs the \"name\" of the rule it changes");
        continue;
      }
      if (has_disable && (e.outcome || e.reason)) {
        error(
            entry_line,
            "rule \"" + e.rule.substr(0, 80) +
                "\": \"disable\" cannot be given with \"outcome\" or \"reason\" (a disabled rule decides nothing)");
        continue;
      }
      if (!has_disable && !e.outcome && !e.reason) {
        error(entry_line,
              "rule \"" + e.rule.substr(0, 80) +
                  "\": the entry changes nothing (give outcome, reason or disable = true)");
        continue;
      }
      if (const OverlayEntry* first = overlay->find(e.rule)) {
        error(e.line, "rule \"" + e.rule.substr(0, 80) + "\" is already changed at " + first->at());
        continue;
      }
      overlay->index_.emplace(e.rule, overlay->entries_.size());
      overlay->entries_.push_back(std::move(e));
    }
  }
  if (error.any()) return nullptr;
  return overlay;
}

void RuleOverlay::reindex() {
  index_.clear();
  for (std::size_t i = 0; i < entries_.size(); ++i) index_.emplace(entries_[i].rule, i);
}

void RuleOverlay::merge(const RuleOverlay& other, Diagnostics* diagnostics) {
  for (const auto& e : other.entries_) {
    if (const OverlayEntry* first = find(e.rule)) {
      diagnostics->push_back(
          {code::kOverlay, Severity::Error, e.file, e.line, "",
           "rule \"" + e.rule.substr(0, 80) + "\" is already changed at " + first->at()});
      continue;
    }
    entries_.push_back(e);
    index_.emplace(e.rule, entries_.size() - 1);
  }
}

void RuleOverlay::keep_loaded(const std::vector<std::string>& rule_names,
                              Diagnostics* diagnostics) {
  std::vector<std::string> sorted = rule_names;
  std::sort(sorted.begin(), sorted.end());
  auto known = [&](const std::string& n) {
    return std::binary_search(sorted.begin(), sorted.end(), n);
  };
  for (const auto& e : entries_) {
    if (known(e.rule)) continue;
    diagnostics->push_back(
        {code::kOverlayRule, Severity::Warning, e.file, e.line, "",
         "no loaded rule is named \"" + e.rule.substr(0, 80) + "\": this entry changes nothing"});
  }
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const OverlayEntry& e) { return !known(e.rule); }),
                 entries_.end());
  reindex();
}

const OverlayEntry* RuleOverlay::find(std::string_view rule) const {
  auto it = index_.find(rule);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

bool RuleOverlay::approval_counts(std::string_view rule) const {
  const OverlayEntry* e = find(rule);
  return !e || !e->disable;
}

void RuleOverlay::apply(Decision* d) const {
  for (auto& r : d->rules) {
    const OverlayEntry* e = find(r.rule);
    if (!e) continue;
    r.overlay = e->at();
    r.asserted = r.outcome;
    if (e->disable) {
      r.disabled = true;
      r.monitor = true;
      continue;
    }
    if (e->outcome) r.outcome = *e->outcome;
    if (e->reason) {
      r.asserted_reason = std::move(r.reason);
      r.reason = *e->reason;
    }
  }
  for (auto& w : d->rewrites) {
    const OverlayEntry* e = find(w.rule);
    if (!e || !e->disable) continue;
    w.monitor = true;
    w.overlay = e->at();
  }
  for (auto& g : d->allows) {
    const OverlayEntry* e = find(g.rule);
    if (!e || !e->disable) continue;
    g.monitor = true;
    g.overlay = e->at();
  }
  d->hints.erase(std::remove_if(d->hints.begin(), d->hints.end(),
                                [&](const Hint& h) { return !approval_counts(h.rule); }),
                 d->hints.end());
}

}  // namespace warden
