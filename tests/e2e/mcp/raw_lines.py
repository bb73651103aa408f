#!/usr/bin/env python3
"""Sends raw JSON-RPC lines to an MCP stdio command and prints each answer to a request.

Usage: raw_lines.py LINES_FILE -- COMMAND [ARGS...]
LINES_FILE holds one JSON-RPC line per line, sent as is (they may be JSON that a parser
would reject or read differently: that is the point). After each line that carries an "id"
the script waits for one line back and prints it; notifications get no answer. Used by
tests/e2e/mcp_redteam_e2e.sh.
"""
import select
import subprocess
import sys

lines_file = sys.argv[1]
assert sys.argv[2] == "--"
proc = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

def answer():
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    if not ready:
        return "NO ANSWER"
    return proc.stdout.readline().decode("utf-8", "replace").rstrip("\n")

with open(lines_file, "rb") as f:
    for raw in f:
        raw = raw.rstrip(b"\n")
        if not raw:
            continue
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()
        if b'"id"' in raw:
            print(answer(), flush=True)
proc.stdin.close()
proc.wait(timeout=30)
