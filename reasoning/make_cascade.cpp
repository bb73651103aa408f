#include "reasoning/make_cascade.h"

#include "reasoning/config_check.h"

namespace warden::reasoning {

std::unique_ptr<Cascade> make_cascade(const ReasoningConfig& config, const Catalog& catalog,
                                      std::string* error) {
  if (std::string problem = check_config(config); !problem.empty()) {
    if (error) *error = problem;
    return nullptr;
  }
  std::vector<std::unique_ptr<Provider>> providers;
  for (const ProviderConfig& provider_config : config.providers) {
    std::string problem;
    auto provider = make_provider(provider_config, &problem);
    if (!provider) {
      if (error) *error = "reasoning.providers: " + problem;
      return nullptr;
    }
    providers.push_back(std::move(provider));
  }
  auto normalize = [catalog](const Answer& answer) {
    return normalized_action(parse_answer(answer, catalog));
  };
  return std::make_unique<Cascade>(std::move(providers), config, normalize);
}

}  // namespace warden::reasoning
