#!/usr/bin/env bash
# Sets up, builds, and runs the Warden daemon with the shipped rules on 127.0.0.1:9105.
# On first run it makes an agent and an admin token (kept in ./.warden/, only hashes in
# the token file) and prints how to talk to the daemon. Extra arguments go to `warden serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh >/dev/null
state=.warden
mkdir -p "$state"
chmod 700 "$state"
if [ ! -s "$state/tokens" ]; then
  for role in agent admin; do
    out=$(build/cli/warden token new --role "$role" --principal "local-$role" 2>/dev/null)
    printf '%s\n' "$out" | sed -n 's/^token: //p' > "$state/$role.token"
    printf '%s\n' "$out" | grep -E "^$role " >> "$state/tokens"
  done
  chmod 600 "$state"/*.token "$state/tokens"
fi
cat <<TXT
Warden is starting on 127.0.0.1:9105 with the rules in rules/ (Ctrl-C stops it).
Try, from another terminal in $(pwd):
  WARDEN_TOKEN=\$(cat $state/agent.token) build/cli/warden decide examples/proposals.jsonl
  WARDEN_TOKEN=\$(cat $state/admin.token) build/cli/warden status
  WARDEN_TOKEN=\$(cat $state/agent.token) python3 examples/client.py '{"target":"shell","payload":{"command":"ls"},"explanation":"look"}'
TXT
exec build/cli/warden serve --tokens "$state/tokens" --rules rules "$@"
