#!/usr/bin/env python3
"""Every stable error code is in the code table and in the docs.

    scripts/error_codes_documented.py engine/diagnostic.h server/errors.h -- docs/PROTOCOL.md

Reads each `"E_…"` string constant of the headers (before `--`) and requires it to be an
entry of `code::kTable` in engine/diagnostic.h (the table `is_known` and the daemon use) and
to appear, in backquotes, in every document after `--`. Prints each code that is missing and
where; exits 1 when any is, 0 when all are (and says how many codes it checked)."""

import os
import re
import sys


def main(argv):
    if "--" not in argv or argv.index("--") == 0 or argv.index("--") == len(argv) - 1:
        print("usage: error_codes_documented.py HEADER… -- DOC…", file=sys.stderr)
        return 2
    split = argv.index("--")
    headers, docs = argv[:split], argv[split + 1:]
    constants = {}  # code -> (header, constant name)
    table = set()
    for header in headers:
        text = open(header, encoding="utf-8").read()
        for name, value in re.findall(r'constexpr\s+const\s+char\s*\*\s*(k\w+)\s*=\s*"(E_[A-Z0-9_]+)"', text):
            constants[name] = (header, value)
        for name in re.findall(r"^\s*\{(k\w+),", text, re.M):
            table.add(name)
    problems = []
    if not constants:
        problems.append(f"no E_ code constants found in {', '.join(headers)}")
    for name, (header, value) in sorted(constants.items(), key=lambda kv: kv[1][1]):
        if name not in table:
            problems.append(f"{header}: {value} ({name}) is not in code::kTable")
        for doc in docs:
            if f"`{value}`" not in open(doc, encoding="utf-8").read():
                problems.append(f"{doc}: {value} is not listed")
    for p in problems:
        print(f"FAIL: {p}", file=sys.stderr)
    print(f"error_codes_documented: {len(constants)} codes from {len(headers)} header(s), "
          f"{len(docs)} document(s), {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
