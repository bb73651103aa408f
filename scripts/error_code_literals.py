#!/usr/bin/env python3
"""Every stable error code is written once: in the table of engine/diagnostic.h.

    scripts/error_code_literals.py [ROOT]   (default: the checkout this script is in)

Reads the production folders (those scripts/include_layers.py places) and fails (exit 1) on
a string literal that is an error code, `"E_…"` (or `\\"E_…\\"` inside a JSON text), anywhere
but engine/diagnostic.h, printing

    agents/hook_run.cpp:59: "E_DECIDER" written as a literal: use code::kDecider (engine/diagnostic.h)

("not in the table" when no constant has that code). A code written as a literal can drift
from the table, the docs and every client that matches on it. Prefixes such as "E_" are
not codes and are not reported.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_layers  # noqa: E402

TABLE = os.path.join("engine", "diagnostic.h")
LITERAL = re.compile(r'(\\?)"(E_[A-Z0-9_]*[A-Z0-9])\1"')
CONSTANT = re.compile(r'constexpr\s+const\s+char\s*\*\s*(k\w+)\s*=\s*"(E_[A-Z0-9_]+)"')


def check(root):
    with open(os.path.join(root, TABLE), encoding="utf-8") as f:
        constants = {code: name for name, code in CONSTANT.findall(f.read())}
    problems = []
    files = 0
    for folder in include_layers.LAYERS:
        for dirpath, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp", ".hpp", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel == TABLE:
                    continue
                files += 1
                with open(path, encoding="utf-8", errors="replace") as f:
                    for line_no, line in enumerate(f, 1):
                        for m in LITERAL.finditer(line):
                            code = m.group(2)
                            use = (f"use code::{constants[code]} ({TABLE})" if code in constants
                                   else f"not in the table: add it to {TABLE}")
                            problems.append(f'{rel}:{line_no}: "{code}" written as a literal: {use}')
    return problems, files, len(constants)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    problems, files, codes = check(root)
    for p in problems:
        print(p)
    if codes == 0 or files == 0:
        print(f"no codes in {TABLE} or no production files: wrong ROOT?")
        return 1
    if problems:
        print(f"{len(problems)} error code literal(s) outside {TABLE}")
        return 1
    print(f"ok: {codes} codes in {TABLE}, none written elsewhere in {files} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
