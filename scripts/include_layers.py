#!/usr/bin/env python3
"""Checks the layering of production code: which folder may include and link which, and which
headers are internal to their folder.

Each folder of production code is a library (bindings/, engine/, …); LAYERS below says which
folders each one may include from and link. The build enforces it: a library compiles with its
own headers and the public headers of the libraries it links only (cmake/WardenLibrary.cmake),
so an include of any other folder is "No such file" (the layers_enforced test shows it). This
check names what the compiler cannot: an `#include "FOLDER/…"` of a production folder that is
not in the including folder's list is an edge against the layering, printed as

    engine/policy.cpp:12: engine may not include server/config.h (engine may include: bindings)

and the check fails (exit 1). So does an include through `..`, and, given the build's record of
the links (--links BUILD/include/links.txt), a library linking one its folder may not include.
A folder missing from LAYERS fails too, so a new library has to be placed before it can be
built upon. The allowed folders are direct dependencies: a folder may include from a folder it
lists, not from what that one lists (say so in its list).

Headers: each folder's CMakeLists.txt calls warden_library_headers(warden_FOLDER INTERNAL …);
a header is public unless listed there. A new header that no other folder includes goes in
that INTERNAL list (the check fails on a public header no other folder reaches, except in a
folder nothing may include, cli/); one other folders include stays out of it. The check also
fails on an include of another folder's internal header, a public header that includes an
internal one, and a listed header that does not exist.
Tests, benchmarks and fuzz targets may include anything.

  scripts/include_layers.py [ROOT] [--links BUILD/include/links.txt]
                                        (default ROOT: the checkout this script is in)
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

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
STAGED = re.compile(r"warden_library_headers\(([^)]*)\)")
HEADER_EXTENSIONS = (".h", ".cpp", ".hpp", ".cc")


def includes(path):
    """The quoted includes of a file: (line number, included name)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        for line_no, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield line_no, m.group(1)


def internal_headers(root, folder):
    """The INTERNAL list of the folder's warden_library_headers call, or None without one."""
    path = os.path.join(root, folder, "CMakeLists.txt")
    with open(path, encoding="utf-8", errors="replace") as f:
        text = "\n".join(line.split("#", 1)[0] for line in f)
    m = STAGED.search(text)
    if not m:
        return None
    words = m.group(1).split()
    return set(words[words.index("INTERNAL") + 1:]) if "INTERNAL" in words else set()


def check_headers(root, folders):
    """Internal headers: listed ones exist, stay in their folder and out of its public headers;
    a public header is one some other folder reaches."""
    problems = []
    includable = {dep for deps in LAYERS.values() for dep in deps}
    for folder in folders:
        internal = internal_headers(root, folder)
        if internal is None:
            problems.append(f"{folder}/CMakeLists.txt: does not stage its headers (warden_library_headers)")
            continue
        headers = {n for n in os.listdir(os.path.join(root, folder)) if n.endswith(".h")}
        for name in sorted(internal - headers):
            problems.append(f"{folder}/CMakeLists.txt: lists {name} as internal; there is no {folder}/{name}")
        reached = set()
        for other in folders:
            if other == folder:
                continue
            for name in sorted(os.listdir(os.path.join(root, other))):
                if not name.endswith(HEADER_EXTENSIONS):
                    continue
                for line_no, inc in includes(os.path.join(root, other, name)):
                    if not inc.startswith(folder + "/"):
                        continue
                    header = inc[len(folder) + 1:]
                    if header in internal:
                        problems.append(f"{other}/{name}:{line_no}: {inc} is internal to {folder} "
                                        f"({folder}/CMakeLists.txt)")
                    else:
                        reached.add(header)
        # The public headers those reach, through the folder's own includes.
        todo = sorted(reached)
        while todo:
            header = todo.pop()
            if header not in headers:
                continue
            for line_no, inc in includes(os.path.join(root, folder, header)):
                name = inc[len(folder) + 1:] if inc.startswith(folder + "/") else inc
                if name in internal:
                    problems.append(f"{folder}/{header}:{line_no}: the public {folder}/{header} includes "
                                    f"the internal {folder}/{name}")
                elif name in headers and name not in reached:
                    reached.add(name)
                    todo.append(name)
        if folder in includable:
            for name in sorted(headers - internal - reached):
                problems.append(f"{folder}/{name}: public, but no other folder includes it: list it "
                                f"INTERNAL in {folder}/CMakeLists.txt")
    return problems


def check_links(links_path):
    """Each library links only libraries of the folders LAYERS lets it include."""
    problems = []
    with open(links_path, encoding="utf-8") as f:
        for line in f:
            library, _, linked = line.partition(":")
            folder = library.strip().removeprefix("warden_")
            for dep in linked.split():
                dep_folder = dep.removeprefix("warden_")
                if folder in LAYERS and dep_folder not in LAYERS[folder]:
                    may = ", ".join(LAYERS[folder]) or "nothing"
                    problems.append(f"{library.strip()} links {dep}: {folder} may include: {may}")
    return problems


def check(root, links_path=None):
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
                if not name.endswith(HEADER_EXTENSIONS):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                for line_no, inc in includes(path):
                    if ".." in inc.split("/"):
                        problems.append(f"{rel}:{line_no}: {inc} goes through ..: name the folder "
                                        f"(\"server/config.h\")")
                        continue
                    dep = inc.split("/", 1)[0]
                    if "/" not in inc or dep not in LAYERS or dep == folder:
                        continue
                    edges += 1
                    if dep not in allowed:
                        may = ", ".join(LAYERS[folder]) or "nothing"
                        problems.append(f"{rel}:{line_no}: {folder} may not include {inc} "
                                        f"({folder} may include: {may})")
    problems += check_headers(root, [f for f in folders if f in LAYERS])
    if links_path:
        problems += check_links(links_path)
    return problems, edges


def main():
    args = sys.argv[1:]
    links_path = None
    if "--links" in args:
        i = args.index("--links")
        links_path = args[i + 1]
        del args[i:i + 2]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems, edges = check(root, links_path)
    for p in problems:
        print(p)
    if edges == 0:
        print("no include between production folders found: wrong ROOT?")
        return 1
    if problems:
        print(f"{len(problems)} problem(s) with the layering")
        return 1
    print(f"ok: {edges} includes between production folders, all downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
