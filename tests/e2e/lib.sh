# Shared harness of the end-to-end tests with the real agent CLIs (tests/e2e/*_e2e.sh source it).
# It re-runs the test inside a private network namespace (loopback only), gives every scenario
# a throwaway HOME/TMPDIR/project, starts the fake model server and a real `warden serve`,
# runs Claude Code / Codex against them, and offers assertions that print context on failure.
# Single-threaded bash; every process it starts is stopped by PID on exit.

set -uo pipefail
# Under pipefail a pipeline fails when any command in it does, so no `… | grep -q`: grep -q
# quits at its first match, and the writer before it may then die of SIGPIPE, failing (or,
# in an `if`, passing) the check by chance. The scripts use `grep … >/dev/null`, which reads
# to the end, or compare in the shell.

E2E_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
E2E_SCRIPT="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"

die() { echo "e2e: FATAL: $*" >&2; exit 1; }

# ---- private network namespace -------------------------------------------------------------
# Never skip: a machine that cannot make a network namespace fails the test, loudly.
if [[ -z "${E2E_IN_NETNS:-}" ]]; then
  command -v unshare >/dev/null || die "unshare not found (util-linux): cannot isolate the agents from the network"
  command -v ip >/dev/null || die "ip not found (iproute2): cannot bring up loopback in the private network namespace"
  if ! probe=$(unshare -n true 2>&1); then
    die "cannot create a private network namespace (unshare -n): ${probe:-no message}. These tests must run offline; run as root. (A user namespace, unshare -rn, is not enough: root-owned / and /tmp show up as uid 65534 there, and warden serve refuses a token file under directories it cannot trust.)"
  fi
  export E2E_IN_NETNS=1
  exec unshare -n -- bash -c 'ip link set lo up || { echo "e2e: FATAL: ip link set lo up failed in the private network namespace" >&2; exit 1; }
                               exec bash "$0" "$@"' "$E2E_SCRIPT" "$@"
fi
# Inside: only loopback may exist, and it must be up.
if ip -o link show | grep -v ': lo:' | grep . >/dev/null; then
  die "network namespace has interfaces other than lo: $(ip -o link show | tr '\n' ' ')"
fi
ip -o link show lo | grep 'UP' >/dev/null || die "loopback is not up in the private network namespace"

# ---- inputs --------------------------------------------------------------------------------
: "${WARDEN_BIN:?WARDEN_BIN must name the warden binary (ctest sets it)}"
[[ -x "$WARDEN_BIN" ]] || die "WARDEN_BIN=$WARDEN_BIN is not an executable"
WARDEN_SOURCE_DIR="${WARDEN_SOURCE_DIR:-$(cd "$E2E_DIR/../.." && pwd)}"
NODE_BIN="$(command -v node)" || die "node not found (scripts/setup.sh installs it)"
E2E_MODULES="$WARDEN_SOURCE_DIR/tests/e2e/node_modules"
CLAUDE_BIN="$E2E_MODULES/.bin/claude"
CODEX_BIN="$E2E_MODULES/.bin/codex"
SHIPPED_RULES="$WARDEN_SOURCE_DIR/rules"
[[ -d "$SHIPPED_RULES" ]] || die "no shipped rules at $SHIPPED_RULES"

E2E_ROOT="$(mktemp -d /tmp/warden-e2e.XXXXXX)" || die "mktemp failed"
E2E_FAILURES=0
E2E_PASSES=0
E2E_PIDS=()
E2E_T0=$SECONDS

e2e_cleanup() {
  local rc=$? pid
  for pid in "${E2E_PIDS[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  if [[ -z "${E2E_FINISHED:-}" ]]; then
    echo "e2e: FATAL: the test stopped before its end (exit $rc)" >&2
    [[ $rc -eq 0 ]] && rc=1
    E2E_FAILURES=$((E2E_FAILURES + 1))
  fi
  if [[ "${E2E_KEEP:-}" == 1 || $E2E_FAILURES -gt 0 ]]; then
    echo "e2e: files kept in $E2E_ROOT"
  else
    rm -rf "$E2E_ROOT"
  fi
  exit "$rc"
}
trap e2e_cleanup EXIT

log() { echo "e2e [$((SECONDS - E2E_T0))s] $*"; }

# An allow-all hook (the control: the same harness with nothing denying). It records its stdin.
ALLOW_ALL_HOOK="$E2E_ROOT/allow_all_hook.sh"
cat > "$ALLOW_ALL_HOOK" <<'EOF'
#!/bin/sh
{ cat; echo; } >> "${E2E_HOOK_LOG:-/dev/null}"
echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"e2e control: allow all"}}'
EOF
chmod +x "$ALLOW_ALL_HOOK"

require_agent() {  # require_agent claude|codex
  local bin="$CLAUDE_BIN"; [[ "$1" == codex ]] && bin="$CODEX_BIN"
  [[ -x "$bin" ]] || die "$bin missing: install the pinned packages (scripts/setup.sh, or npm ci in tests/e2e)"
}

# ---- scenarios -----------------------------------------------------------------------------
# scenario NAME: a fresh directory with home/, tmp/ and project/ (the agent's cwd and Warden's
# workspace). Sets S, S_HOME, S_TMP, S_PROJECT.
scenario() {
  S="$E2E_ROOT/$1"
  S_HOME="$S/home"; S_TMP="$S/tmp"; S_PROJECT="$S/project"
  mkdir -p "$S_HOME" "$S_TMP" "$S_PROJECT"
  E2E_SCENARIO="$1"
  AGENT_OUT=""; AGENT_ERR=""; DAEMON_LOG=""; FAKE_LOG="$S/model_requests.jsonl"
  rm -f "$S/tool_results.tsv"
  log "---- scenario $1"
}

# run_scenarios: runs the script's scenarios (its functions scenario_NAME, in file order) and
# finishes; with E2E_ONLY=NAME only that one. ctest runs each scenario as its own test
# (SCRIPT/NAME, tests/CMakeLists.txt), side by side: every scenario sets up its own world.
run_scenarios() {
  local names=() name
  mapfile -t names < <(sed -n 's/^scenario_\([a-z0-9_]*\)() {$/\1/p' "$E2E_SCRIPT")
  [[ ${#names[@]} -gt 0 ]] || die "$E2E_SCRIPT defines no scenario_NAME function"
  if [[ -n "${E2E_ONLY:-}" ]]; then
    # Compared in the shell, not through `printf | grep -q`: grep quits at its first match,
    # and under pipefail the SIGPIPE printf may then get fails the lookup of the first name.
    local known=0
    for name in "${names[@]}"; do [[ "$name" == "$E2E_ONLY" ]] && known=1; done
    [[ $known -eq 1 ]] || die "$E2E_SCRIPT has no scenario $E2E_ONLY (it has: ${names[*]})"
    names=("$E2E_ONLY")
  fi
  local before
  for name in "${names[@]}"; do
    before=$E2E_PASSES
    "scenario_$name"
    [[ $E2E_PASSES -gt $before ]] || fail "scenario $name checked nothing"
  done
  finish
}

# The rules the daemon loads: the shipped rules plus tests/e2e/fixtures/*.clp, in one directory.
# rules_dir [--without FILE.clp]… prints its path.
rules_dir() {
  local dir="$E2E_ROOT/rules.$RANDOM$RANDOM"
  mkdir -p "$dir" && cp "$SHIPPED_RULES"/* "$dir"/ || die "cannot copy the shipped rules"
  local f
  for f in "$E2E_DIR"/fixtures/*.clp; do cp "$f" "$dir/zz_$(basename "$f")"; done
  while [[ $# -gt 0 ]]; do
    [[ "$1" == --without ]] || die "rules_dir: unknown argument $1"
    [[ -f "$dir/$2" ]] || die "rules_dir: no $2 in the shipped rules"
    rm -f "$dir/$2"; shift 2
  done
  echo "$dir"
}

# ---- fake model server ---------------------------------------------------------------------
# start_fake_server SCRIPT.json: sets FAKE_PORT, FAKE_LOG (JSON lines of every request), FAKE_PID.
start_fake_server() {
  FAKE_LOG="$S/model_requests.jsonl"
  : > "$FAKE_LOG"
  "$NODE_BIN" "$E2E_DIR/fake_model_server.mjs" "$1" "$FAKE_LOG" > "$S/fake_server.out" 2> "$S/fake_server.err" &
  FAKE_PID=$!
  E2E_PIDS+=("$FAKE_PID")
  local i
  for i in $(seq 600); do
    grep -q '^PORT ' "$S/fake_server.out" 2>/dev/null && break
    kill -0 "$FAKE_PID" 2>/dev/null || die "fake model server exited: $(cat "$S/fake_server.err")"
    sleep 0.05
  done
  FAKE_PORT="$(awk '/^PORT /{print $2; exit}' "$S/fake_server.out")"
  [[ -n "$FAKE_PORT" ]] || die "fake model server printed no port: $(cat "$S/fake_server.err")"
}

stop_pid() { kill "$1" 2>/dev/null; wait "$1" 2>/dev/null; return 0; }

# write_script FILE TURN_JSON…: the fake model's script, one argument per turn (JSON objects).
write_script() {
  local file="$1"; shift
  "$NODE_BIN" -e '
    const turns = process.argv.slice(2).map((t) => JSON.parse(t));
    require("fs").writeFileSync(process.argv[1], JSON.stringify({ turns, final: "All done." }, null, 1));
  ' "$file" "$@" || die "bad script turn JSON"
}

# A JSON string literal of $1 (for building turns in the tests).
js() { "$NODE_BIN" -e 'process.stdout.write(JSON.stringify(process.argv[1]))' "$1"; }

# ---- warden daemon -------------------------------------------------------------------------
# start_daemon [RULES_DIR]: a real `warden serve` on a loopback port with a token file.
# Sets WARDEN_ADDR_E2E, WARDEN_TOKEN_FILE_E2E, DAEMON_PID, DAEMON_LOG.
start_daemon() {
  local rules=() tokjson="$S/token.json"
  [[ $# -ge 1 ]] && rules=(--rules "$1")
  "$WARDEN_BIN" token new --role agent --principal e2e-agent --format json > "$tokjson" \
    || die "warden token new failed"
  WARDEN_TOKEN_FILE_E2E="$S/agent.token"
  "$NODE_BIN" -e '
    const t = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    require("fs").writeFileSync(process.argv[2], t.token + "\n", { mode: 0o600 });
    require("fs").writeFileSync(process.argv[3], t.line + "\n", { mode: 0o600 });
  ' "$tokjson" "$WARDEN_TOKEN_FILE_E2E" "$S/tokens" || die "cannot read warden token new output"
  DAEMON_LOG="$S/daemon.log"
  # The decision deadline (100 ms by default) is not what these tests check: a sanitizer build
  # on a loaded machine must not turn a rule's deny into E_DEADLINE.
  printf '[limits]\ndeadline_ms = 10000\n' > "$S/daemon.toml"
  "$WARDEN_BIN" serve --listen 127.0.0.1:0 --tokens "$S/tokens" --workspace "$S_PROJECT" \
    --home "$S_HOME" --state-dir "$S/state" --workers 1 --config "$S/daemon.toml" "${rules[@]}" \
    2> "$DAEMON_LOG" &
  DAEMON_PID=$!
  E2E_PIDS+=("$DAEMON_PID")
  local i
  for i in $(seq 600); do
    grep -q 'serving on .* (protocol' "$DAEMON_LOG" 2>/dev/null && break
    kill -0 "$DAEMON_PID" 2>/dev/null || die "warden serve exited: $(cat "$DAEMON_LOG")"
    sleep 0.05
  done
  WARDEN_ADDR_E2E="$(sed -n 's/.*serving on \([^ ]*\) (protocol.*/\1/p' "$DAEMON_LOG" | head -1)"
  [[ -n "$WARDEN_ADDR_E2E" ]] || die "warden serve did not say where it listens: $(cat "$DAEMON_LOG")"
  log "warden serve on $WARDEN_ADDR_E2E (rules: ${1:-shipped})"
}

# The hook command line for an agent: warden_hook claude-code|codex [extra flags…]
# E2E_SELF_CHECK=allow-all swaps every Warden hook for the allow-all one: every deny assertion
# must then fail (proof that the tests can fail; see README.md).
warden_hook() {
  local agent="$1"; shift
  if [[ "${E2E_SELF_CHECK:-}" == allow-all ]]; then control_hook; return; fi
  printf '%q ' "$WARDEN_BIN" hook "$agent" --addr "$WARDEN_ADDR_E2E" --token-file "$WARDEN_TOKEN_FILE_E2E" "$@"
}

control_hook() { printf 'E2E_HOOK_LOG=%q %q' "$S/control_hook.log" "$ALLOW_ALL_HOOK"; }

# in_user_env CMD…: run CMD in the project as the agent's user would (throwaway HOME, CODEX_HOME).
in_user_env() {
  ( cd "$S_PROJECT" && env -i PATH="$PATH" HOME="$S_HOME" CODEX_HOME="$S_HOME/.codex" \
      TMPDIR="$S_TMP" LANG=C.UTF-8 "$@" )
}

# ---- agents --------------------------------------------------------------------------------
# run_claude HOOK_COMMAND [claude flags…]: Claude Code in -p mode against the fake server, the
# hook on every tool (matcher "*") through --settings; with HOOK_COMMAND "" only the project's
# own .claude/settings.json applies. Output in $S/claude.out, $S/claude.err; sets AGENT_RC.
CLAUDE_ENV_EXTRA=()  # more VAR=value for Claude Code's environment
run_claude() {
  local hook="$1"; shift
  local settings="$S/claude_settings.json"
  [[ -z "$hook" ]] && echo '{}' > "$settings" || "$NODE_BIN" -e '
    const s = { hooks: { PreToolUse: [ { matcher: "*", hooks: [ { type: "command", command: process.argv[2] } ] } ] } };
    require("fs").writeFileSync(process.argv[1], JSON.stringify(s, null, 1));
  ' "$settings" "$hook"
  log "claude -p (hook: ${hook:-from the project settings})"
  ( cd "$S_PROJECT" && env -i PATH="$PATH" HOME="$S_HOME" TMPDIR="$S_TMP" LANG=C.UTF-8 \
      ANTHROPIC_BASE_URL="http://127.0.0.1:$FAKE_PORT" ANTHROPIC_API_KEY=test \
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_AUTOUPDATER=1 \
      DISABLE_ERROR_REPORTING=1 "${CLAUDE_ENV_EXTRA[@]}" \
      timeout 150 "$CLAUDE_BIN" -p "Run the scripted steps." --output-format json \
        --settings "$settings" "$@" < /dev/null > "$S/claude.out" 2> "$S/claude.err" )
  AGENT_RC=$?
  AGENT_OUT="$S/claude.out"; AGENT_ERR="$S/claude.err"
  read_tool_results
  log "claude exit $AGENT_RC"
}

# codex_config HOOK_COMMAND [toml lines for the top of config.toml…]: $S_HOME/.codex/config.toml
# for the fake server, with the hook on every tool (matcher "*"); no hook when HOOK_COMMAND is
# "". Codex's own sandbox is off (danger-full-access) so that Warden is the only guard and the
# control run can delete outside the project.
codex_config() {
  local hook="$1"; shift
  mkdir -p "$S_HOME/.codex"
  {
    echo 'model = "gpt-fake"'
    echo 'model_provider = "fake"'
    echo 'approval_policy = "never"'
    echo 'sandbox_mode = "danger-full-access"'
    echo 'check_for_update_on_startup = false'
    echo 'web_search = "disabled"'
    echo "model_catalog_json = $(js "$E2E_DIR/fixtures/codex_model_catalog.json")"
    local line; for line in "$@"; do echo "$line"; done
    echo '[model_providers.fake]'
    echo 'name = "fake"'
    echo "base_url = \"http://127.0.0.1:$FAKE_PORT/v1\""
    echo 'env_key = "FAKE_API_KEY"'
    echo 'wire_api = "responses"'
    echo '[analytics]'
    echo 'enabled = false'
    echo '[features]'
    echo 'plugins = false'
    if [[ -n "$hook" ]]; then
      echo '[[hooks.PreToolUse]]'
      echo 'matcher = "*"'
      echo '[[hooks.PreToolUse.hooks]]'
      echo 'type = "command"'
      echo "command = $(js "$hook")"
    fi
  } > "$S_HOME/.codex/config.toml"
}

# run_codex HOOK_COMMAND [toml lines…]: codex_config, then codex_exec.
run_codex() { codex_config "$@"; codex_exec; }

# codex_exec [--untrusted]: trust the config's hooks (unless --untrusted), then
# `codex exec --json` in the project. Output in $S/codex.out (events), $S/codex.err; AGENT_RC.
codex_exec() {
  [[ "${1:-}" == --untrusted ]] || codex_trust_hooks
  log "codex exec${1:+ $1}"
  ( cd "$S_PROJECT" && env -i PATH="$PATH" HOME="$S_HOME" CODEX_HOME="$S_HOME/.codex" \
      TMPDIR="$S_TMP" LANG=C.UTF-8 FAKE_API_KEY=test \
      timeout 150 "$CODEX_BIN" exec --skip-git-repo-check --json \
        "Run the scripted steps." < /dev/null > "$S/codex.out" 2> "$S/codex.err" )
  AGENT_RC=$?
  AGENT_OUT="$S/codex.out"; AGENT_ERR="$S/codex.err"
  read_tool_results
  log "codex exit $AGENT_RC"
}

# Trust the hooks of $S_HOME/.codex/config.toml the way Codex records a user's review: ask
# `codex app-server` (hooks/list) for each hook's key and current hash, append
# [hooks.state."KEY"] trusted_hash = HASH, and check that hooks/list now says "trusted".
# An untrusted Codex hook is skipped silently (the command runs), so this must not fail quietly.
codex_hooks_list() {  # prints "KEY<TAB>HASH<TAB>STATUS" per hook
  ( cd "$S_PROJECT" && env -i PATH="$PATH" HOME="$S_HOME" CODEX_HOME="$S_HOME/.codex" \
      TMPDIR="$S_TMP" LANG=C.UTF-8 timeout 60 "$NODE_BIN" -e '
    const { spawn } = require("node:child_process");
    const child = spawn(process.argv[1], ["app-server"], { stdio: ["pipe", "pipe", "inherit"] });
    let buf = "";
    const send = (o) => child.stdin.write(JSON.stringify(o) + "\n");
    child.stdout.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl); buf = buf.slice(nl + 1);
        let msg; try { msg = JSON.parse(line); } catch { continue; }
        if (msg.id === 1) {
          send({ jsonrpc: "2.0", method: "initialized" });
          send({ jsonrpc: "2.0", id: 2, method: "hooks/list", params: {} });
        } else if (msg.id === 2) {
          if (msg.error) { console.error("hooks/list: " + JSON.stringify(msg.error)); process.exit(1); }
          for (const entry of msg.result.data)
            for (const h of entry.hooks) console.log([h.key, h.currentHash, h.trustStatus].join("\t"));
          child.kill(); process.exit(0);
        }
      }
    });
    child.on("exit", (code) => { console.error("codex app-server exited " + code); process.exit(1); });
    send({ jsonrpc: "2.0", id: 1, method: "initialize",
           params: { clientInfo: { name: "warden-e2e", version: "0" }, capabilities: { experimentalApi: true } } });
  ' "$CODEX_BIN" ) 2>> "$S/codex_app_server.err"
}

codex_trust_hooks() {
  local listed key hash status n=0
  listed="$(codex_hooks_list)" || die "codex app-server hooks/list failed: $(tail -5 "$S/codex_app_server.err")"
  while IFS=$'\t' read -r key hash status; do
    [[ -n "$key" ]] || continue
    [[ "$status" == trusted || "$status" == managed ]] && { n=$((n + 1)); continue; }
    printf '\n[hooks.state.%s]\ntrusted_hash = %s\n' "$(js "$key")" "$(js "$hash")" >> "$S_HOME/.codex/config.toml"
    n=$((n + 1))
  done <<< "$listed"
  [[ $n -ge 1 ]] || die "codex app-server listed no hooks for $S_HOME/.codex/config.toml"
  # Whether Codex then runs them is checked by the tests: the control run counts the control
  # hook's calls (assert_control_hook_calls), the Warden runs see Warden's denials.
}

# ---- what came back to the model -----------------------------------------------------------
# Prints one line per tool result in the last model request that carried tools:
# "<n>\t<is_error>\t<text with newlines as \n>" (Claude tool_result, Codex *_call_output).
tool_results() { cat "$S/tool_results.tsv" 2>/dev/null; }
read_tool_results() {  # after each agent run: parse the model log once
  parse_tool_results > "$S/tool_results.tsv" || die "cannot read the model requests log $FAKE_LOG"
}
parse_tool_results() {
  "$NODE_BIN" -e '
    const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const withTools = lines.filter((l) => l.body && (Array.isArray(l.body.tools) || Array.isArray(l.body.input)));
    const last = withTools[withTools.length - 1];
    if (!last) process.exit(0);
    const text = (c) => typeof c === "string" ? c : Array.isArray(c) ? c.map((p) => p.text ?? JSON.stringify(p)).join("") : JSON.stringify(c);
    let n = 0;
    for (const m of last.body.messages || [])
      if (Array.isArray(m.content))
        for (const b of m.content)
          if (b.type === "tool_result") console.log(`${n++}\t${b.is_error ? "error" : "ok"}\t${text(b.content).replace(/\n/g, "\\n")}`);
    for (const i of Array.isArray(last.body.input) ? last.body.input : [])
      if (i && typeof i.type === "string" && i.type.endsWith("_call_output"))
        console.log(`${n++}\tcodex\t${text(i.output).replace(/\n/g, "\\n")}`);
  ' "$FAKE_LOG"
}

# The text the model received as the result of the Nth tool call (0-based, in script order).
tool_result() { tool_results | awk -F'\t' -v n="$1" '$1 == n { sub(/^[^\t]*\t[^\t]*\t/, ""); print; exit }'; }
tool_result_flag() { tool_results | awk -F'\t' -v n="$1" '$1 == n { print $2; exit }'; }

# ---- assertions ----------------------------------------------------------------------------
fail() {
  E2E_FAILURES=$((E2E_FAILURES + 1))
  echo "e2e FAIL [$E2E_SCENARIO]: $*" >&2
  {
    echo "  --- tool results the model saw:"; tool_results 2>/dev/null | sed 's/^/    /' | cut -c1-400
    echo "  --- agent stdout (tail):"; tail -c 1500 "${AGENT_OUT:-/dev/null}" 2>/dev/null | sed 's/^/    /'
    echo "  --- agent stderr (tail):"; tail -n 15 "${AGENT_ERR:-/dev/null}" 2>/dev/null | sed 's/^/    /'
    [[ -n "${DAEMON_LOG:-}" ]] && { echo "  --- daemon log (tail):"; tail -n 8 "$DAEMON_LOG" | sed 's/^/    /'; }
  } >&2
}
pass() { E2E_PASSES=$((E2E_PASSES + 1)); log "ok: $*"; }

assert_exists() { [[ -e "$1" ]] && pass "${2:-$1 exists}" || fail "${2:-expected $1 to exist}"; }
assert_missing() { [[ ! -e "$1" ]] && pass "${2:-$1 absent}" || fail "${2:-expected $1 not to exist}"; }
assert_file_is() {  # assert_file_is PATH TEXT: whole content equals TEXT plus a newline
  if [[ -f "$1" && "$(cat "$1")" == "$2" ]]; then pass "$1 holds '$2'"
  else fail "expected $1 to hold '$2'; it holds '$(cat "$1" 2>/dev/null || echo '<missing>')'"; fi
}
# assert_result N TEXT [what]: the model received TEXT in the result of tool call N.
assert_result() {
  local got; got="$(tool_result "$1")"
  [[ "$got" == *"$2"* ]] && pass "${3:-tool result $1 has '$2'}" \
    || fail "${3:-tool result $1}: expected the model to receive '$2', it got '${got:0:300}'"
}
assert_result_lacks() {
  local got; got="$(tool_result "$1")"
  [[ "$got" != *"$2"* ]] && pass "${3:-tool result $1 lacks '$2'}" \
    || fail "${3:-tool result $1}: the model received '$2': '${got:0:300}'"
}
# assert_result_is_error N: Claude flagged tool result N as an error (is_error: true).
assert_result_is_error() {
  [[ "$(tool_result_flag "$1")" == error ]] && pass "tool result $1 is an error" \
    || fail "tool result $1 should be an error (is_error true)"
}
assert_count_results() {
  local n; n="$(tool_results | wc -l)"
  [[ "$n" -eq "$1" ]] && pass "$1 tool results reached the model" \
    || fail "expected $1 tool results in the last model request, found $n (did the agent run the whole script?)"
}

# assert_control_hook_calls N: the allow-all hook was asked N times (it was really in the path).
assert_control_hook_calls() {
  local n; n="$(grep -c '"hook_event_name"' "$S/control_hook.log" 2>/dev/null)"
  [[ "${n:-0}" -eq "$1" ]] && pass "the control hook was asked $1 times" \
    || fail "the control hook was asked ${n:-0} times, expected $1 (is the hook installed and trusted?)"
}

finish() {
  E2E_FINISHED=1
  log "done: $E2E_FAILURES failure(s)"
  [[ $E2E_FAILURES -eq 0 ]] || exit 1
  exit 0
}
