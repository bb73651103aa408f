#!/usr/bin/env bash
# MCP methods other than tools/call against a real server built on @modelcontextprotocol/sdk
# (mcp/resource_server.mjs: a file:// resource template and a prompt that embeds a file).
# Control: the server alone hands out the credential (.env) through resources/read and
# prompts/get — so the attacks are real. Through `warden mcp-gateway` with the shipped rules:
# resources/read of .env is refused as a credential read, prompts/get is decided (the
# default: denied), near-miss method names are refused, and a workspace file still reads.
# No network is used (stdio only).
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }

: "${WARDEN_BIN:?WARDEN_BIN must name the warden binary}"
: "${WARDEN_SOURCE_DIR:?WARDEN_SOURCE_DIR must name the source tree}"
here="$WARDEN_SOURCE_DIR/tests/e2e"
server_js="$here/mcp/resource_server.mjs"
[ -x "$WARDEN_BIN" ] || fail "no warden binary at $WARDEN_BIN"
command -v node >/dev/null || fail "node is not installed (scripts/setup.sh)"
command -v python3 >/dev/null || fail "python3 is not installed"
[ -d "$here/node_modules/@modelcontextprotocol/sdk" ] ||
  fail "the pinned npm packages are not installed in $here/node_modules (scripts/setup.sh)"

work="$(mktemp -d /tmp/warden-mcp-resources-XXXXXX)"
trap 'rm -rf "$work"' EXIT
dir="$work/project"
mkdir -p "$dir/home"
printf 'readme-marker\n' >"$dir/README.md"
printf 'API_KEY=sk-resource-secret-marker\n' >"$dir/.env"

init='{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}'
{
  echo "$init"
  echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"resources/read\",\"params\":{\"uri\":\"file://$dir/.env\"}}"
  echo "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"prompts/get\",\"params\":{\"name\":\"summarize\",\"arguments\":{\"path\":\"$dir/.env\"}}}"
  echo "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{\"uri\":\"file://$dir/.en%76\"}}"
  echo "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"Resources/read\",\"params\":{\"uri\":\"file://$dir/.env\"}}"
  echo "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{\"uri\":\"file://$dir/README.md\"}}"
} >"$work/lines"

control="$(python3 "$here/mcp/raw_lines.py" "$work/lines" -- node "$server_js" 2>"$work/server.err")"
echo "--- server alone ---"; echo "$control"
for n in 2 3 4; do
  [ "$(echo "$control" | sed -n "${n}p" | grep -c sk-resource-secret-marker)" = 1 ] ||
    fail "control: the server alone did not hand out .env on answer $n; the test cannot show anything"
done
echo "$control" | sed -n 6p | grep readme-marker >/dev/null || fail "control: README.md was not read"

gated="$(python3 "$here/mcp/raw_lines.py" "$work/lines" -- "$WARDEN_BIN" mcp-gateway --server-name files \
  --rules "$WARDEN_SOURCE_DIR/rules" --workspace "$dir" --home "$dir/home" --on-approval-required deny \
  -- node "$server_js" 2>"$work/gateway.err")"
echo "--- through the gateway ---"; echo "$gated"
if echo "$gated" | grep sk-resource-secret-marker >/dev/null; then cat "$work/gateway.err"; fail "the secret came back through the gateway"; fi
echo "$gated" | sed -n 2p | grep '"code":-32001.*credential' >/dev/null || fail "resources/read of .env was not refused as a credential read"
echo "$gated" | sed -n 3p | grep '"code":-32001' >/dev/null || fail "prompts/get was not decided"
echo "$gated" | sed -n 4p | grep '"code":-32001.*credential' >/dev/null || fail "resources/read of an escaped .env was not refused"
echo "$gated" | sed -n 5p | grep '"code":-32601' >/dev/null || fail "the near-miss method Resources/read was not refused"
echo "$gated" | sed -n 6p | grep readme-marker >/dev/null || fail "the workspace README.md did not read through the gateway"
echo "OK"
