#!/usr/bin/env python3
"""Checks that production code includes only headers of its own folder or of a folder below it.

Each folder of production code is a library (bindings/, engine/, …); LAYERS below says which
folders each one may include from. An `#include "FOLDER/…"` of a production folder that is not
in the including folder's list is an edge against the layering, printed as

    engine/policy.cpp:12: engine may not include server/config.h (engine may include: bindings)

and the check fails (exit 1). A folder missing from LAYERS fails too, so a new library has to
be placed before it can be built upon. The allowed folders are direct dependencies: a folder
may include from a folder it lists, not from what that one lists (say so in its list).
Tests, benchmarks and fuzz targets may include anything.

  scripts/include_layers.py [ROOT]      (default: the checkout this script is in)
"""
import os
import re
import sys

# Lowest first. Every list names only folders above it in this table, so the graph has no
# cycle: a folder's headers never reach a folder that includes them.
LAYERS = {
    "bindings": [],
    "engine": ["bindings"],
    "approvals": ["bindings"],
    "reasoning": ["bindings"],
    "actuators": ["bindings", "engine"],
    "audit": ["bindings", "engine"],
    "pipeline": ["bindings", "engine", "reasoning", "actuators"],
    # The wire: frames, messages, the client. Below the daemon, the agents and the CLI.
    "protocol": ["bindings", "engine"],
    "server": ["bindings", "engine", "approvals", "audit", "reasoning", "actuators", "pipeline", "protocol"],
    # The agents reach the daemon through the protocol only, never the daemon's code.
    "agents": ["bindings", "engine", "protocol"],
    "cli": ["bindings", "engine", "approvals", "audit", "reasoning", "actuators", "pipeline", "protocol",
            "server", "agents"],
}
# Folders of the checkout that are not production libraries.
NOT_LIBRARIES = {"tests", "bench", "fuzz", "docs", "examples", "rules", "scripts", "packaging", "build"}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z0-9_]+)/([^"]+)"')


def check(root):
    problems = []
    folders = sorted(d for d in os.listdir(root)
                     if os.path.isdir(os.path.join(root, d)) and not d.startswith(".")
                     and d not in NOT_LIBRARIES and not d.startswith("build")
                     and os.path.exists(os.path.join(root, d, "CMakeLists.txt")))
    for folder in folders:
        if folder not in LAYERS:
            problems.append(f"{folder}/: a library not placed in the layering (scripts/include_layers.py LAYERS)")
    for i, (folder, allowed) in enumerate(LAYERS.items()):
        below = list(LAYERS)[:i]
        for dep in allowed:
            if dep not in below:
                problems.append(f"LAYERS: {folder} lists {dep}, which is not below it")
    edges = 0
    for folder in folders:
        if folder not in LAYERS:
            continue
        allowed = set(LAYERS[folder])
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cpp", ".hpp", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line_no, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or m.group(1) not in LAYERS or m.group(1) == folder:
                            continue
                        edges += 1
                        if m.group(1) not in allowed:
                            may = ", ".join(LAYERS[folder]) or "nothing"
                            problems.append(f"{rel}:{line_no}: {folder} may not include {m.group(1)}/{m.group(2)} "
                                            f"({folder} may include: {may})")
    return problems, edges


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems, edges = check(root)
    for p in problems:
        print(p)
    if edges == 0:
        print("no include between production folders found: wrong ROOT?")
        return 1
    if problems:
        print(f"{len(problems)} include(s) against the layering")
        return 1
    print(f"ok: {edges} includes between production folders, all downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
