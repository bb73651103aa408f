#!/usr/bin/env python3
"""A tiny MCP server for the gateway tests (tests/agents/mcp_gateway_test.cpp).

Newline-delimited JSON-RPC on stdin/stdout. Every line it receives is appended to the log
file named by argv[1] (so a test can prove a call never reached the server). Tools:
echo (answers with its arguments as JSON text), crash (exits with status 3 without
answering), ask_client (sends the client a roots/list request and answers the call with the
client's reply), silent (never answers), garbage (writes a line that is not JSON, then nothing), plus tools only
there to be listed, refused or rewritten (secret_tool, hidden_tool, ask_tool, rewrite_me).
It is lenient the way some servers are: a method name is matched after trimming blanks and
folding case ("Tools/call " runs tools/call), so only the gateway can refuse near misses.
resources/read, resources/subscribe, prompts/get and completion/complete answer with what they
were asked (the uri, the prompt's name and arguments). ask_client_odd sends the client a
request of a method no client knows (shell/exec) and answers the call with the reply (it
is not listed).
With --linger as argv[2] it outlives its input: after stdin ends it ignores SIGTERM and
sleeps (so the gateway must kill it).
"""
import json
import signal
import sys
import time

LOG = open(sys.argv[1], "a", buffering=1)
TOOLS = ["echo", "crash", "silent", "ask_client", "garbage", "secret_tool", "hidden_tool", "ask_tool", "rewrite_me"]
waiting = {}  # server request id -> the client's call id it answers


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def result(id_, res):
    return {"jsonrpc": "2.0", "id": id_, "result": res}


def handle(msg):
    """Returns the response to msg, or None."""
    if "method" not in msg:  # a response to our own request
        call_id = waiting.pop(msg.get("id"), None)
        if call_id is not None:
            said = msg.get("result") if "result" in msg else {"error": msg.get("error", {}).get("code")}
            send(result(call_id, {"content": [{"type": "text", "text": "client said " + json.dumps(said)}]}))
        return None
    method, id_ = msg["method"].strip().lower(), msg.get("id")
    if "id" not in msg:
        return None  # notifications are only logged
    if method == "initialize":
        return result(id_, {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "fake", "version": "1"}})
    if method == "tools/list":
        return result(id_, {"tools": [{"name": t, "inputSchema": {"type": "object"}} for t in TOOLS]})
    if method == "tools/call":
        name = msg["params"]["name"]
        args = msg["params"].get("arguments", {})
        if name == "crash":
            sys.exit(3)
        if name == "silent":
            return None
        if name == "garbage":
            sys.stdout.write("this is not json\n")
            sys.stdout.flush()
            return None
        if name == "ask_client":
            waiting["srv-1"] = id_
            send({"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
            return None
        if name == "ask_client_odd":
            waiting["srv-2"] = id_
            send({"jsonrpc": "2.0", "id": "srv-2", "method": "shell/exec", "params": {"cmd": "id"}})
            send({"jsonrpc": "2.0", "method": "notifications/odd", "params": {}})
            return None
        return result(id_, {"content": [{"type": "text", "text": json.dumps({"tool": name, "args": args}, sort_keys=True)}]})
    params = msg.get("params") or {}
    if method in ("resources/read", "resources/subscribe"):
        return result(id_, {"contents": [{"uri": params.get("uri"), "text": "resource " + str(params.get("uri"))}]})
    if method == "prompts/get":
        return result(id_, {"messages": [{"role": "user", "content": {"type": "text", "text": json.dumps(params, sort_keys=True)}}]})
    if method == "completion/complete":
        return result(id_, {"completion": {"values": ["a"]}})
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": -32601, "message": "no method " + method}}


for line in sys.stdin:
    LOG.write(line)
    msg = json.loads(line)
    if isinstance(msg, list):
        out = [r for r in (handle(m) for m in msg) if r is not None]
        if out:
            sys.stdout.write(json.dumps(out) + "\n")
            sys.stdout.flush()
        continue
    r = handle(msg)
    if r is not None:
        send(r)

if sys.argv[2:3] == ["--linger"]:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    LOG.write("lingering\n")
    while True:
        time.sleep(60)
