// The fact templates the engine defines for every rule set (SPEC §4), as fixed CLIPS text.
// No user data is ever part of this text; input reaches CLIPS only through the fact API.
#pragma once

namespace warden {

inline constexpr const char* kTemplates = R"CLP(
(deftemplate proposal
  (slot id (type STRING))
  (slot target (type SYMBOL))
  (slot action (type SYMBOL) (default nil))
  (slot explanation (type STRING) (default ""))
  (slot agent (type STRING) (default ""))
  (slot session (type STRING) (default ""))
  (slot source (type SYMBOL) (default nil))
  (slot principal (type STRING) (default ""))
  (multislot groups (type STRING))
  (slot depth (type INTEGER) (default 0))
  (slot attempt (type INTEGER) (default 0)))
(deftemplate param
  (slot proposal (type STRING))
  (slot key (type STRING))
  (slot value (type STRING INTEGER FLOAT SYMBOL)))
(deftemplate shell-command
  (slot proposal (type STRING))
  (slot index (type INTEGER))
  (slot program (type STRING))
  (multislot argv (type STRING))
  (multislot flags (type STRING))
  (multislot args (type STRING))
  (multislot paths (type STRING))
  (multislot wrappers (type STRING))
  (multislot assignments (type STRING))
  (slot depth (type INTEGER) (default 0))
  (slot cwd (type STRING) (default ""))
  (slot dynamic (type SYMBOL) (allowed-symbols FALSE TRUE))
  (slot runs (type STRING) (default "")))
(deftemplate shell-assignment
  (slot proposal (type STRING))
  (slot index (type INTEGER))
  (slot name (type STRING))
  (slot value (type STRING))
  (slot dynamic (type SYMBOL) (allowed-symbols FALSE TRUE) (default FALSE)))
(deftemplate shell-redirect
  (slot proposal (type STRING))
  (slot index (type INTEGER))
  (slot op (type STRING))
  (slot fd (type INTEGER))
  (slot target (type STRING))
  (slot path (type STRING) (default "")))
(deftemplate shell-error
  (slot proposal (type STRING))
  (slot message (type STRING)))
(deftemplate path
  (slot proposal (type STRING))
  (slot key (type STRING))
  (slot raw (type STRING))
  (slot normalized (type STRING))
  (slot resolved (type STRING) (default ""))
  (slot in-workspace (type SYMBOL) (allowed-symbols FALSE TRUE))
  (slot class (type SYMBOL) (default none)))
(deftemplate url
  (slot proposal (type STRING))
  (slot key (type STRING))
  (slot raw (type STRING))
  (slot valid (type SYMBOL) (allowed-symbols FALSE TRUE))
  (slot scheme (type STRING) (default ""))
  (slot host (type STRING) (default ""))
  (slot port (type INTEGER) (default 0))
  (slot path (type STRING) (default ""))
  (slot ip (type STRING) (default ""))
  (slot ip-class (type STRING) (default ""))
  (slot error (type STRING) (default "")))
(deftemplate effect
  (slot proposal (type STRING))
  (slot index (type INTEGER) (default -1))
  (slot kind (type SYMBOL) (allowed-symbols exec write delete read network env-dump privilege unknown))
  (slot object (type SYMBOL) (allowed-symbols path host program code none) (default none))
  (slot target (type STRING) (default ""))
  (slot program (type STRING) (default ""))
  (slot subcommand (type STRING) (default ""))
  (slot via (type STRING) (default ""))
  (slot class (type SYMBOL) (default none))
  (slot in-workspace (type SYMBOL) (allowed-symbols FALSE TRUE) (default FALSE))
  (slot dynamic (type SYMBOL) (allowed-symbols FALSE TRUE) (default FALSE)))
(deftemplate history
  (slot proposal (type STRING))
  (slot decision (type STRING))
  (slot age (type INTEGER) (default 0))
  (slot kind (type SYMBOL) (allowed-symbols exec write delete read network env-dump privilege unknown))
  (slot object (type SYMBOL) (allowed-symbols path host program code none) (default none))
  (slot target (type STRING) (default ""))
  (slot program (type STRING) (default ""))
  (slot class (type SYMBOL) (default none))
  (slot in-workspace (type SYMBOL) (allowed-symbols FALSE TRUE) (default FALSE)))
(deftemplate pattern-hit
  (slot proposal (type STRING))
  (slot key (type STRING))
  (slot kind (type SYMBOL) (allowed-symbols regex substring prefix suffix exact glob path-within))
  (slot pattern (type STRING)))
(deftemplate signal
  (slot proposal (type STRING))
  (slot sensor (type SYMBOL) (default nil))
  (slot text (type STRING) (default "")))
(deftemplate decision
  (slot proposal (type STRING))
  (slot outcome (type SYMBOL) (allowed-symbols approve reject approval-required))
  (slot rule (type SYMBOL STRING))
  (slot reason (type STRING) (default ""))
  (slot mode (type SYMBOL) (allowed-symbols enforce monitor) (default enforce)))
(deftemplate rewrite
  (slot proposal (type STRING))
  (slot key (type STRING))
  (slot value (type STRING))
  (slot rule (type SYMBOL STRING))
  (slot reason (type STRING) (default ""))
  (slot mode (type SYMBOL) (allowed-symbols enforce monitor) (default enforce)))
(deftemplate allow
  (slot proposal (type STRING))
  (slot capability (type SYMBOL) (allowed-symbols shell-syntax private-network))
  (slot rule (type SYMBOL STRING))
  (slot reason (type STRING) (default ""))
  (slot mode (type SYMBOL) (allowed-symbols enforce monitor) (default enforce)))
(deftemplate hint
  (slot proposal (type STRING))
  (slot rule (type SYMBOL STRING))
  (slot text (type STRING) (default "")))
(deftemplate approval
  (slot proposal (type STRING))
  (slot rule (type SYMBOL STRING))
  (slot expires-in (type INTEGER) (default 0))
  (slot approvers (type INTEGER) (default 1)))
)CLP";

}  // namespace warden
