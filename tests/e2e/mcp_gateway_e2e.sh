#!/usr/bin/env bash
# The real @modelcontextprotocol/server-filesystem behind the real `warden mcp-gateway`,
# driven by a client on @modelcontextprotocol/sdk (mcp/client.mjs), inside a private network
# namespace with loopback only. Decisions: the shipped rules plus one test rule that hides
# move_file from tools/list. Fails loudly when anything it needs is missing.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

if [ -z "${WARDEN_E2E_NETNS:-}" ]; then
  unshare_flags=(-n)
  [ "$(id -u)" = 0 ] || unshare_flags=(-r -n)
  unshare "${unshare_flags[@]}" true || fail "cannot create a network namespace (unshare ${unshare_flags[*]})"
  export WARDEN_E2E_NETNS=1
  exec unshare "${unshare_flags[@]}" -- "$0" "$@"
fi
ip link set lo up || fail "cannot bring up loopback in the namespace"

: "${WARDEN_BIN:?WARDEN_BIN must name the warden binary}"
: "${WARDEN_SOURCE_DIR:?WARDEN_SOURCE_DIR must name the source tree}"
here="$WARDEN_SOURCE_DIR/tests/e2e"
server_js="$here/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -x "$WARDEN_BIN" ] || fail "no warden binary at $WARDEN_BIN"
command -v node >/dev/null || fail "node is not installed (scripts/setup.sh)"
[ -f "$server_js" ] || fail "the pinned npm packages are not installed in $here/node_modules (scripts/setup.sh)"
[ -d "$here/node_modules/@modelcontextprotocol/sdk" ] || fail "@modelcontextprotocol/sdk is not installed"

work="$(mktemp -d /tmp/warden-mcp-e2e-XXXXXX)"
trap 'rm -rf "$work"' EXIT
dir="$work/project"
mkdir -p "$dir/home" "$work/rules"
printf '# Demo project\nwarden-e2e-readme-marker\n' >"$dir/README.md"
printf 'API_KEY=sk-e2e-secret-marker\n' >"$dir/.env"
cp "$here/mcp/hide_move_file.clp" "$work/rules/"

node "$here/mcp/client.mjs" "$WARDEN_BIN" "$server_js" "$dir" "$WARDEN_SOURCE_DIR/rules" "$work/rules"
