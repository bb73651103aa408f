#!/usr/bin/env bash
# Red-team lines against the real @modelcontextprotocol/server-filesystem: a client line with
# duplicate member names reads one way in RapidJSON (the first) and another in the server's
# JSON.parse (the last). Control: the server alone reads the second path (.env) — so the
# attack is real; through `warden mcp-gateway` with the shipped rules the same lines are
# refused and the secret never comes back. No network is used (stdio only).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

: "${WARDEN_BIN:?WARDEN_BIN must name the warden binary}"
: "${WARDEN_SOURCE_DIR:?WARDEN_SOURCE_DIR must name the source tree}"
here="$WARDEN_SOURCE_DIR/tests/e2e"
server_js="$here/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
[ -x "$WARDEN_BIN" ] || fail "no warden binary at $WARDEN_BIN"
command -v node >/dev/null || fail "node is not installed (scripts/setup.sh)"
command -v python3 >/dev/null || fail "python3 is not installed"
[ -f "$server_js" ] || fail "the pinned npm packages are not installed in $here/node_modules (scripts/setup.sh)"

work="$(mktemp -d /tmp/warden-mcp-redteam-XXXXXX)"
trap 'rm -rf "$work"' EXIT
dir="$work/project"
mkdir -p "$dir/home"
printf 'readme-marker\n' >"$dir/README.md"
printf 'API_KEY=sk-redteam-secret-marker\n' >"$dir/.env"

init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"redteam","version":"0"}}}'
{
  echo "$init"
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  # 1: duplicate arguments (first README.md, last .env)
  echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"$dir/README.md\"},\"arguments\":{\"path\":\"$dir/.env\"}}}"
  # 2: duplicate method (first ping, last tools/call)
  echo "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"$dir/.env\"}}}"
  # 3: a plain read of README.md (both sides agree)
  echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"read_text_file\",\"arguments\":{\"path\":\"$dir/README.md\"}}}"
} >"$work/lines"

control="$(python3 "$here/mcp/raw_lines.py" "$work/lines" -- node "$server_js" "$dir" 2>/dev/null)"
echo "--- server alone ---"; echo "$control"
[ "$(echo "$control" | sed -n 2p | grep -c sk-redteam-secret-marker)" = 1 ] ||
  fail "control: the server alone did not read the last duplicate (.env); the test cannot show anything"
[ "$(echo "$control" | sed -n 3p | grep -c sk-redteam-secret-marker)" = 1 ] ||
  fail "control: the server alone did not run the last duplicate method (tools/call)"

gated="$(python3 "$here/mcp/raw_lines.py" "$work/lines" -- "$WARDEN_BIN" mcp-gateway --server-name filesystem \
  --rules "$WARDEN_SOURCE_DIR/rules" --workspace "$dir" --home "$dir/home" --on-approval-required deny \
  -- node "$server_js" "$dir" 2>"$work/gateway.err")"
echo "--- through the gateway ---"; echo "$gated"
if echo "$gated" | grep sk-redteam-secret-marker >/dev/null; then cat "$work/gateway.err"; fail "the secret came back through the gateway"; fi
echo "$gated" | sed -n 2p | grep '"error".*duplicate member name' >/dev/null || fail "line 1 was not refused as ambiguous"
echo "$gated" | sed -n 3p | grep '"error".*duplicate member name' >/dev/null || fail "line 2 was not refused as ambiguous"
echo "$gated" | sed -n 4p | grep 'readme-marker' >/dev/null || fail "the plain README.md read did not pass"
echo "OK"
