#include "engine/pattern_index.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <map>
#include <set>

#include "bindings/glob.h"

namespace warden {

struct PatternIndex::Group {
  std::string key;   // empty: any key
  std::string kind;
  std::vector<std::string> patterns;  // by set index
  std::unique_ptr<RE2::Set> set;
};

namespace {

RE2::Anchor anchor_for(const std::string& kind) {
  if (kind == "prefix" || kind == "path-within") return RE2::ANCHOR_START;
  if (kind == "glob") return RE2::ANCHOR_BOTH;
  return RE2::UNANCHORED;
}

std::string regex_for(const std::string& kind, const std::string& pattern) {
  if (kind == "regex") return pattern;
  if (kind == "glob") return glob::to_regex(pattern);
  if (kind == "path-within") {
    std::string root = pattern;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    if (root == "/") return "/";
    return RE2::QuoteMeta(root) + "(?:/|$)";
  }
  return RE2::QuoteMeta(pattern);  // substring, prefix
}

}  // namespace

PatternIndex::PatternIndex(const std::vector<IndexedPattern>& patterns) {
  std::map<std::pair<std::string, std::string>, std::set<std::string>> grouped;
  for (const auto& p : patterns) grouped[{p.key, p.kind}].insert(p.pattern);
  for (auto& [group_key, unique] : grouped) {
    auto group = std::make_unique<Group>();
    group->key = group_key.first;
    group->kind = group_key.second;
    RE2::Options options;
    options.set_log_errors(false);
    options.set_max_mem(64 << 20);
    group->set = std::make_unique<RE2::Set>(options, anchor_for(group->kind));
    for (const auto& pattern : unique) {
      std::string error;
      if (group->set->Add(regex_for(group->kind, pattern), &error) < 0) continue;  // checker reported it
      group->patterns.push_back(pattern);
    }
    if (group->patterns.empty() || !group->set->Compile()) continue;
    groups_.push_back(std::move(group));
  }
}

PatternIndex::~PatternIndex() = default;

bool PatternIndex::match(bool paths, std::string_view key, std::string_view value,
                         const std::function<void(const Hit&)>& on_hit) const {
  std::vector<int> hits;
  for (const auto& group : groups_) {
    if ((group->kind == "path-within") != paths) continue;
    if (!group->key.empty() && group->key != key) continue;
    hits.clear();
    RE2::Set::ErrorInfo info;
    if (!group->set->Match(value, &hits, &info) && info.kind != RE2::Set::kNoError) return false;
    for (int index : hits) on_hit(Hit{group->kind, group->patterns[static_cast<std::size_t>(index)]});
  }
  return true;
}

bool PatternIndex::match_value(std::string_view key, std::string_view value,
                               const std::function<void(const Hit&)>& on_hit) const {
  return match(false, key, value, on_hit);
}

bool PatternIndex::match_path(std::string_view key, std::string_view normalized,
                              const std::function<void(const Hit&)>& on_hit) const {
  return match(true, key, normalized, on_hit);
}

}  // namespace warden
