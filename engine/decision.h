// Decision: what the engine answers for one proposal (SPEC §3), and its JSON form (its
// members' writers, which the daemon's other documents share: engine/decision_json.h).
// Plain values; produced by Engine::decide, consumed by the CLI, the daemon and the audit log.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace warden {

enum class Outcome { Approve, ApprovalRequired, Reject };

std::string_view outcome_name(Outcome outcome);  // "approve", "approval-required", "reject"
std::optional<Outcome> parse_outcome(std::string_view name);
// reject > approval-required > approve
inline Outcome stricter(Outcome a, Outcome b) { return a > b ? a : b; }

// One decision fact a rule asserted, in firing order.
struct FiredRule {
  std::string rule;
  Outcome outcome = Outcome::Reject;
  std::string reason;
  bool monitor = false;  // reported and recorded, never applied
  // Set when a rule overlay (engine/overlay.h) changed this decision: where its entry is
  // ("team/overlay.toml:3"), the outcome the rule asserted, the reason it asserted when the
  // entry replaced it, and whether the entry disabled the rule (then `monitor` is set).
  std::string overlay;
  Outcome asserted = Outcome::Reject;
  std::optional<std::string> asserted_reason;
  bool disabled = false;
};

// One field a rule rewrote.
struct Rewrite {
  std::string rule;
  std::string key;  // dotted path, e.g. "payload.text"
  std::string old_value;
  std::string new_value;
  std::string reason;
  bool monitor = false;
  bool applied = false;
  std::string overlay;  // the overlay entry that disabled its rule ("file:line"), if any
};

// One effect the engine derived for the proposal (an `effect` fact, see engine/effects.h):
// what running it would do. The daemon remembers the effects of approved decisions per
// session (engine/session_memory.h) and hands them to later decisions as `history` facts.
struct EffectRecord {
  std::string kind;        // exec write delete read network env-dump privilege unknown
  std::string object;      // path host program code none
  std::string target;      // normalized absolute path, host, program name or code text
  std::string program;     // the program whose effect it is ("" for file/http proposals)
  std::string path_class;  // class from the path classes table, "none" when unclassified
  bool in_workspace = false;
  std::string subcommand;  // as in the effect fact ("" if none)
  std::string via;         // the option or operand it came from ("redirect", "payload.path" …)
  bool dynamic = false;    // its word is known only at run time
};

// An effect of an earlier approved decision of the same session, as `history` facts show it.
struct HistoryEntry {
  std::string decision_id;
  std::int64_t time = 0;  // seconds since the epoch when it was decided
  EffectRecord effect;
};

// A capability a rule granted the action's actuator (an `allow` fact): "shell-syntax" lets
// the shell actuator run the line through a shell instead of exec'ing its one parsed argv;
// "private-network" lets the http actuator connect to a private, loopback or metadata
// address. Granted only by enforcing facts of a decision whose outcome is approve.
struct Grant {
  std::string rule;
  std::string capability;
  std::string reason;
  bool monitor = false;
  std::string overlay;  // the overlay entry that disabled its rule ("file:line"), if any
};

// Text a rule contributes to the model's next prompt (a `hint` fact).
struct Hint {
  std::string rule;
  std::string text;
};

struct Decision {
  std::string decision_id;
  Outcome outcome = Outcome::Reject;
  std::string reason;
  std::vector<FiredRule> rules;
  std::vector<Rewrite> rewrites;
  std::string action_json;   // the proposal as approved, after rewrites (JSON object text)
  std::string rules_digest;  // "sha256:…"
  std::int64_t elapsed_us = 0;
  // How many of the session's history entries were asserted as facts for the rules (the
  // others no rule could match: engine/history_filter.h). Not part of the decision's JSON.
  std::size_t history_asserted = 0;
  bool defaulted = false;  // no enforcing rule decided; default_outcome applied
  std::string
      error_code;  // set when the engine failed closed (E_RUN_LIMIT, E_DEADLINE, E_MEMORY, E_RUNTIME)
  std::string facts_json;             // derived facts, only with explain
  std::vector<EffectRecord> effects;  // every `effect` fact derived for the proposal
  std::vector<Grant> allows;          // every `allow` fact, in assertion order
  std::vector<Hint> hints;            // every `hint` fact, in assertion order
  // The terms of the human approval an approval-required outcome asks for (`approval`
  // facts). Only rules set them; nothing in the proposal can. approval_set: some rule asserted
  // one. approval_expires_s: the smallest expires-in asserted (> 0), 0 when the rules named
  // none (the daemon's default expiry applies). approvers_needed: the largest asserted, 1 or 2.
  bool approval_set = false;
  std::int64_t approval_expires_s = 0;
  int approvers_needed = 1;
};

// The capabilities the decision grants its action: those of enforcing `allow` facts, and
// only when the outcome is approve. Sorted, unique.
std::vector<std::string> granted_capabilities(const Decision& decision);
// The capabilities the enforcing `allow` facts of the decision name, whatever its outcome
// (none when it failed closed). Sorted, unique. For an approval-required decision: what a
// person's approval of it would grant.
std::vector<std::string> allowed_capabilities(const Decision& decision);

// Exit status for a single decision (SPEC §1): 0 approve, 1 reject, 3 approval-required.
int exit_code_for(Outcome outcome);

// SPEC §3 decision JSON. With explain, adds "facts" (what the rules saw) and "defaulted".
std::string decision_to_json(const Decision& decision, bool explain = false);

}  // namespace warden
