#!/usr/bin/env python3
"""Warden beside the plain CLIPS interpreter on the same generated policies, in one run.

For 10, 100 and 1000 generated rules (three shapes, round-robin: a command holding a token,
a path under /etc/TOKEN/, a URL's host), the same requests (30 % hit one rule, 70 % none,
every one unique) are decided by

  * `warden dry-run --format json` over JSON lines: the whole decision (JSON in, facts, the
    rules, the decision out as JSON), and
  * Debian's `clips` interpreter running a batch file: per request one call of a deffunction
    that asserts the request as one fact, runs, prints the rules that fired and resets.

Each side runs twice, with N and 2N requests; the CPU time of the difference divided by N is
a decision's cost without the load. Prints decisions per CPU-second and their ratio
(Warden / CLIPS). Needs the `clips` package (apt-get install clips) and a built `warden`.

With --instructions each side runs under valgrind (callgrind) instead, and a decision's
cost is the instructions of the difference: exact, and the same on a busy machine, where CPU
seconds of runs this short move by tens of percent. Use N of 2000 or so (valgrind is ~50x
slower).

  bench/compare_clips.py [--warden build/cli/warden] [--decisions 20000] [--instructions]
"""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile

SHAPES = ("substring", "path-prefix", "host")


def tok(i):
    return "tok%04d" % i


def warden_rules(n):
    out = []
    for i in range(n):
        t, shape = tok(i), SHAPES[i % 3]
        if shape == "substring":
            cond = '(pattern-hit (proposal ?id) (key "payload.command") (kind substring) (pattern "%s"))' % t
        elif shape == "path-prefix":
            cond = '(pattern-hit (proposal ?id) (key "payload.path") (kind path-within) (pattern "/etc/%s"))' % t
        else:
            cond = '(url (proposal ?id) (host "%s.example.com"))' % t
        out.append('(defrule gen-%s-%d\n  %s\n  =>\n  (assert (decision (proposal ?id) (outcome reject) '
                   '(rule gen-%s-%d) (reason "generated %s rule"))))\n' % (shape, i, cond, shape, i, shape))
    return "\n".join(out)


def clips_rules(n):
    out = ["(deftemplate req (slot id) (slot command (default \"\")) (slot path (default \"\")) "
           "(slot host (default \"\")))",
           "(deftemplate decision (slot id) (slot rule))"]
    for i in range(n):
        t, shape = tok(i), SHAPES[i % 3]
        if shape == "substring":
            cond = '(req (id ?id) (command ?c&:(str-index "%s" ?c)))' % t
        elif shape == "path-prefix":
            cond = '(req (id ?id) (path ?p&:(eq (str-index "/etc/%s/" ?p) 1)))' % t
        else:
            cond = '(req (id ?id) (host "%s.example.com"))' % t
        out.append('(defrule gen-%s-%d %s => (assert (decision (id ?id) (rule gen-%s-%d))))'
                   % (shape, i, cond, shape, i))
    out.append('(deffunction decide (?id ?command ?path ?host)\n'
               '  (assert (req (id ?id) (command ?command) (path ?path) (host ?host)))\n'
               '  (run)\n'
               '  (printout t ?id (find-all-facts ((?d decision)) TRUE) crlf)\n'
               '  (reset))')
    return "\n".join(out) + "\n"


def requests(n_rules, count, seed):
    rng = random.Random(seed)
    out = []
    for k in range(count):
        kind, hit = rng.random(), rng.random() < 0.30
        rule = rng.randrange(n_rules)
        if kind < 0.47:
            while hit and SHAPES[rule % 3] != "substring":
                rule = rng.randrange(n_rules)
            command = ("grep -rn %s src/c%d" % (tok(rule), k)) if hit else ("ls -la src/dir_c%d" % k)
            out.append(("shell", command))
        elif kind < 0.77:
            while hit and SHAPES[rule % 3] != "path-prefix":
                rule = rng.randrange(n_rules)
            path = ("/etc/%s/conf.d/c%d.conf" % (tok(rule), k)) if hit else ("/home/user/project/src/c%d.cpp" % k)
            out.append(("file", path))
        else:
            while hit and SHAPES[rule % 3] != "host":
                rule = rng.randrange(n_rules)
            host = ("%s.example.com" % tok(rule)) if hit else "docs.example.org"
            out.append(("http", "https://%s/api/c%d" % (host, k)))
    return out


def clips_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpu_of(cmd, out_path):
    """Runs cmd with stdout into out_path; returns its CPU seconds (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(os.devnull, "rb") as stdin, open(out_path, "wb") as out:
        done = subprocess.run(cmd, stdin=stdin, stdout=out, stderr=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # dry-run: 1 when some decision is a reject
        sys.exit("%s failed (%d): %s" % (cmd[0], done.returncode, done.stderr.decode(errors="replace")[:400]))
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def instructions_of(cmd, out_path, tmp):
    """Runs cmd under callgrind with stdout into out_path; returns the instructions it ran."""
    counts = os.path.join(tmp, "callgrind.out")
    with open(os.devnull, "rb") as stdin, open(out_path, "wb") as out:
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + counts] + cmd,
                              stdin=stdin, stdout=out, stderr=subprocess.PIPE)
    if done.returncode not in (0, 1):
        sys.exit("%s failed (%d): %s" % (cmd[0], done.returncode, done.stderr.decode(errors="replace")[-400:]))
    with open(counts) as f:
        for line in f:
            if line.startswith("summary:") or line.startswith("totals:"):
                return int(line.split()[1])
    sys.exit("compare_clips: no instruction count in %s" % counts)


def warden_hits(path):
    with open(path) as f:
        return [json.loads(line)["outcome"] == "reject" for line in f if line.strip()]


def clips_hits(path):
    hits = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and line[0].isdigit():
                hits.append(not line.endswith("()"))
    return hits


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--warden", default=os.path.join(here, "..", "build", "cli", "warden"))
    ap.add_argument("--decisions", type=int, default=20000)
    ap.add_argument("--instructions", action="store_true",
                    help="count instructions under valgrind instead of CPU seconds")
    args = ap.parse_args()
    if args.instructions and not shutil.which("valgrind"):
        sys.exit("compare_clips: --instructions needs valgrind (apt-get install valgrind)")
    if not shutil.which("clips"):
        sys.exit("compare_clips: the clips interpreter is not installed (apt-get install clips)")
    if not os.access(args.warden, os.X_OK):
        sys.exit("compare_clips: %s is not built (ninja -C build warden)" % args.warden)
    n = args.decisions
    rows = []
    with tempfile.TemporaryDirectory(prefix="warden-clips-") as tmp:
        for n_rules in (10, 100, 1000):
            rules_dir = os.path.join(tmp, "rules-%d" % n_rules)
            os.mkdir(rules_dir)
            with open(os.path.join(rules_dir, "generated.clp"), "w") as f:
                f.write(warden_rules(n_rules))
            cost = {}
            for count in (n, 2 * n):
                reqs = requests(n_rules, count, 1000 + n_rules)
                jsonl = os.path.join(tmp, "in-%d-%d.jsonl" % (n_rules, count))
                with open(jsonl, "w") as f:
                    for kind, value in reqs:
                        if kind == "shell":
                            p = {"target": "shell", "action": "run", "payload": {"command": value}}
                        elif kind == "file":
                            p = {"target": "file", "action": "read", "payload": {"path": value}}
                        else:
                            p = {"target": "http", "action": "request", "payload": {"method": "GET", "url": value}}
                        p["explanation"] = "generated case"
                        f.write(json.dumps(p) + "\n")
                batch = os.path.join(tmp, "batch-%d-%d.clp" % (n_rules, count))
                with open(batch, "w") as f:
                    f.write(clips_rules(n_rules))
                    f.write("(reset)\n")
                    for i, (kind, value) in enumerate(reqs):
                        command = value if kind == "shell" else ""
                        path = value if kind == "file" else ""
                        host = value.split("/")[2] if kind == "http" else ""
                        f.write("(decide %d %s %s %s)\n" % (i, clips_string(command), clips_string(path),
                                                            clips_string(host)))
                    f.write("(exit)\n")
                w_out, c_out = jsonl + ".out", batch + ".out"
                w_cmd = [args.warden, "dry-run", "--rules", rules_dir, "--format", "json", jsonl]
                c_cmd = ["clips", "-f2", batch]
                if args.instructions:
                    # Under valgrind a decision runs ~50x slower: a loaded machine must not
                    # fail one closed on the 100 ms deadline (a disagreement with CLIPS).
                    w_cmd[2:2] = ["--deadline-ms", "60000"]
                    cost[("warden", count)] = instructions_of(w_cmd, w_out, tmp)
                    cost[("clips", count)] = instructions_of(c_cmd, c_out, tmp)
                else:
                    cost[("warden", count)] = cpu_of(w_cmd, w_out)
                    cost[("clips", count)] = cpu_of(c_cmd, c_out)
                # Both decided alike, or the figures compare nothing.
                w_hits, c_hits = warden_hits(w_out), clips_hits(c_out)
                if len(w_hits) != count or w_hits != c_hits:
                    sys.exit("compare_clips: %d rules: Warden and CLIPS disagree (%d and %d answers, %d rejects "
                             "and %d hits)" % (n_rules, len(w_hits), len(c_hits), sum(w_hits), sum(c_hits)))
            w = (cost[("warden", 2 * n)] - cost[("warden", n)]) / n
            c = (cost[("clips", 2 * n)] - cost[("clips", n)]) / n
            rows.append((n_rules, 1 / w if w > 0 else float("inf"), 1 / c if c > 0 else float("inf")))
    if args.instructions:
        print("generated rules, %d decisions (the instructions of 2N minus N requests)" % n)
        print("%6s %18s %18s %8s" % ("rules", "warden instr/dec", "clips instr/dec", "ratio"))
        for n_rules, w, c in rows:
            print("%6d %18.0f %18.0f %7.2fx" % (n_rules, 1 / w, 1 / c, w / c))
        unit = "instructions"
    else:
        print("generated rules, %d decisions (the CPU time of 2N minus N requests)" % n)
        print("%6s %16s %16s %8s" % ("rules", "warden dec/CPU-s", "clips dec/CPU-s", "ratio"))
        for n_rules, w, c in rows:
            print("%6d %16.0f %16.0f %7.2fx" % (n_rules, w, c, w / c))
        unit = "cpu-seconds"
    print(json.dumps({"decisions": n, "unit": unit,
                      "rows": [{"rules": r, "warden": round(w, 9 if args.instructions else 0),
                                "clips": round(c, 9 if args.instructions else 0), "ratio": round(w / c, 3)}
                               for r, w, c in rows]}))


if __name__ == "__main__":
    main()
