#!/usr/bin/env python3
"""Every command and option of `warden` is in the command reference of docs/CLI.md.

    scripts/cli_reference.py WARDEN DOC

Runs `WARDEN --help`, then `WARDEN COMMAND --help` for each command it lists, at every
level (`warden audit --help` lists `verify`, `query` …), and fails (exit 1) when DOC lacks

    - a section headed ## `warden COMMAND` (## `warden audit query` for a nested one), or
    - in that section, an option the command's --help shows (each of its names: -c and
      --config), written as itself (`--config`, not `--configs`).

Each is printed as `DOC: warden audit query: option --since is not documented`. The
options of `warden` itself (but -h, --help) belong before the first command's section.
--help is every command's and is not looked for per command. A --help that lists no
command, or a run that fails, fails the check.
"""
import re
import subprocess
import sys

HEADING = re.compile(r"^(#{1,2}) ")
SECTION = re.compile(r"^## `warden ([a-z0-9 -]+)`\s*$")
HELP_NAMES = {"-h", "--help"}


def help_text(warden, path):
    run = subprocess.run([warden] + path + ["--help"], capture_output=True, text=True, timeout=60)
    if run.returncode != 0:
        raise RuntimeError("%s --help exited %d: %s" % (" ".join(["warden"] + path), run.returncode,
                                                        run.stderr.strip()))
    return run.stdout


def blocks(text):
    """The entries of each block of a CLI11 --help ("Options:", "Subcommands:" …): the first
    word of every line indented by two spaces, the block's name as the key."""
    out = {}
    current = None
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*):$", line)
        if m:
            current = out.setdefault(m.group(1), [])
        elif current is not None and re.match(r"^  \S", line):
            current.append(line.split()[0])
        elif not line.startswith(" "):
            current = None
    return out


def commands(warden):
    """(path, option names) for `warden` and every command under it, in --help's order."""
    found = []

    def walk(path):
        b = blocks(help_text(warden, path))
        names = []
        for first in b.get("Options", []):
            names += [n for n in first.split(",") if n.startswith("-")]
        found.append((path, names))
        for sub in b.get("Subcommands", []):
            walk(path + [sub])

    walk([])
    return found


def sections(doc_text):
    """The text of each `## \\`warden …\\`` section (up to the next # or ## heading), by
    command, and the text before the first of them."""
    out = {}
    preface = []
    current = None
    for line in doc_text.splitlines():
        m = SECTION.match(line)
        if m:
            current = m.group(1).strip()
            out[current] = []
            continue
        if HEADING.match(line):
            current = None
        if current is not None:
            out[current].append(line)
        elif not out:
            preface.append(line)
    return {k: "\n".join(v) for k, v in out.items()}, "\n".join(preface)


def mentions(text, option):
    return re.search(r"(?<![\w-])" + re.escape(option) + r"(?![\w-])", text) is not None


def check(warden, doc):
    with open(doc, encoding="utf-8") as f:
        documented, preface = sections(f.read())
    found = commands(warden)
    problems = []
    if len(found) < 2:
        problems.append("%s: `warden --help` lists no command" % doc)
    for path, options in found:
        name = " ".join(path)
        text = documented.get(name) if path else preface
        if text is None:
            problems.append("%s: warden %s: the command has no section (## `warden %s`)" % (doc, name, name))
            continue
        for option in options:
            if option not in HELP_NAMES and not mentions(text, option):
                problems.append("%s: warden%s: option %s is not documented" %
                                (doc, " " + name if name else "", option))
    return problems, len(found) - 1


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    try:
        problems, count = check(argv[1], argv[2])
    except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
        print("cli_reference: %s" % e, file=sys.stderr)
        return 1
    for p in problems:
        print(p)
    if problems:
        return 1
    print("cli_reference: warden and its %d commands, every one and its options documented" % count)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
