#!/usr/bin/env bash
# End to end: Codex's exec_command arguments that its PreToolUse hook input does not carry
# (workdir, shell, tty) are judged as they run. The real Codex CLI against the fake model
# server, `warden hook codex` against a real `warden serve` with the shipped rules (workspace =
# the project). The same steps under an allow-all control hook show each trap is real.
# Run by ctest (codex_hidden_args_e2e) with WARDEN_BIN; see tests/e2e/README.md.
#
# Rules: the shipped rules and tests/e2e/fixtures (as codex_e2e.sh).
source "$(dirname "$0")/lib.sh" || { echo "e2e: FATAL: cannot load tests/e2e/lib.sh" >&2; exit 1; }
require_agent codex

call() {  # call ARGS_JSON: one turn with one exec_command call
  echo "{\"calls\":[{\"name\":\"exec_command\",\"input\":$1}]}"
}

# One line, two readings: for bash (what Warden's parser reads) `$'\' … \''` is one quoted
# word and the line one echo; dash (/bin/sh on Debian) has no $'…' and runs the touch.
dash_line() { echo "echo \$'\\' ; touch $S_HOME/dash-marker ; # \\''"; }

script() {  # script FILE: the six steps (the result of step N is tool result N)
  local unit_dir="$S_HOME/.config/systemd/user"
  write_script "$1" \
    "$(call "{\"cmd\":\"touch warden-unit.service\",\"workdir\":$(js "$unit_dir")}")" \
    "$(call '{"cmd":"ls","workdir":"src"}')" \
    "$(call '{"cmd":"cat","tty":true,"yield_time_ms":500}')" \
    "$(call '{"cmd":"touch py-marker","shell":"python3"}')" \
    "$(call "{\"cmd\":$(js "$(dash_line)"),\"shell\":\"/bin/sh\"}")" \
    "$(call "{\"cmd\":$(js "$(dash_line)"),\"shell\":\"/bin/bash\"}")"
}

setup_world() {
  mkdir -p "$S_HOME/.config/systemd/user" "$S_PROJECT/src"
  touch "$S_PROJECT/src/visible-src-file"
}

RULES="$(rules_dir)" || die "cannot assemble the rules directory"
BLOCKED="Command blocked by PreToolUse hook: "

# ---- 1. control: under an allow-all hook every hidden argument takes effect ----------------
scenario_control() {
  scenario control
  setup_world
  script "$S/script.json"
  start_fake_server "$S/script.json"
  run_codex "$(control_hook)"
  assert_count_results 6
  assert_exists "$S_HOME/.config/systemd/user/warden-unit.service" \
    "control: touch with workdir ~/.config/systemd/user wrote the unit there (the trap is real)"
  assert_missing "$S_PROJECT/warden-unit.service" "control: nothing was written in the project"
  grep -q '"tool_input":{"command":"touch warden-unit.service"}' "$S/control_hook.log" \
    && pass "control: the hook input carried the command only, no workdir" \
    || fail "control: expected the hook input to carry only {command}: $(head -c 600 "$S/control_hook.log")"
  assert_result 1 "visible-src-file" "control: ls ran in the relative workdir src"
  assert_result 2 "Process running with session ID" "control: cat with a terminal keeps running for write_stdin"
  assert_exists "$S_PROJECT/py-marker" "control: shell python3 ran the command (Codex 0.169 runs it with /bin/sh)"
  assert_exists "$S_HOME/dash-marker" "control: with shell /bin/sh (dash) the one echo ran a touch outside the workspace"
  rm -f "$S_HOME/dash-marker"
  assert_result 5 "touch" "control: bash read the same line as one echo"
  assert_missing "$S_HOME/dash-marker" "control: with shell /bin/bash the line touched nothing"
  stop_pid "$FAKE_PID"
}

# ---- 2. Warden: each call judged with its real arguments ------------------------------------
scenario_warden() {
  scenario warden
  setup_world
  script "$S/script.json"
  start_fake_server "$S/script.json"
  start_daemon "$RULES"
  run_codex "$(warden_hook codex)"
  assert_count_results 6
  assert_missing "$S_HOME/.config/systemd/user/warden-unit.service" \
    "touch with workdir ~/.config/systemd/user was denied: no unit file"
  assert_result 0 "${BLOCKED}Warden: " "the model received Warden's reason for the unit file"
  assert_result 0 ".config/systemd/user" "the reason names where the command would have run"
  assert_result_lacks 0 "no decision could be made" "the unit file was denied by a rule, not by an error"
  assert_result 1 "visible-src-file" "ls in the workspace subdirectory src is allowed and runs there"
  assert_result 2 "${BLOCKED}Warden: " "cat with tty: true is denied"
  assert_result 2 "E_CODEX_TTY" "the reason names the terminal"
  assert_missing "$S_PROJECT/py-marker" "a command for shell python3 is denied"
  assert_result 3 "E_CODEX_SHELL" "the reason names the shell"
  assert_missing "$S_HOME/dash-marker" "the line for shell /bin/sh (dash) is denied: no touch"
  assert_result 4 "E_CODEX_SHELL" "the reason names the shell that is not bash"
  assert_result 5 "touch" "the same line for shell /bin/bash is allowed and runs as one echo"
  assert_result_lacks 5 "$BLOCKED" "the bash line was not blocked"
  assert_missing "$S_HOME/dash-marker" "and touched nothing"
  stop_pid "$FAKE_PID"
  stop_pid "$DAEMON_PID"

  # ---- 3. control: write_stdin never reaches the hook -----------------------------------------
  # A program started with tty: true takes whatever the model types with write_stdin, and Codex
  # calls no hook for it: the only point of control is the exec_command that starts the program
  # (which Warden denies with tty: true, scenario 2). The write_stdin step needs the session id
  # Codex prints; the model's script is patched once it appears (the fake server re-reads the
  # script on every request), and step 1 waits for that patch, so step 2 is sent patched.
}

scenario_write_stdin() {
  scenario write-stdin
  touch "$S/script.json"
  write_script "$S/script.template.json" \
    "$(call '{"cmd":"bash","tty":true,"yield_time_ms":1000}')" \
    "$(call "{\"cmd\":$(js "until ! grep -q SESSION_ID_HERE $S/script.json; do sleep 0.1; done")}")" \
    '{"calls":[{"name":"write_stdin","input":{"session_id":"SESSION_ID_HERE","chars":"touch stdin-marker\n","yield_time_ms":1000}}]}'
  cp "$S/script.template.json" "$S/script.json"
  start_fake_server "$S/script.json"
  ( for i in $(seq 3000); do
      sid="$(grep -o 'session ID [0-9][0-9]*' "$FAKE_LOG" 2>/dev/null | head -1 | awk '{print $3}')"
      if [[ -n "$sid" ]]; then
        sed "s/\"SESSION_ID_HERE\"/$sid/" "$S/script.template.json" > "$S/script.next" && mv "$S/script.next" "$S/script.json"
        exit 0
      fi
      sleep 0.05
    done ) &
  E2E_PIDS+=("$!")
  run_codex "$(control_hook)"
  assert_count_results 3
  assert_result 2 "touch stdin-marker" "write_stdin typed into the terminal of bash"
  assert_exists "$S_PROJECT/stdin-marker" "control: the typed command ran"
  n_hooks="$(grep -o '"hook_event_name":"PreToolUse"' "$S/control_hook.log" | wc -l)"
  [[ "$n_hooks" -eq 2 ]] && ! grep -q 'stdin-marker' "$S/control_hook.log" \
    && pass "the hook ran for the two exec_command calls only: write_stdin never reached it" \
    || fail "expected 2 hook calls and none with the typed text; got $n_hooks: $(cut -c1-300 "$S/control_hook.log")"
  stop_pid "$FAKE_PID"
}

run_scenarios
