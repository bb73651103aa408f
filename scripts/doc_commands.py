#!/usr/bin/env python3
"""Runs the shell commands of the documentation, so that the docs cannot rot.

    scripts/doc_commands.py --warden build/cli/warden --source . README.md docs/*.md

Every code block of a checked Markdown file is fenced and says what it is (an indented code
block, or a fence without an info string, is an error: the checker cannot tell a command
from an output):

  ```sh                      shell commands: run, in file order, and each must succeed
  ```sh skip-test: REASON    shell commands that cannot run in a test (they install packages,
                             build, need a real agent CLI, a model, a server's own paths, run
                             until interrupted): listed with their reason, never run
  ```text, ```toml, ```json, ```jsonl, ```clips, ```cpp
                             not commands: output, synopses, configuration, rule code

Lines of `text` and `sh skip-test` blocks are not run, but a line showing a `warden` command
(a synopsis, `$ warden …` in a transcript) is checked: every --option on it (before a `#`)
must be listed by that subcommand's --help, so a renamed or removed option fails here too.

`bash`, `shell`, `console` and `sh` with any other word are refused, so a command block
cannot slip past by its spelling.

How `sh` blocks run. Each file gets a scratch directory: HOME is its `home/`, the commands
start in `home/` too, which holds copies of the checkout's `rules/` (also the shipped pack,
$WARDEN_RULES) and `examples/` and `build/cli/warden`; `warden` (the build's binary) is first
on PATH. Each block runs in its
own `bash -e -o pipefail` (so every command must exit 0), one after the other: state passes
between blocks through files, and a process a block starts in the background (a daemon)
runs until the file's last block is done, then it is stopped. A command whose documented
exit status is not 0 says so with a trailing comment, `# exit N` (`# exit 1: rejected`):
it must exit N exactly. The files run in a private network namespace (`unshare -n`, which
needs root), so nothing reaches the network and a daemon's default port is free.

The run stops a file at its first failing block and reports the file and line, the
command, its exit status and its output; the checker fails when any block failed, when a
file has a block it cannot classify, or when no block ran at all. It prints how many blocks
ran and lists the skipped ones with their reasons.
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NOT_COMMANDS = {"text", "toml", "json", "jsonl", "clips", "cpp"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")  # any indentation: fences inside list items too
EXIT_MARK = re.compile(r"\s#\s*exit\s+(\d+)\b[^'\"]*$")
BLOCK_TIMEOUT = 120


class Block:
    def __init__(self, path, line, kind, reason, text):
        self.path, self.line, self.kind, self.reason, self.text = path, line, kind, reason, text

    def where(self):
        return f"{self.path}:{self.line}"


def parse_markdown(path, text):
    """Returns (blocks, errors). Every fenced block is classified; unclassifiable ones are errors."""
    blocks, errors = [], []
    lines = text.split("\n")
    i = 0
    prev_blank = True
    in_list = False
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if m:
            indent, fence, info = m.group(1), m.group(2), m.group(3).strip()
            start = i + 1
            body = []
            i += 1
            close = re.compile(r"^\s*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}\s*$")
            while i < len(lines) and not close.match(lines[i]):
                body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
                i += 1
            if i >= len(lines):
                errors.append(f"{path}:{start}: code block never closed")
                break
            i += 1
            prev_blank = False
            word = info.split()[0] if info else ""
            if not info:
                errors.append(f"{path}:{start}: a fence without an info string: say what the block "
                              f"is (sh, sh skip-test: REASON, text, toml, json, clips …)")
            elif word == "sh":
                rest = info[2:].strip()
                if not rest:
                    blocks.append(Block(path, start, "run", "", "\n".join(body)))
                else:
                    sm = re.match(r"^skip-test:\s*(\S.*)$", rest)
                    if sm:
                        blocks.append(Block(path, start, "skip", sm.group(1), "\n".join(body)))
                    else:
                        errors.append(f"{path}:{start}: unknown sh fence `{info}`: write `sh` or "
                                      f"`sh skip-test: REASON`")
            elif word in NOT_COMMANDS:
                if word == "text":
                    blocks.append(Block(path, start, "text", "", "\n".join(body)))
            else:
                errors.append(f"{path}:{start}: fence `{info}`: commands are `sh` blocks, other "
                              f"blocks one of {', '.join(sorted(NOT_COMMANDS))}")
            continue
        # An indented code block: four spaces after a blank line, outside a list item.
        stripped = line.strip()
        if re.match(r"^\s*([-*+]|\d+[.)])\s", line):
            in_list = True
        elif not stripped:
            pass
        elif not line.startswith(" "):
            in_list = False
        if line.startswith("    ") and stripped and prev_blank and not in_list:
            errors.append(f"{path}:{i + 1}: an indented code block: fence it and say what it is "
                          f"(```sh, ```sh skip-test: REASON, ```text …)")
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                i += 1
            prev_blank = False
            continue
        prev_blank = not stripped
        i += 1
    return blocks, errors


def logical_lines(text):
    """Splits a block into logical lines (continued by a trailing backslash, |, && or ||),
    each with the index of its first physical line."""
    out, cur, first = [], [], 0
    for n, line in enumerate(text.split("\n")):
        if not cur:
            first = n
        cur.append(line)
        s = line.rstrip()
        if s.endswith("\\") or s.endswith("|") or s.endswith("&&"):
            continue
        out.append((first, "\n".join(cur)))
        cur = []
    if cur:
        out.append((first, "\n".join(cur)))
    return out


PROLOGUE = ("set -e -o pipefail\n"
            "trap '__s=$?; echo \"$LINENO $__s\" >> \"$DOC_COMMANDS_ERR\"' ERR\n")


def script_for(block):
    """The bash script of a block, and the doc line of each of its lines: `# exit N` lines
    become a check of that status; the prologue records the script line of a failing command."""
    parts = [PROLOGUE]
    lines = [block.line + 1] * PROLOGUE.count("\n")  # script line i + 1 -> doc line
    heredoc_end = None
    for first, line in logical_lines(block.text):
        doc_line = block.line + 1 + first
        if heredoc_end is not None:
            text = line
            if line.strip() == heredoc_end:
                heredoc_end = None
        else:
            hd = re.search(r"(?<!<)<<-?\s*['\"]?([A-Za-z_]+)['\"]?", line)  # not a here-string (<<<)
            m = EXIT_MARK.search(line)
            if m and hd:
                raise ValueError(f"{block.path}:{doc_line}: `# exit N` on a line with a "
                                 f"here-document is not supported")
            if m:
                want = int(m.group(1))
                text = (f"__rc=0\n{{ {line[:m.start()]}\n}} || __rc=$?\n"
                        f"if [ \"$__rc\" != {want} ]; then echo \"doc_commands: {block.path}:{doc_line}: "
                        f"exit $__rc, the doc says exit {want}\" >&2; exit 125; fi")
            else:
                text = line
            if hd:
                heredoc_end = hd.group(1)
        parts.append(text + "\n")
        lines += [doc_line] * (text.count("\n") + 1)
    return "".join(parts), lines


def failing_line(err_path, lines):
    """The doc line of the command that failed, from the ERR trap's record (None if none)."""
    try:
        with open(err_path) as f:
            records = f.read().split()
    except OSError:
        return None
    if len(records) < 2:
        return None
    script_line = int(records[-2])
    return lines[script_line - 1] if 0 < script_line <= len(lines) else None


WARDEN_LINE = re.compile(r"^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:build/cli/)?warden\s+(.*)$")


def check_options(blocks, warden):
    """The lines of `text` and `sh skip-test` blocks that are not run but show a `warden`
    command (synopses, transcripts): each --option before a comment must be one the
    subcommand's --help lists. Returns the problems."""
    helps, problems = {}, []

    def help_of(words):
        key = " ".join(words)
        if key not in helps:
            r = subprocess.run([warden] + words + ["--help"], capture_output=True, text=True)
            helps[key] = r.stdout + r.stderr if r.returncode == 0 else None
        return helps[key]

    for block in blocks:
        if block.kind not in ("text", "skip"):
            continue
        for n, line in enumerate(block.text.split("\n")):
            m = WARDEN_LINE.match(line.strip())
            if not m:
                continue
            words = m.group(1).split("#")[0].split()
            sub = []  # the longest run of subcommand words warden knows
            for w in words:
                if not re.match(r"^[a-z][a-z-]*$", w) or help_of(sub + [w]) is None \
                        or help_of(sub + [w]) == help_of(sub):
                    break
                sub.append(w)
            if not sub:
                continue
            text = help_of(sub)
            for option in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", " ".join(words)):
                if option not in text:
                    problems.append(f"{block.path}:{block.line + 1 + n}: `warden {' '.join(sub)}` "
                                    f"has no option {option} (warden {' '.join(sub)} --help)")
    return problems


def prepare_scratch(root, source, warden):
    home = os.path.join(root, "home")
    os.makedirs(home)
    for sub in ("rules", "examples"):
        shutil.copytree(os.path.join(source, sub), os.path.join(home, sub), symlinks=True)
    # The daemon refuses rules others could change: the copies are the owner's alone.
    for top, dirs, files in os.walk(os.path.join(home, "rules")):
        for name in dirs + files:
            path = os.path.join(top, name)
            if not os.path.islink(path):
                os.chmod(path, os.stat(path).st_mode & ~0o022)
    os.makedirs(os.path.join(home, "build", "cli"))
    os.symlink(warden, os.path.join(home, "build", "cli", "warden"))
    bindir = os.path.join(root, "bin")
    os.makedirs(bindir)
    os.symlink(warden, os.path.join(bindir, "warden"))
    return home, bindir


def block_env(home, bindir):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("WARDEN_") and k not in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "CDPATH")}
    # WARDEN_RULES: the shipped pack a command loads without --rules is the scratch copy.
    env.update(HOME=home, PATH=bindir + os.pathsep + env.get("PATH", "/usr/bin:/bin"),
               LC_ALL="C.UTF-8", TERM="dumb", WARDEN_RULES=os.path.join(home, "rules"))
    return env


def stop_groups(groups):
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.time() + 5
    for pgid in groups:
        while time.time() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def run_file(path, blocks, source, warden, keep):
    """Runs the file's sh blocks in order; returns (ran, failure text or None)."""
    root = tempfile.mkdtemp(prefix="doc-commands-")
    home, bindir = prepare_scratch(root, source, warden)
    env = block_env(home, bindir)
    groups, ran = [], 0
    try:
        for block in blocks:
            if block.kind != "run":
                continue
            try:
                script, lines = script_for(block)
            except ValueError as e:
                return ran, str(e)
            out_path = os.path.join(root, f"block-{block.line}.out")
            err_path = os.path.join(root, f"block-{block.line}.err")
            with open(out_path, "wb") as out:
                proc = subprocess.Popen(["bash", "--noprofile", "--norc", "-c", script], cwd=home,
                                        env=dict(env, DOC_COMMANDS_ERR=err_path),
                                        stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                groups.append(proc.pid)
                try:
                    rc = proc.wait(timeout=BLOCK_TIMEOUT)
                except subprocess.TimeoutExpired:
                    rc = f"timeout after {BLOCK_TIMEOUT} s"
            ran += 1
            if rc != 0:
                with open(out_path, "rb") as f:
                    output = f.read().decode("utf-8", "replace")
                if len(output) > 8000:
                    output = output[:3000] + "\n[…]\n" + output[-4000:]
                at = failing_line(err_path, lines)
                command = ""
                if at is not None:
                    command = (f"\n{block.path}:{at}: this command failed: "
                               f"{block.text.split(chr(10))[at - block.line - 1].strip()}")
                logs = ""  # what a background process (a daemon) wrote to a log beside it
                for name in sorted(os.listdir(home)):
                    if name.endswith(".log") and os.path.isfile(os.path.join(home, name)):
                        with open(os.path.join(home, name), "rb") as f:
                            tail = f.read()[-3000:].decode("utf-8", "replace")
                        logs += f"--- {name} (the end)\n{tail}"
                return ran, (f"{block.where()}: the block failed (exit {rc}){command}\n"
                             f"--- the block\n{block.text}\n--- its output\n{output}{logs}---")
        return ran, None
    finally:
        stop_groups(groups)
        if keep:
            print(f"  scratch directory kept: {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)


def enter_network_namespace():
    """Re-runs this script in a private network namespace with loopback up."""
    if os.environ.get("DOC_COMMANDS_NETNS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        return
    if shutil.which("unshare") is None:
        sys.exit("doc_commands: FAIL: unshare not found (util-linux): the doc commands must run "
                 "in a private network namespace")
    env = dict(os.environ, DOC_COMMANDS_NETNS="1")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        sys.exit("doc_commands: FAIL: cannot create a private network namespace (unshare -n: "
                 f"{probe.stderr.strip() or 'no message'}); run as root")
    os.execvpe("unshare", ["unshare", "-n", "--", sys.executable] + sys.argv, env)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run the sh blocks of Markdown files (see the docstring).")
    ap.add_argument("--warden", required=True, help="the warden binary to put on PATH")
    ap.add_argument("--source", required=True, help="the checkout (rules/ and examples/ are copied)")
    ap.add_argument("--list", action="store_true", help="list the blocks, run nothing")
    ap.add_argument("--keep", action="store_true", help="keep the scratch directories")
    ap.add_argument("--no-netns", action="store_true",
                    help="run without a private network namespace (the checker's own tests)")
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    warden = os.path.abspath(args.warden)
    source = os.path.abspath(args.source)
    if not os.access(warden, os.X_OK):
        print(f"doc_commands: FAIL: {warden} is not an executable", file=sys.stderr)
        return 1

    parsed, errors = [], []
    for path in args.files:
        shown = os.path.relpath(path, source) if os.path.abspath(path).startswith(source + os.sep) else path
        with open(path, encoding="utf-8") as f:
            blocks, errs = parse_markdown(shown, f.read())
        parsed.append((shown, blocks))
        errors += errs
    skipped = [b for _, bl in parsed for b in bl if b.kind == "skip"]
    to_run = sum(1 for _, bl in parsed for b in bl if b.kind == "run")
    if args.list:
        for _, bl in parsed:
            for b in bl:
                print(f"{b.where()}: {'run' if b.kind == 'run' else 'skip-test: ' + b.reason}")
        return 0
    if not args.no_netns:
        enter_network_namespace()

    failures = list(errors)
    failures += check_options([b for _, bl in parsed for b in bl], warden)
    ran = 0
    for path, blocks in parsed:
        if not any(b.kind == "run" for b in blocks):
            continue
        n, failure = run_file(path, blocks, source, warden, args.keep)
        ran += n
        print(f"{path}: {n} block(s) run" + (", FAILED" if failure else ""))
        if failure:
            failures.append(failure)
    for b in skipped:
        print(f"skipped {b.where()}: {b.reason}")
    print(f"doc_commands: {ran} of {to_run} sh block(s) run, {len(skipped)} skipped (skip-test), "
          f"{len(args.files)} file(s)")
    if ran == 0:
        failures.append("no sh block ran: the checker checked nothing")
    if failures:
        for failure in failures:
            print(f"FAIL: {failure}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
