#!/usr/bin/env python3
"""Writes rules/effects.toml from scripts/effects/effects.src.toml.

The effects table format has `aliases` for programs only. The source file also gives
subcommand tables an `aliases` list (`[program.npm.sub.install] aliases = ["i", "add", …]`);
this script writes each alias out as a copy of the subcommand's tables (its options, flags,
match entries and nested subs), under a comment naming the original, and drops the list.
Everything else is copied as it is.

    scripts/effects/expand_sub_aliases.py           # regenerate rules/effects.toml
    scripts/effects/expand_sub_aliases.py --check   # exit 1 if rules/effects.toml is stale
"""
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SRC = os.path.join(ROOT, "scripts", "effects", "effects.src.toml")
OUT = os.path.join(ROOT, "rules", "effects.toml")
HEADER = ("# GENERATED from scripts/effects/effects.src.toml by scripts/effects/expand_sub_aliases.py:\n"
          "# edit the source and regenerate (ctest -R effects_table_generated checks they agree).\n")
HDR = re.compile(r'^(\[\[?)(program\..*?)(\]\]?)\s*(#.*)?$')


def split_key(k):
    parts, cur, quote = [], "", None
    for c in k:
        if quote:
            if c == quote:
                quote = None
            else:
                cur += c
        elif c in "\"'":
            quote = c
        elif c == ".":
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    return parts


def join_key(parts):
    return ".".join(p if re.fullmatch(r"[A-Za-z0-9_-]+", p) else '"' + p + '"' for p in parts)


def aliases_of(body):
    """(aliases, body without the aliases assignment), or (None, body)."""
    for i, line in enumerate(body):
        if line.startswith("aliases = ["):
            j, text = i, line
            while "]" not in body[j]:
                j += 1
                text += "\n" + body[j]
            return json.loads(text.split("=", 1)[1]), body[:i] + body[j + 1:]
    return None, body


def trim(body):
    """Drops trailing blank and comment lines (they introduce the next table)."""
    b = list(body)
    while b and (b[-1].strip() == "" or b[-1].lstrip().startswith("#")):
        b.pop()
    return b


def expand(text):
    pre, sections = [], []
    for line in text.split("\n"):
        m = HDR.match(line)
        if m:
            sections.append({"open": m.group(1), "key": split_key(m.group(2)), "close": m.group(3), "body": []})
        elif sections:
            sections[-1]["body"].append(line)
        else:
            pre.append(line)
    while True:
        idx = next((i for i, s in enumerate(sections)
                    if s["open"] == "[" and len(s["key"]) >= 4 and s["key"][-2] == "sub"
                    and aliases_of(s["body"])[0]), None)
        if idx is None:
            break
        head = sections[idx]
        names, head["body"] = aliases_of(head["body"])
        key = head["key"]
        end = idx + 1
        while end < len(sections) and sections[end]["key"][:len(key)] == key:
            end += 1
        block = sections[idx:end]
        kept = trim(block[-1]["body"])
        tail = block[-1]["body"][len(kept):]
        block[-1]["body"] = kept
        copies = []
        for name in names:
            for n, s in enumerate(block):
                c = {"open": s["open"], "key": key[:-1] + [name] + s["key"][len(key):], "close": s["close"],
                     "body": trim(s["body"])}
                if n == 0:
                    c["comment"] = "# `%s`: as `%s`" % (name, key[-1])
                copies.append(c)
        (copies[-1] if copies else block[-1])["body"] += tail
        sections[end:end] = copies
    out = [HEADER.rstrip("\n")] + pre
    for s in sections:
        if "comment" in s:
            if out and out[-1].strip() != "":
                out.append("")
            out.append(s["comment"])
        out.append(s["open"] + join_key(s["key"]) + s["close"])
        out.extend(s["body"])
    return "\n".join(out)


def main():
    with open(SRC, encoding="utf-8") as f:
        generated = expand(f.read())
    if sys.argv[1:] == ["--check"]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != generated:
                print("rules/effects.toml is not generated from scripts/effects/effects.src.toml: "
                      "run scripts/effects/expand_sub_aliases.py", file=sys.stderr)
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(generated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
