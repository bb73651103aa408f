#!/usr/bin/env python3
"""Fails when a folder includes a header of a folder above it.

    scripts/include_edges.py DIR=ABOVE,ABOVE... ...

Each DIR's *.h and *.cpp files may not `#include "ABOVE/…"`: the build links the layers in
one direction (protocol/ below the daemon, the agents and the CLI; agents/ a client of the
protocol, not of the daemon), and this keeps a header-only include from crossing back.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/')


def main(rules):
    bad = 0
    for rule in rules:
        folder, _, above = rule.partition('=')
        forbidden = set(above.split(','))
        for name in sorted(os.listdir(folder)):
            if not name.endswith(('.h', '.cpp')):
                continue
            with open(os.path.join(folder, name), encoding='utf-8') as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if m and m.group(1) in forbidden:
                        print(f'{folder}/{name}:{number}: includes {m.group(1)}/, which is above {folder}/')
                        bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
