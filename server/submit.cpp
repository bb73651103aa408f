#include "server/submit.h"

#include <openssl/rand.h>

#include <exception>

#include "bindings/text.h"
#include "protocol/frame.h"
#include "protocol/json_text.h"
#include "server/errors.h"
#include "server/pipeline_workers.h"

namespace warden::server {

namespace {

constexpr std::size_t kMaxText = 256 * 1024;  // a perception's text, bytes
constexpr std::size_t kMaxName = 256;         // session, agent, source

Reply submit_error_reply(ServerContext& ctx, const std::string& id_json, const ErrorBody& body) {
  Stats::add(ctx.stats.errors);
  return Reply{error_response(id_json, "submit", body)};
}

// A session id of its own for a run whose request names none: "run-" and 32 hex digits of
// 16 bytes from the CSPRNG, so no other run shares it and no client can guess it. Empty
// when the CSPRNG fails.
std::string private_session_id() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) return {};
  return "run-" + text::hex(bytes, sizeof bytes);
}

}  // namespace

std::string event_message(std::string_view id_json, std::string_view event_json) {
  std::string out;
  out.reserve(40 + id_json.size() + event_json.size());
  out += "{\"type\":\"event\",\"id\":";
  out += id_json;
  out += ",\"payload\":";
  out += event_json;
  out += '}';
  return out;
}

std::optional<Reply> submit_request(ServerContext& context, const Request& request,
                                    const Identity& identity,
                                    std::shared_ptr<const std::atomic<bool>> closed,
                                    ReplyFn later) {
  const rapidjson::Value& payload = request.payload();
  const std::string& id = request.id_json;
  pipeline::Signal signal;
  std::string error;
  const rapidjson::Value* text = find_member(payload, "text");
  if (!text || !text->IsString()) {
    return submit_error_reply(context, id, {err::kBadRequest, "\"payload.text\" must be a string"});
  }
  if (!string_field(payload, "text", kMaxText, &signal.text, &error) ||
      !string_field(payload, "sensor", kMaxName, &signal.sensor, &error) ||
      !string_field(payload, "session", kMaxName, &signal.session, &error) ||
      !string_field(payload, "agent", kMaxName, &signal.agent, &error) ||
      !string_field(payload, "source", kMaxName, &signal.source, &error)) {
    return submit_error_reply(context, id, {err::kBadRequest, error});
  }
  if (!int_field(payload, "wait_s", 0, context.config->approvals.max_wait_seconds,
                 &signal.approval_wait_s, &error)) {
    return submit_error_reply(context, id, {err::kBadRequest, error});
  }
  // A client starts a conversation or sends a heartbeat; feedback signals (tool-output,
  // tool-error, loop-error) come only from the pipeline itself.
  if (signal.sensor != "user-input" && signal.sensor != "chat-message" &&
      signal.sensor != "heartbeat") {
    return submit_error_reply(context, id,
                              {err::kBadRequest,
                               "\"payload.sensor\" must be user-input, chat-message "
                               "or heartbeat, not '" +
                                   signal.sensor + "'"});
  }
  if (!context.run_pipeline || !context.pipelines) {
    return submit_error_reply(
        context, id,
        {err::kNoProvider,
         "submit needs a model provider: configure [[reasoning.providers]] in "
         "warden.toml (docs/REASONING.md); decide works without one"});
  }
  // Replies go back on this connection: a proposal naming no target goes to the reply
  // actuator unless the client named another channel.
  if (signal.source.empty()) signal.source = "reply";
  // Who asks is the authenticated principal, never what the request says.
  signal.principal = identity.principal;
  signal.depth = 0;
  // Every run has session memory: what one step of the run approved (a script written) is
  // history for the next (running it). A request naming no session gets a private one.
  if (signal.session.empty()) {
    signal.session = private_session_id();
    if (signal.session.empty()) {
      return submit_error_reply(
          context, id, {err::kInternal, "no session id could be drawn (the CSPRNG failed)"});
    }
  }

  ServerContext* ctx = &context;
  auto shared_later = std::make_shared<ReplyFn>(std::move(later));
  PipelineJob job;
  job.principal = identity.principal;
  job.run = [ctx, shared_later, id, identity, closed, signal = std::move(signal)] {
    const ReplyFn& send = *shared_later;
    auto sink = [&send, &id](std::string_view event) {
      std::string message = event_message(id, event);
      if (message.size() > kMaxEncodableFrame) {
        message = event_message(
            id, std::string("{\"event\":\"error\",\"code\":\"") + err::kResponseTooLarge +
                    "\",\"message\":\"an event did not fit in one frame and was dropped\"}");
      }
      send(Reply{std::move(message), false, true});
    };
    pipeline::RunSummary summary;
    try {
      summary = ctx->run_pipeline(signal, identity, closed, sink);
    } catch (const std::exception& e) {
      ctx->log->error("submit {}: the pipeline failed: {}", id, e.what());
      send(submit_error_reply(*ctx, id,
                              {err::kInternal, std::string("the pipeline failed: ") + e.what()}));
      return;
    } catch (...) {
      send(submit_error_reply(*ctx, id, {err::kInternal, "the pipeline failed"}));
      return;
    }
    std::string fields = "\"status\":";
    append_json_string(fields, summary.status);
    fields += ",\"cycles\":" + std::to_string(summary.cycles);
    send(Reply{ok_response(id, "submit", fields)});
  };
  job.cancelled = [ctx, shared_later, closed, id] {
    if (closed && closed->load()) {
      (*shared_later)(Reply{});  // nobody reads it; it releases the session
      return;
    }
    (*shared_later)(
        submit_error_reply(*ctx, id, {err::kShuttingDown, "the daemon is shutting down"}));
  };
  switch (context.pipelines->submit(std::move(job))) {
    case PipelineWorkers::Submitted::Queued:
      return std::nullopt;
    case PipelineWorkers::Submitted::Busy:
      return submit_error_reply(
          context, id,
          {err::kBusy,
           "every pipeline thread is busy and the queue is full, or this "
           "principal's share of it ([reasoning] threads, max_queue); retry later"});
    case PipelineWorkers::Submitted::Stopped:
      break;
  }
  return submit_error_reply(context, id, {err::kShuttingDown, "the daemon is shutting down"});
}

}  // namespace warden::server
