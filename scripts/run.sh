#!/usr/bin/env bash
# Sets up, builds, and runs the Warden daemon with the shipped rules on 127.0.0.1:9105.
# Its state — an agent, an admin and an approver token made on first run, and the token file
# (only hashes) — lives outside the checkout, in ${XDG_STATE_HOME:-~/.local/state}/warden, so
# an agent working in the checkout cannot read the tokens. The agent's workspace is
# $WARDEN_WORKSPACE, by default the examples' /home/user/project; never the checkout, which
# holds the rules and the binary (the daemon refuses to start if it would). `warden submit`
# and `warden chat` use a scripted model (examples/model-script.jsonl) configured in
# $state/warden.toml. Extra arguments go to `warden serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
# Builds only what the daemon needs (the `warden` binary), showing ninja's progress.
WARDEN_TARGETS=warden scripts/setup.sh
state="${XDG_STATE_HOME:-$HOME/.local/state}/warden"
umask 077
mkdir -p "$state"
chmod 700 "$state"
# A token per role: the agent's, an admin's (status), an approver's (pending, approve, deny).
for role in agent admin approver; do
  if [ ! -s "$state/$role.token" ]; then
    out=$(build/cli/warden token new --role "$role" --principal "local-$role" 2>/dev/null)
    printf '%s\n' "$out" | sed -n 's/^token: //p' > "$state/$role.token"
    printf '%s\n' "$out" | grep -E "^$role " >> "$state/tokens"
  fi
done
chmod 600 "$state"/*.token "$state/tokens"
# The rules must not be writable by others (the daemon checks, as sshd does).
chmod -R go-w rules
workspace_args=()
if [ -n "${WARDEN_WORKSPACE:-}" ]; then workspace_args=(--workspace "$WARDEN_WORKSPACE"); fi
# The pipeline behind `warden submit` / `warden chat`, offline: a model that answers from
# examples/model-script.jsonl (edit $state/warden.toml for a real provider; README "Reason
# and act"). The shell actuator runs approved commands in the workspace, so it must exist.
if [ ! -s "$state/warden.toml" ]; then
  cat > "$state/warden.toml" <<TOML
[[reasoning.providers]]
name = "demo"
kind = "script"
script = "$(pwd)/examples/model-script.jsonl"
TOML
fi
mkdir -p "${WARDEN_WORKSPACE:-/home/user/project}"
cat <<TXT
Warden is starting on 127.0.0.1:9105 with the rules in rules/ (Ctrl-C stops it).
Tokens and state: $state (outside the checkout).
Agent workspace: ${WARDEN_WORKSPACE:-/home/user/project (set WARDEN_WORKSPACE to change it)}
Try, from another terminal in $(pwd):
  WARDEN_TOKEN=\$(cat $state/agent.token) build/cli/warden decide examples/proposals.jsonl
  WARDEN_TOKEN=\$(cat $state/admin.token) build/cli/warden status
  WARDEN_TOKEN=\$(cat $state/agent.token) build/cli/warden submit "tidy up my home directory"
  WARDEN_TOKEN=\$(cat $state/agent.token) build/cli/warden chat
  WARDEN_TOKEN=\$(cat $state/agent.token) build/cli/warden submit "create the release notes"
  WARDEN_TOKEN=\$(cat $state/approver.token) build/cli/warden pending   # then: warden approve ID
  WARDEN_TOKEN=\$(cat $state/agent.token) python3 examples/client.py '{"target":"shell","payload":{"command":"ls"},"explanation":"look"}'
Every decision is recorded in $state/audit.jsonl (chained, signed); check and read it with:
  build/cli/warden audit verify $state/audit.jsonl --key $state/audit-signing.pem.pub
  build/cli/warden audit query $state/audit.jsonl --since 1h
TXT
exec build/cli/warden serve --config "$state/warden.toml" --tokens "$state/tokens" --rules rules --state-dir "$state" \
  "${workspace_args[@]}" "$@"
