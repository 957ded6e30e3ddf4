#!/usr/bin/env bash
# Interleaved side-by-side rounds: adk-rust S, adk-flow S, for S in a, b, c, d; ROUNDS times.
# Usage: side-by-side.sh ADK_RUST_BENCH ADK_FLOW ROUNDS [K]  -> JSON lines on stdout,
# each with the 1-minute load average read just before the run ("load1").
set -euo pipefail
rust=$1 flow=$2 rounds=$3 k=${4:-20000}
for r in $(seq 1 "$rounds"); do
  for s in a_tool b_sequential c_loop d_transfer; do
    for fw in adk-rust adk-flow; do
      load=$(cut -d' ' -f1 /proc/loadavg)
      if [ "$fw" = adk-rust ]; then
        out=$("$rust" --scenario "$s" --invocations "$k" --json)
      else
        out=$("$flow" bench --scenario "$s" --invocations "$k" --json)
      fi
      python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d.update(framework=sys.argv[2], round=int(sys.argv[3]), load1=float(sys.argv[4])); print(json.dumps(d))' "$out" "$fw" "$r" "$load"
    done
  done
done
