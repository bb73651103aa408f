// RuleSource: the text of one rule file and the path it is reported under.
// The engine never reads files itself; front ends build these (see rule_files.h).
#pragma once

#include <string>
#include <vector>

namespace warden {

struct RuleSource {
  std::string path;  // as shown in diagnostics, e.g. "rules/shell.clp"
  std::string text;
};

using RuleSources = std::vector<RuleSource>;

}  // namespace warden
