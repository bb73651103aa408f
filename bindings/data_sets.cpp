#include "bindings/data_sets.h"

namespace warden {

bool DataSets::add(std::string name, Set set) {
  return sets_.emplace(std::move(name), std::move(set)).second;
}

const DataSets::Set* DataSets::find(std::string_view name) const {
  auto it = sets_.find(name);
  return it == sets_.end() ? nullptr : &it->second;
}

std::vector<std::string> DataSets::names() const {
  std::vector<std::string> out;
  for (const auto& [name, set] : sets_) out.push_back(name);
  return out;
}

bool DataSets::contains(std::string_view set, std::string_view value, bool* known) const {
  const Set* s = find(set);
  *known = s != nullptr;
  if (!s) return false;
  return s->kind == Kind::List ? s->members.find(value) != s->members.end()
                               : s->map.find(value) != s->map.end();
}

}  // namespace warden
