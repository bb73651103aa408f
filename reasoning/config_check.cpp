#include "reasoning/config_check.h"

#include <re2/re2.h>

#include <algorithm>

namespace warden::reasoning {

std::string check_config(const ReasoningConfig& config) {
  std::vector<std::string> names;
  for (const ProviderConfig& p : config.providers) {
    if (std::find(names.begin(), names.end(), p.name) != names.end())
      return "reasoning.providers: the name \"" + p.name + "\" is used twice";
    names.push_back(p.name);
    if (p.max_retries_429 < 0)
      return "reasoning.providers " + p.name + ": max_retries_429 must not be negative";
    if (p.price_input_per_mtok < 0 || p.price_output_per_mtok < 0)
      return "reasoning.providers " + p.name + ": prices must not be negative";
  }
  for (std::size_t i = 0; i < config.selector.size(); ++i) {
    const SelectorRule& rule = config.selector[i];
    const std::string where = "reasoning.selector[" + std::to_string(i) + "]";
    if (std::find(names.begin(), names.end(), rule.provider) == names.end())
      return where + ": provider \"" + rule.provider + "\" is not configured";
    if (!rule.text_regex.empty()) {
      RE2 pattern(rule.text_regex, RE2::Quiet);
      if (!pattern.ok()) return where + ": text_regex: " + pattern.error();
    }
  }
  if (config.consensus < 0 || config.consensus > static_cast<int>(config.providers.size()))
    return "reasoning.consensus: " + std::to_string(config.consensus) +
           " needs that many providers (" + std::to_string(config.providers.size()) +
           " configured)";
  if (config.budget_per_session_usd < 0)
    return "reasoning.budget_per_session_usd must not be negative";
  if (config.budget_per_principal_usd < 0)
    return "reasoning.budget_per_principal_usd must not be negative";
  if (config.budget_per_principal_usd > 0 && config.budget_window.count() <= 0)
    return "reasoning.budget_window_seconds must be positive with a principal budget";
  if (config.budget_max_entries == 0) return "reasoning.budget_max_entries must be at least 1";
  if (config.cool_off.count() < 0) return "reasoning.cool_off_seconds must not be negative";
  return {};
}

}  // namespace warden::reasoning
