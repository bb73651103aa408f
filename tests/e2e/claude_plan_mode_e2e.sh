#!/usr/bin/env bash
# End to end: Claude Code in plan mode (read-only by the user's choice) with Warden's hook.
# Claude refuses a Write in plan mode by itself, but runs it when the hook answers allow
# (control: the allow-all hook). Warden's approve of a workspace Write must therefore not be an
# allow in plan mode: the hook answers {} and Claude's own check refuses; a Read still runs.
# Run by ctest (claude_plan_mode_e2e) with WARDEN_BIN; see tests/e2e/README.md.
source "$(dirname "$0")/lib.sh" || { echo "e2e: FATAL: cannot load tests/e2e/lib.sh" >&2; exit 1; }
require_agent claude

plan_script() {
  echo hello > "$S_PROJECT/readme.txt"
  write_script "$S/script.json" \
    "{\"calls\":[{\"name\":\"Write\",\"input\":{\"file_path\":$(js "$S_PROJECT/plan-marker"),\"content\":\"x\\n\"}}]}" \
    "{\"calls\":[{\"name\":\"Read\",\"input\":{\"file_path\":$(js "$S_PROJECT/readme.txt")}}]}"
}

# ---- 1. control: an allow in plan mode lets the Write run -----------------------------------
scenario_control() {
  scenario control
  plan_script
  start_fake_server "$S/script.json"
  run_claude "$(control_hook)" --permission-mode plan
  assert_count_results 2
  assert_exists "$S_PROJECT/plan-marker" "control: an allowed Write runs in plan mode (so the test can fail)"
  stop_pid "$FAKE_PID"
}

# ---- 2. Warden: the approve leaves the Write to Claude's plan-mode check ---------------------
scenario_warden() {
  scenario warden
  start_daemon "$SHIPPED_RULES"
  plan_script
  start_fake_server "$S/script.json"
  run_claude "$(warden_hook claude-code)" --permission-mode plan
  assert_count_results 2
  assert_missing "$S_PROJECT/plan-marker" "Warden's approve did not lift plan mode: the Write did not run"
  assert_result 0 "plan mode" "the model was told why (Claude's own plan-mode refusal)"
  assert_result 1 "hello" "a Read still runs in plan mode"
  stop_pid "$FAKE_PID"
}

run_scenarios
