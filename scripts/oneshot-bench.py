#!/usr/bin/env python3
"""Wall time of one-shot `adk-flow run` processes (issue 13: <= 10 ms), A/B.

    scripts/oneshot-bench.py BINARY [BINARY...]

Runs `BINARY run workflows/support.yaml --script workflows/support.script.yaml -m "Was
order 42 paid?"` N times (default 30) per binary per round, ROUNDS rounds (default 3),
the binaries alternating run by run. Each binary runs in a folder of its own, emptied
before the first round, so that it finds the session file (and the WAL) its own previous
runs left, as a user's runs would. Prints the median, 90th percentile and minimum wall
time per process and the mean CPU per process (wait4's rusage). ARGS passes more
arguments to `run` (e.g. ARGS="--db memory"); WORK sets the folder (default /tmp).
"""
import os, shutil, statistics, subprocess, sys, time

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

def run(b, d):
    """One process: its wall time and CPU time (ms)."""
    t = time.perf_counter()
    p = subprocess.Popen(
        [b, "run", wf, "--script", script, "-m", "Was order 42 paid?", *extra],
        cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t) * 1e3
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        sys.exit(err.decode())
    return wall, (usage.ru_utime + usage.ru_stime) * 1e3


dirs = []
for i in range(len(bins)):
    d = os.path.join(work, f"oneshot-bench-{i}")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    dirs.append(d)
for r in range(rounds):
    walls = [[] for _ in bins]
    cpus = [[] for _ in bins]
    # Run by run, the binaries alternate: a burst of load hits them alike.
    for _ in range(n):
        for i, b in enumerate(bins):
            wall, cpu = run(b, dirs[i])
            walls[i].append(wall)
            cpus[i].append(cpu)
    for i, b in enumerate(bins):
        w = sorted(walls[i])
        print(f"round {r} {b}: median {statistics.median(w):.2f} ms, "
              f"p90 {w[int(n * 0.9)]:.2f} ms, min {w[0]:.2f} ms, "
              f"CPU {statistics.mean(cpus[i]):.2f} ms per run, "
              f"load {os.getloadavg()[0]:.2f}", flush=True)
for i in range(len(bins)):
    shutil.rmtree(os.path.join(work, f"oneshot-bench-{i}"), ignore_errors=True)
