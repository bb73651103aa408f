#!/usr/bin/env python3
"""Shows that the compiler enforces the layering (cmake/WardenLibrary.cmake): a file compiled
with a library's include path finds the headers of the libraries it links and its own internal
ones, and not a header of a folder it does not link, nor another library's internal header
("No such file"). No production target has the checkout's root on its include path.

The include paths are the build's own record (BUILD/include/TARGET.dirs, written at generate
time from each target's INCLUDE_DIRECTORIES, those its links bring included).

  scripts/layers_enforced.py CXX BUILD_DIR SOURCE_DIR
"""
import os
import subprocess
import sys
import tempfile

# (target, header, found?): what a file of the target's folder may and may not include.
CASES = [
    ("warden_engine", "bindings/text.h", True),
    ("warden_engine", "engine/policy_impl.h", True),  # its own internal header
    ("warden_engine", "server/config.h", False),  # a folder above it
    ("warden_engine", "bindings/shell_internal.h", False),  # another library's internal header
    ("warden_server", "engine/engine.h", True),
    ("warden_server", "engine/policy_impl.h", False),
    ("warden_agents", "protocol/client.h", True),
    ("warden_agents", "server/daemon.h", False),  # the agents reach the daemon by the wire only
    ("warden_bindings", "engine/engine.h", False),
    ("warden", "server/daemon.h", True),
    ("warden", "server/session.h", False),
]

# How GCC and clang say that an include is not on the include path.
NOT_FOUND = ("No such file", "file not found")


def include_dirs(build, target):
    with open(os.path.join(build, "include", target + ".dirs"), encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def preprocess(cxx, dirs, header, tmp):
    """Runs the preprocessor on a file that includes only HEADER: (exit status, its errors)."""
    probe = os.path.join(tmp, "probe.cpp")
    with open(probe, "w") as f:
        f.write(f'#include "{header}"\n')
    args = [cxx, "-std=c++20", "-E", "-o", os.devnull] + [f"-I{d}" for d in dirs] + [probe]
    done = subprocess.run(args, capture_output=True, text=True)
    return done.returncode, done.stderr


def main():
    cxx, build, source = sys.argv[1:4]
    problems = []
    root = os.path.realpath(source)
    targets = sorted(n[:-len(".dirs")] for n in os.listdir(os.path.join(build, "include")) if n.endswith(".dirs"))
    if "warden" not in targets or "warden_engine" not in targets:
        problems.append(f"no include paths recorded in {build}/include: wrong BUILD_DIR?")
    for target in targets:
        if any(os.path.realpath(d) == root for d in include_dirs(build, target)):
            problems.append(f"{target}: the checkout's root is on its include path")
    with tempfile.TemporaryDirectory() as tmp:
        for target, header, found in CASES:
            status, errors = preprocess(cxx, include_dirs(build, target), header, tmp)
            if found and status != 0:
                problems.append(f"{target}: {header} not found:\n{errors}")
            elif not found and status == 0:
                problems.append(f"{target}: {header} found, against the layering")
            elif not found and not (header in errors and any(m in errors for m in NOT_FOUND)):
                problems.append(f"{target}: {header} failed otherwise than not found:\n{errors}")
            else:
                print(f"ok: {target} {'finds' if found else 'does not find'} {header}")
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
