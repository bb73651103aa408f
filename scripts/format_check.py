#!/usr/bin/env python3
"""Checks that every tracked C++ file is formatted as .clang-format says.

The files are those git tracks under ROOT whose names end in .cpp, .h or .cc; each is run
through `clang-format --dry-run --Werror` with the checkout's .clang-format. A file
clang-format would change fails the check (exit 1), named with its first differing line:

    engine/policy.cpp:41:3: error: code should be clang-formatted [-Wclang-format-violations]

A missing clang-format fails too (it is a Debian package scripts/setup.sh installs), as does
a ROOT that is not a git checkout or tracks no C++ file. With --fix the same files are
formatted in place (clang-format -i) instead; run the check again after.

  scripts/format_check.py [--fix] [ROOT]      (default: the checkout this script is in)

CLANG_FORMAT names the program to run (default: clang-format on PATH). Another major version
of clang-format than Debian's may format some lines otherwise.
"""
import os
import re
import shutil
import subprocess
import sys

SUFFIXES = (".cpp", ".h", ".cc")
# Files per clang-format run: well under the limit on a command line's length.
BATCH = 100
# Lines of clang-format's own report shown at most (the list of files follows in full).
SHOWN = 200
VIOLATION = re.compile(r"^(.+?):\d+:\d+: (?:error|warning): code should be clang-formatted", re.M)


def tracked_files(root):
    """The tracked C++ files under root (relative paths), or None if root is no git checkout."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "--", *("*" + s for s in SUFFIXES)],
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    names = [n for n in out.decode("utf-8", "replace").split("\0") if n.endswith(SUFFIXES)]
    # A file deleted in the work tree but not yet in the index is not there to check.
    return sorted(n for n in names if os.path.isfile(os.path.join(root, n)))


def main(argv):
    fix = "--fix" in argv
    args = [a for a in argv if a != "--fix"]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    program = os.environ.get("CLANG_FORMAT", "clang-format")
    if shutil.which(program) is None:
        print(f"format_check: {program} not found: install the Debian package clang-format "
              "(scripts/setup.sh does)")
        return 1
    if not os.path.isfile(os.path.join(root, ".clang-format")):
        print(f"format_check: {root} has no .clang-format")
        return 1
    files = tracked_files(root)
    if files is None:
        print(f"format_check: {root} is not a git checkout: the files to check are the tracked ones")
        return 1
    if not files:
        print(f"format_check: no tracked C++ file under {root}: wrong ROOT?")
        return 1
    version = subprocess.run([program, "--version"], capture_output=True, text=True).stdout.strip()
    flags = ["-i"] if fix else ["--dry-run", "--Werror"]
    failed = set()
    output = []
    for i in range(0, len(files), BATCH):
        batch = files[i:i + BATCH]
        run = subprocess.run([program, "--style=file", *flags, *batch], cwd=root,
                             capture_output=True, text=True, errors="replace")
        if run.returncode != 0:
            named = set(VIOLATION.findall(run.stderr))
            # A failure that names no file (a bad .clang-format, a crash) fails the whole batch.
            failed |= named or set(batch)
            output.append(run.stderr)
    if fix:
        if failed:
            print("".join(output), end="")
            print(f"format_check: {program} failed on {len(failed)} file(s) ({version})")
            return 1
        print(f"formatted: {len(files)} tracked C++ files ({version})")
        return 0
    if failed:
        report = "".join(output).splitlines()
        print("\n".join(report[:SHOWN]))
        if len(report) > SHOWN:
            print(f"... ({len(report) - SHOWN} more lines)")
        print(f"format_check: {len(failed)} of {len(files)} files are not formatted ({version}):")
        for name in sorted(failed):
            print(f"  {name}")
        print("format them with: scripts/format_check.py --fix")
        return 1
    print(f"ok: {len(files)} tracked C++ files formatted ({version})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
