#!/usr/bin/env python3
"""Wall time of one-shot `adk-flow run` processes (issue 13: <= 10 ms), A/B.

    scripts/oneshot-bench.py BINARY [BINARY...]

Runs `BINARY run workflows/support.yaml --script workflows/support.script.yaml -m "Was
order 42 paid?"` N times (default 30) per binary per round, ROUNDS rounds (default 3),
the binaries interleaved round by round. Each binary runs in a folder of its own, emptied
before the first round, so that it finds the session file (and the WAL) its own previous
runs left, as a user's runs would. Prints the median and 90th percentile wall time per
process and the mean CPU per process (getrusage of the children). ARGS passes more
arguments to `run` (e.g. ARGS="--db memory"); WORK sets the folder (default /tmp).
"""
import os, resource, shutil, statistics, subprocess, sys, time

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
n = int(os.environ.get("N", "30"))
rounds = int(os.environ.get("ROUNDS", "3"))
extra = os.environ.get("ARGS", "").split()
work = os.environ.get("WORK", "/tmp")
wf = f"{root}/workflows/support.yaml"
script = f"{root}/workflows/support.script.yaml"
bins = [os.path.abspath(b) for b in sys.argv[1:]]
if not bins:
    sys.exit(__doc__)
for r in range(rounds):
    for i, b in enumerate(bins):
        d = os.path.join(work, f"oneshot-bench-{i}")
        if r == 0 and os.path.exists(d):
            shutil.rmtree(d)
        os.makedirs(d, exist_ok=True)
        walls = []
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        for _ in range(n):
            t = time.perf_counter()
            p = subprocess.run(
                [b, "run", wf, "--script", script, "-m", "Was order 42 paid?", *extra],
                cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            walls.append((time.perf_counter() - t) * 1e3)
            if p.returncode:
                sys.exit(p.stderr.decode())
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = ((c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)) * 1e3 / n
        walls.sort()
        print(f"round {r} {b}: median {statistics.median(walls):.2f} ms, "
              f"p90 {walls[int(n * 0.9)]:.2f} ms, CPU {cpu:.2f} ms per run, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
for i in range(len(bins)):
    shutil.rmtree(os.path.join(work, f"oneshot-bench-{i}"), ignore_errors=True)
