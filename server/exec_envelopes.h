// ExecEnvelopes: the shell decisions of `decide` requests, kept a short while so that
// `warden exec --decision ID` can run an approved command under the envelope its decision
// derived (the `envelope` request, server/exec_request.h). Each approved decision runs at most
// once, only for the principal that asked for it, only within kTtl, and only for the very
// command that was decided (bound by its action digest). Thread-safe (one mutex).
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "engine/decision.h"

namespace warden::server {

// "sha256:HEX" of the command line of a `shell run` action: what `warden exec` sends to bind
// itself to the decision it runs under (the same text, byte for byte).
std::string exec_action_digest(std::string_view command);

// What an exec needs of one decided shell action.
struct ExecRecord {
  std::string decision_id;
  std::string principal;  // who asked for it; no one else may run it
  Outcome outcome = Outcome::Reject;
  std::string command;  // payload.command as approved (after rewrites)
  std::string cwd;      // where the rules judged it: payload.cwd resolved, else the workspace
  std::string digest;   // exec_action_digest(command)
  Decision decision;    // effects, allows, action: what the envelope is derived from
  std::string workspace_root;
  std::string home;
  std::chrono::steady_clock::time_point expires;
  bool used = false;
};

enum class ExecTake { Ok, Unknown, NotApproved, Expired, Used, Mismatch };

class ExecEnvelopes {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::seconds kTtl{300};
  static constexpr std::size_t kMaxRecords = 4096;

  // Keeps a decision of a `decide` request when its action is `shell run` with a command
  // (anything else cannot be exec'd and is ignored). The oldest go past kMaxRecords.
  void remember(const std::string& principal, const Decision& decision,
                const std::string& workspace_root, const std::string& home, Clock::time_point now);

  // Takes the record for one run: Ok (the record in *out, now used) only when it exists, is
  // this principal's, was approved, is not expired, was not used, and its digest is
  // `digest` (empty: the caller runs the decided command, whatever it is). A mismatch leaves
  // it unused (the right command may still run).
  ExecTake take(const std::string& principal, const std::string& decision_id,
                const std::string& digest, Clock::time_point now, ExecRecord* out);

 private:
  void prune(Clock::time_point now);

  std::mutex mutex_;
  std::unordered_map<std::string, ExecRecord> records_;
  std::deque<std::string> order_;  // decision ids, oldest first
};

}  // namespace warden::server
