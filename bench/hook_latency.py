#!/usr/bin/env python3
"""Wall time of one `warden hook claude-code` invocation, process start to exit, as Claude Code
pays it on every tool call: N runs (default 1000) with a mix of realistic hook inputs (Bash ls,
git status, rm -rf, Write, Read), against a running daemon (`warden serve` on a loopback port
with a token file) and in-process (`--rules`, the rules loaded by every run), the modes taking turns. Prints p50, p99,
mean and max per mode, the decisions seen (a wrong answer fails the run), and the same
clock around `warden version` (process start-up alone, the floor of every mode).

    python3 bench/hook_latency.py [--warden build/cli/warden] [-n 1000] [--rules rules]
"""
import argparse, json, os, random, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CWD = "/home/user/project"  # the shipped rules' workspace


def call(tool, tool_input):
    return json.dumps({
        "session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": CWD,
        "permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": tool,
        "tool_input": tool_input, "tool_use_id": "toolu_bench"}).encode()


# (input, the decision the shipped rules give it)
INPUTS = [
    (call("Bash", {"command": "ls", "description": "List files"}), "allow"),
    (call("Bash", {"command": "git status", "description": "Show the working tree status"}), "allow"),
    (call("Bash", {"command": "rm -rf /", "description": "Clean up"}), "deny"),
    (call("Write", {"file_path": CWD + "/notes.txt", "content": "hello\n"}), None),
    (call("Read", {"file_path": CWD + "/README.md"}), None),
]


def percentile(sorted_values, p):
    return sorted_values[min(len(sorted_values) - 1, int(round(p / 100 * (len(sorted_values) - 1))))]


def summary(times, seen):
    times = sorted(times)
    return {"n": len(times), "p50_ms": round(percentile(times, 50), 2),
            "p99_ms": round(percentile(times, 99), 2), "mean_ms": round(statistics.mean(times), 2),
            "max_ms": round(times[-1], 2), "decisions": seen}


def once(args, data, want, env):
    """One invocation: its wall time (ms) and its decision; a wrong answer stops the run."""
    t = time.perf_counter()
    p = subprocess.run(args, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    elapsed = (time.perf_counter() - t) * 1000
    if data is None:  # the start-up floor: `warden version`
        if p.returncode != 0:
            sys.exit("warden version failed: %s" % p.stderr)
        return elapsed, None
    decision = json.loads(p.stdout)["hookSpecificOutput"]["permissionDecision"]
    if (decision == "deny") != (p.returncode == 2) or (want and decision != want):
        sys.exit("unexpected answer (exit %d) to %s: %s %s" % (p.returncode, data, p.stdout, p.stderr))
    return elapsed, decision


def run_all(modes, n, env):
    """The modes take turns, input by input, so a change in the machine's load hits all alike."""
    random.seed(8)
    times = {m: [] for m in modes}
    seen = {m: {} for m in modes}
    for i in range(n):
        data, want = INPUTS[i % len(INPUTS)] if i < len(INPUTS) else random.choice(INPUTS)
        for mode, args in modes.items():
            elapsed, decision = once(args, None if mode == "startup" else data, want, env)
            times[mode].append(elapsed)
            if decision:
                seen[mode][decision] = seen[mode].get(decision, 0) + 1
    return {m: summary(times[m], seen[m]) for m in modes}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--warden", default=os.path.join(ROOT, "build", "cli", "warden"))
    ap.add_argument("-n", type=int, default=1000)
    ap.add_argument("--rules", default=os.path.join(ROOT, "rules"))
    a = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("WARDEN_")}
    with tempfile.TemporaryDirectory(prefix="warden-hook-bench-") as tmp:
        # A private copy: a rebuild during the run cannot swap the binary under it.
        warden = os.path.join(tmp, "warden")
        shutil.copy2(a.warden, warden)
        a.warden = warden
        token = json.loads(subprocess.check_output(
            [a.warden, "token", "new", "--role", "agent", "--principal", "bench", "--format", "json"]))
        tokens = os.path.join(tmp, "tokens")
        with open(os.open(tokens, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(token["line"] + "\n")
        token_file = os.path.join(tmp, "agent.token")
        with open(os.open(token_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(token["token"] + "\n")
        serve = subprocess.Popen(
            [a.warden, "serve", "--listen", "127.0.0.1:0", "--rules", a.rules, "--tokens", tokens,
             "--state-dir", os.path.join(tmp, "state"), "--workers", "1", "--log-level", "info"],
            stderr=subprocess.PIPE, text=True)
        try:
            addr = None
            for line in serve.stderr:
                m = re.search(r"serving on (\S+) ", line)
                if m:
                    addr = m.group(1)
                    break
            if not addr:
                sys.exit("the daemon did not start")
            load_before = os.getloadavg()[0]
            results = run_all({
                "daemon": [a.warden, "hook", "claude-code", "--addr", addr, "--token-file", token_file],
                "in_process": [a.warden, "hook", "claude-code", "--rules", a.rules],
                "startup": [a.warden, "version"],
            }, a.n, env)
        finally:
            serve.terminate()
            serve.wait()
    print("warden hook claude-code, wall time per invocation (process start to exit); "
          "load average %.2f before, %.2f after, on %d cores" % (load_before, os.getloadavg()[0], os.cpu_count()))
    for mode, r in results.items():
        print("  %-10s n=%d  p50 %.2f ms  p99 %.2f ms  mean %.2f ms  max %.2f ms  %s"
              % (mode, r["n"], r["p50_ms"], r["p99_ms"], r["mean_ms"], r["max_ms"], r["decisions"]))
    print(json.dumps(results))


if __name__ == "__main__":
    main()
