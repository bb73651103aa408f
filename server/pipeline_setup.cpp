#include "server/pipeline_setup.h"

#include "actuators/builtin.h"
#include "pipeline/catalog.h"
#include "pipeline/events.h"
#include "reasoning/make_cascade.h"
#include "server/act_record.h"
#include "server/approval_service.h"
#include "server/daemon_decider.h"
#include "server/log.h"

namespace warden::server {

std::string build_pipeline(const Config& config, ServerContext& context,
                           std::unique_ptr<PipelineParts>* out, PipelineRunner* runner) {
  const reasoning::ReasoningConfig& rc = config.pipeline.reasoning;
  if (rc.providers.empty()) return {};
  auto parts = std::make_unique<PipelineParts>();
  Logger log = context.log;
  const actuators::ActuatorsConfig ac = effective_actuators(config);
  actuators::add_builtin_tools(parts->tools);
  actuators::register_builtin(parts->actuators, ac, &parts->tools, [log](std::string_view line) {
    // The model chose this text: one line, nothing for a terminal.
    log->info("actuator: {}", log_text(line));
  });
  std::vector<reasoning::ToolSpec> tools;
  for (const actuators::Tool* tool : parts->tools.list()) {
    tools.push_back({tool->name, tool->description, tool->args_schema_json});
  }
  parts->catalog = pipeline::catalog_from(parts->actuators, std::move(tools), rc.identity);
  std::string error;
  parts->cascade = reasoning::make_cascade(rc, parts->catalog, &error);
  if (!parts->cascade) return error;
  parts->options.max_depth = config.limits.depth;
  parts->options.max_retries = config.limits.retries;
  parts->options.default_target = ac.default_target;
  parts->options.silent = ac.silent;

  PipelineParts* p = parts.get();
  ServerContext* ctx = &context;
  *runner = [p, ctx](const pipeline::Signal& signal, const Identity& identity,
                     std::shared_ptr<const std::atomic<bool>> closed,
                     const pipeline::EventSink& sink) {
    pipeline::Options options = p->options;
    options.on_dispatch = [ctx, principal = identity.principal](const Decision& decision,
                                                                std::string_view target,
                                                                const actuators::Result& result) {
      record_act(*ctx, decision.decision_id, target, principal, result);
    };
    options.on_approval_required =
        [ctx, identity, closed](const Decision& decision, const std::string& action_json,
                                const pipeline::Signal& signal, const pipeline::EventSink& sink) {
          if (!ctx->approvals) {
            sink(pipeline::events::approval_required(decision));
            return std::string("suspended");
          }
          return ctx->approvals->suspend(identity, closed, decision, action_json, signal, sink);
        };
    pipeline::Pipeline run(
        p->cascade.get(), &p->actuators, make_daemon_decider(*ctx, identity, closed), p->catalog,
        std::move(options), [ctx](std::string_view line) { ctx->log->info("{}", log_text(line)); });
    return run.run(signal, sink, closed.get());
  };
  *out = std::move(parts);
  return {};
}

}  // namespace warden::server
