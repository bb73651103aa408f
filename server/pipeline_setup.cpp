#include "server/pipeline_setup.h"

namespace warden::server {

std::string build_pipeline(const Config& config, ServerContext&, std::unique_ptr<PipelineParts>*,
                           PipelineRunner*) {
  if (config.pipeline.reasoning.providers.empty()) return {};
  return "reasoning.providers: this build cannot run the pipeline yet";
}

}  // namespace warden::server
