#!/usr/bin/env python3
"""Summarizes side-by-side.sh's JSON lines: per round and scenario, both frameworks'
figures and the ratios (adk-flow over adk-rust in inv/s; adk-rust over adk-flow in CPU).
Usage: summarize.py [--rust adk-rust|adk-rust-lto] FILE..."""
import json, sys
from collections import defaultdict
args = sys.argv[1:]
rust = "adk-rust"
if args[:1] == ["--rust"]:
    rust, args = args[1], args[2:]
rows = []
for i, f in enumerate(args, 1):
    for l in open(f):
        if l.strip():
            r = json.loads(l)
            # Rounds of several files stay apart: "2.3" is round 3 of the second file.
            r["round"] = f"{i}.{r['round']}" if len(args) > 1 else str(r["round"])
            rows.append(r)
by = defaultdict(dict)
for r in rows:
    by[(r["round"], r["scenario"])][r["framework"]] = r
scen = ["a_tool", "b_sequential", "c_loop", "d_transfer"]
print(f"{rust} against adk-flow\n")
print("| round | scenario | load (rust/flow) | adk-rust inv/s | adk-flow inv/s | ratio inv/s | adk-rust CPU µs | adk-flow CPU µs | ratio CPU | events (rust/flow) | p50 µs (rust/flow) | p99 µs (rust/flow) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
ratios = defaultdict(lambda: defaultdict(list))
for (rnd, s) in sorted(by, key=lambda k: (k[0], scen.index(k[1]))):
    a, b = by[(rnd, s)].get(rust), by[(rnd, s)].get("adk-flow")
    if not a or not b:
        continue
    ri, rc = b["inv_per_s"] / a["inv_per_s"], a["cpu_us_per_inv"] / b["cpu_us_per_inv"]
    for k, v in (("inv", ri), ("cpu", rc), ("rust_inv", a["inv_per_s"]), ("flow_inv", b["inv_per_s"]),
                 ("rust_cpu", a["cpu_us_per_inv"]), ("flow_cpu", b["cpu_us_per_inv"]),
                 ("load", a["load1"]), ("load", b["load1"])):
        ratios[s][k].append(v)
    print(f"| {rnd} | `{s}` | {a['load1']:.2f} / {b['load1']:.2f} | {a['inv_per_s']:,.0f} | {b['inv_per_s']:,.0f} | {ri:.2f}x | {a['cpu_us_per_inv']:.1f} | {b['cpu_us_per_inv']:.1f} | {rc:.2f}x | {a['events_per_invocation']:.0f} / {b['events_per_invocation']:.0f} | {a['p50_us']:.1f} / {b['p50_us']:.1f} | {a['p99_us']:.0f} / {b['p99_us']:.0f} |")
print()
print("| scenario | load | adk-rust inv/s | adk-flow inv/s | ratio inv/s (min-max, median) | adk-rust CPU µs | adk-flow CPU µs | ratio CPU (min-max, median) |")
print("|---|---|---|---|---|---|---|---|")
med = lambda xs: sorted(xs)[len(xs) // 2]
rng = lambda xs, f="{:.1f}": f"{f.format(min(xs))}-{f.format(max(xs))}"
for s in scen:
    d = ratios[s]
    if not d:
        continue
    print(f"| `{s}` | {rng(d['load'], '{:.1f}')} | {rng(d['rust_inv'], '{:,.0f}')} | {rng(d['flow_inv'], '{:,.0f}')} | {rng(d['inv'], '{:.2f}')}x, {med(d['inv']):.2f}x | {rng(d['rust_cpu'])} | {rng(d['flow_cpu'])} | {rng(d['cpu'], '{:.2f}')}x, {med(d['cpu']):.2f}x |")
