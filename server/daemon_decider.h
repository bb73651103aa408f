// The daemon's pipeline::Decider for one `submit` requester: every proposal of the run goes
// the way of a `decide` request — a DeciderPool job with the authenticated principal and
// groups and the requester's session (session memory), its audit record written before the
// decision is used (record_decision) — while the calling pipeline thread waits for it.
// Thread-safe; the context outlives every run.
#pragma once

#include <atomic>
#include <memory>

#include "pipeline/pipeline.h"
#include "server/roles.h"
#include "server/server_context.h"

namespace warden::server {

// closed: set when the requester's connection closes; its queued decisions are then dropped
// and the run sees a reject naming the cause.
// use_grants: an approval-required decision that a live scoped approval of the same action
// and session covers is approved (ApprovalService::use_grant); false for the last mile of an
// approval itself.
pipeline::Decider make_daemon_decider(ServerContext& context, Identity identity,
                                      std::shared_ptr<const std::atomic<bool>> closed,
                                      bool use_grants = true);

}  // namespace warden::server
