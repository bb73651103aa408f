// Where a front end in front of an agent (the PreToolUse hook, the MCP gateway) gets its
// decisions: the daemon (TCP, TLS or its Unix socket, authenticated) or an in-process engine
// over a rules directory. Every failure is a Verdict with ok == false and its cause, which
// the caller turns into a deny: nothing here ever yields an approve it did not get from rules.
// A Decider is used by one thread at a time; it keeps its daemon connection between calls.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/decision.h"

namespace warden::agents {

struct DeciderConfig {
  // Daemon. addr: HOST:PORT, [v6]:PORT or unix:PATH. Empty: $WARDEN_ADDR, else the daemon's
  // default Unix socket when it exists (STATE_DIR/warden.sock), else 127.0.0.1:9105.
  std::string addr;
  std::string token;  // empty: $WARDEN_TOKEN, else token_file, else $WARDEN_TOKEN_FILE
  std::string token_file;
  bool tls = false;  // TCP only; implied by ca or pin
  std::string ca;
  std::string pin;  // "sha256:HEX" of the daemon's certificate
  std::string server_name;
  // In-process: non-empty rules decide here, with no daemon (no session memory between
  // processes). workspace and home as for `warden dry-run`; principal and groups stand for
  // the token owner the daemon would have named.
  std::vector<std::string> rules;
  std::string workspace;
  std::string home;
  std::string principal;
  std::vector<std::string> groups;
  // The whole budget of one decide(): connect, authenticate, send, wait for the reply.
  std::chrono::milliseconds budget{5000};
  // Daemon: when the decision is approval-required, the daemon waits up to this many seconds
  // (0..3600, "wait_s") for a person's answer before it replies; decide() waits that much
  // longer than the budget. 0: the reply comes at once. Ignored in-process (no approvals).
  int wait_s = 0;
  // With wait_s: called once the daemon has stored the pending approval the reply waits for
  // (its id and the token a person takes to an approver), before the wait. May be empty.
  std::function<void(const std::string& approval_id, const std::string& token)> on_pending;
};

// What a front end needs of one decision.
struct Verdict {
  bool ok = false;         // false: no decision (error_code, error_message say why)
  std::string error_code;  // E_… (the daemon's or the engine's, or E_UNAVAILABLE, E_TIMEOUT)
  std::string error_message;
  Outcome outcome = Outcome::Reject;  // meaningful when ok
  std::string reason;                 // the decision's reason
  std::vector<std::string> rules;     // enforcing rules that decided, in firing order
  std::string action_json;            // the action as approved, after rewrites (JSON object text)
  bool rewritten = false;             // an enforcing rule rewrote the action
  std::string decision_id;
  std::string decision_json;  // the whole decision, as the daemon or engine gave it
  // The approval the daemon opened for an approval-required decision (the reply's
  // "approval"): its id, the token that approves it and its state ("pending", or after a
  // wait "approved", "denied", "expired", "refused"). Empty when there is none.
  std::string approval_id, approval_token, approval_status;
};

// "rule a" or "rules a, b" for the rules that decided (Verdict::rules), "" when none did
// (the configured default): how the hook and the gateway name them in a reason.
std::string deciding_rules_text(const Verdict& v);

class Decider {
 public:
  virtual ~Decider() = default;
  // Decides one proposal (JSON object text). Never throws.
  virtual Verdict decide(std::string_view proposal_json) = 0;
  // "daemon 127.0.0.1:9105", "rules /path (in-process)": for messages and `hook doctor`.
  virtual std::string describe() const = 0;
};

// Builds the decider the config names. In-process: the rules are loaded here, and a rule
// error returns null with *error holding the diagnostics. Daemon: nothing is connected yet.
std::unique_ptr<Decider> make_decider(const DeciderConfig& config, std::string* error);

// The daemon address a DaemonDecider of this config connects to (the defaults above applied).
std::string daemon_address(const DeciderConfig& config);

}  // namespace warden::agents
